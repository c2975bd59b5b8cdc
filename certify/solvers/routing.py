"""Check a routing of a traffic matrix and a lower bound on the time of any routing.

A *routing* sends each demand d(s, t) along paths of links, with exact
amounts that add up to d(s, t); link e then carries ``fixed(e)`` (traffic
already placed on it) plus the amounts of the paths through it, and the
routing takes ``time = max_e load(e) / c(e)`` per unit of data.

The lower bound is the length bound of multicommodity flow duality: for any
link lengths l ≥ 0 with Σ_e c(e)·l(e) > 0, every routing of time T has

    T · Σ_e c(e)·l(e)  ≥  Σ_e l(e)·load(e)  ≥  Σ_e l(e)·fixed(e) + Σ_(s,t) d(s,t)·dist_l(s, t)

(each path of (s, t) is at least as long as the shortest), so
``lower = (Σ l·fixed + Σ d·dist_l) / Σ c·l`` bounds every routing from
below. When ``lower == time`` the routing is optimal. The optimal dual of the
minimum-congestion LP gives such lengths (LP duality: the bound then meets
the optimum), as do the links a routing saturates when they form a cut.

The shortest distances are this module's own Dijkstra (:func:`_dijkstra`, in
integers), which repeats the one ``collcert.auditing.routing`` routes with on
purpose: a checker does not import the code whose results it checks.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Mapping, Sequence
from fractions import Fraction

from ..model import Verdict, frac_str

Link = tuple[Hashable, Hashable]


def check_routing(
    capacity: Mapping[Link, Fraction],
    demands: Mapping[Link, Fraction],
    fixed: Mapping[Link, Fraction],
    flows: Mapping[Link, Sequence[tuple[Sequence[Hashable], Fraction]]],
    lengths: Mapping[Link, Fraction],
) -> Verdict:
    """Verdict on ``flows`` (per demand: (path of nodes, amount)) and ``lengths``.

    Facts: ``time_per_unit`` (the routing's time), ``lower`` (the length bound),
    ``bottleneck`` (a link with load / capacity = time).
    """
    v = Verdict("routing certificate")
    load = {e: Fraction(fixed.get(e, 0)) for e in capacity}
    for e in fixed:
        if e not in capacity:
            v.fail(f"fixed traffic on {e[0]} -> {e[1]}, which is not a link")
    for (s, t), d in demands.items():
        total = Fraction(0)
        for path, amount in flows.get((s, t), ()):
            if amount <= 0 or not path or path[0] != s or path[-1] != t:
                v.fail(f"demand {s} -> {t}: a path {list(path)[:6]} with amount "
                       f"{frac_str(amount)} is not a positive flow from {s} to {t}")
                continue
            for e in zip(path, path[1:]):
                if e not in load:
                    v.fail(f"demand {s} -> {t}: its path uses {e[0]} -> {e[1]}, not a link")
                    break
                load[e] += amount
            total += amount
        if total != d:
            v.fail(f"demand {s} -> {t} is {frac_str(d)}, but its paths carry {frac_str(total)}")
    for key in flows:
        if key not in demands:
            v.fail(f"paths for {key[0]} -> {key[1]}, which is not a demand")
    if any(lengths.get(e, 0) < 0 for e in capacity):
        v.fail("a link length is negative")
    scale = sum((capacity[e] * lengths.get(e, 0) for e in capacity), Fraction(0))
    if scale <= 0:
        v.fail("the link lengths are all zero: they bound nothing")
    if not v.ok or not capacity:
        return v
    busiest = max(capacity, key=lambda e: load[e] / capacity[e])
    v.facts["time_per_unit"] = load[busiest] / capacity[busiest]
    v.facts["bottleneck"] = f"{busiest[0]} -> {busiest[1]}"
    # shortest distances in integers: lengths times their common denominator
    den = math.lcm(*(Fraction(x).denominator for x in lengths.values()))
    whole = {e: int(lengths.get(e, 0) * den) for e in capacity}
    out: dict[Hashable, list[Link]] = {}
    for e in capacity:
        out.setdefault(e[0], []).append(e)
    bound = sum((lengths.get(e, 0) * f for e, f in fixed.items()), Fraction(0))
    for s in {s for s, _ in demands}:
        dist = _dijkstra(s, out, whole)
        for (p, t), d in demands.items():
            if p == s:
                if t not in dist:
                    v.fail(f"no path leads from {s} to {t}")
                    return v
                bound += d * Fraction(dist[t], den)
    v.facts["lower"] = bound / scale
    return v


def _dijkstra(s: Hashable, out: Mapping[Hashable, list[Link]],
              length: Mapping[Link, int]) -> dict[Hashable, int]:
    dist: dict[Hashable, int] = {s: 0}
    heap: list[tuple[int, int, Hashable]] = [(0, 0, s)]
    pushed = 0
    while heap:
        d, _, u = heapq.heappop(heap)
        if d > dist[u]:
            continue
        for e in out.get(u, ()):
            w = d + length[e]
            if e[1] not in dist or w < dist[e[1]]:
                dist[e[1]] = w
                pushed += 1
                heapq.heappush(heap, (w, pushed, e[1]))
    return dist
