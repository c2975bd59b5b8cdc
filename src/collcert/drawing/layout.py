"""Where to put every node: boxes grouped, rings as rings, tori as grids.

:func:`layout` picks one of these, from the topology alone:

* **boxes** — compute node ids share a box prefix (``b0.gpu3``, ``c1.2``,
  ``h0.1.2``: the text before the first ``.``). Each box is drawn as a circle
  of its GPUs; a switch linked to at least half of a box's GPUs (an NVSwitch)
  sits in the middle, other box switches (NICs) just outside their GPU. A
  switch belongs to a box when its id has the box's prefix or when every GPU
  it touches is in that box; the others are *global* switches (IB, spine).
  Boxes stand on a large circle around the global switches, so the links
  between boxes run inward without crossing other boxes.
* **ring** — a switch-less topology whose links form one cycle: a circle in
  cycle order.
* **grid** — compute ids ``"i.j"`` (``torus:4x4``): a grid; wrap-around links
  are drawn as arcs.
* **circle** — other switch-less topologies: a circle in rank order.
* **layered** — anything else: compute nodes in a row, switches in rows above
  them by hop distance.

:func:`aggregate` turns a boxes layout into one node per box (for large
topologies): links between groups are summed.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from collcert.reference.model import Link, Node, Topology

Point = tuple[float, float]


@dataclass
class Box:
    name: str
    compute: list[Node]
    switches: list[Node]
    hubs: list[Node] = field(default_factory=list)
    center: Point = (0.0, 0.0)
    radius: float = 1.0  # of the GPU circle
    frame: float = 1.0  # radius of the box's outline

    @property
    def outer(self) -> bool:
        """Has switches drawn outside the GPU circle (NICs)."""
        return len(self.switches) > len(self.hubs)


FRAME = 1.75  # outline radius / GPU circle radius when NICs sit outside the circle
BARE = 1.3  # … when they do not


@dataclass
class Layout:
    kind: str
    pos: dict[Node, Point]
    boxes: list[Box] = field(default_factory=list)
    global_switches: list[Node] = field(default_factory=list)
    box_of: dict[Node, str] = field(default_factory=dict)

    def extent(self) -> tuple[float, float, float, float]:
        xs = [p[0] for p in self.pos.values()]
        ys = [p[1] for p in self.pos.values()]
        for b in self.boxes:
            xs += [b.center[0] - b.frame, b.center[0] + b.frame]
            ys += [b.center[1] - b.frame, b.center[1] + b.frame]
        return min(xs), max(xs), min(ys), max(ys)


def neighbours(t: Topology) -> dict[Node, set[Node]]:
    adj: dict[Node, set[Node]] = {v: set() for v in t.nodes}
    for u, v in t.capacity:
        adj[u].add(v)
        adj[v].add(u)
    return adj


def _prefix(v: Node) -> str | None:
    text = str(v)
    if "." not in text:
        return None
    head = text.split(".", 1)[0]
    return head or None


def find_boxes(t: Topology) -> tuple[list[Box], list[Node]] | None:
    """Boxes by id prefix (module docstring), or None when the ids show none."""
    groups: dict[str, list[Node]] = {}
    for v in t.compute_nodes:
        p = _prefix(v)
        if p is None:
            return None
        groups.setdefault(p, []).append(v)
    if all(p.isdigit() for p in groups):
        return None  # "0.1", "2.3": coordinates (a torus), not boxes
    if min(len(g) for g in groups.values()) < 2:
        return None
    adj = neighbours(t)
    box_of = {v: p for p, g in groups.items() for v in g}
    boxes = {p: Box(p, g, []) for p, g in groups.items()}
    glob: list[Node] = []
    for w in t.switch_nodes:
        p = _prefix(w)
        homes = {box_of[u] for u in adj[w] if u in box_of}
        if p in boxes:
            boxes[p].switches.append(w)
        elif len(homes) == 1:
            boxes[homes.pop()].switches.append(w)
        else:
            glob.append(w)
    for b in boxes.values():
        inside = set(b.compute)
        for w in b.switches:
            touched = len(adj[w] & inside)
            if touched >= max(2, (len(inside) + 1) // 2):
                b.hubs.append(w)
    return list(boxes.values()), glob


def _ring_order(t: Topology) -> list[Node] | None:
    if t.switch_nodes:
        return None
    adj = neighbours(t)
    if any(len(adj[v]) != 2 for v in t.nodes):
        return None
    order = [t.compute_nodes[0]]
    prev = None
    while True:
        nxt = [u for u in sorted(adj[order[-1]], key=t.index.__getitem__) if u != prev]
        prev = order[-1]
        if nxt[0] == order[0]:
            break
        order.append(nxt[0])
    return order if len(order) == len(t.nodes) else None


def _grid(t: Topology) -> dict[Node, Point] | None:
    coords: dict[Node, tuple[int, int]] = {}
    for v in t.compute_nodes:
        parts = str(v).split(".")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            return None
        coords[v] = (int(parts[0]), int(parts[1]))
    if t.switch_nodes:
        return None
    return {v: (float(j), -float(i)) for v, (i, j) in coords.items()}


def _circle(nodes: list[Node], r: float, center: Point = (0.0, 0.0),
            start: float = math.pi / 2) -> dict[Node, Point]:
    n = len(nodes)
    return {v: (center[0] + r * math.cos(start - 2 * math.pi * i / n),
                center[1] + r * math.sin(start - 2 * math.pi * i / n))
            for i, v in enumerate(nodes)}


def _place_box(b: Box, t: Topology, adj: Mapping[Node, set[Node]],
               pos: dict[Node, Point]) -> None:
    cx, cy = b.center
    r = b.radius
    pos.update(_circle(b.compute, r, b.center))
    if len(b.hubs) == 1:
        pos[b.hubs[0]] = b.center
    elif b.hubs:
        pos.update(_circle(b.hubs, 0.35 * r, b.center, math.pi / 4))
    rest = [w for w in b.switches if w not in b.hubs]
    taken: dict[int, int] = {}
    for w in rest:
        ends = [pos[u] for u in adj[w] if u in pos and u in set(b.compute)]
        if ends:
            ang = math.atan2(sum(p[1] - cy for p in ends), sum(p[0] - cx for p in ends))
        else:
            ang = 2 * math.pi * len(taken) / max(len(rest), 1)
        slot = round(ang * 64 / (2 * math.pi))
        ring = taken.get(slot, 0)
        taken[slot] = ring + 1
        rr = r * (1.38 + 0.2 * ring)
        pos[w] = (cx + rr * math.cos(ang), cy + rr * math.sin(ang))


def layout(t: Topology) -> Layout:
    """Positions for every node of ``t`` (see the module docstring)."""
    found = find_boxes(t)
    if found is not None:
        boxes, glob = found
        adj = neighbours(t)
        pos: dict[Node, Point] = {}
        nb = len(boxes)
        size = max(len(b.compute) for b in boxes)
        r = max(1.0, size / 8)
        fr = r * (FRAME if any(b.outer for b in boxes) else BARE)
        spacing = 2 * fr + 0.9 * r
        big = 0.0 if nb == 1 else max(spacing / (2 * math.sin(math.pi / nb)) if nb > 2
                                      else spacing / 2 + 0.6 * r, 2.4 * r)
        if nb > 2:
            big = max(big, 2.2 * fr)
        for i, b in enumerate(boxes):
            ang = math.pi - 2 * math.pi * i / nb
            b.radius = r
            b.frame = fr
            b.center = (big * math.cos(ang), big * math.sin(ang)) if nb > 1 else (0.0, 0.0)
            _place_box(b, t, adj, pos)
        if nb == 1:
            top = fr + 1.2
            for i, w in enumerate(glob):
                pos[w] = ((i - (len(glob) - 1) / 2) * 1.5, top)
        elif len(glob) <= 4:
            gap = (min(1.1 * r, 2 * (big - fr) / max(len(glob), 1)) if nb == 2
                   else max(1.1 * r, 0.12 * big))
            for i, w in enumerate(glob):
                pos[w] = (0.0, (i - (len(glob) - 1) / 2) * gap)
        else:
            pos.update(_circle(glob, max(0.5 * big - fr, 0.3 * big), (0.0, 0.0)))
        box_of = {v: b.name for b in boxes for v in b.compute + b.switches}
        return Layout("boxes", pos, boxes, glob, box_of)
    ring = _ring_order(t)
    if ring is not None:
        return Layout("ring", _circle(ring, max(1.0, len(ring) / 6)))
    grid = _grid(t)
    if grid is not None:
        return Layout("grid", grid)
    if not t.switch_nodes:
        return Layout("circle", _circle(list(t.compute_nodes), max(1.0, t.num_compute / 6)))
    adj = neighbours(t)
    compute = set(t.compute_nodes)
    if all(adj[w] & compute for w in t.switch_nodes):
        # one level of switches (an NVSwitch box, GPUs with NICs): a single unnamed box
        box = Box("", list(t.compute_nodes), list(t.switch_nodes))
        box.hubs = [w for w in box.switches
                    if len(adj[w] & compute) >= max(2, (len(compute) + 1) // 2)]
        box.radius = max(1.0, t.num_compute / 8)
        box.frame = box.radius * (FRAME if box.outer else BARE)
        one: dict[Node, Point] = {}
        _place_box(box, t, adj, one)
        return Layout("boxes", one, [box], [], {})
    return Layout("layered", _layered(t))


def _layered(t: Topology) -> dict[Node, Point]:
    """Compute nodes in a row, switches above by hop distance from them."""
    adj = neighbours(t)
    level = {v: 0 for v in t.compute_nodes}
    q = deque(t.compute_nodes)
    while q:
        x = q.popleft()
        for y in adj[x]:
            if y not in level:
                level[y] = level[x] + 1
                q.append(y)
    for v in t.nodes:
        level.setdefault(v, 1)
    pos: dict[Node, Point] = {v: (float(i), 0.0) for i, v in enumerate(t.compute_nodes)}
    width = max(t.num_compute - 1, 1)
    for lev in range(1, max(level.values()) + 1):
        row = [v for v in t.switch_nodes if level[v] == lev]

        def key(v: Node, lev: int = lev) -> float:
            xs = [pos[u][0] for u in adj[v] if u in pos and level[u] < lev]
            return sum(xs) / len(xs) if xs else 0.0

        row.sort(key=key)
        for j, v in enumerate(row):
            x = key(v) if len(row) == 1 else width * (j + 0.5) / len(row)
            pos[v] = (x, lev * max(2.0, width / 3))
    return pos


@dataclass
class Aggregate:
    """One node per box plus the global switches; links between groups summed."""

    nodes: list[str]
    pos: dict[str, Point]
    members: dict[str, list[Node]]
    capacity: dict[tuple[str, str], Fraction]
    group: dict[Node, str]


def aggregate(t: Topology, lay: Layout) -> Aggregate:
    group: dict[Node, str] = {}
    members: dict[str, list[Node]] = {}
    pos: dict[str, Point] = {}
    for b in lay.boxes:
        for v in b.compute + b.switches:
            group[v] = b.name
        members[b.name] = b.compute + b.switches
        pos[b.name] = b.center
    for w in lay.global_switches:
        group[w] = str(w)
        members[str(w)] = [w]
        pos[str(w)] = lay.pos[w]
    cap: dict[tuple[str, str], Fraction] = {}
    for (u, v), c in t.capacity.items():
        gu, gv = group[u], group[v]
        if gu != gv:
            cap[(gu, gv)] = cap.get((gu, gv), Fraction(0)) + c
    return Aggregate(list(members), pos, members, cap, group)


def group_loads(agg: Aggregate, loads: Mapping[Link, Any]) -> dict[tuple[str, str], Any]:
    out: dict[tuple[str, str], Any] = {}
    for (u, v), x in loads.items():
        gu, gv = agg.group[u], agg.group[v]
        if gu != gv:
            out[(gu, gv)] = out.get((gu, gv), 0) + x
    return out
