"""NCCL's rings: channels, each a Hamiltonian cycle over the GPUs, as NCCL's search orders them.

Read from NCCL's public source (NVIDIA/nccl): ``src/graph/search.cc`` finds the
channels of the ring graph one at a time (``ncclTopoSearchRec``): on several
nodes a channel is ``NET n -> GPU a -> GPU b -> .. -> GPU x -> NET n`` (or
another NIC with ``crossNic``), on one node ``GPU a -> .. -> GPU x -> GPU a``;
the next GPU is the one with the widest path left (``ncclTopoSearchNextGpuSort``),
and behind an NVSwitch the neighbours ``g+1`` then ``g-1`` come first; every
channel takes its bandwidth off the links it uses (``ncclTopoFollowPath``) and
the search keeps the largest ``nChannels × bw`` it finds. ``src/graph/connect.cc``
(``connectRings``) joins the nodes' pieces: node n's last GPU sends to node
n+1's first, the last node's to the first node's. ``src/graph/rings.cc`` checks
that every channel is a cycle through every rank.

The model (docs/baselines.md): the boxes of :func:`~.fabric.find_boxes` are
NCCL's nodes, visited in order; channel c starts in the first box at the GPU
of position c, goes through its box greedily (least used route, then the
GPU after the current one, as NCCL's NVSwitch rule), leaves for the next box
at the GPU of the same position (the NIC rail), and closes back to its
start; a dead end backtracks. Channels are added until 16; the number kept is
the smallest that reaches the best modelled ring bandwidth.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from collcert.reference.model import ScheduleError, Topology

from .fabric import Fabric, Node, Route, box_switches, find_boxes
from .hamilton import hamiltonian_cycle

MAX_CHANNELS = 16
SEARCH_BUDGET = 20_000  # greedy steps per channel before the search gives up


class BaselineError(ScheduleError):
    """A baseline does not apply to this topology or collective (the message says why)."""


@dataclass
class Channel:
    """One ring: ``order`` visits every compute node once; ``routes[i]`` is the walk
    from ``order[i]`` to ``order[i+1]`` (the last one back to ``order[0]``)."""

    order: list[Node]
    routes: list[Route]


@dataclass
class Rings:
    """NCCL's ring channels on a topology, and the boxes they were built over."""

    channels: list[Channel]
    boxes: list[list[Node]]
    inside: list[set[Node]]  # the switches inside each box (intra-box routes use only them)

    def within(self, a: Node, b: Node) -> set[Node] | None:
        """The switches a route from ``a`` to ``b`` may use: its box's when both are in
        one box, any otherwise (None)."""
        for box, sw in zip(self.boxes, self.inside):
            if a in box:
                return sw if b in box else None
        return None

    def nodes_in_box(self, c: int, box: int) -> list[Node]:
        """Channel ``c``'s visiting order inside ``box`` (its first GPU is where the
        channel enters the box)."""
        members = set(self.boxes[box])
        return [v for v in self.channels[c].order if v in members]


