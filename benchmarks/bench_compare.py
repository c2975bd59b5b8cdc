"""Benchmark: `collcert compare` on a large machine, every baseline and the optimum.

    python benchmarks/bench_compare.py                     # dgx_a100:16 (128 GPUs), allgather
    python benchmarks/bench_compare.py -c allreduce        # another collective
    python benchmarks/bench_compare.py --topology dgx_h100:16 --sizes 1K:8G
    python benchmarks/bench_compare.py --machines          # issue 31's machines, one by one

Goal (issue 21): under 60 s on 2 cores for dgx_a100:16. Prints the wall-clock
seconds of each step (the optimum's schedule and its audit, LP (5) where the
collective is allreduce, building and checking every baseline, the α-β model)
and the table's figures, so a reader can see where the time goes.

``--machines`` (issue 31, item 6: every machine of its table under a minute): runs
``collcert compare MACHINE`` (allgather, no sizes) as its own process for each of
:data:`MACHINES`, ``dgx_h100:128`` the reference, and prints its wall and CPU seconds and
peak memory beside the 60 s goal, with the load (a shared machine's wall time swings).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

MACHINES = ("dgx_h100:128", "dgx_h100_rails:128", "gb200_nvl72:8", "torus:8x8x8",
            "torus:16x16x16")
GOAL_S = 60.0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench_compare.py", description=__doc__.split("\n")[0])
    p.add_argument("--topology", default="dgx_a100:16", help="platform spec or file")
    p.add_argument("-c", "--collective", default="allgather")
    p.add_argument("--sizes", default="1K:8G", help="message sizes (default 1K:8G)")
    p.add_argument("--alpha", default="2", help="α per link in µs (default 2)")
    p.add_argument("--machines", nargs="*", metavar="SPEC",
                   help=f"time 'collcert compare' on these (none: {', '.join(MACHINES)})")
    args = p.parse_args(argv)
    if args.machines is not None:
        return machines(args.machines or list(MACHINES))

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


def machines(specs: list[str]) -> int:
    """``collcert compare SPEC`` per machine, each its own process: wall, CPU, peak."""
    print(f"{'machine':22s} {'wall s':>8s} {'CPU s':>8s} {'peak MB':>8s}  goal   load")
    late = 0
    for spec in specs:
        load = os.getloadavg()[0]
        t = time.perf_counter()
        with open(os.devnull, "w") as null:
            proc = subprocess.Popen([sys.executable, "-m", "collcert", "compare", spec],
                                    stdout=null, stderr=subprocess.PIPE, text=True)
            err = proc.stderr.read() if proc.stderr else ""
            _, status, use = os.wait4(proc.pid, 0)  # this child's own CPU and peak
        wall = time.perf_counter() - t
        code = os.waitstatus_to_exitcode(status)
        cpu = use.ru_utime + use.ru_stime
        peak = use.ru_maxrss / 1024  # Linux: KB
        ok = "ok" if code == 0 else f"exit {code}"
        mark = "<" if cpu < GOAL_S else ">"
        late += cpu >= GOAL_S
        print(f"{spec:22s} {wall:8.1f} {cpu:8.1f} {peak:8.0f}  {mark} {GOAL_S:.0f} s  "
              f"{load:.1f} {ok}", flush=True)
        if code != 0:
            print("  " + (err.strip().splitlines() or [""])[-1][:150])
    print(f"{late} of {len(specs)} at or above {GOAL_S:.0f} s of CPU (2 cores; wall time is "
          "longer on a busy machine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
