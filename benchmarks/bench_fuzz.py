#!/usr/bin/env python3
"""Fuzz campaign throughput: topologies per second with 1 and 2 workers.

Runs the same campaign (same seed, same topologies) as ``collcert fuzz check``
(default: every property) or ``collcert fuzz run`` (``--mode run``: collcert's own
scheduler as the implementation under test, audited) in one process, with
``--jobs 2`` and on a ``distributed.LocalCluster`` of 2 worker processes
(``--dask``), each in a fresh process, and prints topologies per second, wall
seconds, CPU seconds (user + system of the campaign's process tree and, for dask,
of the cluster's worker processes, sampled with psutil every 0.5 s, so processes
that live less than that, such as the implementation under test in ``--mode run``,
are missed) and whether the findings are those of the single process.

    python benchmarks/bench_fuzz.py                          # check, 30 topologies
    python benchmarks/bench_fuzz.py --count 100 --max-nodes 10
    python benchmarks/bench_fuzz.py --mode run --count 10
    python benchmarks/bench_fuzz.py --no-dask

On a machine shared with other work the speed-up of two workers is bounded by the
cores actually free; the load average is printed with the table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import threading
import time
from typing import Any

import psutil  # installed with dask.distributed


class TreeCPU:
    """CPU seconds (user + system) used by the process trees under ``roots`` while it
    runs, sampled: the last reading of every process seen, minus what it had used when
    first seen if it existed before the start."""

    def __init__(self, roots: list[int]) -> None:
        self.roots = roots
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self.stop = threading.Event()
        self.sample(initial=True)
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def sample(self, initial: bool = False) -> None:
        for root in self.roots:
            try:
                procs = [psutil.Process(root)]
                procs += procs[0].children(recursive=True)
            except psutil.Error:
                continue
            for p in procs:
                try:
                    t = p.cpu_times()
                except psutil.Error:
                    continue
                used = t.user + t.system
                self.first.setdefault(p.pid, used if initial else 0.0)
                self.last[p.pid] = used

    def loop(self) -> None:
        while not self.stop.wait(0.5):
            self.sample()

    def total(self) -> float:
        self.stop.set()
        self.thread.join()
        return sum(v - self.first.get(pid, 0.0) for pid, v in self.last.items())


def campaign(args: argparse.Namespace, extra: list[str],
             workers: list[int]) -> tuple[float, float, object]:
    """(wall s, CPU s, report) of one campaign in a fresh process (``workers``: more
    process ids whose CPU time counts, the dask workers)."""
    cmd = [sys.executable, "-m", "collcert", "fuzz", args.mode, "--count", str(args.count),
           "--seed", str(args.seed), "--max-nodes", str(args.max_nodes), "--json"]
    if args.switches:
        cmd.append("--switches")
    if args.mode == "check":
        cmd.append("--no-save")
        for p in args.property or []:
            cmd += ["-p", p]
    else:
        impl = (f"{sys.executable} -m collcert schedule {{topology}} -o {{schedule}} "
                "--collective {collective}")
        cmd += ["--impl", impl, "--no-shrink", "--save-dir", args.save_dir]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd + extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    meter = TreeCPU([proc.pid, *workers])
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    cpu = meter.total()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"campaign {' '.join(extra) or '(1 process)'} failed: "
                         f"{err.strip()[-500:]}")
    report = json.loads(out)
    if args.mode == "run":  # times differ from run to run; the findings must not
        for case in report["cases"]:
            case.pop("seconds", None)
    return wall, cpu, report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=("check", "run"), default="check")
    ap.add_argument("--count", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-nodes", type=int, default=8)
    ap.add_argument("--no-switches", dest="switches", action="store_false")
    ap.add_argument("--property", "-p", action="append", help="check mode: these properties")
    ap.add_argument("--no-dask", action="store_true", help="skip the LocalCluster run")
    ap.add_argument("--save-dir", default="/tmp/collcert-bench-fuzz")
    args = ap.parse_args(argv)
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()}; "
          f"fuzz {args.mode}, {args.count} topologies (seed {args.seed}, at most "
          f"{args.max_nodes} nodes{', switches' if args.switches else ''}); load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"{'workers':<30}{'topologies/s':>13}{'wall s':>9}{'CPU s':>8}  same findings")
    base = None
    configs: list[tuple[str, list[str]]] = [("1 process", []), ("2 processes (--jobs 2)",
                                                                ["--jobs", "2"])]
    cluster: Any = None
    workers: list[int] = []
    if not args.no_dask:
        try:
            from distributed import LocalCluster
        except ImportError:
            print("(dask.distributed is not installed: pip install 'collcert[dask]')")
        else:
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                   dashboard_address=":0")
            configs.append(("dask LocalCluster, 2 workers", ["--dask", cluster.scheduler_address]))
            workers = [p.pid for p in psutil.Process().children(recursive=True)]
    try:
        for label, extra in configs:
            wall, cpu, report = campaign(args, extra, workers if "--dask" in extra else [])
            if base is None:
                base = report
            same = "yes" if report == base else "NO"
            print(f"{label:<30}{args.count / wall:>13.2f}{wall:>9.2f}{cpu:>8.2f}  {same}",
                  flush=True)
    finally:
        if cluster is not None:
            cluster.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
