"""Independent optimum of steady-state broadcast on tiny platforms: every tree, solved by Z3.

A periodic one-port schedule that sends each message down one broadcast tree
is described by the rates w_T ≥ 0 (messages per time unit) of the spanning
arborescences T rooted at the source. By the Edge Coloring Lemma (Legrand et al. 2003
Lemma 1) such rates can be scheduled iff every port is busy at most all the
time:

    for every node j:  Σ_T w_T · Σ_{children k of j in T} c_{j,k} ≤ 1   (send port)
                       Σ_T w_T · c_{parent_T(j), j}               ≤ 1   (receive port)

and the throughput is Σ_T w_T. Legrand et al. 2003, Thm 5 (a weighted packing of trees
reaches the SSB optimum) and the converse (tree rates give a feasible SSB
point) make the best such rate equal to 1/T* of SSB(G). This module
enumerates **every** arborescence (fine for 5-6 nodes) and maximises with
Z3's exact rational optimiser: a formulation, an enumeration and a solver
that share nothing with collcert.reference (it reads the platform's JSON dict).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

MAX_TREES = 20_000


def _platform(data: Mapping[str, Any]) -> tuple[list[str], dict[tuple[str, str], Fraction]]:
    nodes = [str(v) for v in data["compute_nodes"]]
    cost: dict[tuple[str, str], Fraction] = {}
    for link in data["links"]:
        u, v, c = (link["src"], link["dst"], link["cost"]) if isinstance(link, Mapping) else link
        cost[(str(u), str(v))] = Fraction(str(c))
        if isinstance(link, Mapping) and link.get("bidirectional"):
            cost[(str(v), str(u))] = Fraction(str(c))
    return nodes, cost


def arborescences(nodes: list[str], links: list[tuple[str, str]], source: str,
                  ) -> Iterator[dict[str, str]]:
    """Every spanning arborescence rooted at ``source``, as a map child -> parent."""
    others = [v for v in nodes if v != source]
    parents = {v: [u for u, w in links if w == v] for v in others}

    def hangs(tree: dict[str, str]) -> bool:
        for v in others:
            seen = set()
            while v != source:
                if v in seen:
                    return False
                seen.add(v)
                v = tree[v]
        return True

    def go(k: int, tree: dict[str, str]) -> Iterator[dict[str, str]]:
        if k == len(others):
            if hangs(tree):
                yield dict(tree)
            return
        v = others[k]
        for u in parents[v]:
            tree[v] = u
            yield from go(k + 1, tree)
        tree.pop(v, None)

    yield from go(0, {})


def best_tree_rate(data: Mapping[str, Any], source: str) -> tuple[Fraction, int]:
    """(the best throughput of any mix of broadcast trees, the number of trees), via Z3."""
    import z3

    nodes, cost = _platform(data)
    trees = []
    for tree in arborescences(nodes, list(cost), str(source)):
        trees.append(tree)
        if len(trees) > MAX_TREES:
            raise ValueError(f"more than {MAX_TREES} arborescences: the platform is too big")
    opt = z3.Optimize()
    w = [z3.Real(f"w{i}") for i in range(len(trees))]
    for x in w:
        opt.add(x >= 0)

    def q(f: Fraction) -> Any:
        return z3.Q(f.numerator, f.denominator)

    for j in nodes:
        send = [q(sum((cost[(j, k)] for k, p in t.items() if p == j), Fraction(0))) * x
                for t, x in zip(trees, w) if j in t.values()]
        recv = [q(cost[(t[j], j)]) * x for t, x in zip(trees, w) if j in t]
        for terms in (send, recv):
            if terms:
                opt.add(z3.Sum(terms) <= 1)
    total = z3.Sum(w) if w else z3.RealVal(0)
    handle = opt.maximize(total)
    if opt.check() != z3.sat:  # pragma: no cover - w = 0 is always feasible
        raise RuntimeError("Z3 found no solution")
    value = opt.upper(handle)
    return Fraction(value.as_string()), len(trees)
