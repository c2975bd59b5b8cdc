"""A box-dual bound: link lengths whose every structure costs at least L, counted box by box.

Any lengths y ≥ 0 on the links bound the in-network rate: if every structure
(:mod:`.structures`) costs at least L > 0 under y, a schedule of rate R loads the
links with Σ_T w_T·cost(T) ≥ R·L and at most Σ_e b_e·y_e, so R ≤ Σ_e b_e·y_e / L
(LP duality, Zhou & Sun 2026, Thm 2's argument; reduction rates only lower R). With
exact pricing L is the cheapest structure (:mod:`.colgen`); on a large machine it is
*counted* instead, as below, which is what makes NVLS's cost visible where the cut
and partition bounds (which hold for switches that add the SHARP way, and so for
NVLS too) cannot see it.

**The count** (docs/in-network.md, "NVLS: the box-dual bound"). Take disjoint
*boxes* S_1 … S_n holding every compute node, each NVLS switch with all its
member GPUs in one box, no SHARP or multicast switch inside a box, and no link from
one box straight into another. Cut a tree of a structure at its *crossing* edges
(paths that leave their tail's box): the rest falls into K components, each inside
one box, each a set of m GPUs (with the NVLS switches that add or copy among them).

* A component of m GPUs costs at least c(m) = min((m−1)·d, (m−1)·u + r): each GPU
  but its top has a parent edge inside the box, a path between two GPUs (≥ d, the
  least first link out of a GPU plus the least last link into one, or a direct
  link) or a link into (reduce) or out of (broadcast) an NVLS switch (≥ u); if any
  GPU uses a switch, some issuer pays its round trip (≥ r: g → w and w → g). The
  cost is linear in how many use a switch, so an end is least.
* A crossing edge costs at least β⁺ (the least path from a GPU to outside its box)
  to leave its box, and β⁻ (the least path from outside a box into one of its
  GPUs) to enter the next box when it ends at a GPU: in a reduce tree with no SHARP
  switch outside the boxes each of the K − 1 components without the root pays
  β⁺ + β⁻; with one, each pays β⁺ and the root's component is entered once (β⁻).
  Broadcast trees mirror this (a switch that copies outside the boxes: SHARP or
  multicast).

So, with G_b(c, X) the least Σ (c(m) + X) over the ways to split box b's GPUs into
components, X_r = β⁺ + [no SHARP outside]·β⁻ for reduce trees and X_b = β⁻ + [no
SHARP or multicast outside]·β⁺ for broadcast trees, a structure rooted at a GPU costs
at least Σ_b (G_b(c, X_r) + G_b(c', X_b)) less X_r (the root's component sends
nothing) plus β⁻ where a SHARP switch is outside (the root's component receives on
an edge of its own), and the mirror for the broadcast tree; one rooted at a SHARP
switch costs at least the sum itself. L is the least of these (with one box, also at
most c(N) + c'(N): no crossing at all). On one
NVLS star of N GPUs with y = 1 everywhere, L = 2(N + 1), the bound N·B/(N + 1).

:func:`least_cost` computes L (or None where the premises fail); its checker,
:mod:`collcert.certify.innetwork.boxdual`, counts again on its own.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Mapping, Sequence
from fractions import Fraction

from ..model import Link, Node, Topology
from .structures import members

Cost = Fraction | None  # None: no such path (infinite)


def _least(values: list[Fraction]) -> Cost:
    return min(values) if values else None


def _exits(t: Topology, box: set[Node], links: list[Link], y: Mapping[Link, Fraction],
           outward: bool) -> Cost:
    """β⁺ of one box (``outward``: the least path from one of its compute nodes to a node
    outside), or β⁻ (the least path from outside into one of its compute nodes).
    ``links``: the links with an end in the box."""
    adj: dict[Node, list[tuple[Node, Fraction]]] = {}
    for u, v in links:
        a, b = (u, v) if outward else (v, u)
        if a in box and b in box:
            adj.setdefault(a, []).append((b, y.get((u, v), Fraction(0))))
    dist: dict[Node, Fraction] = {x: Fraction(0) for x in box if t.is_compute(x)}
    heap = [(d, i, x) for i, (x, d) in enumerate(dist.items())]
    order = itertools.count(len(heap))
    heapq.heapify(heap)
    while heap:
        d, _, a = heapq.heappop(heap)
        if d > dist[a]:
            continue
        for b, c in adj.get(a, []):
            if b not in dist or d + c < dist[b]:
                dist[b] = d + c
                heapq.heappush(heap, (d + c, next(order), b))
    return _least([dist[a] + y.get((u, v), Fraction(0)) for (u, v) in links
                   for a, b in [((u, v) if outward else (v, u))]
                   if a in dist and b not in box])


def _apart(t: Topology, box: set[Node], links: list[Link],
           y: Mapping[Link, Fraction]) -> Cost:
    """d: the least path inside the box from one of its compute nodes to another (a
    Dijkstra from all of them at once that settles each node for its two nearest
    sources)."""
    adj: dict[Node, list[tuple[Node, Fraction]]] = {}
    for u, v in links:
        if u in box and v in box:
            adj.setdefault(u, []).append((v, y.get((u, v), Fraction(0))))
    heap = [(Fraction(0), i, x, x) for i, x in enumerate(sorted(box, key=str))
            if t.is_compute(x)]
    order = itertools.count(len(heap))
    heapq.heapify(heap)
    settled: dict[Node, list[Node]] = {}
    best: Cost = None
    while heap:
        d, _, src, a = heapq.heappop(heap)
        got = settled.setdefault(a, [])
        if len(got) == 2 or src in got:
            continue
        got.append(src)
        if src != a and t.is_compute(a):
            best = d if best is None or d < best else best
            continue  # a path through a GPU is no shorter than one to it
        for b, c in adj.get(a, []):
            if len(settled.get(b, ())) < 2:
                heapq.heappush(heap, (d + c, next(order), src, b))
    return best


def _box_costs(t: Topology, box: set[Node], links: list[Link], y: Mapping[Link, Fraction],
               member: Mapping[Node, frozenset[Node]]) -> tuple[Cost, Cost, Cost, Cost]:
    """(d, u into a switch, u out of one, r) of one box (module docstring)."""
    def length(e: Link) -> Fraction:
        return y.get(e, Fraction(0))
    d = _apart(t, box, links, y)
    hubs = [w for w in member if w in box]
    u_in = _least([length((x, w)) for w in hubs for x in member[w]])
    u_out = _least([length((w, x)) for w in hubs for x in member[w]])
    r = _least([length((x, w)) + length((w, x)) for w in hubs for x in member[w]])
    return d, u_in, u_out, r


def _component(m: int, d: Cost, u: Cost, r: Cost) -> Cost:
    """c(m): the least cost of a component of m GPUs inside one box."""
    if m == 1:
        return Fraction(0)
    ways = [(m - 1) * d] if d is not None else []
    if u is not None and r is not None:
        ways.append((m - 1) * u + r)
    return _least(ways)


def _split(n: int, d: Cost, u: Cost, r: Cost, cross: Fraction) -> Fraction:
    """G(c, X): the least Σ (c(m) + X) over the ways to split n GPUs into components."""
    cost = [_component(m, d, u, r) for m in range(1, n + 1)]
    best: list[Fraction] = [Fraction(0)]
    for k in range(1, n + 1):
        best.append(min(c + cross + best[k - m] for m, c in enumerate(cost[:k], 1)
                        if c is not None))
    return best[n]


def premises(t: Topology, boxes: Sequence[Sequence[Node]]) -> str | None:
    """Why the count does not hold for these boxes (module docstring), or None."""
    where = {v: i for i, box in enumerate(boxes) for v in box}
    if len(where) != sum(len(b) for b in boxes):
        return "the boxes overlap"
    if any(v not in where for v in t.compute_nodes):
        return "a compute node is in no box"
    for w, m in members(t).items():
        if w not in where or any(where.get(x) != where[w] for x in m):
            return f"NVLS switch {w!r} is not in one box with all its member GPUs"
    for w in t.sharp_switches | t.multicast_switches:
        if w in where:
            return f"switch {w!r}, which adds or copies the SHARP way, is inside a box"
    for u, v in t.capacity:
        if u in where and v in where and where[u] != where[v]:
            return f"link {u!r} -> {v!r} goes straight from one box into another"
    return None


def least_cost(t: Topology, boxes: Sequence[Sequence[Node]],
               y: Mapping[Link, Fraction]) -> Fraction | None:
    """L: a lower bound on every structure's cost under ``y`` (module docstring), or None
    where the premises fail, or where boxes have no way out or in while others exist."""
    if premises(t, boxes) is not None:
        return None
    member = members(t)
    where = {v: i for i, box in enumerate(boxes) for v in box}
    near: list[list[Link]] = [[] for _ in boxes]
    for u, v in t.capacity:
        for i in {where.get(u), where.get(v)} - {None}:
            near[i].append((u, v))  # type: ignore[index]
    sets = [set(b) for b in boxes]
    out = _least([x for s, ln in zip(sets, near) if (x := _exits(t, s, ln, y, True))
                  is not None])
    into = _least([x for s, ln in zip(sets, near) if (x := _exits(t, s, ln, y, False))
                   is not None])
    costs = [_box_costs(t, s, ln, y, member) for s, ln in zip(sets, near)]
    sizes = [sum(1 for x in s if t.is_compute(x)) for s in sets]
    single: Cost = None
    if len(boxes) == 1:  # no crossing edge at all: one component each way
        d, u_in, u_out, r = costs[0]
        c_in, c_out = _component(sizes[0], d, u_in, r), _component(sizes[0], d, u_out, r)
        single = c_in + c_out if c_in is not None and c_out is not None else None
    if out is None or into is None:
        return single if len(boxes) == 1 else None
    adds = bool(t.sharp_switches)  # outside the boxes, by the premises
    copies = adds or bool(t.multicast_switches)
    x_r = out + (0 if adds else into)
    x_b = into + (0 if copies else out)
    base = sum((_split(n, d, u_in, r, x_r) + _split(n, d, u_out, r, x_b)
                for n, (d, u_in, u_out, r) in zip(sizes, costs)), Fraction(0))
    # the root's component: with a SHARP switch outside it receives (β⁻) and sends (β⁺)
    # on crossing edges besides the others'; without, those are others' edges already
    got = base if adds else base - 2 * into - (0 if copies else 2 * out)
    return min(got, single) if single is not None else got


def box_dual_value(t: Topology, boxes: Sequence[Sequence[Node]],
                   y: Mapping[Link, Fraction]) -> Fraction | None:
    """Σ_e b_e·y_e / L, or None where :func:`least_cost` gives no positive L."""
    low = least_cost(t, boxes, y)
    if low is None or low <= 0:
        return None
    return sum((t.capacity[e] * c for e, c in y.items() if c), Fraction(0)) / low
