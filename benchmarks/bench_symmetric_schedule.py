#!/usr/bin/env python3
"""Symmetric schedule files (issue 20, item 4): build, check and audit a certified
schedule of a DGX A100 cluster written as representative trees plus the generator.

Every case runs the ``collcert`` command a user would type, in a fresh process under
``/usr/bin/time``: wall seconds, CPU seconds (user + system), peak resident memory
(MB) and the size of the file written (MB).

    python benchmarks/bench_symmetric_schedule.py           # dgx_a100:128 (1024 GPUs)
    python benchmarks/bench_symmetric_schedule.py --long    # also dgx_a100:1024 (8192 GPUs)
    python benchmarks/bench_symmetric_schedule.py --long -k 1024

The schedule case is ``collcert schedule … --check -o FILE`` (build, check by orbits
with collcert.certify, write); the audit case is ``collcert audit TOPOLOGY FILE`` of
the file just written (read, check by orbits, certified optimum, ratio). Each case's
address space is capped (--max-memory, default 3 GiB) on a shared machine. Under
that cap collcert's size guard (reference/model/limits.py) would refuse 8192 GPUs
before any work: it plans one max-flow witness per compute node (10.6 GB), while
the optimum by orbits keeps one per orbit (8); so the cases run with
``COLLCERT_MAX_MEMORY`` (--plan-memory, default 16G) and the cap measures the truth.

Goal (issue 20, 2 cores): dgx_a100:1024 certified schedule as a symmetric file
< 120 s, file < 20 MB.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile

from _timed import timed_cli


def cases(long: bool) -> list[tuple[str, list[str], str]]:
    """(label, collcert arguments, goal); '{out}' is the schedule file."""
    out = [
        ("dgx_a100:128 full file: schedule", ["schedule", "dgx_a100:128", "--check", "-o",
                                              "{out}"], "baseline"),
        ("dgx_a100:128 symmetric: schedule", ["schedule", "dgx_a100:128", "--symmetric",
                                              "--check", "-o", "{out}"], ""),
        ("dgx_a100:128 symmetric: audit", ["audit", "dgx_a100:128", "{out}"], ""),
    ]
    if long:
        out += [
            ("dgx_a100:1024 symmetric: schedule", ["schedule", "dgx_a100:1024", "--symmetric",
                                                   "--check", "-o", "{out}"],
             "< 120 s, file < 20 MB"),
            ("dgx_a100:1024 symmetric: audit", ["audit", "dgx_a100:1024", "{out}"], ""),
        ]
    return out


def run(argv: list[str], timeout: float, out_file: str, workdir: str,
        gib: float, plan: str) -> dict[str, object]:
    """One command under /usr/bin/time (address space capped at ``gib``); its figures."""
    args = [a.replace("{out}", out_file) for a in argv]
    writes = "-o" in args
    if writes and os.path.exists(out_file):
        os.remove(out_file)
    info = timed_cli(args, timeout, workdir, gib, env={"COLLCERT_MAX_MEMORY": plan})
    if "stderr" in info:
        info["lines"] = (str(info["stdout"]) + str(info["stderr"])).strip().splitlines()
    if writes and os.path.exists(out_file):
        info["file_mb"] = os.path.getsize(out_file) / 2**20
    return info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--long", action="store_true", help="also dgx_a100:1024 (8192 GPUs)")
    ap.add_argument("--timeout", type=float, default=600,
                    help="stop a case after this many seconds (default 600)")
    ap.add_argument("--max-memory", type=float, default=3, metavar="GIB",
                    help="cap each case's address space (default 3 GiB: a shared machine)")
    ap.add_argument("--plan-memory", default="16G", metavar="SIZE",
                    help="COLLCERT_MAX_MEMORY for the cases (default 16G; module doc)")
    ap.add_argument("-k", metavar="TEXT", default="",
                    help="run only the cases whose label contains TEXT")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print each command's output (its summary and stage times)")
    args = ap.parse_args(argv)
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}; wall and CPU in s, peak memory and file in MB")
    print(f"{'case':<36}{'status':>12}{'wall':>9}{'CPU':>9}{'peak':>8}{'file':>8}  goal")
    with tempfile.TemporaryDirectory() as workdir:
        files: dict[str, str] = {}
        for label, cmd, goal in cases(args.long):
            if args.k not in label:
                continue
            machine = label.split()[0]
            out_file = files.setdefault(machine, os.path.join(workdir, f"{len(files)}.json"))
            info = run(cmd, args.timeout, out_file, workdir, args.max_memory,
                       args.plan_memory)
            cpu = f"{info['cpu']:>9.1f}" if "cpu" in info else f"{'':>9}"
            peak = f"{info['peak_mb']:>8.0f}" if "peak_mb" in info else f"{'':>8}"
            size = f"{info['file_mb']:>8.2f}" if "file_mb" in info else f"{'':>8}"
            print(f"{label:<36}{info['status']:>12}{info['wall']:>9.1f}{cpu}{peak}{size}  {goal}",
                  flush=True)
            lines = info.get("lines") or []
            assert isinstance(lines, list)
            if args.verbose or str(info["status"]).startswith("exit"):
                for line in lines[-8:]:
                    print(f"    {line[:400]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
