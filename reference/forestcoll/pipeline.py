"""Optimal tree schedules: optimum → G({U·c_e}) → switch removal → tree packing → paths in G.

``schedule(topology, collective)`` follows Zhao & Krishnamurthy 2023, §2 (Zhao et al. 2026, §5):

1. the certified optimum (``collcert.optimum``) gives k and U (Zhao & Krishnamurthy 2023, Prop 3);
2. G({U·c_e}) has integer capacities in unit-tree units (fixed k: ⌊U·c_e⌋,
   Zhao & Krishnamurthy 2023, §2.4; broadcast/reduce: the integer capacities divided by their gcd
   with the cut value λ);
3. switches are split off (:mod:`.splitting`, Zhao & Krishnamurthy 2023, Thm 8) giving G* and the
   walk in G of every unit of every G* arc;
4. spanning out-trees are packed in batches (:mod:`.packing`, Zhao & Krishnamurthy 2023, Thm 12);
5. every tree arc of G* is mapped back to a walk in G; a batch whose arc
   units use different walks is refined into several trees (same arcs,
   different walks, multiplicities adding up);
6. optional in-network multicast / aggregation post-processing (Zhao et al. 2026, §5.6).

The achieved time is recomputed from the trees (exact per-link loads) and
must equal the optimum; otherwise an internal error is raised.

Reduce-scatter and reduce are allgather and broadcast on the transposed
topology with every tree reversed into an in-tree (Zhao & Krishnamurthy 2023, App. A-B);
allreduce is a reduce-scatter phase followed by an allgather phase, reported
against the allreduce lower bounds (Zhao & Krishnamurthy 2023, eqs. (6), (7)).

The box symmetry of the topology (``symmetry.find_symmetry``) is searched for
once per schedule and handed to the optimum and to the phases, which then go
by its orbits (:mod:`.symsplit`, :mod:`.sympack`). This module runs the
stages in order; one phase (steps 3-6) is :func:`.schedule_build.build_phase`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from ..model import Topology, fraction_str
from ..symmetry import Symmetry, orbits
from .general_estimate import GeneralEstimate
from .nearpack import symmetrized_machines
from .optima import optimum
from .optimum_allgather import prop3
from .optimum_result import Optimum
from .request import SHARDED, Request, check_request
from .schedule_build import (
    Stages,
    build_phase,
    gcd_all,
    peak_memory_mb,
    phase_time,
    require_eulerian,
)
from .schedule_result import Node, Phase, Schedule, StageProgress
from .symmetrize import retarget
from .symsplit import SymmetryFailed

ORBIT_COLLECTIVES = ("allgather", "reduce-scatter", "allreduce")
"""Collectives whose phases may go by the orbits of a box symmetry."""


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
    symmetry: bool | Symmetry | None = None,
    healthy: Topology | None = None,
    estimate: Callable[[GeneralEstimate], None] | None = None,
    orbits_only: bool = False,
) -> Schedule:
    """A bandwidth-optimal tree schedule of ``collective`` on ``topology``.

    ``allgather`` / ``reduce-scatter``: k out-trees (in-trees) per compute
    node reaching the optimum of Zhao & Krishnamurthy 2023, eq. (1) exactly; ``fixed_k``: the
    best schedule with that many trees per node (Zhao & Krishnamurthy 2023, §2.4); ``weights``:
    non-uniform allgather (relative shard sizes in compute-node order, Zhao et al.
    2026, §5.7); ``broadcast`` / ``reduce`` from/to ``root`` (Zhao & Krishnamurthy 2023, App. A);
    ``allreduce``: reduce-scatter then allgather (Zhao & Krishnamurthy 2023, App. B). ``multicast``:
    post-process for the topology's multicast switches (Zhao et al. 2026, §5.6).
    ``progress(stage, done, total)`` is called while it runs. ``symmetry``:
    None (auto, the default) or True: look for the topology's box symmetry once
    (``symmetry.find_symmetry``, verified) and build by its orbits when one is
    found; the optimum uses it too from ``orbits.AUTO_MIN_COMPUTE`` compute nodes
    on, as ``optimum()`` would, without a second search. False: never, in the
    optimum neither; a :class:`~collcert.reference.symmetry.Symmetry` found already is
    used as it is (the optimum checks it). Either way the result is exact and reaches
    the same optimum.
    ``healthy``: the machine ``topology`` is a degraded copy of (what-if): when the
    optimum of the symmetrized machine is ``topology``'s own, the schedule is built
    by orbits on it and handed over (:mod:`.symmetrize`); else the usual path.
    ``estimate``: told the :class:`.general_estimate.GeneralEstimate` of a phase
    before the general algorithms (no symmetry) start on it; a phase whose estimate
    passes the limits is refused (TopologyError, docs/limits.md). ``orbits_only``: raise
    :class:`.symsplit.SymmetryFailed` where the phases cannot be built by the orbits of a
    box symmetry (none found, or the orbit-wise build gets stuck) instead of running the
    general algorithms (``collcert schedule --symmetric``: refused before the long work).
    """
    req = check_request(topology, collective, root=root, fixed_k=fixed_k, weights=weights,
                        caller="schedule")
    if healthy is not None and symmetry is not False:
        borrowed = _borrowed(topology, healthy, req, multicast, engine, progress)
        if borrowed is not None:
            return borrowed
    return _build(topology, req, symmetry, Stages(engine, multicast, progress,
                                                  estimate=estimate, orbits_only=orbits_only))


def _build(topology: Topology, req: Request, symmetry: bool | Symmetry | None, stages: Stages,
           ) -> Schedule:
    """The optimum and the phases of :func:`schedule`, checked against the optimum."""
    sym, opt = _symmetry_and_optimum(topology, req, symmetry, stages)
    if stages.orbits_only and sym is None:
        raise SymmetryFailed("no box symmetry of this machine was found")
    phases: list[tuple[Phase, Fraction]] = []
    extra: dict[str, Any] = {}
    weight_map: dict[Node, Fraction] | None = None
    coll = req.collective
    if coll in SHARDED:
        phases.append(_sharded_phase(topology, coll, coll == "reduce-scatter", opt, req, sym,
                                     stages))
        target = opt.time_per_unit
        if req.weights is not None:
            weight_map = {c: Fraction(x) for c, x in opt.extra["weights"].items()}
    elif coll == "allreduce":
        phases.append(_sharded_phase(topology, "reduce-scatter", True, opt, req, sym, stages))
        phases.append(_sharded_phase(topology, "allgather", False, opt, req, sym, stages))
        target = opt.extra["rsag_time_per_unit"]
        extra["lower_bound_time_per_unit"] = opt.extra["lower_bound_time_per_unit"]
        extra["rsag_proven_optimal"] = opt.extra["rsag_proven_optimal"]
    else:
        phases.append(_rooted_phase(topology, opt, req, stages))
        target = opt.time_per_unit
    sched = Schedule(coll, topology, [ph for ph, _ in phases], opt, root=req.root,
                     weights=weight_map, fixed_k=req.fixed_k, timings=stages.timings,
                     multicast_saved=sum((sv for _, sv in phases), Fraction(0)), extra=extra,
                     memory=stages.memory)
    sched.extra["target_time_per_unit"] = target
    if sched.time_per_unit != target:
        raise RuntimeError(
            f"internal: the schedule's time per unit {fraction_str(sched.time_per_unit)} differs "
            f"from the certified optimum {fraction_str(target)}"
        )
    return sched


def _target(opt: Optimum) -> Fraction:
    t: Fraction = (opt.extra["rsag_time_per_unit"] if opt.collective == "allreduce"
                   else opt.time_per_unit)
    return t


def _borrowed(t: Topology, healthy: Topology, req: Request, multicast: bool, engine: str,
              progress: StageProgress | None) -> Schedule | None:
    """The schedule of the symmetrized machine, handed to ``t`` when it reaches ``t``'s
    own certified optimum (:mod:`.symmetrize`); None when it does not apply."""
    if req.weights is not None or req.collective not in ORBIT_COLLECTIVES:
        return None
    t0 = time.monotonic()
    kw: dict[str, Any] = {"fixed_k": req.fixed_k, "engine": engine}
    own: Optimum | None = None
    out = s = None
    for m, msym in symmetrized_machines(t, healthy):  # the box shift's M_sym, then nearpack's
        if own is None:
            own = optimum(t, req.collective, **kw)  # by near-symmetry orbits where it finds some
        if _target(optimum(m, req.collective, symmetry=msym, **kw)) != _target(own):
            continue  # symmetrizing this way costs bandwidth
        stages = Stages(engine, multicast, progress, orbits_only=True)
        try:
            s = _build(m, check_request(m, req.collective, root=None, fixed_k=req.fixed_k,
                                        weights=None, caller="schedule"), msym, stages)
        except SymmetryFailed:
            continue  # the orbit-wise build got stuck on M_sym
        note = (f"built by orbits on {m.name}, whose certified optimum equals this machine's "
                "(every link at the least capacity of its orbit)")
        out = retarget(s, t, own, _target(own), note)
        if out is not None:
            break
    if out is None or s is None or own is None:
        return None  # the general path on t
    spent = time.monotonic() - t0 - sum(s.timings.values())
    out.timings = {"symmetrize": spent, **s.timings}
    if req.collective == "allreduce":
        for key in ("lower_bound_time_per_unit", "rsag_proven_optimal"):
            out.extra[key] = own.extra[key]
    return out


def _symmetry_and_optimum(t: Topology, req: Request, symmetry: bool | Symmetry | None,
                          stages: Stages) -> tuple[Symmetry | None, Optimum]:
    """The box symmetry (searched once, where the phases may use it) and the optimum,
    which is handed that symmetry instead of searching again: where ``optimum()``
    would look for one (``orbits.wanted``, auto), else False. The stages are
    reported in their usual order, the optimum first."""
    searched = symmetry is not False and req.collective in ORBIT_COLLECTIVES
    sym, sym_seconds, sym_memory = None, 0.0, 0.0
    if searched:
        ts = time.monotonic()
        sym = (symmetry if isinstance(symmetry, Symmetry)  # handed over, checked by optimum()
               else orbits.find_symmetry(t, req.weights))
        sym_seconds, sym_memory = time.monotonic() - ts, peak_memory_mb()
    t0 = time.monotonic()
    opt = optimum(t, req.collective, root=req.root, fixed_k=req.fixed_k, weights=req.weights,
                  engine=stages.engine, progress=stages.callback("optimum"),
                  symmetry=sym if sym is not None and orbits.wanted(t, None) else False)
    stages.timings["optimum"] = time.monotonic() - t0
    stages.memory["optimum"] = peak_memory_mb()
    if searched:
        stages.timings["symmetry"] = sym_seconds
        stages.memory["symmetry"] = sym_memory
        stages.report("symmetry", 1, 1)
    return sym, opt


def _sharded_phase(t: Topology, phase_coll: str, transposed: bool, opt: Optimum, req: Request,
                   sym: Symmetry | None, stages: Stages) -> tuple[Phase, Fraction]:
    """An allgather (or, transposed, reduce-scatter) phase: k unit trees per compute
    node (k·w_u with weights) on G({U·c_e}) (Zhao & Krishnamurthy 2023, Prop 3, §2.4)."""
    g = t.transpose() if transposed else t
    k, U, supply = _units(t, opt, req)
    caps = _unit_capacities(g, U, req.fixed_k is not None)
    if req.fixed_k is not None and t.switch_nodes:
        require_eulerian(g, caps, req.fixed_k, U)
    ph, saved = build_phase(g, phase_coll, caps, supply, k, U, transposed, stages, sym)
    total = sum(supply.values())
    per_root = {c: Fraction(supply[c], total) for c in t.compute_nodes}
    ph.time_per_unit = phase_time(t, ph, per_root)
    if req.weights is not None:
        _over_one_k(ph, supply)
    return ph, saved


def _units(t: Topology, opt: Optimum, req: Request) -> tuple[int, Fraction, dict[Node, int]]:
    """k, U and the unit trees of each root."""
    if req.weights is not None:
        assert opt.inv_x is not None
        w = [int(x) for x in opt.extra["weights"].values()]
        # Zhao & Krishnamurthy 2023, Prop 3 per unit of weight: root u packs k·w_u trees
        k, U = prop3(opt.inv_x, list(t.capacity.values()))
        return k, U, {c: k * wj for c, wj in zip(t.compute_nodes, w)}
    assert opt.k is not None and opt.U is not None
    return opt.k, opt.U, {c: opt.k for c in t.compute_nodes}


def _unit_capacities(g: Topology, U: Fraction, floored: bool) -> dict[tuple[Node, Node], int]:
    """G({U·c_e}) without its empty arcs: U·c_e, an integer by Prop 3, or ⌊U·c_e⌋ for
    fixed k (Zhao & Krishnamurthy 2023, §2.4)."""
    if floored:
        caps = {e: (U * c).__floor__() for e, c in g.capacity.items()}
    else:
        caps = {}
        for e, c in g.capacity.items():
            x = U * c
            if x.denominator != 1:
                raise RuntimeError("internal: U·c_e is not an integer (Zhao & Krishnamurthy 2023, Prop 3)")
            caps[e] = int(x)
    return {e: c for e, c in caps.items() if c > 0}


def _over_one_k(ph: Phase, supply: dict[Node, int]) -> None:
    """Express the multiplicities of a weighted phase over one k for every root
    (docs/schedule-format.md)."""
    lcm_w = 1
    for units in supply.values():
        lcm_w = lcm_w * units // math.gcd(lcm_w, units)
    for tr in ph.trees:
        tr.multiplicity = tr.multiplicity * lcm_w // supply[tr.root]
    ph.k = lcm_w


def _rooted_phase(t: Topology, opt: Optimum, req: Request, stages: Stages,
                  ) -> tuple[Phase, Fraction]:
    """A broadcast (or, transposed, reduce) phase: λ unit trees from the root on the
    integer capacities, both divided by their gcd (Zhao & Krishnamurthy 2023, App. A)."""
    coll, root = req.collective, req.root
    transposed = coll == "reduce"
    g = t.transpose() if transposed else t
    lam = opt.algbw * t.scale
    assert lam.denominator == 1
    lam_i = int(lam)
    caps_i = dict(g.int_capacity)
    gg = gcd_all(list(caps_i.values()) + [lam_i])
    caps = {e: c // gg for e, c in caps_i.items()}
    k = lam_i // gg
    supply = {c: (k if c == root else 0) for c in t.compute_nodes}
    ph, saved = build_phase(g, coll, caps, supply, k, Fraction(t.scale, gg), transposed, stages)
    ph.time_per_unit = phase_time(t, ph, {root: Fraction(1)})
    return ph, saved
