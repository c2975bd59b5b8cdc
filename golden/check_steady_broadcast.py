#!/usr/bin/env python3
"""Check the steady-state broadcast golden cases with the standard library only.

For every case in golden/steady-broadcast/ (format ``collcert-golden-steady/1``,
golden/README.md) on a one-port platform (docs/steady-broadcast.md):

* ``T_star`` is proven exactly: the listed n (``ssb_n``, or the DAG rates
  ``dag_q_n`` / q divided by TP) carries a unit flow from the source to every
  node (augmenting paths in Fractions) with every port busy at most T*, and
  the listed dual (port prices, cut weights) is feasible with Σ weights = T*:
  no schedule beats 1/T* (Legrand et al. 2003, Lemma 7; argument in docs/steady-broadcast.md);
* single trees: eq. (1) for the listed trees, and the best tree by enumerating
  every arborescence rooted at the source;
* best DAG: the listed DAG is a DAG, its optimum is TP (the dual above proves it
  when the case's platform is that DAG), and every node order's forward links
  (which contain every acyclic sub-platform) give that DAG or its image under a
  listed automorphism (a throughput is monotone in the links, so the best DAG is
  a maximal one);
* periodic data: trees span the platform with Σλ = N and load ≤ N·n; matchings
  are matchings covering m·c with Σμ = N·T*.

Usage: python golden/check_steady_broadcast.py [CASE.json ...]; exit 0 when all pass.
"""

from __future__ import annotations

import itertools
import json
import sys
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent


def exact(v: object) -> Fraction:
    return Fraction(str(v))


def platform(data: dict) -> tuple[list[str], dict[tuple[str, str], Fraction]]:
    assert data["port_model"] == "one-port"
    nodes = [str(v) for v in data["compute_nodes"]]
    cost = {}
    for link in data["links"]:
        cost[(str(link["src"]), str(link["dst"]))] = exact(link["cost"])
        if link.get("bidirectional"):
            cost[(str(link["dst"]), str(link["src"]))] = exact(link["cost"])
    return nodes, cost


def max_flow(cap: dict[tuple[str, str], Fraction], s: str, t: str) -> Fraction:
    """Edmonds-Karp in Fractions (tiny graphs)."""
    res: dict[tuple[str, str], Fraction] = {}
    for (u, v), c in cap.items():
        res[(u, v)] = res.get((u, v), Fraction(0)) + c
        res.setdefault((v, u), Fraction(0))
    total = Fraction(0)
    while True:
        prev = {s: s}
        queue = [s]
        while queue and t not in prev:
            u = queue.pop(0)
            for (a, b), c in res.items():
                if a == u and c > 0 and b not in prev:
                    prev[b] = a
                    queue.append(b)
        if t not in prev:
            return total
        path = []
        v = t
        while v != s:
            path.append((prev[v], v))
            v = prev[v]
        push = min(res[e] for e in path)
        for a, b in path:
            res[(a, b)] -= push
            res[(b, a)] += push
        total += push


def tree_tp(cost: dict, links: list[tuple[str, str]]) -> Fraction:
    load: dict[str, Fraction] = {}
    for u, v in links:
        load[u] = load.get(u, Fraction(0)) + cost[(u, v)]
    return 1 / max(load.values())


def is_arborescence(nodes: list[str], links: list[tuple[str, str]], s: str) -> bool:
    parent = {}
    for u, v in links:
        if v == s or v in parent:
            return False
        parent[v] = u
    for v in nodes:
        seen = set()
        while v != s:
            if v in seen or v not in parent:
                return False
            seen.add(v)
            v = parent[v]
    return True


def all_trees(nodes: list[str], cost: dict, s: str):
    others = [v for v in nodes if v != s]
    choices = [[u for (u, w) in cost if w == v] for v in others]
    for pick in itertools.product(*choices):
        links = list(zip(pick, others))
        if is_arborescence(nodes, links, s):
            yield links


def check_bound(nodes, cost, s, n, T, dual, errors: list[str]) -> None:
    """Primal: unit flows in n, ports ≤ T. Dual: prices and cuts with Σ y = T."""
    for v in nodes:
        out = sum((c * n.get((a, b), 0) for (a, b), c in cost.items() if a == v), Fraction(0))
        inn = sum((c * n.get((a, b), 0) for (a, b), c in cost.items() if b == v), Fraction(0))
        if out > T or inn > T:
            errors.append(f"port of {v} busy more than T* = {T}")
    for v in nodes:
        if v != s and max_flow({e: x for e, x in n.items() if x}, s, v) < 1:
            errors.append(f"n carries less than a unit flow from {s} to {v}")
    send = {k: exact(x) for k, x in dual["send"].items()}
    recv = {k: exact(x) for k, x in dual["recv"].items()}
    if min(list(send.values()) + list(recv.values()) + [0]) < 0 or \
            sum(send.values()) + sum(recv.values()) > 1:
        errors.append("port prices negative or adding up to more than 1")
    load = {e: Fraction(0) for e in cost}
    total = Fraction(0)
    for cut in dual["cuts"]:
        X, y = {str(x) for x in cut["nodes"]}, exact(cut["weight"])
        if s in X or y < 0:
            errors.append(f"cut {sorted(X)} holds the source or has a negative weight")
        total += y
        for (a, b) in cost:
            if b in X and a not in X:
                load[(a, b)] += y
    for (a, b), y in load.items():
        if y > cost[(a, b)] * (send.get(a, 0) + recv.get(b, 0)):
            errors.append(f"cuts entered by {a}->{b} weigh more than c·(prices)")
    if total != T:
        errors.append(f"the dual bound {total} is not T* = {T}")


