"""Benchmark: `collcert compare` on a large machine, every baseline and the optimum.

    python benchmarks/bench_compare.py                     # dgx_a100:16 (128 GPUs), allgather
    python benchmarks/bench_compare.py -c allreduce        # another collective
    python benchmarks/bench_compare.py --topology dgx_h100:16 --sizes 1K:8G

Goal (issue 21): under 60 s on 2 cores for dgx_a100:16. Prints the wall-clock
seconds of each step (the optimum's schedule and its audit, LP (5) where the
collective is allreduce, building and checking every baseline, the α-β model)
and the table's figures, so a reader can see where the time goes.
"""

from __future__ import annotations

import argparse
import sys
import time


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench_compare.py", description=__doc__.split("\n")[0])
    p.add_argument("--topology", default="dgx_a100:16", help="platform spec or file")
    p.add_argument("-c", "--collective", default="allgather")
    p.add_argument("--sizes", default="1K:8G", help="message sizes (default 1K:8G)")
    p.add_argument("--alpha", default="2", help="α per link in µs (default 2)")
    args = p.parse_args(argv)

    from collcert.commands._common import load_topology
    from collcert.perftable import parse_sizes
    from collcert.reference.baselines import compare
    from collcert.reference.model import fraction_str, parse_number

    topo = load_topology(args.topology)
    t0 = time.perf_counter()
    last = [t0]

    def say(text: str) -> None:
        now = time.perf_counter()
        print(f"  +{now - last[0]:6.2f}s  (at {now - t0:6.2f}s) {text}", flush=True)
        last[0] = now

    print(f"compare {args.collective} on {topo.name} ({topo.num_compute} GPUs):")
    cmp = compare(topo, args.collective, sizes=parse_sizes(args.sizes),
                  alpha=parse_number(args.alpha), progress=say)
    total = time.perf_counter() - t0
    say("done")
    for r in cmp.rows:
        print(f"  {r.name:13s} algbw {fraction_str(r.algbw):>12s} "
              f"(≈{float(r.algbw):8.2f}) ratio {float(r.ratio or 0):.3f}")
    for name, why in cmp.skipped:
        print(f"  {name:13s} not applicable: {why[:90]}")
    print(f"total {total:.1f} s (goal: under 60 s for dgx_a100:16 on 2 cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
