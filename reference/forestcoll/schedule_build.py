"""One phase of a tree schedule: switch removal, tree packing, walks in G, multicast.

:func:`build_phase` turns G({U·c_e}) of one collective (integer capacities in
unit-tree units, a supply k_u of unit trees per root; Zhao & Krishnamurthy 2023, §2)
into trees with their walks in G: switch removal (:mod:`.splitting`, Thm 8, or by
the orbits of a box symmetry, :mod:`.symsplit`), tree packing (:mod:`.packing`,
Thm 12, or :mod:`.sympack`), the walks of every tree arc of G* handed out (a batch
whose arc units use different walks is refined into several trees) and
in-network multicast (Zhao et al. 2026, §5.6). :func:`phase_time` is the exact time
of a phase (by link orbits for a phase built by orbits, :mod:`.schedule_sym`),
:func:`require_eulerian` the check fixed k needs (§2.4), and
:class:`Stages` what the stages record (seconds, peak memory, progress).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial
from typing import Any, cast

from ..model import ScheduleError, Topology, fraction_str
from ..symmetry import Symmetry, orbits
from .packing import pack_trees
from .schedule_result import Node, Path, Phase, StageProgress, Tree, TreeEdge
from .schedule_sym import OrbitTrees, orbit_phase_time
from .splitting import SplitResult, remove_switches
from .sympack import pack_orbits
from .symsplit import SymmetryFailed, remove_switches_orbits
from .walks import hand_out


@dataclass
class Stages:
    """How the stages of a schedule run (max-flow engine, multicast post-processing,
    the ``progress(stage, done, total)`` callback) and what they record: seconds
    and peak memory (MiB) per stage, in the order they are reported."""

    engine: str = "auto"
    multicast: bool = True
    progress: StageProgress | None = None
    timings: dict[str, float] = field(default_factory=dict)
    memory: dict[str, float] = field(default_factory=dict)
    orbits_only: bool = False
    """Raise :class:`SymmetryFailed` where the orbit-wise build gets stuck, instead of
    running the general algorithms (a caller with a better fallback)."""
    estimate: Callable[[Any], None] | None = None
    """Told the :class:`.general_estimate.GeneralEstimate` of the general algorithms before
    they start."""

    def callback(self, stage: str) -> Callable[[int, int], None] | None:
        """``progress`` for one stage, as the algorithms call it: ``(done, total)``."""
        return None if self.progress is None else partial(self.progress, stage)

    def report(self, stage: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(stage, done, total)


@dataclass
class _Built:
    """G* and the trees of one phase, how they were found, and when (monotonic
    seconds at the start, after switch removal, after packing; peak MiB after each)."""

    split: SplitResult
    trees: list[Tree]
    stats: dict[str, Any]
    by_orbits: bool
    times: tuple[float, float, float]
    memory: tuple[float, float]
    orbits: OrbitTrees | None = None


def gcd_all(values: Sequence[int]) -> int:
    g = 0
    for v in values:
        g = math.gcd(g, v)
    return g


def build_phase(
    g: Topology, collective: str, caps: dict[tuple[Node, Node], int], supply: dict[Node, int],
    k: int, U: Fraction, transposed: bool, stages: Stages, sym: Symmetry | None = None,
) -> tuple[Phase, Fraction]:
    """Split, pack, map back on ``g`` (already transposed for in-tree phases); the
    phase and the link traffic in-network multicast saves.

    With ``sym`` (a verified box symmetry of ``g``) switch removal and packing
    go by orbits (:mod:`.symsplit`, :mod:`.sympack`); if that gets stuck the
    general algorithms run instead (``stats["symmetry"]`` says which)."""
    direction = "in" if transposed else "out"
    if stages.multicast and g.multicast_switches:
        sym = None  # multicast trimming edits paths tree by tree; orbit trees share them
    note = "none found"
    built = None
    if sym is not None:
        try:
            built = _by_orbits(g, collective, caps, supply, sym, transposed, stages)
        except SymmetryFailed as exc:
            if stages.orbits_only:
                raise
            note = f"general algorithms ({exc})"
    if built is None:
        built = _general(g, collective, caps, supply, direction, stages,
                         fallback="" if sym is None else note)
        built.stats["symmetry"] = note
    trees = built.trees
    saved = Fraction(0)
    if stages.multicast:
        total = sum(supply.values())  # a tree carries multiplicity/total of the data size M
        saved = _multicast(trees, g.multicast_switches,
                           lambda tr: Fraction(tr.multiplicity, total))
    if transposed and not built.by_orbits:
        for tr in trees:
            tr.edges = [TreeEdge(e.dst, e.src, tuple(reversed(e.path))) for e in tr.edges]
    count: dict[Node, int] = {}
    for tr in trees if built.orbits is None else built.orbits.reps:  # images: their rep's
        tr.index = count.get(tr.root, 0)
        count[tr.root] = tr.index + 1
    _record(stages, built, time.monotonic())
    phase = Phase(collective, k, U, trees, built.split, transposed, stats=built.stats,
                  orbits=built.orbits)
    return phase, saved


def _by_orbits(g: Topology, collective: str, caps: dict[tuple[Node, Node], int],
               supply: dict[Node, int], sym: Symmetry, transposed: bool, stages: Stages,
               ) -> _Built:
    """Switch removal and packing by the orbits of ``sym`` (raises SymmetryFailed). A
    switch removal that gets stuck is tried again without the far spread of
    :mod:`.symsplit`, then (a product group) with the box shift alone."""
    t0 = time.monotonic()
    split, sym = _split_by_orbits(g, collective, caps, supply, sym, stages)
    t1 = time.monotonic()
    mem_split = peak_memory_mb()
    orb = pack_orbits(split, sym, supply, progress=stages.callback(f"{collective}: tree packing"))
    t2 = time.monotonic()
    mem_pack = peak_memory_mb()
    stats: dict[str, Any] = dict(split.stats)
    stats.update(orb.stats)
    stats["symmetry"] = orbit_note(sym)
    ot = OrbitTrees(orb, transposed)  # the other roots' trees are mapped when first used
    return _Built(split, cast(list[Tree], ot.lazy()), stats, True, (t0, t1, t2),
                  (mem_split, mem_pack), ot)


def _split_by_orbits(g: Topology, collective: str, caps: dict[tuple[Node, Node], int],
                     supply: dict[Node, int], sym: Symmetry, stages: Stages,
                     ) -> tuple[SplitResult, Symmetry]:
    """:func:`.symsplit.remove_switches_orbits` in the tries of :func:`_by_orbits`."""
    tries = [(sym, True), (sym, False)]
    if sym.orders:
        box = sym.fallback or orbits.box_shift(g, [supply.get(c, 0) for c in g.compute_nodes])
        if box is not None:
            tries += [(box, True), (box, False)]
    # a group with a table of its elements first (as before groups kept by their
    # generators could build: dgx_a100:1024 keeps its box shift), then the others
    tries = [x for x in tries if x[0].tabled] + [x for x in tries if not x[0].tabled]
    for n, (grp, far) in enumerate(tries):
        try:
            split = remove_switches_orbits(
                g.compute_nodes, g.switch_nodes, caps, supply, grp, engine=stages.engine,
                progress=stages.callback(f"{collective}: switch removal"), far=far)
            return split, grp
        except SymmetryFailed:
            if n + 1 == len(tries):
                raise
    raise AssertionError("unreachable")


def orbit_note(sym: Symmetry) -> str:
    """What a phase built by orbits went by, in words."""
    roots = f"{len(sym.reps)} representative root{'s' if len(sym.reps) != 1 else ''}"
    if not sym.orders:
        return f"{sym.order} boxes, {roots}"
    return f"a group of {sym.order} ({' × '.join(map(str, sym.factors))}), {roots}"


def _general(g: Topology, collective: str, caps: dict[tuple[Node, Node], int],
             supply: dict[Node, int], direction: str, stages: Stages,
             fallback: str = "") -> _Built:
    """Switch removal (Zhao & Krishnamurthy 2023, Alg 1) and packing in batches (Alg 2),
    announced (``stages.estimate``) and refused beyond the limits first."""
    from .general_estimate import check_general, estimate_general

    est = estimate_general(g.compute_nodes, g.switch_nodes, caps, supply, fallback=fallback)
    if stages.estimate is not None:
        stages.estimate(est)
    check_general(est, g.name or "the topology")
    t0 = time.monotonic()
    split = remove_switches(g.compute_nodes, g.switch_nodes, caps, supply, engine=stages.engine,
                            progress=stages.callback(f"{collective}: switch removal"))
    t1 = time.monotonic()
    mem_split = peak_memory_mb()
    packing = pack_trees(g.compute_nodes, split.capacity, supply, engine=stages.engine,
                         progress=stages.callback(f"{collective}: tree packing"))
    t2 = time.monotonic()
    mem_pack = peak_memory_mb()
    trees = _map_back(split, packing.batches, direction)
    stats: dict[str, Any] = dict(split.stats)
    stats.update({"packing_maxflows": packing.maxflows, "packing_rejected": packing.rejected,
                  "packing_bounded": packing.bounded, "packing_placed": packing.placed,
                  "batches": len(packing.batches)})
    return _Built(split, trees, stats, False, (t0, t1, t2), (mem_split, mem_pack))


def _record(stages: Stages, built: _Built, t3: float) -> None:
    """Add a phase's seconds to the stage totals and keep the peak memory of each."""
    t0, t1, t2 = built.times
    timings, memory = stages.timings, stages.memory
    for key, dt in (("switch removal", t1 - t0), ("packing", t2 - t1), ("mapping back", t3 - t2)):
        timings[key] = timings.get(key, 0.0) + dt
    mem_split, mem_pack = built.memory
    memory["switch removal"] = max(memory.get("switch removal", 0.0), mem_split)
    memory["packing"] = max(memory.get("packing", 0.0), mem_pack)
    memory["mapping back"] = peak_memory_mb()


