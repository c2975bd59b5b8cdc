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
