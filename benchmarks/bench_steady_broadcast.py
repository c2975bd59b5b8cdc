#!/usr/bin/env python3
"""Time the one-port steady-state broadcast pipeline on random platforms (Legrand et al. 2003).

Stages, each timed: the exact LP (SSB by cut generation, proven exactly, then
the tidy LP), the weighted tree packing (Thm 5), the edge colouring and
period layout (Lemma 1), and the independent event check (certify: LP
certificate, packing, replay of the period). Target (issue 9): a 50-node
random platform in under 60 s in total on 2 cores.

    python benchmarks/bench_steady_broadcast.py                  # 50 nodes, seeds 0..2
    python benchmarks/bench_steady_broadcast.py --nodes 20 50 100 --seeds 1
    python benchmarks/bench_steady_broadcast.py --degree 6
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

from collcert.certify.broadcast import check_steady_broadcast
from collcert.reference.broadcast import random_platform, solve_ssb
from collcert.reference.broadcast.steady_schedule import schedule_trees, tree_packing
from collcert.reference.model import show

TARGET_S = 60.0


def run_case(nodes: int, seed: int, degree: int) -> tuple[dict[str, float], str]:
    p = random_platform(nodes, seed, degree)
    t = {}
    t0 = time.perf_counter()
    sol = solve_ssb(p, "p0")
    t["lp"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    N, trees = tree_packing(sol)
    t["packing"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    sched = schedule_trees(sol, N, trees)
    t["colouring"] = time.perf_counter() - t0
    from collcert.reference.broadcast import SteadyBroadcast

    doc = json.loads(json.dumps(SteadyBroadcast(p, "p0", sol, sched).to_json()))
    topo = json.loads(json.dumps(p.to_json()))
    t0 = time.perf_counter()
    verdict = check_steady_broadcast(topo, doc)
    t["check"] = time.perf_counter() - t0
    if not verdict.ok:
        raise SystemExit(f"INVALID: {verdict.all_reasons()[:3]}")
    info = (f"TP {show(sol.throughput)}, {len(p.cost)} links, {sol.stats['rounds']} LP rounds, "
            f"{sol.stats['cuts']} cuts, N {N}, {len(trees)} trees, "
            f"{len(sched.matchings)} matchings, stretch {sched.sigma}, "
            f"{sched.messages_per_period} msgs / period "
            f"{show(sched.period)}, replayed {verdict.facts['periods_replayed']} periods")
    return t, info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, nargs="+", default=[50])
    ap.add_argument("--seeds", type=int, default=3, help="seeds 0..SEEDS-1 per size")
    ap.add_argument("--degree", type=int, default=3, help="out-links per node (about)")
    args = ap.parse_args(argv)
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()}; "
          f"random one-port platforms, degree {args.degree}, source p0")
    print(f"{'nodes':>5}{'seed':>5}{'LP s':>8}{'pack s':>8}{'colour s':>9}{'check s':>8}"
          f"{'total s':>9}  result")
    slow = []
    for n in args.nodes:
        for seed in range(args.seeds):
            t, info = run_case(n, seed, args.degree)
            total = sum(t.values())
            print(f"{n:>5}{seed:>5}{t['lp']:>8.2f}{t['packing']:>8.2f}{t['colouring']:>9.2f}"
                  f"{t['check']:>8.2f}{total:>9.2f}  {info}", flush=True)
            if n <= 50 and total > TARGET_S:
                slow.append((n, seed, total))
    if slow:
        print(f"SLOWER than the {TARGET_S:.0f} s target: {slow}")
        return 1
    print(f"all cases with at most 50 nodes under the {TARGET_S:.0f} s target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
