#!/usr/bin/env python3
"""Check the reduction golden cases (golden/reduction/*.json) with the standard library only.

Model: Canon & Antoniu, "Scheduling Associative Reductions with Homogeneous Costs
when Overlapping Communications and Computations" (INRIA RR-7898). For every case
with n ≤ --max-nodes (default 8) and no limit on concurrent transfers, this script
recomputes the optimal length by brute force:

* every rooted tree on n machines, built as in the paper's Lemma 1 (add machines
  one by one, each sending to one already placed), kept once per isomorphism class;
* for each machine, every order in which its senders' transfers arrive; a transfer
  starts when its sender is ready and the receiver's port is free, a reduction when
  its operand has arrived and the previous reduction is done (no overlap of transfers
  and reductions on a machine in the ``non-overlap`` model);
* with ``max_reducers`` K, only trees with at most K receiving machines.

Cases with a limit on concurrent transfers need a schedule search across machines;
tests/test_reduction_golden.py re-derives those. A case's ``schedule`` (Figure 1) is
simulated from its dates, and ``printed_prop8`` entries are recomputed from the
printed formula. Usage: python golden/check_reduction_golden.py [--max-nodes N] [FILE...]
Exit status 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent


def canon(parent):
    kids = [[] for _ in parent]
    for i, p in enumerate(parent):
        if p >= 0:
            kids[p].append(i)

    def code(v):
        return "(" + "".join(sorted(code(k) for k in kids[v])) + ")"

    return code(parent.index(-1))


def all_trees(n):
    level = {"()": (-1,)}
    for _ in range(n - 1):
        nxt = {}
        for t in level.values():
            for v in range(len(t)):
                grown = t + (v,)
                nxt.setdefault(canon(grown), grown)
        level = nxt
    return list(level.values())


def finish(ready_times, d, c, overlap):
    port = f = Fraction(0)
    for a in ready_times:
        if overlap:
            at = max(a, port)
            port = at + d
            f = max(f, port) + c
        else:
            f = max(a, f) + d + c
    return f


def best_length(tree, d, c, overlap):
    kids = [[] for _ in tree]
    for i, p in enumerate(tree):
        if p >= 0:
            kids[p].append(i)
    def solve(v):
        if not kids[v]:
            return Fraction(0)
        times = [solve(k) for k in kids[v]]
        return min(finish(order, d, c, overlap) for order in set(itertools.permutations(times)))

    return solve(tree.index(-1))


def brute(n, d, c, overlap, reducers):
    best = None
    for t in all_trees(n):
        if reducers is not None and len({p for p in t if p >= 0}) > reducers:
            continue
        value = best_length(t, d, c, overlap)
        best = value if best is None else min(best, value)
    return best


def simulate(s):
    """Makespan of a collcert-reduction/1 schedule (overlap model), or an error string."""
    d, c = Fraction(s["transfer"]), Fraction(s["compute"])
    parent = [None if p is None else p - 1 for p in s["parent"]]
    send = [None if t is None else Fraction(t) for t in s["send_time"]]
    ready = [Fraction(0)] * len(parent)
    for v in range(len(parent)):
        times = sorted(send[i] for i, p in enumerate(parent) if p == v)
        f = Fraction(0)
        for j, t in enumerate(times):
            if j and t < times[j - 1] + d:
                return f"machine {v + 1}: overlapping receptions"
            f = max(f, t + d) + c
        ready[v] = f
    for i, p in enumerate(parent):
        if p is not None and send[i] < ready[i]:
            return f"machine {i + 1} sends before it is ready"
    return ready[parent.index(None)]


def printed_prop8(n, K, d, c):
    lk = K.bit_length() - 1
    return (lk + 1 + -((-Fraction(n, K) + 2).__floor__())) * (d + c)


def check(path, max_nodes):
    doc = json.loads(path.read_text(encoding="utf-8"))
    problems = []
    if doc.get("format") != "collcert-golden-reduction/1":
        return [f"{path.name}: format is not collcert-golden-reduction/1"]
    if not doc.get("provenance"):
        problems.append(f"{path.name}: no provenance")
    checked = skipped = 0
    for case in doc["cases"]:
        n, d, c = case["n"], Fraction(case["transfer"]), Fraction(case["compute"])
        want = Fraction(case["optimal_length"])
        if case.get("max_transfers") is not None or n > max_nodes:
            skipped += 1
            continue
        got = brute(n, d, c, case.get("model", "overlap") == "overlap", case.get("max_reducers"))
        checked += 1
        if got != want:
            problems.append(f"{path.name}: n = {n}, d = {d}, c = {c}: brute force gives {got}, "
                            f"the case says {want}")
    if "schedule" in doc:
        got = simulate(doc["schedule"])
        if got != Fraction(doc["schedule"]["makespan"]):
            problems.append(f"{path.name}: the schedule simulates to {got}")
    for entry in doc.get("printed_prop8", []):
        got = printed_prop8(entry["n"], entry["K"], Fraction(entry["transfer"]),
                            Fraction(entry["compute"]))
        if got != Fraction(entry["value"]):
            problems.append(f"{path.name}: printed Prop 8 gives {got}, the case says "
                            f"{entry['value']}")
    print(f"{path.name}: {checked} cases re-derived, {skipped} left to the test suite"
          + ("" if not problems else f", {len(problems)} PROBLEMS"))
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-nodes", type=int, default=8)
    ap.add_argument("files", nargs="*", type=Path)
    args = ap.parse_args(argv)
    paths = args.files or sorted((HERE / "reduction").glob("*.json"))
    problems = []
    for p in paths:
        problems += check(p, args.max_nodes)
    for line in problems:
        print("  " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
