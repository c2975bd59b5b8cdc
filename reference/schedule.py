"""Optimal tree schedules: optimum → G({U·c_e}) → switch removal → tree packing → paths in G.

``schedule(topology, collective)`` follows seed 000 §2 (003 §5):

1. the certified optimum (``collcert.optimum``) gives k and U (000 Prop 3);
2. G({U·c_e}) has integer capacities in unit-tree units (fixed k: ⌊U·c_e⌋,
   000 §2.4; broadcast/reduce: the integer capacities divided by their gcd
   with the cut value λ);
3. switches are split off (:mod:`.splitting`, 000 Thm 8) giving G* and the
   walk in G of every unit of every G* arc;
4. spanning out-trees are packed in batches (:mod:`.packing`, 000 Thm 12);
5. every tree arc of G* is mapped back to a walk in G; a batch whose arc
   units use different walks is refined into several trees (same arcs,
   different walks, multiplicities adding up);
6. optional in-network multicast / aggregation post-processing (003 §5.6).

The achieved time is recomputed from the trees (exact per-link loads) and
must equal the optimum; otherwise an internal error is raised.

Reduce-scatter and reduce are allgather and broadcast on the transposed
topology with every tree reversed into an in-tree (000 App. A-B);
allreduce is a reduce-scatter phase followed by an allgather phase, reported
against the allreduce lower bounds (000 eqs. (6), (7)).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .errors import ScheduleError
from .exact import fraction_str, show
from .optimum import COLLECTIVES, Optimum, optimum, prop3
from .packing import pack_trees
from .splitting import SplitResult, remove_switches
from .symmetry import Symmetry, box_symmetry
from .sympack import pack_orbits
from .symsplit import SymmetryFailed, remove_switches_orbits
from .topology import Topology

Node = Hashable
Path = tuple[Node, ...]
StageProgress = Callable[[str, int, int], None]
FORMAT = "collcert-schedule/1"


@dataclass(slots=True)
class TreeEdge:
    src: Node
    dst: Node
    path: Path


@dataclass
class Tree:
    """``multiplicity`` of the root's k unit trees, with every edge's walk in G."""

    root: Node
    multiplicity: int
    direction: str
    edges: list[TreeEdge]
    height: int
    index: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "multiplicity": self.multiplicity,
            "direction": self.direction,
            "edges": [{"src": e.src, "dst": e.dst, "path": list(e.path)} for e in self.edges],
            "height": self.height,
            "index": self.index,
        }


@dataclass
class Phase:
    collective: str
    k: int
    U: Fraction
    trees: list[Tree]
    split: SplitResult
    transposed: bool
    time_per_unit: Fraction = Fraction(0)
    stats: dict[str, Any] = field(default_factory=dict)

    def certificates(self) -> dict[str, Any]:
        sp = self.split
        out: dict[str, Any] = {
            "gstar": {
                "U": fraction_str(self.U),
                "k": self.k,
                "capacities": [[u, v, c] for (u, v), c in sp.capacity.items()],
            },
            "routing": [
                {"src": u, "dst": v,
                 "paths": [[list(p), x] for p, x in sorted(ps.items(), key=lambda i: -i[1])]}
                for (u, v), ps in sp.paths.items()
            ],
            "flows": [
                {"sink": v, "flow": [[a, b, x] for (a, b), x in fl.items()]}
                for v, fl in sp.flows.items()
            ],
        }
        if not sp.flows:  # too large to be worth it (symmetric splitting); trees are checked
            del out["flows"]
        if any(x != self.k for x in sp.supply.values()):
            out["gstar"]["supply"] = [[u, x] for u, x in sp.supply.items()]
        if self.transposed:
            out["on"] = "transposed"
        return out

    def to_json(self, certificates: bool = False, compact: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "collective": self.collective,
            "k": self.k,
            "U": fraction_str(self.U),
            "time_per_unit": fraction_str(self.time_per_unit),
        }
        if compact:
            # docs/schedule-format.md "Compact trees": each distinct edge (src, dst, path)
            # once in "walks", a tree's edges as indices into it
            ids: dict[int, int] = {}  # id(TreeEdge) -> walk index (orbit trees share edges)
            by_key: dict[tuple[Node, Node, Path], int] = {}
            walks: list[dict[str, Any]] = []
            trees = []
            for tr in self.trees:
                refs = []
                for e in tr.edges:
                    w = ids.get(id(e))
                    if w is None:
                        key = (e.src, e.dst, e.path)
                        w = by_key.get(key)
                        if w is None:
                            w = by_key[key] = len(walks)
                            walks.append({"src": e.src, "dst": e.dst, "path": list(e.path)})
                        ids[id(e)] = w
                    refs.append(w)
                trees.append({"root": tr.root, "multiplicity": tr.multiplicity,
                              "direction": tr.direction, "height": tr.height,
                              "index": tr.index, "edges": refs})
            out["walks"] = walks
            out["trees"] = trees
        else:
            out["trees"] = [t.to_json() for t in self.trees]
        if certificates:
            out["certificates"] = self.certificates()
        return out


@dataclass
class Schedule:
    """A complete schedule: phases of trees, the optimum it reaches, certificates."""

    collective: str
    topology: Topology
    phases: list[Phase]
    optimum: Optimum
    root: Node | None = None
    weights: dict[Node, Fraction] | None = None
    fixed_k: int | None = None
    timings: dict[str, float] = field(default_factory=dict)
    multicast_saved: Fraction = Fraction(0)
    extra: dict[str, Any] = field(default_factory=dict)
    memory: dict[str, float] = field(default_factory=dict)
    """Peak resident memory of the process (MiB) at the end of each stage."""

    @property
    def time_per_unit(self) -> Fraction:
        """Time to run the schedule on one unit of data (sum of the phases)."""
        return sum((p.time_per_unit for p in self.phases), Fraction(0))

    @property
    def algbw(self) -> Fraction:
        return 1 / self.time_per_unit

    @property
    def trees(self) -> list[Tree]:
        return [t for p in self.phases for t in p.trees]

    @property
    def max_height(self) -> int:
        return max((t.height for t in self.trees), default=0)

    def summary(self) -> str:
        t = self.topology
        head = self.collective + (f" from/to root {self.root!r}" if self.root is not None else "")
        if self.fixed_k is not None:
            head += f" with fixed k = {self.fixed_k}"
        ks = ", ".join(f"{p.collective} k = {p.k}, U = {fraction_str(p.U)}" for p in self.phases)
        text = (
            f"{head} on {t.name or 'topology'} ({t.num_compute} compute nodes, "
            f"{len(t.switch_nodes)} switch{'' if len(t.switch_nodes) == 1 else 'es'}): algbw {show(self.algbw)} {t.unit}, "
            f"time per unit {show(self.time_per_unit)}; {ks}; {len(self.trees)} trees, "
            f"max height {self.max_height}"
        )
        target = self.extra.get("target_time_per_unit")
        if self.collective == "allreduce":
            lb = self.optimum.extra["lower_bound_time_per_unit"]
            text += (f"; allreduce lower bound time {show(lb)} ("
                     + ("reached: optimal" if self.time_per_unit == lb else
                        f"RS+AG is {show(self.time_per_unit / lb)} × the bound") + ")")
        elif target is not None and self.time_per_unit == target:
            text += ("; equals the certified optimum" if self.fixed_k is None else
                     f"; equals the certified best time with k = {self.fixed_k} "
                     f"(the optimum over all k is algbw {show(self.optimum.extra['optimal_algbw'])})")
        if self.multicast_saved:
            text += (f"; in-network multicast removes {show(self.multicast_saved)}·M of link traffic "
                     "(data size M times links crossed)")
        if self.timings:
            text += f"; took {sum(self.timings.values()):.2f} s (" + ", ".join(
                f"{k} {v:.2f} s" for k, v in self.timings.items()) + ")"
        return text + "."

    def to_json(self, *, certificates: bool = True, compact: bool = False) -> dict[str, Any]:
        """The ``collcert-schedule/1`` document (docs/schedule-format.md); ``compact``:
        tree edges as indices into a per-phase table of walks (what files hold)."""
        t = self.topology
        out: dict[str, Any] = {
            "format": FORMAT,
            "collective": self.collective,
            "topology": t.content_hash(),
            "topology_name": t.name,
            "unit": t.unit,
            "compute_nodes": list(t.compute_nodes),
            "root": self.root,
            "weights": None if self.weights is None else
            {str(u): fraction_str(w) for u, w in self.weights.items()},
            "phases": [p.to_json(certificates and len(self.phases) > 1, compact)
                       for p in self.phases],
            "claimed": {"algbw": fraction_str(self.algbw),
                        "time_per_unit": fraction_str(self.time_per_unit)},
        }
        if certificates:
            certs: dict[str, Any] = {}
            if len(self.phases) == 1:
                certs.update(self.phases[0].certificates())
            certs["optimum"] = self.optimum.certificate()
            out["certificates"] = certs
        gen: dict[str, Any] = {
            "tool": "collcert",
            "options": {"fixed_k": self.fixed_k},
            "seconds": {k: round(v, 4) for k, v in self.timings.items()},
        }
        if self.multicast_saved:
            gen["multicast_saved"] = fraction_str(self.multicast_saved)
        for key, value in self.extra.items():
            gen[key] = fraction_str(value) if isinstance(value, Fraction | int) else value
        out["generator"] = gen
        return out

    def to_forestcoll_xml(self) -> str:
        from .schedule_io import forestcoll_xml

        return forestcoll_xml(self)


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
    """003 §5.6 on out-trees: a path may start at a multicast switch that already has the data."""
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
            need = b.multiplicity
            parts = []
            bag, ptr = bags[e], pos[e]
            while need:
                p, avail = bag[ptr[0]]
                x = min(avail - ptr[1], need)
                parts.append((p, x))
                need -= x
                ptr[1] += x
                if ptr[1] == avail:
                    ptr[0] += 1
                    ptr[1] = 0
            alloc.append(parts)
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


def _check_root(t: Topology, root: Node | None, collective: str) -> Node:
    if root is None:
        raise ScheduleError(f"{collective} needs a root: pass root=<compute node id> (--root)")
    root = t.lookup(root)
    if not t.is_compute(root):
        raise ScheduleError(
            f"root {root!r} is not a compute node of the topology; compute nodes are "
            f"{', '.join(map(str, t.compute_nodes[:8]))}{'…' if t.num_compute > 8 else ''}"
        )
    return root


def schedule(
    topology: Topology,
    collective: str = "allgather",
    *,
    root: Node | None = None,
    fixed_k: int | None = None,
    weights: Sequence[object] | None = None,
    multicast: bool = True,
    engine: str = "auto",
    progress: StageProgress | None = None,
    symmetry: bool | None = None,
) -> Schedule:
    """A bandwidth-optimal tree schedule of ``collective`` on ``topology``.

    ``allgather`` / ``reduce-scatter``: k out-trees (in-trees) per compute
    node reaching the optimum of seed 000 eq. (1) exactly; ``fixed_k``: the
    best schedule with that many trees per node (000 §2.4); ``weights``:
    non-uniform allgather (relative shard sizes in compute-node order, 003
    §5.7); ``broadcast`` / ``reduce`` from/to ``root`` (000 App. A);
    ``allreduce``: reduce-scatter then allgather (000 App. B). ``multicast``:
    post-process for the topology's multicast switches (003 §5.6).
    ``progress(stage, done, total)`` is called while it runs. ``symmetry``:
    build by orbits of the topology's box symmetry when one is found and
    verified (:mod:`.symmetry`; None = auto, the default), or never (False);
    either way the result is exact and reaches the same optimum.
    """
    if not isinstance(topology, Topology):
        raise TypeError("schedule() needs a collcert.Topology")
    coll = str(collective).lower().replace("_", "-")
    if coll not in COLLECTIVES:
        raise ScheduleError(
            f"unknown collective {collective!r}: choose one of {', '.join(COLLECTIVES)}"
        )
    topology.require_forestcoll(f"a ForestColl {coll} schedule")
    if fixed_k is not None and coll not in ("allgather", "reduce-scatter"):
        raise ScheduleError(f"fixed k applies to allgather and reduce-scatter, not {coll}")
    if weights is not None and coll not in ("allgather", "reduce-scatter"):
        raise ScheduleError(f"weights apply to allgather and reduce-scatter, not {coll}")
    if fixed_k is not None and weights is not None:
        raise ScheduleError("fixed k and weights cannot be combined")
    if root is not None and coll not in ("broadcast", "reduce"):
        raise ScheduleError(f"{coll} has no root; --root is for broadcast and reduce")
    if coll in ("broadcast", "reduce"):
        root = _check_root(topology, root, coll)
    t = topology
    timings: dict[str, float] = {}
    t0 = time.monotonic()

    def opt_progress(d: int, n: int) -> None:
        if progress:
            progress("optimum", d, n)

    opt = optimum(t, coll, root=root, fixed_k=fixed_k, weights=weights, engine=engine,
                  progress=opt_progress)
    timings["optimum"] = time.monotonic() - t0
    memory: dict[str, float] = {"optimum": peak_memory_mb()}
    phases: list[Phase] = []
    saved = Fraction(0)
    sym: Symmetry | None = None
    if symmetry is not False and coll in ("allgather", "reduce-scatter", "allreduce"):
        ts = time.monotonic()
        sym = find_symmetry(t)
        timings["symmetry"] = time.monotonic() - ts
        memory["symmetry"] = peak_memory_mb()
        if progress:
            progress("symmetry", 1, 1)
    extra: dict[str, Any] = {}
    weight_map: dict[Node, Fraction] | None = None

    def run_allgather(phase_coll: str, transposed: bool) -> None:
        nonlocal saved
        g = t.transpose() if transposed else t
        if weights is not None:
            assert opt.inv_x is not None
            w = [int(x) for x in opt.extra["weights"].values()]
            # 000 Prop 3 per unit of weight: root u packs k·w_u trees
            k, U = prop3(opt.inv_x, list(t.capacity.values()))
            supply = {c: k * wj for c, wj in zip(t.compute_nodes, w)}
        else:
            assert opt.k is not None and opt.U is not None
            k, U = opt.k, opt.U
            supply = {c: k for c in t.compute_nodes}
        if fixed_k is not None:
            caps = {e: (U * c).__floor__() for e, c in g.capacity.items()}
        else:
            caps = {}
            for e, c in g.capacity.items():
                x = U * c
                if x.denominator != 1:
                    raise RuntimeError("internal: U·c_e is not an integer (000 Prop 3)")
                caps[e] = int(x)
        caps = {e: c for e, c in caps.items() if c > 0}
        if fixed_k is not None and t.switch_nodes:
            _require_eulerian(g, caps, fixed_k, U)
        ph, sv = _phase(g, phase_coll, caps, supply, k, U, transposed, engine, progress,
                        timings, multicast, sym, memory)
        total = sum(supply.values())
        per_root = {c: Fraction(supply[c], total) for c in t.compute_nodes}
        ph.time_per_unit = phase_time(t, ph, per_root)
        if weights is not None:
            # express multiplicities over one k for every root (docs/schedule-format.md)
            lcm_w = 1
            for units in supply.values():
                lcm_w = lcm_w * units // math.gcd(lcm_w, units)
            for tr in ph.trees:
                tr.multiplicity = tr.multiplicity * lcm_w // supply[tr.root]
            ph.k = lcm_w
        saved += sv
        phases.append(ph)

    if coll in ("allgather", "reduce-scatter"):
        run_allgather(coll, coll == "reduce-scatter")
        target = opt.time_per_unit
        if weights is not None:
            weight_map = {c: Fraction(x) for c, x in opt.extra["weights"].items()}
    elif coll == "allreduce":
        run_allgather("reduce-scatter", True)
        run_allgather("allgather", False)
        target = opt.extra["rsag_time_per_unit"]
        extra["lower_bound_time_per_unit"] = opt.extra["lower_bound_time_per_unit"]
        extra["rsag_proven_optimal"] = opt.extra["rsag_proven_optimal"]
    else:
        transposed = coll == "reduce"
        g = t.transpose() if transposed else t
        lam = opt.algbw * t.scale
        assert lam.denominator == 1
        lam_i = int(lam)
        caps_i = {e: c for e, c in g.int_capacity.items()}
        gg = _gcd_all(list(caps_i.values()) + [lam_i])
        caps = {e: c // gg for e, c in caps_i.items()}
        k = lam_i // gg
        U = Fraction(t.scale, gg)
        supply = {c: (k if c == root else 0) for c in t.compute_nodes}
        ph, sv = _phase(g, coll, caps, supply, k, U, transposed, engine, progress, timings,
                        multicast, None, memory)
        ph.time_per_unit = phase_time(t, ph, {root: Fraction(1)})
        saved += sv
        phases.append(ph)
        target = opt.time_per_unit
    sched = Schedule(coll, t, phases, opt, root=root, weights=weight_map, fixed_k=fixed_k,
                     timings=timings, multicast_saved=saved, extra=extra, memory=memory)
    sched.extra["target_time_per_unit"] = target
    if sched.time_per_unit != target:
        raise RuntimeError(
            f"internal: the schedule's time per unit {fraction_str(sched.time_per_unit)} differs "
            f"from the certified optimum {fraction_str(target)}"
        )
    return sched


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
            "splitting needs an Eulerian graph (seed 000 §2.4, 003 §5.5), so no fixed-k schedule "
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
