"""One collcert command in a fresh process under ``/usr/bin/time``, for the benchmarks.

Imported by the scripts beside it (``from _timed import timed_cli``; a script run as
``python benchmarks/NAME.py`` has this folder on ``sys.path``). Not a benchmark itself.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any


def address_cap(gib: float) -> Callable[[], None]:
    """A ``preexec_fn`` capping the child's address space at ``gib`` GiB (a shared machine)."""
    def cap() -> None:
        size = int(gib * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    return cap


def timed_cli(args: list[str], timeout: float, workdir: str, gib: float,
              env: dict[str, str] | None = None) -> dict[str, object]:
    """``collcert ARGS`` under /usr/bin/time with its address space capped at ``gib``:
    ``status`` ("ok", "exit N", "over G GiB" or "stopped after T s"), ``wall``, and when
    it ran to its end ``cpu`` (user + system s), ``peak_mb`` (resident MiB), ``stdout``,
    ``stderr`` and ``returncode``."""
    stats = os.path.join(workdir, "time.txt")
    timer = shutil.which("time") or "/usr/bin/time"
    cmd = [timer, "-f", "%e %U %S %M", "-o", stats, sys.executable, "-m", "collcert.cli",
           *args]
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=address_cap(gib),
                              env=None if env is None else {**os.environ, **env})
    except subprocess.TimeoutExpired:
        return {"status": f"stopped after {timeout:.0f} s", "wall": time.monotonic() - started}
    with open(stats) as f:
        wall, user, system, rss_kb = f.read().split()[-4:]
    status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}"
    if "MemoryError" in proc.stderr or "Unable to allocate" in proc.stderr:
        status = f"over {gib:g} GiB"
    return {"status": status, "wall": float(wall), "cpu": float(user) + float(system),
            "peak_mb": int(rss_kb) / 1024, "stdout": proc.stdout, "stderr": proc.stderr,
            "returncode": proc.returncode}


def case_options(ap: Any, timeout: float, gib: float, memory_note: str) -> None:
    """The options every timed-case benchmark takes: --timeout, --max-memory, -k, -v."""
    ap.add_argument("--timeout", type=float, default=timeout,
                    help=f"stop a case after this many seconds (default {timeout:g})")
    ap.add_argument("--max-memory", type=float, default=gib, metavar="GIB",
                    help=f"cap each case's address space (default {gib:g} GiB{memory_note})")
    ap.add_argument("-k", metavar="TEXT", default="",
                    help="run only the cases whose label contains TEXT")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print the last lines of each command's output")


def print_case_header() -> None:
    """The machine, its load, and the columns of a case table (:func:`timed_cli` rows)."""
    import platform

    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}; wall and CPU in s, peak memory in MB")
    print(f"{'case':<42}{'status':>10}{'wall':>8}{'CPU':>8}{'peak':>7}  goal")
