#!/usr/bin/env python3
"""Fuzz campaign: does weighted RS+AG reach LP (5) with equal bandwidth per compute node?

Zhao et al. 2026, §5.7 hypothesises that combining reduce-scatter and allgather
trees is optimal "for any topology with equal bandwidth per compute node". Equal
shards are refuted (golden/allreduce/hypothesis-counterexample-*); this campaign
tests the reading with the best *unequal* shards, run one phase after the other
(collcert.reference.allreduce.weighted_rsag), against ForestColl's LP (5).

Three families, each seeded ``<family>-<i>``:

``free``      switch-free equal-bandwidth topologies (sums of weighted derangements,
              ``collcert.fuzz.allreduce.equal_bandwidth`` without switches: by
              Birkhoff's theorem every such topology is one), 3 to 7 GPUs
``switched``  the same with hops detouring through up to 2 switches
``random``    the fuzz generator's topologies, equalised by a switch
              (``collcert.fuzz.allreduce.equalized``), up to 8 nodes

A failure is shrunk (``collcert.fuzz.shrink``, keeping equal bandwidth and the
family's switch-freeness) and printed as a topology JSON; it belongs in
golden/allreduce/ with this provenance. Usage::

    python benchmarks/campaign_rsag_weighted.py --free 300 --switched 100 --random 100
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from fractions import Fraction

from collcert.fuzz.allreduce import equal_bandwidth, equalized
from collcert.fuzz.generators import RandomSource, generate
from collcert.fuzz.shrink import shrink
from collcert.reference.allreduce import forestcoll_lp, weighted_rsag
from collcert.reference.forestcoll import optimum
from collcert.reference.model import CollcertError, Topology


def gap(t: Topology) -> tuple[Fraction, Fraction, Fraction]:
    """(RS+AG, weighted RS+AG, LP (5)) on ``t`` equalised."""
    e = equalized(t)
    lp = forestcoll_lp(e, method="flows").value  # App. G's own form (small topologies)
    return optimum(e, "allreduce").algbw, weighted_rsag(e).value, lp


def family(name: str, max_compute: int, layers: int) -> Callable[[int], Topology]:
    tag = "" if (max_compute, layers) == (7, 4) else f"-{max_compute}x{layers}"
    if name == "free":
        return lambda i: equal_bandwidth(RandomSource(f"free{tag}-{i}"),
                                         max_compute=max_compute, max_switches=0,
                                         max_layers=layers)
    if name == "switched":
        return lambda i: equal_bandwidth(RandomSource(f"switched{tag}-{i}"),
                                         max_compute=max_compute - 1, max_switches=2,
                                         max_layers=layers - 1)
    return lambda i: generate(f"random{tag}-{i}", max_nodes=max_compute + 1)


def fails_in(name: str) -> Callable[[Topology], bool]:
    def fails(t: Topology) -> bool:
        try:
            if name != "random" and equalized(t) is not t:
                return False  # keep equal bandwidth without a helper switch
            if name == "free" and t.switch_nodes:
                return False
            _, w, lp = gap(t)
            return w != lp
        except CollcertError:
            return False
    return fails


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for fam, default in (("free", 300), ("switched", 100), ("random", 100)):
        ap.add_argument(f"--{fam}", type=int, default=default, metavar="N",
                        help=f"cases of the {fam} family (default {default})")
    ap.add_argument("--start", type=int, default=0, help="first case index (default 0)")
    ap.add_argument("--max-compute", type=int, default=7, metavar="K",
                    help="largest number of GPUs (free family; switched K−1, random K+1 "
                    "nodes; default 7)")
    ap.add_argument("--layers", type=int, default=4, metavar="L",
                    help="most derangement layers (free; switched L−1; default 4)")
    args = ap.parse_args(argv)
    found = 0
    print(f"{'family':9} {'cases':>5} {'rsag<lp':>7} {'w<lp':>5} {'w>rsag':>6} {'max K':>5} "
          f"{'seconds':>8}", flush=True)
    for fam in ("free", "switched", "random"):
        make, fails = family(fam, args.max_compute, args.layers), fails_in(fam)
        n = getattr(args, fam)
        below = closed = wlt = biggest = 0
        t0 = time.monotonic()
        skipped = 0
        for i in range(args.start, args.start + n):
            try:
                t = make(i)
            except CollcertError:  # not strongly connected: no allreduce to compare
                skipped += 1
                continue
            if len(t.nodes) > args.max_compute + 5:
                skipped += 1
                continue
            rs, w, lp = gap(t)
            biggest = max(biggest, t.num_compute)
            below += rs < lp
            closed += rs < w
            if w != lp:
                wlt += 1
                small = shrink(t, fails, max_calls=200, time_limit=120)
                found += 1
                print(f"COUNTEREXAMPLE {fam}-{i}: weighted RS+AG {w} < LP (5) {lp}; shrunk:",
                      json.dumps(small.to_json()), flush=True)
        print(f"{fam:9} {n - skipped:5d} {below:7d} {wlt:5d} {closed:6d} {biggest:5d} "
              f"{time.monotonic() - t0:8.1f}  ({skipped} disconnected or too large, skipped)",
              flush=True)
    print("counterexamples:", found)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
