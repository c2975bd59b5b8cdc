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


_INF = float("inf")


class Fabric:
    """Routes between compute nodes through switches, and the uses of every link.

    Internally nodes and links are numbered (lists instead of dicts keyed by names);
    the searches relax links in the topology's order and break ties by the order of
    their pushes, so routes are the same whatever the numbering."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.compute = set(topology.compute_nodes)
        names: list[Node] = list(dict.fromkeys([v for e in topology.capacity for v in e]
                                               + list(topology.nodes)))
        self.names = names
        self.index = {v: i for i, v in enumerate(names)}
        self.gpu = [v in self.compute for v in names]
        self.gpu_mask = bytes(self.gpu)  # 1 per GPU
        ix = self.index
        self.edge: dict[tuple[Node, Node], int] = {}
        self.cap: list[float] = []
        # (v, c, link, room): room is c (1 + 1e-9), a channel of bandwidth ``limit`` fits
        # ``used`` times while used * limit <= room
        self.out: list[list[tuple[int, float, int, float]]] = [[] for _ in names]
        self.inn: list[list[tuple[int, float, int, float]]] = [[] for _ in names]  # (u, ...)
        for (u, v), c in topology.capacity.items():
            e = self.edge[(u, v)] = len(self.cap)
            self.cap.append(float(c))
            self.out[ix[u]].append((ix[v], float(c), e, float(c) * (1 + 1e-9)))
            self.inn[ix[v]].append((ix[u], float(c), e, float(c) * (1 + 1e-9)))
        self.uses: list[int] = [0] * len(self.cap)
        self.limit: float | None = None  # a channel's bandwidth: links without it are skipped

    def _blocked(self, src: int | None, want: set[int], within: set[Node] | None,
                 ) -> bytearray:
        """Per node, 1 where a search may not go: GPUs other than ``want`` (a route never
        passes through a GPU, and one that is no target changes no route), ``src``, and
        with ``within`` the switches outside it."""
        if within is None:
            blocked = bytearray(self.gpu_mask)
        else:
            blocked = bytearray(b"\x01") * len(self.names)
            for w in within:
                i = self.index.get(w)
                if i is not None and not self.gpu[i]:
                    blocked[i] = 0
        for t in want:
            if self.gpu[t]:
                blocked[t] = 0
        if src is not None:
            blocked[src] = 1
        return blocked

    def routes(self, src: Node, targets: Iterable[Node], within: set[Node] | None = None,
               first: bool = False, use: bool = False) -> dict[Node, tuple[float, int, Route]]:
        """For every reachable target: (cost, links, route), cost = the largest
        (uses + 1) / capacity on the route; ``within``: the only switches it may use;
        ``first``: only the best target (the first the search reaches: least cost, then
        fewest links). Ties go to the node pushed first, links relaxed in the topology's
        order. ``use``: then count one more use of every link of every route found (as
        :meth:`use` on each), summed up the search's tree instead of route by route."""
        ix, gpu, out, uses = self.index, self.gpu, self.out, self.uses
        limit = 0.0 if self.limit is None else self.limit  # 0: every link has room
        pop, push = heapq.heappop, heapq.heappush
        targets = set(targets)
        s = ix[src]
        left = len(targets)  # targets not yet found (an unknown one is never found)
        blocked = self._blocked(s, {ix[t] for t in targets if t in ix}, within)
        bc = [_INF] * len(gpu)  # best (cost, links) pushed so far, per node
        bh = [0] * len(gpu)
        bc[s] = 0.0
        prev: dict[int, int] = {}
        via: dict[int, int] = {}  # the link into a node from prev
        heap: list[tuple[float, int, int, int]] = [(0.0, 0, 0, s)]
        tick = 0
        found: dict[Node, tuple[float, int, Route]] = {}
        walks: dict[int, Route] = {s: (src,)}  # the route to a node, shared by those beyond
        names = self.names
        popped: list[int] = []  # settled nodes, each after its prev
        while heap and left:
            cost, hops, _, u = pop(heap)
            if bc[u] < cost or (bh[u] < hops and bc[u] == cost):
                continue
            if gpu[u] and u != s:  # a target (no other GPU is pushed)
                name = names[u]
                if name not in found:
                    w = walks.get(prev[u])
                    found[name] = (cost, hops, (self._walk_ids(prev, walks, u) if w is None
                                                else w + (name,)))
                    left -= 1
                    popped.append(u)
                    if first:
                        break
                continue
            popped.append(u)
            k1 = hops + 1
            for v, c, e, room in out[u]:
                if blocked[v]:
                    continue
                used = uses[e] + 1
                if used * limit > room:
                    continue  # NCCL: no bandwidth left on this link for the channel
                k0 = used / c
                if k0 < cost:
                    k0 = cost
                b = bc[v]
                if k0 < b or (k0 == b and k1 < bh[v]):
                    bc[v] = k0
                    bh[v] = k1
                    prev[v] = u
                    via[v] = e
                    tick += 1
                    push(heap, (k0, k1, tick, v))
        if use:
            self._use_tree(popped, [ix[t] for t in found], prev, via)
        return found

    def _use_tree(self, popped: list[int], ends: list[int], prev: dict[int, int],
                  via: dict[int, int]) -> None:
        """One use more of every link on the way from the search's source to each of
        ``ends``: each link of the search's tree gets the number of ends beyond it."""
        beyond = dict.fromkeys(ends, 1)
        uses = self.uses
        for v in reversed(popped):  # children before their prev
            n = beyond.get(v)
            if n and v in prev:
                uses[via[v]] += n
                p = prev[v]
                beyond[p] = beyond.get(p, 0) + n

    def nearest(self, targets: Iterable[Node], among: Iterable[Node],
                ) -> dict[Node, tuple[float, int]]:
        """For every GPU of ``among`` that reaches a target: the (cost, links) of its best
        route to any of them, as :meth:`routes` with ``first`` would find from it, for
        all of them in one search backwards from the targets (the cost of a route is its
        largest (uses + 1) / capacity, whichever way it is walked)."""
        ix, gpu, inn, uses = self.index, self.gpu, self.inn, self.uses
        limit = 0.0 if self.limit is None else self.limit  # 0: every link has room
        pop, push = heapq.heappop, heapq.heappush
        among = set(among)
        left = len(among)
        blocked = self._blocked(None, {ix[t] for t in among if t in ix}, None)
        bc = [_INF] * len(gpu)
        bh = [0] * len(gpu)
        heap: list[tuple[float, int, int, int]] = []
        starts: set[int] = set()
        tick = 0
        for t in targets:
            i = ix[t]
            bc[i], bh[i] = 0.0, 0
            starts.add(i)
            heap.append((0.0, 0, tick, i))
            tick += 1
        for i in starts:
            blocked[i] = 1  # never entered again
        heapq.heapify(heap)
        found: dict[Node, tuple[float, int]] = {}
        while heap and left:
            cost, hops, _, v = pop(heap)
            if bc[v] < cost or (bh[v] < hops and bc[v] == cost):
                continue
            if gpu[v] and v not in starts:  # a GPU of ``among`` (no other is pushed)
                name = self.names[v]
                if name not in found:
                    found[name] = (cost, hops)
                    left -= 1
                continue
            k1 = hops + 1
            for u, c, e, room in inn[v]:
                if blocked[u]:
                    continue
                used = uses[e] + 1
                if used * limit > room:
                    continue
                k0 = used / c
                if k0 < cost:
                    k0 = cost
                b = bc[u]
                if k0 < b or (k0 == b and k1 < bh[u]):
                    bc[u] = k0
                    bh[u] = k1
                    tick += 1
                    push(heap, (k0, k1, tick, u))
        return found

    def _walk_ids(self, prev: dict[int, int], walks: dict[int, Route], dst: int) -> Route:
        """The route to ``dst`` along ``prev``, from the routes known (``walks``), which it
        extends by those to every node on the way."""
        names = self.names
        behind = []
        v = dst
        while v not in walks:
            behind.append(v)
            v = prev[v]
        walk = walks[v]
        for x in reversed(behind):
            walk = walks[x] = walk + (names[x],)
        return walk

    def route(self, src: Node, dst: Node, within: set[Node] | None = None) -> Route | None:
        """The best route from ``src`` to ``dst`` now (None: no route through switches)."""
        got = self.routes(src, [dst], within).get(dst)
        return None if got is None else got[2]

    def use(self, route: Route, times: int = 1) -> None:
        """Count ``times`` more uses of every link of ``route`` (negative: give back)."""
        edge, uses = self.edge, self.uses
        for h in zip(route, route[1:]):
            uses[edge[h]] += times

    def busiest(self) -> float:
        """The largest uses / capacity over all links (0 when nothing is used)."""
        return max((n / c for n, c in zip(self.uses, self.cap) if n), default=0.0)