def _refine(
    root: Node, mult: int, height: int, edges: list[tuple[Node, Node]],
    alloc: list[list[tuple[Path, int]]], direction: str,
) -> list[Tree]:
    """Split a batch into trees with one walk per edge (multiplicities add up)."""
    cuts = {0, mult}
    for parts in alloc:
        acc = 0
        for _, x in parts:
            acc += x
            cuts.add(acc)
    bounds = sorted(cuts)
    trees = []
    ptr = [0] * len(edges)
    used = [0] * len(edges)
    for lo, hi in zip(bounds, bounds[1:]):
        chosen = []
        for j, parts in enumerate(alloc):
            while used[j] + parts[ptr[j]][1] <= lo:
                used[j] += parts[ptr[j]][1]
                ptr[j] += 1
            chosen.append(parts[ptr[j]][0])
        tedges = [TreeEdge(a, b, p) for (a, b), p in zip(edges, chosen)]
        trees.append(Tree(root, hi - lo, direction, tedges, height))
    return trees


def _multicast(trees: list[Tree], switches: frozenset[Node], fraction: Callable[[Tree], Fraction],
               ) -> Fraction:
    """Zhao et al. 2026, §5.6 on out-trees: a path may start at a multicast switch that already has the data."""
    saved = Fraction(0)
    if not switches:
        return saved
    for tr in trees:
        have: set[Node] = set()
        depth = {tr.root: 0}
        for e in tr.edges:  # packing adds edges parent-first
            depth[e.dst] = depth.get(e.src, 0) + 1
        for e in sorted(tr.edges, key=lambda x: depth.get(x.src, 0)):
            p = e.path
            cut = 0
            for i in range(len(p) - 2, 0, -1):
                if p[i] in switches and p[i] in have:
                    cut = i
                    break
            if cut:
                saved += fraction(tr) * cut
                e.path = p[cut:]
            for x in e.path[1:-1]:
                if x in switches:
                    have.add(x)
    return saved


