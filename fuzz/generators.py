"""Random topologies that are valid by construction, drawn from any source of choices.

Every builder takes a :class:`Source` (a few primitive draws: an integer in a
range, a choice, a permutation) and returns a :class:`collcert.Topology` that is

* **Eulerian by construction**: it is a sum of directed cycles (a link and its
  reverse with equal capacity is a 2-cycle), so every node sends exactly what
  it receives;
* **strongly connected among compute nodes**: the first cycle (or a spanning
  tree of bidirectional links) reaches every node.

Two sources are provided: :class:`RandomSource` (``random.Random(seed)``,
used by ``collcert fuzz generate`` and the differential driver) and
:class:`HypothesisSource` (wraps hypothesis's ``draw``; the strategies in
:mod:`collcert.fuzz.strategies` use it, so hypothesis can shrink every choice).
The same code builds the same topology from the same sequence of choices.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from collcert.reference.model import Topology, TopologyError

T = TypeVar("T")

KINDS = ("cycles", "bidirectional", "switched", "boxes", "switched_cycles")
"""The topology families, in the order ``random_topology`` picks from."""

CAPACITY_MODES = ("small", "wide", "huge", "mixed", "uniform")
"""How link capacities are drawn (see :func:`capacity_drawer`)."""


class Source(Protocol):
    """The primitive random choices a builder makes."""

    def integer(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi]; shrinks toward ``lo``."""
        ...

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``; shrinks toward the first."""
        ...

    def permutation(self, items: Sequence[T]) -> list[T]:
        """The items in a random order."""
        ...


class RandomSource:
    """Choices from ``random.Random(seed)``: the same seed gives the same topology."""

    def __init__(self, seed: int | str | random.Random) -> None:
        self.rng = seed if isinstance(seed, random.Random) else random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]

    def permutation(self, items: Sequence[T]) -> list[T]:
        out = list(items)
        self.rng.shuffle(out)
        return out


class HypothesisSource:
    """Choices drawn through hypothesis (inside ``st.composite``), so they shrink."""

    def __init__(self, draw: Callable[[Any], Any]) -> None:
        self.draw = draw

    def integer(self, lo: int, hi: int) -> int:
        from hypothesis import strategies as st

        return int(self.draw(st.integers(lo, hi)))

    def choice(self, options: Sequence[T]) -> T:
        from hypothesis import strategies as st

        return self.draw(st.sampled_from(list(options)))  # type: ignore[no-any-return]

    def permutation(self, items: Sequence[T]) -> list[T]:
        from hypothesis import strategies as st

        return list(self.draw(st.permutations(list(items))))


CapacityDrawer = Callable[[Source], int]


def capacity_drawer(mode: str = "mixed") -> CapacityDrawer:
    """A function drawing one positive integer capacity.

    ``small``: 1..8 (many ties, many parallel cycles); ``wide``: 1..10**6;
    ``huge``: up to 2**70 (beyond int64: the exact max-flow engine runs);
    ``mixed``: mostly small, sometimes wide or huge; ``uniform``: always 1.
    """
    if mode == "small":
        return lambda src: src.integer(1, 8)
    if mode == "wide":
        return lambda src: src.integer(1, 10**6)
    if mode == "huge":
        return lambda src: src.integer(1, 2**70)
    if mode == "uniform":
        return lambda src: 1
    if mode == "mixed":
        def mixed(src: Source) -> int:
            tier = src.integer(0, 9)
            if tier <= 6:
                return src.integer(1, 8)
            if tier <= 8:
                return src.integer(1, 10**6)
            return src.integer(2**62, 2**70)
        return mixed
    raise TopologyError(f"unknown capacity mode {mode!r}: choose one of {', '.join(CAPACITY_MODES)}")


def _cap(caps: CapacityDrawer | str | None) -> CapacityDrawer:
    if caps is None:
        return capacity_drawer("mixed")
    if isinstance(caps, str):
        return capacity_drawer(caps)
    return caps


def _compute_names(n: int) -> list[str]:
    return [f"c{i}" for i in range(n)]


def _add_cycle(links: list[tuple[str, str, int]], cycle: Sequence[str], cap: int) -> None:
    for i, u in enumerate(cycle):
        links.append((u, cycle[(i + 1) % len(cycle)], cap))


def cycle_union(
    src: Source,
    *,
    min_compute: int = 2,
    max_compute: int = 6,
    max_cycles: int = 4,
    switches: int = 0,
    capacities: CapacityDrawer | str | None = None,
    name: str = "",
) -> Topology:
    """A direct-connect Eulerian digraph: the union of random directed cycles.

    The first cycle visits every node (so the graph is strongly connected);
    up to ``max_cycles - 1`` more cycles run through random subsets of at
    least two nodes, each with its own capacity. With ``switches > 0`` that
    many switch nodes ``w0, w1, ...`` join the cycles (directed switch
    topologies, e.g. a unidirectional ring through a switch).
    """
    cap = _cap(capacities)
    n = src.integer(min_compute, max_compute)
    compute = _compute_names(n)
    sw = [f"w{i}" for i in range(switches)]
    nodes = compute + sw
    links: list[tuple[str, str, int]] = []
    _add_cycle(links, [nodes[0]] + src.permutation(nodes[1:]), cap(src))
    for _ in range(src.integer(0, max_cycles - 1)):
        size = src.integer(2, len(nodes))
        members = src.permutation(nodes)[:size]
        _add_cycle(links, members, cap(src))
    return Topology(compute, links, sw, name=name or f"cycles-{n}")


def bidirectional(
    src: Source,
    *,
    min_compute: int = 2,
    max_compute: int = 6,
    max_extra: int = 4,
    capacities: CapacityDrawer | str | None = None,
    name: str = "",
) -> Topology:
    """A bidirectional topology with symmetric capacities (c(u,v) = c(v,u)).

    A random spanning tree plus up to ``max_extra`` further links. Its floored
    fixed-k graphs stay Eulerian (Zhao & Krishnamurthy 2023, §2.4), so every theorem applies.
    """
    cap = _cap(capacities)
    n = src.integer(min_compute, max_compute)
    compute = _compute_names(n)
    order = [compute[0]] + src.permutation(compute[1:])
    links: list[tuple[str, str, int]] = []
    for i in range(1, n):
        parent = order[src.integer(0, i - 1)]
        c = cap(src)
        links += [(parent, order[i], c), (order[i], parent, c)]
    if n > 2:
        for _ in range(src.integer(0, max_extra)):
            a, b = src.permutation(compute)[:2]
            c = cap(src)
            links += [(a, b, c), (b, a, c)]
    return Topology(compute, links, name=name or f"bidir-{n}")


def switched(
    src: Source,
    *,
    min_compute: int = 2,
    max_compute: int = 6,
    max_tiers: int = 2,
    max_switches_per_tier: int = 3,
    direct_links: bool = True,
    capacities: CapacityDrawer | str | None = None,
    name: str = "",
) -> Topology:
    """A switch topology: compute nodes under leaf switches, 1..``max_tiers`` tiers.

    Every compute node attaches to one or two leaf switches; every switch of
    tier t links to one or more switches of tier t+1 (oversubscribed or not:
    uplink capacities are drawn independently of the downlinks); the top tier
    is a single switch or a ring of switches. All links are bidirectional with
    symmetric capacities; with ``direct_links`` a few compute-compute links
    (NVLink-like) are added too.
    """
    cap = _cap(capacities)
    n = src.integer(min_compute, max_compute)
    compute = _compute_names(n)
    tiers = src.integer(1, max_tiers)
    switch_tiers: list[list[str]] = []
    for t in range(tiers):
        width = 1 if t == tiers - 1 and src.integer(0, 1) == 0 else src.integer(
            1, max_switches_per_tier)
        switch_tiers.append([f"s{t}.{i}" for i in range(width)])
    links: list[tuple[str, str, int]] = []

    def both(a: str, b: str, c: int) -> None:
        links.extend([(a, b, c), (b, a, c)])

    leaves = switch_tiers[0]
    for i, c in enumerate(compute):
        both(c, leaves[i % len(leaves)], cap(src))
        if len(leaves) > 1 and src.integer(0, 3) == 0:
            other = leaves[(i + 1 + src.integer(0, len(leaves) - 2)) % len(leaves)]
            if other != leaves[i % len(leaves)]:
                both(c, other, cap(src))
    for t in range(tiers - 1):
        upper = switch_tiers[t + 1]
        for j, w in enumerate(switch_tiers[t]):
            both(w, upper[j % len(upper)], cap(src))
            if len(upper) > 1 and src.integer(0, 2) == 0:
                both(w, upper[(j + 1) % len(upper)], cap(src))
    top = switch_tiers[-1]
    if len(top) > 1:
        for j in range(len(top) - (1 if len(top) == 2 else 0)):
            both(top[j], top[(j + 1) % len(top)], cap(src))
    if direct_links and n > 1:
        for _ in range(src.integer(0, 2)):
            a, b = src.permutation(compute)[:2]
            both(a, b, cap(src))
    switches = [w for tier in switch_tiers for w in tier]
    return Topology(compute, links, switches, name=name or f"switched-{n}x{tiers}")


def boxes(
    src: Source,
    *,
    max_boxes: int = 3,
    max_per_box: int = 4,
    capacities: CapacityDrawer | str | None = None,
    name: str = "",
) -> Topology:
    """Box-structured: fast links inside each box, a slow fabric between boxes.

    Inside a box the compute nodes share a box switch (NVSwitch-like) or a
    bidirectional ring (direct NVLink); every compute node also has a slow
    NIC link to one of one or two fabric switches (rail-style). The fast
    capacity is the slow one times a factor in 2..20 (like 300 vs 25 GB/s).
    """
    cap = _cap(capacities)
    nb = src.integer(1, max_boxes)
    per = src.integer(2 if nb == 1 else 1, max(max_per_box, 2 if nb == 1 else 1))
    fabric = [f"ib{i}" for i in range(src.integer(1, 2))]
    compute: list[str] = []
    switches: list[str] = []
    links: list[tuple[str, str, int]] = []

    def both(a: str, b: str, c: int) -> None:
        links.extend([(a, b, c), (b, a, c)])

    slow = cap(src)
    rails = fabric[: min(len(fabric), per)]  # every rail switch is used
    for b in range(nb):
        gpus = [f"b{b}.g{i}" for i in range(per)]
        compute += gpus
        fast = slow * src.integer(2, 20)
        if per > 1 and src.integer(0, 1) == 0:
            sw = f"b{b}.nvs"
            switches.append(sw)
            for g in gpus:
                both(g, sw, fast)
        elif per > 1:
            for i in range(per if per > 2 else 1):
                both(gpus[i], gpus[(i + 1) % per], fast)
        for i, g in enumerate(gpus):
            both(g, rails[i % len(rails)], slow)
    switches += rails
    return Topology(compute, links, switches, name=name or f"boxes-{nb}x{per}")


def switched_cycles(
    src: Source,
    *,
    min_compute: int = 2,
    max_compute: int = 5,
    max_switches: int = 2,
    capacities: CapacityDrawer | str | None = None,
    name: str = "",
) -> Topology:
    """Directed cycles through compute and switch nodes (asymmetric switch topologies)."""
    return cycle_union(src, min_compute=min_compute, max_compute=max_compute,
                       switches=src.integer(1, max_switches), capacities=capacities,
                       name=name)


def directed_cycles(
    src: Source,
    topology: Topology,
    *,
    min_cycles: int = 1,
    max_cycles: int = 4,
    max_length: int = 5,
    capacities: CapacityDrawer | str | None = None,
) -> Topology:
    """``topology`` plus ``min_cycles``..``max_cycles`` random closed walks of 2 to
    ``max_length`` nodes (compute nodes and switches), each with its own capacity:
    asymmetric capacities on a symmetric topology, which stays Eulerian."""
    cap = _cap(capacities)
    nodes = list(topology.nodes)
    links: list[tuple[Any, Any, Any]] = [(u, v, c) for (u, v), c in topology.capacity.items()]
    for _ in range(src.integer(min_cycles, max_cycles)):
        length = src.integer(2, max_length)
        walk = [src.choice(nodes)]
        while len(walk) < length:
            x = src.choice(nodes)
            if x != walk[-1]:
                walk.append(x)
        if walk[0] == walk[-1]:
            walk.pop()
        if len(walk) < 2:
            continue
        c = cap(src)
        links += [(a, b, c) for a, b in zip(walk, walk[1:] + walk[:1])]
    return Topology(topology.compute_nodes, links, topology.switch_nodes, name=topology.name,
                    unit=topology.unit, multicast_switches=topology.multicast_switches)


def random_topology(
    src: Source,
    *,
    max_nodes: int = 8,
    switches: bool = True,
    kinds: Sequence[str] | None = None,
    capacities: CapacityDrawer | str | None = None,
) -> Topology:
    """One topology of a random family with at most ``max_nodes`` nodes in all.

    ``switches=False`` keeps to direct-connect families (cycles, bidirectional).
    A draw that would exceed ``max_nodes`` is redrawn with smaller parameters.
    """
    if max_nodes < 2:
        raise TopologyError(f"max_nodes must be at least 2, got {max_nodes}")
    allowed = [k for k in (kinds or KINDS) if k in KINDS]
    if not switches:
        allowed = [k for k in allowed if k in ("cycles", "bidirectional")]
    if not allowed:
        raise TopologyError(f"no topology family left to draw from; families are {KINDS}")
    if max_nodes < 4:
        allowed = [k for k in allowed if k in ("cycles", "bidirectional")] or ["cycles"]
    kind = src.choice(allowed)
    m = max_nodes
    if kind == "cycles":
        return cycle_union(src, max_compute=m, capacities=capacities)
    if kind == "bidirectional":
        return bidirectional(src, max_compute=m, capacities=capacities)
    if kind == "switched_cycles":
        ns = src.integer(1, max(1, min(2, m - 2)))
        return cycle_union(src, max_compute=max(2, m - ns), switches=ns, capacities=capacities)
    if kind == "switched":
        tiers = 1 if m < 5 else src.integer(1, 2)
        per_tier = max(1, min(3, (m - 2) // (tiers + 1)))
        budget = m - tiers * per_tier - (1 if tiers > 1 else 0)
        return switched(src, max_compute=max(2, budget), max_tiers=tiers,
                        max_switches_per_tier=per_tier, capacities=capacities)
    # boxes: nb * per compute + up to nb box switches + up to 2 rail switches
    if m >= 5:
        for nb in (3, 2, 1):
            per = (m - 2 - nb) // nb
            if per >= 1:
                return boxes(src, max_boxes=nb, max_per_box=min(per, 4), capacities=capacities)
    return cycle_union(src, max_compute=m, capacities=capacities)


def generate(seed: int | str, *, max_nodes: int = 8, switches: bool = True,
             capacities: CapacityDrawer | str | None = None) -> Topology:
    """The topology for ``seed`` (deterministic across runs and machines)."""
    topo = random_topology(RandomSource(seed), max_nodes=max_nodes, switches=switches,
                           capacities=capacities)
    return topo


def case_seed(seed: int, index: int) -> str:
    """The seed of case ``index`` of a campaign seeded with ``seed``."""
    return f"{seed}:{index}"
