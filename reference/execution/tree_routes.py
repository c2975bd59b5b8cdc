"""The earliest arrival of a tree's data at every node, for the α-β view of tree schedules.

:func:`tree_routes` is the core of ``alphabeta.tree_schedule_latency`` (the latency term
of a pipeline of trees, Zhao et al. 2026, §6.1 model): every path of a tree runs once
its first node holds the data, each hop costing its link's α; the paths are relaxed in
the order the data reaches their first nodes, in integers (the α over one common
denominator), and the walk to a node is kept as a back pointer (:func:`route_of`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model import Link, Node, ScheduleError, Topology


def tree_routes(root: Node, paths: Sequence[Sequence[Node]], alpha: Mapping[Link, int],
                 out: bool, topology: Topology, compute: frozenset[Node] | None = None,
                 ) -> tuple[dict[Node, int], dict[Node, int], dict[Node, tuple[Any, int]]]:
    """Earliest arrival (latency, hops, route) of the root's data at every node.

    ``paths`` are oriented away from the root (in-trees reversed by the caller;
    a reversed hop (v, u) costs the α of link (u, v)). A path runs once its
    first node holds the data; multicast paths start at switches that an
    earlier path reached. ``alpha``: the α of every link over one common
    denominator (integers: exact, and fast), and so the latencies. The paths are
    relaxed in the order the data reaches their first nodes (so a tree needs one
    pass and one to see that nothing changes; :func:`tree_arrivals` is one pass where
    the paths form a tree of paths). ``compute``: the topology's compute nodes as a
    set (a caller with many trees builds it once).
    """
    if compute is None:
        compute = frozenset(topology.compute_nodes)
    for p in paths:
        for a, b in zip(p, p[1:]):
            if ((a, b) if out else (b, a)) not in alpha:
                raise ScheduleError(f"path hop {a!r} -> {b!r} is not a link of the topology")
    paths = reach_order(root, paths)
    lat: dict[Node, int] = {root: 0}
    hops: dict[Node, int] = {root: 0}
    via: dict[Node, tuple[Any, int]] = {}  # the path and position that reached a node
    # Relax path by path until nothing changes (Bellman-Ford over the paths): a compute
    # node gets the data from the path that ends at it (its own tree edge); a switch as
    # early as any path brings it (that is when multicast paths from it can start).
    for _ in range(len(paths) + 1):
        changed = False
        for p in paths:
            if p[0] not in lat:
                continue
            t, h = lat[p[0]], hops[p[0]]
            for k, (a, b) in enumerate(zip(p, p[1:]), 1):
                t, h = t + alpha[(a, b) if out else (b, a)], h + 1
                own = b == p[-1]
                if not own and b in compute:
                    continue
                if b not in lat or (t, h) < (lat[b], hops[b]) or (own and b in compute
                                                                   and (t, h) != (lat[b], hops[b])):
                    lat[b], hops[b], via[b] = t, h, (p, k)
                    changed = True
        if not changed:
            break
    if any(p[0] not in lat for p in paths):
        raise ScheduleError("some tree paths start at a node the tree's data never reaches; "
                            "audit the schedule first")
    return lat, hops, via


Arrivals = tuple[dict[Node, int], dict[Node, int], dict[Node, Sequence[Node]], tuple[int, int, int]]


def tree_arrivals(root: Node, paths: Sequence[Sequence[Node]], alpha: Mapping[Link, int],
                  out: bool, compute: frozenset[Node], rank: Mapping[Node, int],
                  costs: dict[int, tuple[Sequence[Node], int]]) -> Arrivals | None:
    """:func:`tree_routes` in one pass where the paths form a tree of paths: each starts
    at the root or at the compute node where exactly one other path ends, and ends at a
    compute node other than the root (no multicast from a switch). A compute node's
    arrival is then its own path's start plus the path's α, which is what the
    relaxation settles on (tests/test_alphabeta.py compares the two).

    ``paths`` as the schedule writes them (an in-tree's toward the root: the α of a
    path is the sum over its links either way); ``rank``: the compute nodes' rank
    order, negated (the first of the deepest wins ties); ``costs``: each path's α by
    ``id``, kept with the path (trees that share a walk sum it once). Returns the
    arrivals, hops, each reached node's path and the deepest (latency, hops, -rank);
    None where the paths are not such a tree or a hop is not a link: the relaxation
    decides (and names the bad hop)."""
    if root not in rank:
        return None
    by_start: dict[Node, list[Sequence[Node]]] = {}
    ends: set[Node] = set()
    for p in paths:
        a, b = (p[0], p[-1]) if out else (p[-1], p[0])
        if (a != root and a not in compute) or b not in compute or b == root or b in ends:
            return None
        ends.add(b)
        by_start.setdefault(a, []).append(p)
    lat: dict[Node, int] = {root: 0}
    hops: dict[Node, int] = {root: 0}
    parent: dict[Node, Sequence[Node]] = {}
    deep = (0, 0, rank[root])
    queue = [root]
    get = alpha.__getitem__
    for v in queue:  # grows while it is walked
        t0, h0 = lat[v], hops[v]
        for p in by_start.get(v, ()):
            known = costs.get(id(p))
            if known is None:
                try:
                    known = costs[id(p)] = (p, sum(map(get, zip(p, p[1:]))))
                except KeyError:
                    return None
            b = p[-1] if out else p[0]
            t, h = t0 + known[1], h0 + len(p) - 1
            lat[b], hops[b], parent[b] = t, h, p
            queue.append(b)
            if (t, h, rank[b]) > deep:
                deep = (t, h, rank[b])
    return (lat, hops, parent, deep) if len(queue) == len(paths) + 1 else None


def arrival_route(parent: Mapping[Node, Sequence[Node]], root: Node, v: Node,
                  out: bool) -> list[Node]:
    """The walk that brought the data to ``v`` (from :func:`tree_arrivals`), from the
    root."""
    parts: list[Sequence[Node]] = []
    while v != root and len(parts) <= len(parent):
        p = parent[v] if out else parent[v][::-1]
        parts.append(p[1:])
        v = p[0]
    route = [root]
    for part in reversed(parts):
        route += part
    return route


def route_of(via: Mapping[Node, tuple[Any, int]], root: Node, v: Node) -> list[Node]:
    """The walk that brought the data to ``v`` (from :func:`tree_routes`)."""
    parts = []
    seen = 0
    while v != root and seen <= len(via):
        p, k = via[v]
        parts.append(p[1:k + 1])
        v = p[0]
        seen += 1
    out = [root]
    for part in reversed(parts):
        out += part
    return out


def reach_order(root: Node, paths: Sequence[Sequence[Node]]) -> list[Sequence[Node]]:
    """The paths breadth first from the root: each after a path through its first node
    (the rest, which no path reaches, at the end)."""
    by_start: dict[Node, list[int]] = {}
    for i, p in enumerate(paths):
        by_start.setdefault(p[0], []).append(i)
    order: list[int] = []
    queued = {root}
    queue = [root]
    for v in queue:  # grows while it is walked
        for i in by_start.get(v, ()):
            order.append(i)
            for b in paths[i][1:]:
                if b not in queued and b in by_start:
                    queued.add(b)
                    queue.append(b)
    if len(order) < len(paths):
        done = set(order)
        order += [i for i in range(len(paths)) if i not in done]
    return [paths[i] for i in order]