def _map_back(split: SplitResult, batches: Sequence[Any], direction: str) -> list[Tree]:
    """Hand out units of each G* arc's walks to the batches (one walk per tree edge)."""
    bags = {e: sorted(ps.items(), key=lambda i: (-i[1], len(i[0]))) for e, ps in
            split.paths.items()}
    pos = {e: [0, 0] for e in bags}  # (index into bag, units used of that entry)
    trees: list[Tree] = []
    for b in batches:
        alloc = []
        for e in b.edges:
            alloc.append(hand_out(bags[e], pos[e], b.multiplicity))
        trees.extend(_refine(b.root, b.multiplicity, b.height, list(b.edges), alloc, direction))
    return trees


def phase_time(topology: Topology, phase: Phase, per_root: dict[Node, Fraction]) -> Fraction:
    """Exact time per unit of data: max over links of Σ data·traversals / capacity.

    ``per_root[u]`` is the fraction of the data size M that root u's trees carry
    in total (allgather: 1/N, broadcast: 1); a tree carries multiplicity/k_u of it.
    Integer multiplicities are summed per tree edge (trees built by orbits share
    their edge objects) and per data class; Fractions only per link. A phase built
    by orbits of a symmetry of ``topology`` is timed from its representatives' trees
    (:func:`.schedule_sym.orbit_phase_time`), without mapping them to every root.
    """
    if isinstance(phase.orbits, OrbitTrees) and phase.orbits.acts_on(topology):
        return orbit_phase_time(topology, phase.orbits, per_root)
    k_of: dict[Node, int] = {}
    for tr in phase.trees:
        k_of[tr.root] = k_of.get(tr.root, 0) + tr.multiplicity
    classes: dict[Fraction, int] = {}
    cls_of = {r: classes.setdefault(per_root[r] / k, len(classes)) for r, k in k_of.items()}
    edges: dict[int, TreeEdge] = {}
    counts: list[dict[int, int]] = [{} for _ in classes]
    for tr in phase.trees:
        cnt = counts[cls_of[tr.root]]
        m = tr.multiplicity
        for e in tr.edges:
            key = id(e)
            if key in cnt:
                cnt[key] += m
            else:
                cnt[key] = m
                edges[key] = e
    value = list(classes)
    load: dict[tuple[Node, Node], Fraction] = {}
    for ci, cnt in enumerate(counts):
        for key, m in cnt.items():
            p = edges[key].path
            x = value[ci] * m
            for a, b in zip(p, p[1:]):
                load[(a, b)] = load.get((a, b), Fraction(0)) + x
    return max((x / topology.capacity[e] for e, x in load.items()), default=Fraction(0))


