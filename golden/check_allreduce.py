#!/usr/bin/env python3
"""Check the all-reduce rate golden cases (golden/allreduce/) with the standard library only.

For every case this script

* reads the topology (collcert-topology/1; any directed graph) exactly;
* recomputes the cut-set bound C = min B⁺(S) over node sets S that split the
  compute nodes, by enumerating every S (On the Computation Rate of
  All-Reduce, Thm 1);
* checks the witness weighting of MAC-BC networks (each a spanning
  in-arborescence into its root plus a spanning out-arborescence from it,
  loads within the capacities): R_LP ≥ its total; and proves R_LP ≤ the
  expected value by min(C, Σβ/(2(K−1))) (Thm 1 and Corollary 2.1) or, when
  the case carries a dual y, by enumerating every arborescence (small K):
  every MAC-BC network must cost ≥ 1 under y, and Σ β·y is an upper bound;
* checks ``rsag_algbw`` = N / (2 · 1/x*) with 1/x* = max |S ∩ V_c| / B⁺(S)
  over S ⊉ V_c (Zhao & Krishnamurthy 2023, eq. (1), App. B), by enumeration.

``uniform_lp`` (an LP value) is not re-derived here; tests/test_allreduce_golden.py
cross-checks it with Z3. Usage: python golden/check_allreduce.py [CASE.json ...].
Exit status 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import itertools
import json
import sys
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAX_ENUM_NODES = 20
MAX_DUAL_NODES = 6


def exact(text: object) -> Fraction:
    if isinstance(text, int) and not isinstance(text, bool):
        return Fraction(text)
    if isinstance(text, str):
        return Fraction(text)
    raise ValueError(f"not an exact number: {text!r}")


class Graph:
    def __init__(self, data: dict) -> None:
        self.compute = list(data["compute_nodes"])
        self.nodes = self.compute + list(data.get("switch_nodes", []))
        self.cap: dict[tuple, Fraction] = {}
        for link in data["links"]:
            c = exact(link["capacity"])
            pairs = [(link["src"], link["dst"])]
            if link.get("bidirectional"):
                pairs.append((link["dst"], link["src"]))
            for e in pairs:
                if c:
                    self.cap[e] = self.cap.get(e, Fraction(0)) + c

    def out(self, s: set) -> Fraction:
        return sum((c for (u, v), c in self.cap.items() if u in s and v not in s), Fraction(0))

    def subsets(self):
        n = len(self.nodes)
        for mask in range(1, (1 << n) - 1):
            s = {self.nodes[i] for i in range(n) if mask >> i & 1}
            yield s, sum(1 for c in self.compute if c in s)


def spanning(g: Graph, arcs: list, root, direction: str) -> bool:
    parent = {}
    for a, b in arcs:
        if (a, b) not in g.cap:
            return False
        child, par = (b, a) if direction == "out" else (a, b)
        if child == root or child in parent:
            return False
        parent[child] = par
    for x in g.compute:
        steps = 0
        while x != root and x in parent and steps <= len(g.compute):
            x, steps = parent[x], steps + 1
        if x != root:
            return False
    return True


def cheapest(g: Graph, y: dict, root, direction: str) -> Fraction | None:
    """Cheapest spanning arborescence by trying every parent choice (small K only)."""
    others = [v for v in g.compute if v != root]
    choices = []
    for v in others:
        arcs = [(u, v) for u in g.compute if (u, v) in g.cap] if direction == "out" else \
            [(v, u) for u in g.compute if (v, u) in g.cap]
        choices.append(arcs)
    best = None
    for combo in itertools.product(*choices):
        if spanning(g, list(combo), root, direction):
            cost = sum((y.get(e, Fraction(0)) for e in combo), Fraction(0))
            best = cost if best is None or cost < best else best
    return best


def check(path: Path) -> list[str]:
    case = json.loads(path.read_text())
    g = Graph(case["topology"])
    exp = {k: exact(v) for k, v in case["expected"].items()}
    errors = []
    if len(g.nodes) > MAX_ENUM_NODES:
        return [f"{path.name}: {len(g.nodes)} nodes: too many to enumerate"]
    cut = min(g.out(s) for s, inside in g.subsets() if 0 < inside < len(g.compute))
    if "cut_set_bound" in exp and cut != exp["cut_set_bound"]:
        errors.append(f"cut-set bound by enumeration {cut}, expected {exp['cut_set_bound']}")
    if "mac_bc_lp" in exp:
        want = exp["mac_bc_lp"]
        load: dict[tuple, Fraction] = {}
        total = Fraction(0)
        for col in case.get("witness", {}).get("weighting", []):
            w = exact(col["weight"])
            for key, direction in (("reduce", "in"), ("broadcast", "out")):
                arcs = [tuple(e) for e in col[key]]
                if not spanning(g, arcs, col["root"], direction):
                    errors.append(f"witness column of root {col['root']}: {key} is not spanning")
                for e in arcs:
                    load[e] = load.get(e, Fraction(0)) + w
            total += w
        over = [e for e, x in load.items() if x > g.cap.get(e, Fraction(0))]
        if over:
            errors.append(f"the witness weighting overloads {over[:3]}")
        if total != want:
            errors.append(f"the witness weighting reaches {total}, expected R_LP {want}")
        k = len(g.compute)
        upper = min(cut, sum(g.cap.values(), Fraction(0)) / (2 * (k - 1)))
        if "dual" in case and k <= MAX_DUAL_NODES:
            y = {tuple(e[:2]): exact(e[2]) for e in case["dual"]["y"]}
            worst = min(cheapest(g, y, r, "in") + cheapest(g, y, r, "out") for r in g.compute)
            if worst < 1:
                errors.append(f"the dual lets a MAC-BC network cost {worst} < 1")
            upper = min(upper, sum(g.cap[e] * v for e, v in y.items()))
        if upper != want:
            errors.append(f"R_LP ≥ {total} is proven, but the upper bounds give {upper} "
                          f"(C = {cut}, Cor. 2.1, dual), not {want}")
        if "forestcoll_lp" in exp and exp["forestcoll_lp"] != want:
            errors.append("without switches LP (5) equals R_LP (Edmonds' branching theorem)")
    if "rsag_algbw" in exp:
        inv_x = max(Fraction(inside) / g.out(s) for s, inside in g.subsets()
                    if inside < len(g.compute) and g.out(s))
        rsag = Fraction(len(g.compute)) / (2 * inv_x)
        if rsag != exp["rsag_algbw"]:
            errors.append(f"RS+AG by enumeration {rsag}, expected {exp['rsag_algbw']}")
    if "r_star" in exp and not (exp["r_star"] == cut == exp.get("mac_bc_lp")):
        errors.append("R* is claimed but R_LP and C do not meet")
    return [f"{path.name}: {e}" for e in errors]


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((HERE / "allreduce").glob("*.json"))
    errors = [e for p in paths for e in check(p)]
    for e in errors:
        print(e)
    print(f"{len(paths)} all-reduce cases: " + ("all checks pass" if not errors else
                                                 f"{len(errors)} problems"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
