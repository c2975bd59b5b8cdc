"""The cheapest structure under link lengths: exact Steiner pricing by subsets of switches.

Column generation (:mod:`.colgen`) needs, for lengths y ≥ 0 on the links and
z ≥ 0 on the rate-limited reducing switches, the structure of least cost
Σ_e uses_e·y_e + Σ_w reductions_w·z_w (:mod:`.structures`). Root by root it is the
cheapest reduce tree plus the cheapest broadcast tree, each a *directed Steiner
tree*: the compute nodes must be in it, switches that add (reduce) or copy
(broadcast) may be. With the tree's switches X fixed, a tree edge x → p costs the
shortest path d(x, p) (paths may run through any node, which then only forwards),
and the cheapest tree is a minimum arborescence (Chu-Liu/Edmonds) on the compute
nodes, X and the root over the metric closure. Taking the least over every
subset X is exact: a cheapest tree uses some set of switches as tree nodes, and a
switch that is a leaf, or has one child, is never cheaper than the path through
it. A switch appearing twice in one tree is never cheaper either (its two
subtrees can meet there once).

An **NVLS switch** w (:mod:`.structures`) joins a tree only by single links to its
member GPUs: in a reduce tree a member x is its child at y(x→w) and a member g
its parent at y(w→g) + y(g→w) (g's own share goes up too); in a broadcast tree g
is its parent at y(g→w) + y(w→g) (the store writes g too) and a member x its child
at y(w→x). Those are its only arcs in the closure. Using w twice in one tree
(two load-reduces, or two stores) is never cheaper: a member costs the same to
join either, and the children of one can move to the other without a cycle (one
of the two issuers is not below the other's children), saving one issuer's round
trip. So the subsets of switches stay exact.

The subsets make this exponential in the number of switches that add or copy:
:func:`pricing_work` says how much, and :mod:`.colgen` refuses a machine past its
budget (large machines go by their symmetry, :mod:`.hierarchy`). The same code
runs in floats (rounds) and in exact rationals (the proof).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence
from typing import Any

from ..model import Node, Topology
from ..solvers import min_arborescence
from .structures import Path, Structure, members

Weight = Any  # float or Fraction: only added and compared


def pricing_work(t: Topology) -> int:
    """Minimum arborescences one exact pricing of every root computes."""
    red = len(t.reducing_switches)
    copy = len(t.reducing_switches | t.multicast_switches)
    return int((t.num_compute + len(t.sharp_switches)) * (2 ** red + 2 ** copy))


class Pricer:
    """The Steiner pricing of one topology (see the module docstring)."""

    def __init__(self, t: Topology) -> None:
        self.t = t
        self.links = list(t.capacity)
        self.out: dict[Node, list[tuple[Node, int]]] = {v: [] for v in t.nodes}
        for i, (u, v) in enumerate(self.links):
            self.out[u].append((v, i))
        self.compute = list(t.compute_nodes)
        self.reducing = [w for w in t.switch_nodes if w in t.reducing_switches]
        self.copying = [w for w in t.switch_nodes
                        if w in t.reducing_switches or w in t.multicast_switches]
        self.roots = self.compute + [w for w in self.reducing if w not in t.nvls_switches]
        self.rated = {w for w in t.reduction_rates}
        self.member = members(t)
        self.pos = {e: i for i, e in enumerate(self.links)}
        self.y: Sequence[Weight] = ()

    def closure(self, y: Sequence[Weight]) -> dict[Node, tuple[dict[Node, Weight],
                                                              dict[Node, int]]]:
        """Shortest paths under lengths ``y`` from every node that can be a tree node:
        ``{source: (distance, last link index)}``."""
        return {s: self._dijkstra(s, y) for s in self.compute + self.copying}

    def _dijkstra(self, s: Node, y: Sequence[Weight]) -> tuple[dict[Node, Weight],
                                                               dict[Node, int]]:
        dist: dict[Node, Weight] = {s: y[0] * 0 if y else 0}
        last: dict[Node, int] = {}
        heap: list[tuple[Weight, int, Node]] = [(dist[s], 0, s)]
        order = itertools.count(1)
        done: set[Node] = set()
        while heap:
            d, _, u = heapq.heappop(heap)
            if u in done:
                continue
            done.add(u)
            for v, i in self.out[u]:
                nd = d + y[i]
                if v not in dist or nd < dist[v]:
                    dist[v] = nd
                    last[v] = i
                    heapq.heappush(heap, (nd, next(order), v))
        return dist, last

    def tree(self, closure: dict[Node, Any], z: dict[Node, Weight], root: Node,
             optional: list[Node], inward: bool) -> tuple[Weight, list[tuple[Node, Node]]] | None:
        """The cheapest tree of ``root`` (reduce: ``inward``) over the compute nodes and
        any subset of ``optional``: (cost, tree edges (child, parent) or (parent, child))."""
        best: tuple[Weight, list[tuple[Node, Node]]] | None = None
        extra = [w for w in optional if w != root]
        for k in range(len(extra) + 1):
            for chosen in itertools.combinations(extra, k):
                got = self._arborescence(closure, root, [*self.compute, *chosen], inward)
                if got is None:
                    continue
                cost = got[0]
                if inward:
                    cost = cost + sum((z[w] for w in chosen if w in z), cost * 0)
                if best is None or cost < best[0]:
                    best = (cost, got[1])
        return best

    def arc(self, closure: dict[Node, Any], a: Node, b: Node, inward: bool) -> Weight | None:
        """The cost of tree edge a -> b (child -> parent when ``inward``, else parent ->
        child) in the closure, or None when there is none (see the module docstring)."""
        y, pos, member = self.y, self.pos, self.member
        if a in member or b in member:
            w, x = (a, b) if a in member else (b, a)
            if x not in member[w]:
                return None
            up, down = y[pos[(x, w)]], y[pos[(w, x)]]
            if (a == w) == inward:  # w -> its parent x (reduce), or x -> w (broadcast)
                return up + down
            return up if inward else down
        da = closure[a][0]
        return da[b] if b in da else None

    def path(self, closure: dict[Node, Any], a: Node, b: Node) -> Path:
        if a in self.member or b in self.member:
            return (a, b)
        _, last = closure[a]
        out = [b]
        while out[-1] != a:
            out.append(self.links[last[out[-1]]][0])
        return tuple(reversed(out))

    def _arborescence(self, closure: dict[Node, Any], root: Node, members: list[Node],
                      inward: bool) -> tuple[Weight, list[tuple[Node, Node]]] | None:
        nodes = [root] + [v for v in members if v != root]
        tails, heads, weights = [], [], []
        for i, a in enumerate(nodes):
            for j, b in enumerate(nodes):
                if i == j or (j == 0 if not inward else i == 0):
                    continue
                cost = self.arc(closure, a, b, inward)
                if cost is None:
                    continue
                if inward:  # reversed: the parent b "reaches" its child a
                    tails.append(j)
                    heads.append(i)
                else:
                    tails.append(i)
                    heads.append(j)
                weights.append(cost)
        got = min_arborescence(len(nodes), tails, heads, weights, 0)
        if got is None:
            return None
        cost, arcs = got
        edges = [(nodes[heads[k]], nodes[tails[k]]) if inward else (nodes[tails[k]],
                                                                   nodes[heads[k]])
                 for k in arcs]
        return cost, edges

    def cheapest(self, y: Sequence[Weight], z: dict[Node, Weight],
                 closure: dict[Node, Any] | None = None,
                 ) -> list[tuple[Weight, Structure]]:
        """For every root, its cheapest structure under ``y``, ``z``: (cost, structure)."""
        closure = closure if closure is not None else self.closure(y)
        self.y = y
        out = []
        for root in self.roots:
            got_in = self.tree(closure, z, root, self.reducing, True)
            got_out = self.tree(closure, z, root, self.copying, False)
            if got_in is None or got_out is None:
                continue
            cost = got_in[0] + got_out[0] + (z[root] if root in z else 0)
            red = tuple(self.path(closure, a, b) for a, b in got_in[1])
            bc = tuple(self.path(closure, a, b) for a, b in got_out[1])
            out.append((cost, Structure(root, tuple(sorted(red, key=str)),
                                        tuple(sorted(bc, key=str)))))
        return out
