"""Benchmark: Algorithm 1 and the independent simulator on large reductions.

Target (issue 10): Algorithm 1 for n = 10^6 under 10 s on 2 cores, and the
simulator (collcert.certify.reduction.simulate) checking the result in
comparable time. Prints one line per (n, d, c) with the CPU seconds of each
step; integer costs run on ints, rational ones on ints scaled to the common
denominator (the simulator reads "p/q" strings).

    python benchmarks/bench_reduction.py            # n = 10^6, (d, c) = (2, 1) and (1/2, 1/3)
    python benchmarks/bench_reduction.py 100000 3 2
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

from collcert.certify.reduction import check_reduction
from collcert.reference.reduction import schedule_document
from collcert.reference.reduction.trees import algorithm1


def run(n: int, d: str, c: str) -> None:
    cpu = time.process_time
    t0 = cpu()
    sched = algorithm1(n, d, c)
    t1 = cpu()
    doc = schedule_document(sched)  # adds the bounds and the operand order
    t2 = cpu()
    verdict, _ = check_reduction(doc)
    t3 = cpu()
    assert verdict.ok, verdict.reasons
    assert verdict.facts["makespan"] == sched.makespan
    print(f"n = {n:>9}  d = {d:>4}  c = {c:>4}  makespan {Fraction(sched.makespan)!s:>8}  "
          f"Algorithm 1 {t1 - t0:6.2f} s  document {t2 - t1:6.2f} s  "
          f"simulator {t3 - t2:6.2f} s  (CPU seconds)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("case", nargs="*", metavar="N D C",
                    help="one case: n, transfer cost d, compute cost c (default: n = 10^6 "
                    "with (d, c) = (2, 1) and (1/2, 1/3))")
    case = ap.parse_args().case
    if case:
        if len(case) != 3:
            ap.error("give N D C, e.g. 100000 3 2")
        run(int(case[0]), case[1], case[2])
        return
    for d, c in (("2", "1"), ("1/2", "1/3")):
        run(10**6, d, c)


if __name__ == "__main__":
    main()