def require_eulerian(g: Topology, caps: dict[tuple[Node, Node], int], k: int, U: Fraction,
                      ) -> None:
    """Refuse a fixed-k G({⌊U·c_e⌋}) that is not Eulerian: switch removal needs one."""
    sends = {v: 0 for v in g.nodes}
    gets = {v: 0 for v in g.nodes}
    for (a, b), c in caps.items():
        sends[a] += c
        gets[b] += c
    bad = [v for v in g.nodes if sends[v] != gets[v]]
    if bad:
        detail = ", ".join(f"{v} (sends {sends[v]} units, receives {gets[v]})" for v in bad[:4])
        raise ScheduleError(
            f"fixed k = {k}: the floored capacities ⌊U·c_e⌋ with U = {fraction_str(U)} are not "
            f"Eulerian at {detail}{'…' if len(bad) > 4 else ''}; switch removal by edge "
            "splitting needs an Eulerian graph (Zhao & Krishnamurthy 2023, §2.4, Zhao et al. 2026, §5.5), so no fixed-k schedule "
            "can be built on this switch topology. Use the optimal k (omit --fixed-k), a "
            "different k, or a topology with symmetric bidirectional links"
        )


def peak_memory_mb() -> float:
    """Peak resident memory of this process so far, in MiB (0 where unknown)."""
    try:
        import resource
    except ImportError:  # not on this platform
        return 0.0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024
