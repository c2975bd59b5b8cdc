"""The stages of :func:`collcert.reference.forestcoll.pipeline.schedule` (Zhao & Krishnamurthy 2023, §2, Zhao et al. 2026, §5).

One phase (:func:`_phase`): switch removal (:mod:`.splitting`, or by orbits,
:mod:`.symsplit`), tree packing (:mod:`.packing` / :mod:`.sympack`), mapping
tree arcs of G* back to walks in G (:func:`_map_back`, :func:`_refine`) and
in-network multicast (:func:`_multicast`, Zhao et al. 2026, §5.6); the exact time of a
phase (:func:`phase_time`); the checks and helpers the pipeline uses (the
box symmetry, the Eulerian check of fixed-k capacities, peak memory).
Moved out of :mod:`collcert.reference.forestcoll.pipeline` (unchanged).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from ..model import ScheduleError, Topology, fraction_str
from ..symmetry import Symmetry, box_symmetry
from .packing import pack_trees
from .schedule_result import Node, Path, Phase, StageProgress, Tree, TreeEdge
from .splitting import SplitResult, _hand_out, remove_switches
from .sympack import pack_orbits
from .symsplit import SymmetryFailed, remove_switches_orbits


# --------------------------------------------------------------------------- #
# pipeline
# --------------------------------------------------------------------------- #
def _gcd_all(values: Sequence[int]) -> int:
    g = 0
    for v in values:
        g = math.gcd(g, v)
    return g


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


def _phase(
    t: Topology, collective: str, caps: dict[tuple[Node, Node], int], supply: dict[Node, int],
    k: int, U: Fraction, transposed: bool, engine: str, progress: StageProgress | None,
    timings: dict[str, float], multicast: bool, sym: Symmetry | None = None,
    memory: dict[str, float] | None = None,
) -> tuple[Phase, Fraction]:
    """Split, pack, map back on ``t`` (already transposed for in-tree phases).

    With ``sym`` (a verified box symmetry of ``t``) switch removal and packing
    go by orbits (:mod:`.symsplit`, :mod:`.sympack`); if that gets stuck the
    general algorithms run instead (``stats["symmetry"]`` says which)."""
    label = collective
    direction = "in" if transposed else "out"
    split_cb = (lambda d, n: progress(f"{label}: switch removal", d, n)) if progress else None
    pack_cb = (lambda d, n: progress(f"{label}: tree packing", d, n)) if progress else None
    if multicast and t.multicast_switches:
        sym = None  # multicast trimming edits paths tree by tree; orbit trees share them
    if memory is None:
        memory = {}
    mem_split = mem_pack = 0.0
    t0 = time.monotonic()
    if sym is not None:
        try:
            split = remove_switches_orbits(t.compute_nodes, t.switch_nodes, caps, supply, sym,
                                           engine=engine, progress=split_cb)
            t1 = time.monotonic()
            mem_split = peak_memory_mb()
            orb = pack_orbits(split, sym, supply, progress=pack_cb)
            t2 = time.monotonic()
            mem_pack = peak_memory_mb()
        except SymmetryFailed as exc:
            sym_note = f"general algorithms ({exc})"
            sym = None
            t0 = time.monotonic()
        else:
            table = [TreeEdge(b, a, tuple(reversed(p))) if transposed else TreeEdge(a, b, p)
                     for a, b, p in orb.walks]
            trees = [Tree(root, m, direction, [table[w] for w in ids.tolist()], h)
                     for root, m, h, ids in orb.trees]
            stats: dict[str, Any] = dict(split.stats)
            stats.update(orb.stats)
            stats["symmetry"] = f"{sym.order} boxes, {len(sym.reps)} representative roots"
    if sym is None:
        split = remove_switches(t.compute_nodes, t.switch_nodes, caps, supply, engine=engine,
                                progress=split_cb)
        t1 = time.monotonic()
        mem_split = peak_memory_mb()
        packing = pack_trees(t.compute_nodes, split.capacity, supply, engine=engine,
                             progress=pack_cb)
        t2 = time.monotonic()
        mem_pack = peak_memory_mb()
        trees = _map_back(split, packing.batches, direction)
        stats = dict(split.stats)
        stats.update({"packing_maxflows": packing.maxflows, "packing_rejected": packing.rejected,
                      "batches": len(packing.batches)})
        stats["symmetry"] = locals().get("sym_note", "none found")
    saved = Fraction(0)
    if multicast:
        total = sum(supply.values())  # a tree carries multiplicity/total of the data size M
        saved = _multicast(trees, t.multicast_switches,
                           lambda tr: Fraction(tr.multiplicity, total))
    if transposed and sym is None:
        for tr in trees:
            tr.edges = [TreeEdge(e.dst, e.src, tuple(reversed(e.path))) for e in tr.edges]
    count: dict[Node, int] = {}
    for tr in trees:
        tr.index = count.get(tr.root, 0)
        count[tr.root] = tr.index + 1
    t3 = time.monotonic()
    for key, dt in (("switch removal", t1 - t0), ("packing", t2 - t1), ("mapping back", t3 - t2)):
        timings[key] = timings.get(key, 0.0) + dt
    memory["switch removal"] = max(memory.get("switch removal", 0.0), mem_split)
    memory["packing"] = max(memory.get("packing", 0.0), mem_pack)
    memory["mapping back"] = peak_memory_mb()
    phase = Phase(collective, k, U, trees, split, transposed, stats=stats)
    return phase, saved


def _map_back(split: SplitResult, batches: Sequence[Any], direction: str) -> list[Tree]:
    """Hand out units of each G* arc's walks to the batches (one walk per tree edge)."""
    bags = {e: sorted(ps.items(), key=lambda i: (-i[1], len(i[0]))) for e, ps in
            split.paths.items()}
    pos = {e: [0, 0] for e in bags}  # (index into bag, units used of that entry)
    trees: list[Tree] = []
    for b in batches:
        alloc = []
        for e in b.edges:
            alloc.append(_hand_out(bags[e], pos[e], b.multiplicity))
        trees.extend(_refine(b.root, b.multiplicity, b.height, list(b.edges), alloc, direction))
    return trees


def phase_time(topology: Topology, phase: Phase, per_root: dict[Node, Fraction]) -> Fraction:
    """Exact time per unit of data: max over links of Σ data·traversals / capacity.

    ``per_root[u]`` is the fraction of the data size M that root u's trees carry
    in total (allgather: 1/N, broadcast: 1); a tree carries multiplicity/k_u of it.
    Integer multiplicities are summed per tree edge (trees built by orbits share
    their edge objects) and per data class; Fractions only per link.
    """
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


def _require_eulerian(g: Topology, caps: dict[tuple[Node, Node], int], k: int, U: Fraction,
                      ) -> None:
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


def find_symmetry(t: Topology) -> Symmetry | None:
    """The box-shift symmetry of ``t`` (:func:`.symmetry.box_symmetry`), verified on its
    exact capacities; None when there is none. It acts on ``t.nodes`` indices, which
    are those of switch removal (compute nodes first) on ``t`` and on its transpose."""
    idx = t.index
    arcs = {(idx[a], idx[b]): c for (a, b), c in t.capacity.items()}
    return box_symmetry(t.nodes, t.num_compute, arcs,
                        frozenset(idx[v] for v in t.multicast_switches))


def peak_memory_mb() -> float:
    """Peak resident memory of this process so far, in MiB (0 where unknown)."""
    try:
        import resource
    except ImportError:  # not on this platform
        return 0.0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024