def ring_channels(topology: Topology, channels: int | None = None) -> Rings:
    """The ring channels NCCL's search would build (module docstring): ``channels``
    of them, or (None) the smallest number reaching the best modelled bandwidth.
    Raises :class:`BaselineError` when no ring through switches exists."""
    boxes = find_boxes(topology)
    inside = box_switches(topology, boxes)
    n = topology.num_compute
    if n < 2:
        raise BaselineError("a ring needs at least two compute nodes")
    if channels is not None and not 1 <= channels <= 64:
        raise BaselineError(f"channels must be 1 to 64, not {channels}")
    best = _build(topology, boxes, inside, channels, None, SEARCH_BUDGET)
    if not topology.switch_nodes or not best[1]:  # a torus, a lattice: no boxes to walk
        cycle = hamiltonian_cycle(topology)
        if cycle is not None:
            lattice = _lattice_channels(cycle, channels)
            bw = len(lattice) / _busiest(topology, lattice)
            if bw > best[0] * (1 + 1e-9):
                return Rings(lattice, boxes, inside)
    if not best[1]:
        raise BaselineError(
            "no ring: the compute nodes admit no cycle whose hops each go through "
            "switches only (a hop may not pass through another GPU in the schedule "
            "format); NCCL's ring needs one")
    if channels is None:
        widest = _widest(topology, boxes)
        for speed in _speeds(topology, best[0]):
            if _most_channels(widest, speed) * speed <= best[0] * (1 + 1e-9):
                continue
            got = _build(topology, boxes, inside, None, speed, SEARCH_BUDGET // 10)
            if got[0] > best[0] * (1 + 1e-9):
                best = got
    return Rings(best[1], boxes, inside)


def _build(topology: Topology, boxes: list[list[Node]], inside: list[set[Node]],
           channels: int | None, speed: float | None, budget: int,
           ) -> tuple[float, list[Channel]]:
    """Channels one after the other (``speed``: each needs that bandwidth left on every
    link it uses, as NCCL's search does); the best prefix and its modelled bandwidth
    (channels / the busiest link's uses per capacity). ``channels``: exactly that many."""
    fabric = Fabric(topology)
    fabric.limit = speed
    built: list[Channel] = []
    best = (0.0, 0)
    for c in range(channels or MAX_CHANNELS):
        ch = _channel(fabric, boxes, inside, c, budget)
        if ch is None:
            break
        built.append(ch)
        bw = len(built) / fabric.busiest()
        if bw > best[0] * (1 + 1e-9):
            best = (bw, len(built))
    keep = len(built) if channels else best[1]
    return (len(built[:keep]) / _busiest(topology, built[:keep]) if keep else 0.0,
            built[:keep])


def _lattice_channels(cycle: list[Node], channels: int | None) -> list[Channel]:
    """Channels on a Hamiltonian cycle of direct links (:mod:`.hamilton`): the cycle and
    its reverse, which use the links of each hop both ways (``channels``: that many,
    alternating)."""
    back = [cycle[0]] + cycle[:0:-1]
    both = [cycle, back]
    out = []
    for c in range(channels or 2):
        order = both[c % 2]
        routes = [(a, b) for a, b in zip(order, order[1:] + order[:1])]
        out.append(Channel(list(order), routes))
    return out


def _busiest(topology: Topology, channels: list[Channel]) -> float:
    uses: dict[tuple[Node, Node], int] = {}
    for ch in channels:
        for r in ch.routes:
            for e in zip(r, r[1:]):
                uses[e] = uses.get(e, 0) + 1
    return max(n / float(topology.capacity[e]) for e, n in uses.items())


def _speeds(topology: Topology, floor: float) -> list[float]:
    """The bandwidths per channel worth trying, highest first (NCCL tries a list of
    speeds from high to low): capacity / k, above what the best so far gives."""
    caps = {float(c) for c in topology.capacity.values()}
    out = {c / k for c in caps for k in range(1, MAX_CHANNELS + 1)}
    return sorted((s for s in out if s * MAX_CHANNELS > floor * (1 + 1e-9)), reverse=True)


def _widest(topology: Topology, boxes: list[list[Node]]) -> list[list[float]]:
    """Per box, per GPU: the widest route out of the box (one box: to another GPU)."""
    fabric = Fabric(topology)
    out = []
    for b, box in enumerate(boxes):
        after = boxes[(b + 1) % len(boxes)] if len(boxes) > 1 else None
        row = []
        for x in box:
            found = fabric.routes(x, after if after is not None else [v for v in box if v != x],
                                  first=True)  # the best route only
            row.append(1 / min(f[0] for f in found.values()) if found else 0.0)
        out.append(row)
    return out


def _most_channels(widest: list[list[float]], speed: float) -> int:
    """An upper bound on the channels at ``speed``: every channel leaves every box once
    (one box: every GPU sends once), each through a route with ``speed`` left."""
    fits = [[int(w / speed + 1e-9) for w in row] for row in widest]
    if len(widest) == 1:
        return min(MAX_CHANNELS, min(fits[0]) * len(fits[0]))
    return min(MAX_CHANNELS, min(sum(row) for row in fits))


def _channel(fabric: Fabric, boxes: Sequence[Sequence[Node]], inside: list[set[Node]],
             c: int, budget: int = SEARCH_BUDGET) -> Channel | None:
    """One more channel, its routes counted in ``fabric`` (None: none found)."""
    where = {v: (b, i) for b, box in enumerate(boxes) for i, v in enumerate(box)}
    start = boxes[0][c % len(boxes[0])]
    walk = _Walk(fabric, boxes, where, start)
    walk.inside = inside
    stack: list[Iterator[Option]] = [iter([(start, (), x) for x in walk.exits(0, start)])]
    steps = 0
    while stack and steps < budget:
        steps += 1
        option = next(stack[-1], None)
        if option is None:  # dead end: undo the last hop
            stack.pop()
            walk.back()
            continue
        v, route, exit_ = option
        if walk.step(v, route, exit_):
            return Channel(walk.order, walk.routes)
        stack.append(walk.options())
    walk.abandon()
    return None


Option = tuple[Node, Route, Node]  # next GPU, the route to it, the exit of its box


class _Walk:
    """A channel being searched: the GPUs so far, their routes (counted in the fabric),
    and for every box entered the GPU it must leave from (NCCL: ``GPU x -> NET n``)."""

    def __init__(self, fabric: Fabric, boxes: Sequence[Sequence[Node]],
                 where: dict[Node, tuple[int, int]], start: Node) -> None:
        self.fabric, self.boxes, self.where, self.start = fabric, boxes, where, start
        self.total = sum(len(b) for b in boxes)
        self.order: list[Node] = []
        self.routes: list[Route] = []
        self.exit: list[Node] = []
        self.inside: list[set[Node]] = []

    def step(self, v: Node, route: Route, exit_: Node) -> bool:
        """Go to ``v``; True when that closes the cycle."""
        if route:
            self.fabric.use(route)
            self.routes.append(route)
        if v == self.start and self.order:
            return True
        self.order.append(v)
        self.exit.append(exit_)
        return False

    def back(self) -> None:
        if self.order:
            self.order.pop()
            self.exit.pop()
        if self.routes:
            self.fabric.use(self.routes.pop(), -1)

    def abandon(self) -> None:
        for r in self.routes:
            self.fabric.use(r, -1)

    def options(self) -> Iterator[Option]:
        """The next GPUs to try, best first: the rest of the box (its exit last), else
        an entry of the next box with each possible exit; after the last, the start."""
        u = self.order[-1]
        if len(self.order) == self.total:
            got = self.fabric.routes(u, [self.start]).get(self.start)
            return iter([] if got is None else [(self.start, got[2], self.start)])
        seen = set(self.order)
        b, i = self.where[u]
        exit_ = self.exit[-1]
        rest = [v for v in self.boxes[b] if v not in seen]
        if rest:
            if u == exit_:
                return iter([])  # at the box's exit before the box was done
            if len(rest) > 1 and exit_ in rest:
                rest.remove(exit_)
            size = len(self.boxes[b])
            ranked = self._ranked(u, rest, lambda v: (self.where[v][1] - i - 1) % size,
                                  self.inside[b] if len(self.boxes) > 1 else None)
            return iter([(v, r, exit_) for v, r in ranked])
        nb = (b + 1) % len(self.boxes)
        size = len(self.boxes[nb])
        rest = [v for v in self.boxes[nb] if v not in seen]
        ranked = self._ranked(u, rest, lambda v: (self.where[v][1] - i) % size)  # the rail
        return ((v, r, x) for v, r in ranked for x in self.exits(nb, v))  # exits when needed

    def _ranked(self, u: Node, rest: list[Node], near: Any,
                within: set[Node] | None = None) -> list[tuple[Node, Route]]:
        found = self.fabric.routes(u, rest, within)
        ranked = sorted(found, key=lambda v: (round(found[v][0], 12), found[v][1], near(v)))
        return [(v, found[v][2]) for v in ranked]

    def exits(self, b: int, entry: Node) -> list[Node]:
        """The GPUs box ``b`` may be left from, entered at ``entry``: least used route out
        first, then the GPU before the entry (NCCL's ring order ends there)."""
        box = self.boxes[b]
        if len(box) == 1:
            return [entry]
        after = [v for v in self.boxes[(b + 1) % len(self.boxes)]]
        if (b + 1) % len(self.boxes) == 0:
            after = [self.start]
        e = self.where[entry][1]
        keyed = []
        near = self.fabric.nearest(after, box)  # every GPU's best route out, one search
        for x in box:
            if x == entry or x not in near:
                continue
            best = (round(near[x][0], 12), near[x][1])
            keyed.append((best, (e - 1 - self.where[x][1]) % len(box), x))
        return [x for *_, x in sorted(keyed, key=lambda t: (t[0], t[1]))]


def ring_summary(rings: Rings) -> list[str]:
    """The channels in words, as NCCL's log prints them (``Channel 00/02 : 0 1 2 ...``)."""
    n = len(rings.channels)
    lines = []
    for c, ch in enumerate(rings.channels):
        body = " ".join(str(v) for v in ch.order[:12]) + (" …" if len(ch.order) > 12 else "")
        lines.append(f"Channel {c:02d}/{n:02d} : {body}")
    return lines
