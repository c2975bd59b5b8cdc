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
"""

from __future__ import annotations

import heapq
import itertools
import math
from fractions import Fraction

from ..allreduce import directed_mst
from ..model import Node, Topo

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


def _tree(dist: dict[Node, dict[Node, int]], root: Node, members: list[Node],
          inward: bool) -> int | None:
    nodes = [root] + [x for x in members if x != root]
    arcs = []
    for i, a in enumerate(nodes):
        for j, b in enumerate(nodes):
            if i != j and b in dist[a]:
                if inward and i:  # child a, parent b: the arborescence reaches a from b
                    arcs.append((j, i, dist[a][b]))
                elif not inward and j:
                    arcs.append((i, j, dist[a][b]))
    return directed_mst(len(nodes), arcs, 0)


def _least(dist: dict[Node, dict[Node, int]], root: Node, compute: list[Node],
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
    dist = {s: _shortest(topo, length, s) for s in [*topo.compute, *copying]}
    best: int | None = None
    for root in [*topo.compute, *red]:
        inn = _least(dist, root, topo.compute, red, price, True)
        out = _least(dist, root, topo.compute, copying, price, False)
        if inn is None or out is None:
            continue
        cost = inn + out + price.get(root, 0)
        best = cost if best is None or cost < best else best
    return None if best is None else Fraction(best, den)