def check_case(path: Path) -> list[str]:
    case = json.loads(path.read_text())
    errors: list[str] = []
    assert case["format"] == "collcert-golden-steady/1" and case["provenance"]
    nodes, cost = platform(case["topology"])
    s = str(case["source"])
    exp = case["expected"]
    T = exact(exp["T_star"])
    if exact(exp["throughput"]) * T != 1:
        errors.append("throughput is not 1/T*")
    if "ssb_n" in exp:
        n = {(u, v): exact(x) for u, v, x in exp["ssb_n"]}
    else:  # DAG rates q·n over q, per message: divided by TP
        q, tp = exp["dag_q"], exact(exp["throughput"])
        rate = {(u, v): exact(x) / q for u, v, x in exp["dag_q_n"]}
        for v in nodes:
            if v != s and sum(r for (a, b), r in rate.items() if b == v) != tp:
                errors.append(f"DAG rates into {v} do not add up to TP")
        n = {e: r / tp for e, r in rate.items()}
    check_bound(nodes, cost, s, n, T, exp["dual"], errors)
    trees = list(all_trees(nodes, cost, s))
    best = max(tree_tp(cost, t) for t in trees)
    for key in ("tree_fig3", "best_tree"):
        if key in exp:
            links = [tuple(e) for e in exp[key]["links"]]
            if not is_arborescence(nodes, links, s) or tree_tp(cost, links) != exact(
                    exp[key]["throughput"]):
                errors.append(f"{key}: not an arborescence of that throughput")
    if "best_tree" in exp and best != exact(exp["best_tree"]["throughput"]):
        errors.append(f"best tree by enumeration ({len(trees)} trees) is {best}")
    if "best_dag" in exp:
        dag = {tuple(e) for e in exp["best_dag"]["links"]}
        mirror = {"1": "2", "2": "1", "3": "4", "4": "3", "s": "s"}  # Fig. 1's automorphism
        if {(mirror[a], mirror[b]) for a, b in cost} != set(cost):
            errors.append("the mirror map is not an automorphism of the platform")
        image = {(mirror[a], mirror[b]) for a, b in dag}
        others = [v for v in nodes if v != s]
        forward = set()
        for order in itertools.permutations(others):
            rank = {v: i for i, v in enumerate((s,) + order)}
            forward.add(frozenset(e for e in cost if rank[e[0]] < rank[e[1]]))
        maximal = {f for f in forward if not any(f < g for g in forward)}
        if maximal != {frozenset(dag), frozenset(image)}:
            errors.append("the maximal forward-link DAGs are not the listed DAG and its mirror")
        if exact(exp["best_dag"]["throughput"]) != exact(case["paper"]["dag"]):
            errors.append("best DAG throughput differs from the paper")
    per = exp.get("periodic")
    if per:
        N = per["N"]
        if sum(t["weight"] for t in per["trees"]) != N:
            errors.append("tree weights do not add up to N")
        m: dict[tuple[str, str], int] = {}
        for t in per["trees"]:
            links = [tuple(e) for e in t["edges"]]
            if not is_arborescence(nodes, links, s):
                errors.append(f"tree {links} is not a spanning arborescence")
            for e in links:
                m[e] = m.get(e, 0) + t["weight"]
        for e, x in m.items():
            if x > N * n.get(e, 0):
                errors.append(f"tree load on {e} exceeds N·n")
        if "matchings" in per:
            cover: dict[tuple[str, str], Fraction] = {}
            for mt in per["matchings"]:
                es = [tuple(e) for e in mt["edges"]]
                if len({a for a, _ in es}) < len(es) or len({b for _, b in es}) < len(es):
                    errors.append(f"{es} is not a matching")
                for e in es:
                    cover[e] = cover.get(e, Fraction(0)) + exact(mt["duration"])
            if cover != {e: x * cost[e] for e, x in m.items()}:
                errors.append("matchings do not cover m·c")
            if sum(exact(mt["duration"]) for mt in per["matchings"]) != N * T:
                errors.append("Σμ is not N·T*")
            if exact(per["period"]) * exact(exp["throughput"]) != exact(
                    per["messages_per_period"]):
                errors.append("period and messages per period do not give TP")
    return errors


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((HERE / "steady-broadcast").glob("*.json"))
    bad = 0
    for path in paths:
        errors = check_case(path)
        print(f"{'ok  ' if not errors else 'FAIL'} {path.name}")
        for e in errors:
            print(f"     {e}")
        bad += bool(errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
