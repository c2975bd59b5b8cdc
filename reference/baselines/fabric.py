"""The machine as NCCL's topology search sees it: boxes, and routes between GPUs.

NCCL (``src/graph/topo.cc``, ``src/graph/paths.cc``) splits a job into *nodes*
(hosts); inside a node GPUs talk over NVLink, NVSwitch or PCIe, between nodes
through NICs (NCCL's ``NET``). collcert's topologies have no host field, so a
*box* is found from the graph (:func:`find_boxes`, docs/baselines.md):

1. compute node ids ``b<i>.…`` or ``h<i>.…`` (the built-in platforms, ``collcert
   import --boxes``, NCCL's multi-host dumps): one box per prefix;
2. otherwise, when the links of the smallest capacity all touch a switch (NIC
   links) and taking them away splits the compute nodes, the pieces are the boxes;
3. otherwise one box.

A *route* from GPU u to GPU v is a walk through switches only (the schedule
format's rule for a tree edge). NCCL's search (``src/graph/search.cc``,
``ncclTopoFollowPath``) takes each channel's bandwidth off every link it uses
and fails a channel that finds none left; :class:`Fabric` keeps the same
account as a count of uses per link, and :meth:`Fabric.routes` picks, for
every target, the route whose busiest link, counted with the new use, has the
least uses per unit of capacity (then the fewest links). These are heuristics
that shape the baseline; the audit measures the result exactly.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Sequence
from typing import Any

from collcert.reference.model import Topology

Node = Any
Route = tuple[Node, ...]

_BOX_PREFIX = re.compile(r"^([bh]\d+)\.")


def find_boxes(topology: Topology) -> list[list[Node]]:
    """The boxes (NCCL's nodes) of ``topology``, each a list of compute nodes in the
    topology's order; the boxes in the order of their first compute node."""
    compute = list(topology.compute_nodes)
    by_prefix = _prefix_boxes(compute)
    if by_prefix is not None:
        return by_prefix
    by_links = _weakest_link_boxes(topology)
    return by_links if by_links is not None else [compute]


def box_switches(topology: Topology, boxes: Sequence[Sequence[Node]]) -> list[set[Node]]:
    """The switches inside each box, which a route between two GPUs of the box may use
    (NCCL keeps intra-node traffic off the network): the switches named with the box's
    prefix, or those joined to the box by links stronger than the weakest."""
    if len(boxes) == 1:
        return [set(topology.switch_nodes)]
    first = boxes[0][0]
    m = _BOX_PREFIX.match(first) if isinstance(first, str) else None
    if m is not None:
        prefixes = [_BOX_PREFIX.match(b[0]).group(1) + "." for b in boxes]  # type: ignore
        named = [{w for w in topology.switch_nodes if isinstance(w, str) and w.startswith(p)}
                 for p in prefixes]
        if all(named):
            return named
        return [_private_switches(topology, box) for box in boxes]
    groups = _components(topology)
    inside: list[set[Node]] = []
    for box in boxes:
        root = groups[box[0]]
        inside.append({w for w in topology.switch_nodes if groups[w] == root})
    return inside


def _private_switches(topology: Topology, box: Sequence[Node]) -> set[Node]:
    """The switches reachable from ``box`` without passing a switch that touches a GPU of
    another box (MI250's shared IB switch is not inside a box; a fat tree's pod switches
    are)."""
    mine = set(box)
    near: dict[Node, set[Node]] = {}
    for u, v in topology.capacity:
        near.setdefault(u, set()).add(v)
    shared = {w for w in topology.switch_nodes
              if any(topology.is_compute(x) and x not in mine for x in near.get(w, ()))}
    seen: set[Node] = set()
    todo = [w for v in box for w in near.get(v, ()) if not topology.is_compute(w)]
    while todo:
        w = todo.pop()
        if w in seen or w in shared:
            continue
        seen.add(w)
        todo += [x for x in near.get(w, ()) if not topology.is_compute(x)]
    return seen


def _prefix_boxes(compute: Sequence[Node]) -> list[list[Node]] | None:
    groups: dict[str, list[Node]] = {}
    for v in compute:
        m = _BOX_PREFIX.match(v) if isinstance(v, str) else None
        if m is None:
            return None
        groups.setdefault(m.group(1), []).append(v)
    return list(groups.values())


def _weakest_link_boxes(topology: Topology) -> list[list[Node]] | None:
    caps = topology.capacity
    if not caps:
        return None
    weakest = min(caps.values())
    if weakest == max(caps.values()):
        return None  # one kind of link: nothing tells a box from the network
    switches = set(topology.switch_nodes)
    if any(c == weakest and u not in switches and v not in switches
           for (u, v), c in caps.items()):
        return None  # a direct GPU-GPU link is the slowest: no network to split along
    comp = _components(topology)
    groups: dict[Node, list[Node]] = {}
    for v in topology.compute_nodes:
        groups.setdefault(comp[v], []).append(v)
    return list(groups.values()) if len(groups) > 1 else None


def _components(topology: Topology) -> dict[Node, Node]:
    """Every node's component (a representative) joined by links above the weakest."""
    weakest = min(topology.capacity.values())
    parent = {v: v for v in topology.nodes}

    def find(x: Node) -> Node:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for (u, v), c in topology.capacity.items():
        if c != weakest:
            parent[find(u)] = find(v)
    return {v: find(v) for v in topology.nodes}


class Fabric:
    """Routes between compute nodes through switches, and the uses of every link."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.compute = set(topology.compute_nodes)
        self.out: dict[Node, list[tuple[Node, float]]] = {}
        for (u, v), c in topology.capacity.items():
            self.out.setdefault(u, []).append((v, float(c)))
        self.cap = {e: float(c) for e, c in topology.capacity.items()}
        self.uses: dict[tuple[Node, Node], int] = {}
        self.limit: float | None = None  # a channel's bandwidth: links without it are skipped

    def routes(self, src: Node, targets: Iterable[Node], within: set[Node] | None = None,
               first: bool = False) -> dict[Node, tuple[float, int, Route]]:
        """For every reachable target: (cost, links, route), cost = the largest
        (uses + 1) / capacity on the route; ``within``: the only switches it may use;
        ``first``: only the best target (the first the search reaches: least cost, then
        fewest links)."""
        want = set(targets)
        best: dict[Node, tuple[float, int]] = {src: (0.0, 0)}
        prev: dict[Node, Node] = {}
        heap: list[tuple[float, int, int, Node]] = [(0.0, 0, 0, src)]
        tick = 0
        found: dict[Node, tuple[float, int, Route]] = {}
        while heap and len(found) < len(want):
            cost, hops, _, u = heapq.heappop(heap)
            if best.get(u, (cost, hops)) < (cost, hops):
                continue
            if u != src and u in self.compute:
                if u in want and u not in found:
                    found[u] = (cost, hops, self._walk(prev, src, u))
                    if first:
                        break
                continue  # a route never passes through another GPU
            for v, c in self.out.get(u, ()):
                if v == src or (within is not None and v not in within
                                and v not in self.compute):
                    continue
                used = self.uses.get((u, v), 0) + 1
                if self.limit is not None and used * self.limit > c * (1 + 1e-9):
                    continue  # NCCL: no bandwidth left on this link for the channel
                key = (max(cost, used / c), hops + 1)
                if key < best.get(v, (float("inf"), 0)):
                    best[v] = key
                    prev[v] = u
                    tick += 1
                    heapq.heappush(heap, (key[0], key[1], tick, v))
        return found

    def nearest(self, targets: Iterable[Node], among: Iterable[Node],
                ) -> dict[Node, tuple[float, int]]:
        """For every GPU of ``among`` that reaches a target: the (cost, links) of its best
        route to any of them, as :meth:`routes` with ``first`` would find from it, for
        all of them in one search backwards from the targets (the cost of a route is its
        largest (uses + 1) / capacity, whichever way it is walked)."""
        if not hasattr(self, "inn"):
            self.inn: dict[Node, list[tuple[Node, float]]] = {}
            for (u, v), c in self.cap.items():
                self.inn.setdefault(v, []).append((u, c))
        want = set(among)
        best: dict[Node, tuple[float, int]] = {}
        heap: list[tuple[float, int, int, Node]] = []
        tick = 0
        for t in targets:
            best[t] = (0.0, 0)
            heap.append((0.0, 0, tick, t))
            tick += 1
        heapq.heapify(heap)
        starts = set(best)
        found: dict[Node, tuple[float, int]] = {}
        while heap and len(found) < len(want):
            cost, hops, _, v = heapq.heappop(heap)
            if best.get(v, (cost, hops)) < (cost, hops):
                continue
            if v not in starts and v in self.compute:
                if v in want and v not in found:
                    found[v] = (cost, hops)
                continue  # a route never passes through another GPU
            for u, c in self.inn.get(v, ()):
                if u in starts:
                    continue
                used = self.uses.get((u, v), 0) + 1
                if self.limit is not None and used * self.limit > c * (1 + 1e-9):
                    continue
                key = (max(cost, used / c), hops + 1)
                if key < best.get(u, (float("inf"), 0)):
                    best[u] = key
                    tick += 1
                    heapq.heappush(heap, (key[0], key[1], tick, u))
        return found

    @staticmethod
    def _walk(prev: dict[Node, Node], src: Node, dst: Node) -> Route:
        walk = [dst]
        while walk[-1] != src:
            walk.append(prev[walk[-1]])
        return tuple(reversed(walk))

    def route(self, src: Node, dst: Node, within: set[Node] | None = None) -> Route | None:
        """The best route from ``src`` to ``dst`` now (None: no route through switches)."""
        got = self.routes(src, [dst], within).get(dst)
        return None if got is None else got[2]

    def use(self, route: Route, times: int = 1) -> None:
        """Count ``times`` more uses of every link of ``route`` (negative: give back)."""
        for e in zip(route, route[1:]):
            self.uses[e] = self.uses.get(e, 0) + times

    def busiest(self) -> float:
        """The largest uses / capacity over all links (0 when nothing is used)."""
        return max((n / self.cap[e] for e, n in self.uses.items() if n), default=0.0)
