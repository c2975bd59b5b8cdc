#!/usr/bin/env python3
"""Check the golden cases with the standard library only (no collcert needed).

For every case in golden/cases/ this script

* reads the topology (collcert-topology/1, docs/topology.md) with exact
  ``fractions.Fraction`` capacities and checks it is Eulerian;
* checks every cut listed under ``expected`` against the expected value
  (|S ∩ V_c| / B⁺(S) = 1/x* for allgather, B⁺(S) = cut capacity for
  broadcast/reduce) and the ``paper`` figures against the exact values
  rounded as the paper prints them;
* on topologies of at most ``--max-nodes`` nodes (default 20), recomputes
  the expected values by enumerating every node set S ⊂ V (Zhao & Krishnamurthy 2023, eq. (1),
  (5), (6), (7)) and, for allgather, lists every maximising cut and checks
  that the ``cuts`` list of the case is exactly that set.

Usage: python golden/check_golden.py [--max-nodes N] [CASE.json ...]
Exit status 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent


def parse_exact(text: object) -> Fraction:
    if isinstance(text, int) and not isinstance(text, bool):
        return Fraction(text)
    if isinstance(text, str):
        if "/" in text:
            num, den = text.split("/")
            return Fraction(int(num), int(den))
        return Fraction(Decimal(text))
    raise ValueError(f"not an exact number: {text!r}")


class Topo:
    def __init__(self, data: dict) -> None:
        self.compute = list(data["compute_nodes"])
        self.switches = list(data.get("switch_nodes", []))
        self.nodes = self.compute + self.switches
        self.cap: dict[tuple[object, object], Fraction] = {}
        for link in data["links"]:
            c = parse_exact(link["capacity"])
            pairs = [(link["src"], link["dst"])]
            if link.get("bidirectional"):
                pairs.append((link["dst"], link["src"]))
            for e in pairs:
                self.cap[e] = self.cap.get(e, Fraction(0)) + c
        bal = {v: Fraction(0) for v in self.nodes}
        for (u, v), c in self.cap.items():
            bal[u] += c
            bal[v] -= c
        bad = [v for v, b in bal.items() if b]
        if bad:
            raise ValueError(f"topology not Eulerian at {bad}")

    def out(self, s: set) -> Fraction:
        return sum((c for (u, v), c in self.cap.items() if u in s and v not in s), Fraction(0))

    def inside(self, s: set) -> int:
        return sum(1 for v in self.compute if v in s)

    def all_cuts(self):
        n = len(self.nodes)
        bit = {v: 1 << i for i, v in enumerate(self.nodes)}
        edges = [(bit[u], bit[v], c) for (u, v), c in self.cap.items()]
        cmask = sum(bit[v] for v in self.compute)
        for mask in range(1, (1 << n) - 1):
            out = sum((c for bu, bv, c in edges if mask & bu and not mask & bv), Fraction(0))
            yield mask, bin(mask & cmask).count("1"), out, bit


def as_set(mask: int, bit: dict) -> frozenset:
    return frozenset(v for v, b in bit.items() if mask & b)


def check_case(path: Path, max_nodes: int) -> list[str]:
    case = json.loads(path.read_text(encoding="utf-8"), parse_float=Decimal)
    t = Topo(case["topology"])
    q = case["query"]
    exp = case["expected"]
    errors: list[str] = []

    def need(cond: bool, what: str) -> None:
        if not cond:
            errors.append(f"{path.name}: {what}")

    coll, k = q["collective"], q.get("fixed_k")
    n_c = len(t.compute)
    algbw = parse_exact(exp["algbw"])
    need(parse_exact(exp["time_per_unit"]) == 1 / algbw, "time_per_unit != 1/algbw")
    if coll == "allgather" and k is None:
        inv_x = parse_exact(exp["inv_x"])
        need(algbw == n_c / inv_x, "algbw != N / inv_x")
        u = parse_exact(exp["U"])
        need(u == exp["k"] * inv_x, "U != k * inv_x")
        need(all((u * c).denominator == 1 for c in t.cap.values()), "U*c_e not integral")
        need(all(any(((j * inv_x) * c).denominator != 1 for c in t.cap.values())
                 for j in range(1, exp["k"])), "k is not the least (Prop 3)")
        for cut in exp.get("cuts", []):
            s = set(cut)
            need(0 < t.inside(s) < n_c and Fraction(t.inside(s)) / t.out(s) == inv_x,
                 f"cut {cut} does not have ratio {inv_x}")
    if k is not None:
        u = parse_exact(exp["U"])
        need(algbw == Fraction(n_c * k) / u, "algbw != N k / U")
        inv_x = parse_exact(exp["inv_x"])
        need(u / k <= inv_x + 1 / (k * min(t.cap.values())), "Thm 15 bound violated")
        need(algbw <= n_c / inv_x, "fixed-k algbw above the optimum")
    if coll in ("broadcast", "reduce"):
        cap = parse_exact(exp["cut_capacity"])
        need(algbw == cap, "algbw != cut capacity (bound (5))")
        for cut in exp.get("cuts", []):
            need(t.out(set(cut)) == cap, f"cut {cut} does not have capacity {cap}")
    paper = case.get("paper")
    if paper:
        digits = paper.get("decimals", 0)
        scaled = algbw * 10**digits
        rounded = Fraction(math.floor(scaled + Fraction(1, 2)), 10**digits)
        need(rounded == parse_exact(paper["algbw"]),
             f"exact {algbw} does not round to the paper's {paper['algbw']}")

    if len(t.nodes) > max_nodes:
        return errors
    # ---------------------------------------------------------------- enumeration
    best, argmax = Fraction(0), []
    min_mixed = None
    single: dict[object, Fraction] = {}
    root_min = None
    root = q.get("root")
    for mask, inside, out, bit in t.all_cuts():
        if inside in (0, n_c):
            continue
        r = Fraction(inside) / out
        if r > best:
            best, argmax = r, [mask]
        elif r == best:
            argmax.append(mask)
        min_mixed = out if min_mixed is None else min(min_mixed, out)
        if inside == 1:
            (v,) = [x for x in t.compute if mask & bit[x]]
            single[v] = min(single.get(v, out), out)
        if root is not None and mask & bit[root]:
            root_min = out if root_min is None else min(root_min, out)
    if coll == "allgather" and k is None:
        need(best == parse_exact(exp["inv_x"]), f"enumeration gives 1/x* = {best}")
        if "cuts" in exp:
            listed = {frozenset(c) for c in exp["cuts"]}
            found = {as_set(m, bit) for m in argmax}
            need(listed == found, f"maximising cuts by enumeration: {sorted(map(sorted, found))}")
    if coll in ("broadcast", "reduce"):
        need(root_min == min_mixed, "bound (5) depends on the root (not Eulerian?)")
        need(min_mixed == algbw, f"enumeration gives bound (5) = {min_mixed}")
    if coll == "allreduce":
        ar = exp["allreduce"]
        need(parse_exact(ar["bound6_time_per_unit"]) == 1 / min_mixed, "bound (6)")
        t7 = Fraction(2 * (n_c - 1), n_c) / max(single.values())
        need(parse_exact(ar["bound7_time_per_unit"]) == t7, f"bound (7) is {t7}")
        rsag = 2 * best / n_c
        need(parse_exact(ar["rsag_time_per_unit"]) == rsag, f"RS+AG time is {rsag}")
        need(ar["rsag_proven_optimal"] == (rsag == max(1 / min_mixed, t7)),
             "rsag_proven_optimal")
    return errors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cases", nargs="*", type=Path)
    ap.add_argument("--max-nodes", type=int, default=20,
                    help="enumerate all cuts only on topologies with at most this many nodes")
    args = ap.parse_args(argv)
    paths = args.cases or sorted((HERE / "cases").glob("*.json"))
    errors: list[str] = []
    for p in paths:
        errs = check_case(p, args.max_nodes)
        print(f"{'ok  ' if not errs else 'FAIL'} {p.name}")
        errors += errs
    for e in errors:
        print("  " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
