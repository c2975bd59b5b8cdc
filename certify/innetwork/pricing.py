"""The cheapest structure under a dual (y, z), exactly, by subsets of switches.

A structure rooted at ρ costs its reduce tree plus its broadcast tree (plus z_w
for every rate-limited reducing switch w that adds in it, ρ included). Each tree is
a directed Steiner tree: with its set X of switch tree nodes fixed, a tree edge
a → b costs the shortest path d(a, b) under y, and the cheapest tree is a minimum
arborescence over the compute nodes, X and ρ (Chu-Liu/Edmonds, value only:
:func:`collcert.certify.allreduce.directed_mst`). The least over every X is the
cheapest tree: a cheapest tree uses some X, and routing it through the metric
closure costs no more. Reduce trees take X among reducing switches, broadcast
trees among reducing and multicast switches. Exponential in those switches:
certificates with a dual are written for small machines only (:data:`MAX_SUBSETS`).

An NVLS switch w has no metric-closure arcs: it joins a tree by single links to
its member GPUs only (:mod:`.structures`). A member x is its reduce child at
y(x→w) and its broadcast child at y(w→x); a member g is its parent at
y(g→w) + y(w→g) (the issuer's round trip) in either tree. One use of w per tree
suffices: two load-reduces (or stores) at w can merge into one, a member costing
the same under either, and one of the two issuers is not below the other's
children, so moving those children to it makes no cycle and saves a round trip.
No root is an NVLS switch.
"""

from __future__ import annotations

import heapq
import itertools
import math
from fractions import Fraction

from ..allreduce import directed_mst
from ..model import Node, Topo
from .structures import members

MAX_SUBSETS = 200_000
"""Most minimum arborescences one dual check computes."""


def subsets_needed(topo: Topo) -> int:
    red = len(topo.reducing)
    copy = len(topo.reducing | topo.multicast)
    return int((len(topo.compute) + red) * (2 ** red + 2 ** copy))


def _shortest(topo: Topo, length: dict[tuple[Node, Node], int], s: Node) -> dict[Node, int]:
    dist = {s: 0}
    heap = [(0, 0, s)]
    order = itertools.count(1)
    done: set[Node] = set()
    while heap:
        d, _, u = heapq.heappop(heap)
        if u in done:
            continue
        done.add(u)
        for w in topo.out_links[u]:
            nd = d + length[(u, w)]
            if w not in dist or nd < dist[w]:
                dist[w] = nd
                heapq.heappush(heap, (nd, next(order), w))
    return dist


class _Arcs:
    """Tree-edge costs: shortest paths, and an NVLS switch's links to its members."""

    def __init__(self, dist: dict[Node, dict[Node, int]], length: dict[tuple[Node, Node], int],
                 member: dict[Node, frozenset[Node]]) -> None:
        self.dist, self.length, self.member = dist, length, member

    def cost(self, a: Node, b: Node, inward: bool) -> int | None:
        """Tree edge a -> b: child -> parent (``inward``), else parent -> child."""
        if a in self.member or b in self.member:
            w, x = (a, b) if a in self.member else (b, a)
            if x not in self.member[w]:
                return None
            up, down = self.length[(x, w)], self.length[(w, x)]
            if (a == w) == inward:  # w to its parent x (reduce), x to w (broadcast)
                return up + down
            return up if inward else down
        return self.dist[a].get(b)


def _tree(arcs_of: _Arcs, root: Node, members: list[Node], inward: bool) -> int | None:
    nodes = [root] + [x for x in members if x != root]
    arcs = []
    for i, a in enumerate(nodes):
        for j, b in enumerate(nodes):
            if i == j or (i == 0 if inward else j == 0):
                continue
            c = arcs_of.cost(a, b, inward)
            if c is not None:  # reduce: child a, parent b, the arborescence reaches a from b
                arcs.append((j, i, c) if inward else (i, j, c))
    return directed_mst(len(nodes), arcs, 0)


def _least(dist: _Arcs, root: Node, compute: list[Node],
           optional: list[Node], price: dict[Node, int], inward: bool) -> int | None:
    best: int | None = None
    extra = [w for w in optional if w != root]
    for k in range(len(extra) + 1):
        for chosen in itertools.combinations(extra, k):
            got = _tree(dist, root, compute + list(chosen), inward)
            if got is None:
                continue
            if inward:
                got += sum(price.get(w, 0) for w in chosen)
            if best is None or got < best:
                best = got
    return best


def cheapest_cost(topo: Topo, y: dict[tuple[Node, Node], Fraction],
                  z: dict[Node, Fraction]) -> Fraction | None:
    """The least cost of any structure under (y, z); None when no structure exists."""
    den = math.lcm(*(c.denominator for c in [*y.values(), *z.values()]), 1)
    length = {e: int(y.get(e, 0) * den) for e in topo.cap}
    price = {w: int(c * den) for w, c in z.items()}
    red = sorted(topo.reducing, key=str)
    copying = sorted(topo.reducing | topo.multicast, key=str)
    dist = _Arcs({s: _shortest(topo, length, s) for s in [*topo.compute, *copying]}, length,
                 members(topo))
    best: int | None = None
    for root in [*topo.compute, *(w for w in red if w not in topo.nvls)]:
        inn = _least(dist, root, topo.compute, red, price, True)
        out = _least(dist, root, topo.compute, copying, price, False)
        if inn is None or out is None:
            continue
        cost = inn + out + price.get(root, 0)
        best = cost if best is None or cost < best else best
    return None if best is None else Fraction(best, den)
