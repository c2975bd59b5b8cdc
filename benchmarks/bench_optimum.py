#!/usr/bin/env python3
"""Time the certified allgather optimum on DGX A100 and MI250 clusters up to 1024 GPUs.

Prints, per topology: GPUs, nodes, links, build time, optimum time, the number
of max-flows used and the exact algbw. Target (issue 2): the optimum of a
1024-GPU topology in under 10 s on a 2-core machine.

    python benchmarks/bench_optimum.py                 # dgx_a100(2..128), mi250(2..64)
    python benchmarks/bench_optimum.py --max-gpus 256  # smaller sizes only
    python benchmarks/bench_optimum.py --fixed-k 1     # fixed-k optimum instead
    python benchmarks/bench_optimum.py --profile       # cProfile of the largest case
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import sys
import time

from collcert import optimum, platforms
from collcert.reference.exact import show

TARGET_S = 10.0


def cases(max_gpus: int) -> list[tuple[str, object, int]]:
    out: list[tuple[str, object, int]] = []
    for boxes in (2, 4, 8, 16, 32, 64, 128):
        if 8 * boxes <= max_gpus:
            out.append((f"dgx_a100({boxes})", platforms.dgx_a100, boxes))
    for boxes in (2, 4, 8, 16, 32, 64):
        if 16 * boxes <= max_gpus:
            out.append((f"mi250({boxes})", platforms.mi250, boxes))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-gpus", type=int, default=1024)
    ap.add_argument("--collective", default="allgather",
                    choices=("allgather", "reduce-scatter", "allreduce"))
    ap.add_argument("--fixed-k", type=int, default=None)
    ap.add_argument("--engine", default="auto", choices=("auto", "ortools", "exact"))
    ap.add_argument("--profile", action="store_true",
                    help="profile the largest case with cProfile and print the top functions")
    args = ap.parse_args(argv)
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()}, "
          f"collective={args.collective}, fixed_k={args.fixed_k}, engine={args.engine}")
    head = f"{'topology':<16}{'GPUs':>6}{'nodes':>7}{'links':>7}{'build s':>9}{'optimum s':>11}"
    print(head + f"{'max-flows':>11}  algbw")
    slow = []
    todo = cases(args.max_gpus)
    for name, builder, boxes in todo:
        t0 = time.perf_counter()
        topo = builder(boxes)  # type: ignore[operator]
        t1 = time.perf_counter()
        opt = optimum(topo, args.collective, fixed_k=args.fixed_k, engine=args.engine)
        t2 = time.perf_counter()
        print(f"{name:<16}{topo.num_compute:>6}{len(topo.nodes):>7}{len(topo.capacity):>7}"
              f"{t1 - t0:>9.2f}{t2 - t1:>11.2f}{opt.maxflows:>11}  {show(opt.algbw)} {topo.unit}",
              flush=True)
        if topo.num_compute >= 1024 and t2 - t1 >= TARGET_S:
            slow.append(name)
    if todo and max(8 * b if n.startswith("dgx") else 16 * b for n, _, b in todo) >= 1024:
        verdict = "MISSED" if slow else "met"
        print(f"target: optimum of a 1024-GPU topology < {TARGET_S:.0f} s: {verdict}"
              + (f" ({', '.join(slow)})" if slow else ""))
    if args.profile and todo:
        name, builder, boxes = todo[-1]
        topo = builder(boxes)  # type: ignore[operator]
        prof = cProfile.Profile()
        prof.enable()
        optimum(topo, args.collective, fixed_k=args.fixed_k, engine=args.engine)
        prof.disable()
        print(f"\ncProfile of {name}:")
        pstats.Stats(prof, stream=sys.stdout).sort_stats("cumulative").print_stats(15)
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
