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

Where the code is: this module holds :func:`schedule`, which runs the stages;
the result classes (:class:`Schedule`, :class:`Phase`, :class:`Tree`,
:class:`TreeEdge`, ``FORMAT``) are in :mod:`.schedule_result`, the stages
(one phase: split, pack, map back, multicast; :func:`phase_time`,
:func:`find_symmetry`, :func:`peak_memory_mb`) in :mod:`.schedule_build`;
all importable from here as before.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from ..model import ScheduleError, Topology, fraction_str
from ..symmetry import Symmetry
from .optima import COLLECTIVES, optimum, prop3
from .schedule_build import (
    _gcd_all,
    _phase,
    _require_eulerian,
    find_symmetry,
    peak_memory_mb,
    phase_time,
)
from .schedule_result import FORMAT, Node, Phase, Schedule, StageProgress, Tree, TreeEdge

__all__ = ["FORMAT", "Phase", "Schedule", "Tree", "TreeEdge", "find_symmetry", "peak_memory_mb",
           "phase_time", "schedule"]


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
    node reaching the optimum of Zhao & Krishnamurthy 2023, eq. (1) exactly; ``fixed_k``: the
    best schedule with that many trees per node (Zhao & Krishnamurthy 2023, §2.4); ``weights``:
    non-uniform allgather (relative shard sizes in compute-node order, Zhao et al.
    2026, §5.7); ``broadcast`` / ``reduce`` from/to ``root`` (Zhao & Krishnamurthy 2023, App. A);
    ``allreduce``: reduce-scatter then allgather (Zhao & Krishnamurthy 2023, App. B). ``multicast``:
    post-process for the topology's multicast switches (Zhao et al. 2026, §5.6).
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
            # Zhao & Krishnamurthy 2023, Prop 3 per unit of weight: root u packs k·w_u trees
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
                    raise RuntimeError("internal: U·c_e is not an integer (Zhao & Krishnamurthy 2023, Prop 3)")
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
