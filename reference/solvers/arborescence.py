"""Minimum-weight spanning arborescences (Chu-Liu / Edmonds), exact or in floats.

An *out-arborescence* from ``root`` is a set of arcs in which every node but
the root has exactly one entering arc and every node is reached from the
root; an *in-arborescence* into ``root`` is an out-arborescence of the
reversed graph. Edmonds (1967): pick each node's cheapest entering arc; if
these contain no cycle they are optimal; otherwise contract a cycle C into
one node, lower every arc entering C at v by the weight of v's chosen arc,
solve the smaller problem and expand (the arc chosen into C replaces the
cycle arc into its head). The algorithm only compares and subtracts weights,
so with ``int`` or ``Fraction`` weights the result is exact; with floats it is
a fast heuristic for pricing (the exact pass decides).

Used by the column generation of the MAC-BC linear program (Zhou & Sun 2026,
:mod:`collcert.reference.allreduce.rate`): a MAC-BC network rooted at r is an
in-arborescence into r plus an out-arborescence from r, so the cheapest one
under link weights y costs ``min_in(r) + min_out(r)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Weight = Any  # int, Fraction or float: only compared, added and subtracted


def min_arborescence(
    n: int, tails: Sequence[int], heads: Sequence[int], weights: Sequence[Weight], root: int
) -> tuple[Weight, list[int]] | None:
    """The cheapest out-arborescence from ``root`` over nodes ``0..n-1``.

    Arcs are given as parallel sequences (arc i: ``tails[i] -> heads[i]`` of
    weight ``weights[i]``). Returns ``(cost, arc indices)`` with one entering
    arc per node other than the root, or ``None`` when some node cannot be
    reached from the root.
    """
    arcs = [(tails[i], heads[i], weights[i]) for i in range(len(tails))]
    chosen = _edmonds(n, arcs, root)
    if chosen is None:
        return None
    cost = sum((weights[i] for i in chosen[1:]), weights[chosen[0]]) if chosen else 0
    return cost, sorted(chosen)


def _edmonds(n: int, arcs: list[tuple[int, int, Weight]], root: int) -> list[int] | None:
    """Indices into ``arcs`` of a cheapest out-arborescence from ``root`` (or None)."""
    best: list[int] = [-1] * n
    for i, (u, v, w) in enumerate(arcs):
        if u != v and v != root and (best[v] < 0 or w < arcs[best[v]][2]):
            best[v] = i
    for v in range(n):
        if v != root and best[v] < 0:
            return None
    # cycles among the chosen arcs
    comp = [-1] * n
    mark = [-1] * n
    cycles: list[list[int]] = []
    for v in range(n):
        x = v
        while x != root and comp[x] < 0 and mark[x] != v:
            mark[x] = v
            x = arcs[best[x]][0]
        if x != root and comp[x] < 0 and mark[x] == v:
            cyc = [x]
            y = arcs[best[x]][0]
            while y != x:
                cyc.append(y)
                y = arcs[best[y]][0]
            for y in cyc:
                comp[y] = len(cycles)
            cycles.append(cyc)
    if not cycles:
        return [best[v] for v in range(n) if v != root]
    count = len(cycles)
    for v in range(n):
        if comp[v] < 0:
            comp[v] = count
            count += 1
    in_cycle = [False] * n
    for cyc in cycles:
        for y in cyc:
            in_cycle[y] = True
    sub: list[tuple[int, int, Weight]] = []
    origin: list[int] = []
    for i, (u, v, w) in enumerate(arcs):
        cu, cv = comp[u], comp[v]
        if cu == cv:
            continue
        sub.append((cu, cv, w - arcs[best[v]][2] if in_cycle[v] else w))
        origin.append(i)
    inner = _edmonds(count, sub, comp[root])
    if inner is None:
        return None
    result = [origin[j] for j in inner]
    entered: dict[int, int] = {}  # cycle index -> node where the chosen arc enters it
    for i in result:
        v = arcs[i][1]
        if in_cycle[v]:
            entered[comp[v]] = v
    for c, cyc in enumerate(cycles):
        skip = entered[c]
        result.extend(best[y] for y in cyc if y != skip)
    return result


def min_in_and_out(
    n: int, tails: Sequence[int], heads: Sequence[int], weights: Sequence[Weight], root: int
) -> tuple[tuple[Weight, list[int]], tuple[Weight, list[int]]] | None:
    """(cheapest in-arborescence into ``root``, cheapest out-arborescence from it).

    Each as ``(cost, arc indices)``; ``None`` when either does not exist (the
    graph is not strongly connected).
    """
    out = min_arborescence(n, tails, heads, weights, root)
    if out is None:
        return None
    inn = min_arborescence(n, heads, tails, weights, root)
    if inn is None:
        return None
    return inn, out
