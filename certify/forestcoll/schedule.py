"""Checker 5: schedule semantics and throughput on G (docs/schedule-format.md).

A pipeline schedule is correct when every tree is an arborescence spanning
V_c (out from its root, or in toward it for reduce/reduce-scatter) and each
root's multiplicities sum to k: then every compute node receives
Σ multiplicity/k = 1 of every root's data (allgather, broadcast), or every
root receives every node's contribution in full (reduce-scatter, reduce);
allreduce is a reduce-scatter phase followed by an allgather phase. Every
path must be a walk in G whose inner nodes are switches; a path may start at
(out-trees) a switch that copies or end at (in-trees) a switch that adds, which
the same tree's data verifiably passes through on another, grounded path, and a
node's own data may make a round trip (a self-edge): :mod:`.schedule_paths`.
A switch with a reduction rate counts as a link whose load is the data it adds.

Throughput: a tree of root u carries (multiplicity/k)·(M/N) (weighted:
·w_u/Σw; broadcast/reduce: (multiplicity/k)·M); its load on a link is that
times the number of times its paths traverse the link. The phase time per
unit of M is max_e load_e / c_e; phases add up; algbw = 1 / time. All sums
are integers over one common denominator per phase, so the result is exact.
With ``overlap`` (an allreduce whose reduce and broadcast trees run at the
same time on different chunks of the data, as in ForestColl's LP (5)) the
loads of all phases add up on each link instead, and the time is the busiest
link's total; ``weights`` may then give each root its share of the data
(0: no trees).

The document is read by :func:`.schedule_read.read_schedule` into the
:class:`~.schedule_read.Schedule` checked here. The pipeline of spanning trees
and its time: Zhao & Krishnamurthy 2023, §2 (ForestColl: Zhao et al. 2026, §5);
allreduce as reduce-scatter then allgather: Zhao & Krishnamurthy 2023, App. B;
multicast and aggregating switches: Zhao et al. 2026, §5.6; weights: Zhao et
al. 2026, §5.7; the overlapping trees of LP (5): Zhao et al. 2026, App. G.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..allreduce import check_forestcoll_lp
from ..execution import check_runtime_routes
from ..model import InputError, Link, Node, Topo, Verdict, frac_str, integer
from .optimum import check_optimum
from .schedule_orbits import Orbits, read_orbits
from .schedule_paths import PlainPaths, added_at, check_paths
from .schedule_read import DIRECTION, PHASES, Phase, Schedule, read_schedule
from .schedule_stated import check_schedule_stated
from .splitting import check_routing, check_splitting, gstar_capacities
from .trees import Tree, check_gstar_load, check_multiplicities, check_shape

MAX_BITS = 4000  # k × Σ weights: times stay far below Python's 4300-digit printing limit
REDUCED: Any = object()  # pseudo-link (REDUCED, switch): the sums a switch outputs, at its rate


def check_schedule(topology: Mapping[str, Any] | Topo, schedule: Any, *,
                   certificates: bool = True) -> Verdict:
    """Check semantics and compute the exact time of a schedule dict.

    ``facts``: ``time_per_unit`` and ``algbw`` (per unit of data M),
    ``phase_times``, ``bottleneck`` (the busiest link of each phase).
    With ``certificates``, the G* certificates the schedule carries (``gstar``,
    ``routing``, ``flows``; top level for one phase, per phase otherwise) are
    checked too (checkers 3 and 4), and so is its ``optimum`` certificate
    (checker 2).
    """
    topo = topology if isinstance(topology, Topo) else Topo(topology)
    sched = (schedule if isinstance(schedule, Schedule) else
             read_schedule(topo, schedule, orbits=True))
    v = Verdict("schedule")
    v.facts["notes"] = list(sched.notes)
    want = PHASES[sched.collective]
    got = tuple(p.collective for p in sched.phases)
    if got != want:
        v.fail(f"a {sched.collective} schedule needs phases {list(want)}, this one has "
               f"{list(got)}")
    roots, w_int, w_sum = _roots(topo, sched)
    orb = None
    if sched.symmetry is not None:  # a symmetric file: checked by orbits
        orb = _orbits(topo, sched, w_int, v)
        if orb is None:
            return v
        roots = [r for r in orb.reps if w_int.get(r, 0) > 0]
        n = len(orb.reps)
        v.facts["checked_by_orbits"] = (f"the trees of {n} representative root"
                                        f"{'' if n == 1 else 's'} and their images under a "
                                        f"group of order {orb.order}")
    total = Fraction(0)
    combined: dict[Link, Fraction] = {}  # overlap: data per unit of M on each link, all phases
    phase_times: list[Fraction] = []
    bottlenecks: list[str] = []
    for phase in sched.phases:
        pv = Verdict(phase.label)
        den = _denominator(phase, w_sum, bool(sched.weights))
        load = _check_trees(topo, sched, phase, roots, w_int, pv, certificates, orb)
        time, worst = _busiest(topo, load, den)
        if sched.overlap:
            for e, amount in load.items():
                combined[e] = combined.get(e, Fraction(0)) + Fraction(amount, den)
        phase_times.append(time)
        total += time
        if phase.claimed_time is not None and phase.claimed_time != time and pv.ok:
            pv.fail(f"the phase claims time_per_unit {frac_str(phase.claimed_time)}, but its "
                    f"trees give {frac_str(time)}")
        if worst is not None:
            bottlenecks.append(f"{_name(worst)} carries "
                               f"{frac_str(Fraction(load[worst], den))} per unit of data at "
                               f"capacity {frac_str(_capacity(topo, worst))}")
        v.absorb(pv, f"{phase.label}: " if len(sched.phases) > 1 else "")
    v.facts["phase_times"] = [frac_str(t) for t in phase_times]
    if sched.overlap:  # pipelined phases share each link: time is the busiest link's total
        total, bottlenecks = _overlapped(topo, combined, bottlenecks)
    v.facts["bottleneck"] = bottlenecks
    if total == 0:
        v.fail("the schedule moves no data over any link")
        return v
    v.facts["time_per_unit"] = total
    v.facts["algbw"] = 1 / total
    if certificates:
        _check_embedded(topology, topo, sched, v)
    for key, val in sched.claimed.items():
        mine = v.facts[key]
        if val != mine:
            v.fail(f"the schedule claims {key} {frac_str(val)}, but its trees give "
                   f"{frac_str(mine)}")
    if v.ok:
        v.absorb(check_schedule_stated(topo, sched, v.facts, certificates))
    return v


def _orbits(topo: Topo, sched: Schedule, w_int: Mapping[Node, int],
            v: Verdict) -> Orbits | None:
    """A symmetric file's group, verified (:mod:`.schedule_orbits`); None when it fails
    ``v``. Its trees must be rooted at the representatives."""
    if sched.root is not None or sched.overlap:
        raise InputError("a symmetric schedule file is an allgather, reduce-scatter or "
                         "allreduce (reduce-scatter then allgather) with every compute node "
                         "a root: 'symmetry' does not go with a single root or 'overlap'")
    weights = dict(w_int) if sched.weights is not None else None
    orb = read_orbits(topo, sched.symmetry, weights, v)
    if orb is None:
        return None
    reps = set(orb.reps)
    for phase in sched.phases:
        for tree in phase.trees:
            if tree.root not in reps:
                v.fail(f"{phase.label}: {tree.label}: its root {tree.root!r} is not one of "
                       "the file's symmetry.representatives (a symmetric file holds the "
                       "representatives' trees; the others are their images)")
    return orb if v.ok else None


def _roots(topo: Topo, sched: Schedule) -> tuple[list[Node], dict[Node, int], int]:
    """The roots whose data the schedule moves, each root's share as an integer, and
    their sum (broadcast / reduce: the one root; else the weights, or 1 each)."""
    if sched.root is not None:
        return [sched.root], {sched.root: 1}, 1
    w_int, w_sum = _int_weights(topo, sched.weights)
    return [c for c in topo.compute if w_int[c] > 0], w_int, w_sum


def _denominator(phase: Phase, w_sum: int, weighted: bool) -> int:
    """k × Σ weights: every load of the phase is an integer over it (InputError past
    :data:`MAX_BITS`)."""
    den = phase.k * w_sum
    if den.bit_length() > MAX_BITS:
        sums = " × (the weights' sum over their common denominator)" if weighted else ""
        raise InputError(f"{phase.label}: k{sums} has {den.bit_length()} bits; collcert "
                         f"reports times exactly only up to {MAX_BITS} bits (a real schedule "
                         "needs a few hundred)")
    return den


def _check_trees(topo: Topo, sched: Schedule, phase: Phase, roots: list[Node],
                 w_int: Mapping[Node, int], pv: Verdict, certificates: bool,
                 orb: Orbits | None = None) -> dict[Link, int]:
    """One phase's trees: shapes, paths, multiplicities and the G* certificates; returns
    the data on each link (integers over :func:`_denominator`), and the reduced data a
    rate-limited switch outputs under the key ``(REDUCED, switch)``. With ``orb`` (a
    symmetric file) the trees are the representatives' and the loads are those of
    all their images (:meth:`Orbits.spread`)."""
    load: dict[Link, int] = {}
    plain = PlainPaths(topo)
    for tree in phase.trees:
        if tree.multiplicity > phase.k:  # invalid anyway; its loads would be absurd
            pv.fail(f"{tree.label} has multiplicity {tree.multiplicity}, more than k = "
                    f"{phase.k}: it would carry more than all of its root's data")
            continue
        if tree.direction != DIRECTION[phase.collective]:
            pv.fail(f"{tree.label} is an {tree.direction}-tree, but a "
                    f"{phase.collective} phase needs {DIRECTION[phase.collective]}-trees")
            continue
        if not check_shape(topo, tree, pv):
            continue
        amount = tree.multiplicity * w_int.get(tree.root, 0)
        if not plain.add(tree, amount):
            check_paths(topo, tree, pv, load, amount, sched.overlap)
            _reductions(topo, tree, amount, load, pv, orb)
    plain.loads(load)
    what = ("shard" if phase.collective in ("allgather", "reduce-scatter") else "data")
    check_multiplicities(topo, phase.trees, phase.k, roots, pv, what)
    certs = phase.certificates or (sched.certificates if len(sched.phases) == 1 else {})
    if certificates and certs.get("gstar") is not None:
        _check_gstar(topo, phase, certs, sched.root, pv, orb)
    return load if orb is None else orb.spread(load)


def _reductions(topo: Topo, tree: Tree, amount: int, load: dict[Link, int], pv: Verdict,
                orb: Orbits | None) -> None:
    """A rate-limited switch that adds in ``tree`` outputs its data once: booked on the
    pseudo-link ``(REDUCED, switch)``, whose capacity is the switch's reduction rate."""
    for w in added_at(topo, tree):
        if w not in topo.reduction_rate:
            continue
        if orb is not None:
            pv.fail(f"{tree.label} adds at {w!r}, which has a reduction rate: a symmetric "
                    "file cannot state that (write the schedule out in full)")
            continue
        key = (REDUCED, w)
        load[key] = load.get(key, 0) + amount


def _capacity(topo: Topo, e: Link) -> Fraction:
    return topo.reduction_rate[e[1]] if e[0] is REDUCED else topo.cap[e]


def _name(e: Link) -> str:
    return (f"reducing switch {e[1]} (its sums, at its reduction rate)" if e[0] is REDUCED
            else f"{e[0]} -> {e[1]}")


def _busiest(topo: Topo, load: Mapping[Link, int], den: int) -> tuple[Fraction, Link | None]:
    """The phase's time per unit of data, max_e load_e / c_e (a rate-limited switch's
    output over its rate counts as a link), and the first link that attains it (None
    when the phase moves nothing)."""
    time = Fraction(0)
    worst: Link | None = None
    for e, amount in load.items():
        if e[0] is REDUCED:
            t = Fraction(amount, den) / topo.reduction_rate[e[1]]
        else:
            t = Fraction(amount * topo.scale, den * topo.icap[e])
        if t > time:
            time, worst = t, e
    return time, worst


def _overlapped(topo: Topo, combined: Mapping[Link, Fraction],
                bottlenecks: list[str]) -> tuple[Fraction, list[str]]:
    """The time of phases that run at once: the busiest link's load of all phases
    together; and its bottleneck (the phases' own when nothing moves)."""
    total = max((amount / _capacity(topo, e) for e, amount in combined.items()),
                default=Fraction(0))
    worst_all = max(combined, key=lambda e: combined[e] / _capacity(topo, e), default=None)
    if worst_all is not None:
        bottlenecks = [f"{_name(worst_all)} carries "
                       f"{frac_str(combined[worst_all])} per unit of data in all phases "
                       f"together at capacity {frac_str(_capacity(topo, worst_all))}"]
    return total, bottlenecks


def _check_embedded(topology: Mapping[str, Any] | Topo, topo: Topo, sched: Schedule,
                    v: Verdict) -> None:
    """The optimum (checker 2) and LP (5) certificates the schedule carries, if any."""
    if isinstance(sched.certificates.get("optimum"), Mapping):
        ov = check_optimum(topo, sched.certificates["optimum"])
        v.absorb(ov, "embedded optimum certificate: ")
        if ov.ok and "algbw" in ov.facts:
            v.facts["certified_optimum_algbw"] = ov.facts["algbw"]
            v.facts["certified_optimum_time_per_unit"] = 1 / ov.facts["algbw"]
            if "lower_bound_time_per_unit" in ov.facts:
                v.facts["certified_lower_bound_time_per_unit"] = ov.facts[
                    "lower_bound_time_per_unit"]
                v.facts["certified_proven_optimal"] = ov.facts.get("proven_optimal")
    rr = sched.certificates.get("runtime_routes")
    if isinstance(rr, Mapping):  # `schedule --routes runtime`: the constrained optimum
        rv = check_runtime_routes(topo, rr)
        v.absorb(rv, "embedded runtime-routes certificate: ")
        if rv.ok and rr.get("collective") != sched.collective:
            v.fail(f"the runtime-routes certificate is for {rr.get('collective')}, the "
                   f"schedule is {sched.collective}")
        elif rv.ok and rv.facts["constrained"] and not rv.facts["balanced"]:
            v.facts["certified_optimum_algbw"] = rv.facts["algbw"]
            v.facts["certified_optimum_time_per_unit"] = rv.facts["time_per_unit"]
            if v.ok and v.facts["algbw"] > rv.facts["algbw"] and sched.stated.get(
                    "routes") == "runtime":
                v.fail(f"the trees give algbw {frac_str(v.facts['algbw'])}, more than the "
                       "runtime-routes optimum its certificate proves: one of them is wrong")
    lp5 = sched.certificates.get("forestcoll_lp")
    if isinstance(lp5, Mapping):  # `schedule -c allreduce --method lp`
        _check_lp5(topology if isinstance(topology, Mapping) else _as_dict(topo), lp5, v)


def _check_lp5(topology: Mapping[str, Any], cert: Mapping[str, Any], v: Verdict) -> None:
    """The embedded LP (5) certificate: checked, and its value is the best algbw of any tree
    all-reduce (Zhao et al. 2026, App. G), so this schedule's algbw cannot exceed it."""
    lv = check_forestcoll_lp(topology, cert)
    v.absorb(lv, "embedded LP (5) certificate: ")
    best = lv.facts.get("forestcoll_lp")
    if lv.ok and isinstance(best, Fraction):
        v.facts["forestcoll_lp"] = best
        if v.ok and v.facts["algbw"] > best:
            v.fail(f"the trees give algbw {frac_str(v.facts['algbw'])}, more than the LP (5) "
                   f"optimum {frac_str(best)} that the schedule's certificate proves: one of "
                   "them is wrong")


def _as_dict(topo: Topo) -> dict[str, Any]:
    return {"compute_nodes": topo.compute, "switch_nodes": topo.switches,
            "links": [{"src": u, "dst": w, "capacity": frac_str(c)}
                      for (u, w), c in topo.cap.items()]}


def _int_weights(
    topo: Topo, weights: Mapping[Node, Fraction] | None
) -> tuple[dict[Node, int], int]:
    if weights is None:
        return {c: 1 for c in topo.compute}, topo.n
    den = 1
    for w in weights.values():
        den = den * w.denominator // math.gcd(den, w.denominator)
        if den.bit_length() > MAX_BITS:  # stop before the multiple grows without bound
            raise InputError(f"weights: the common denominator of the weights has more than "
                             f"{MAX_BITS} bits; write them with smaller denominators")
    ints = {c: int(weights[c] * den) for c in topo.compute}
    return ints, sum(ints.values())


def _check_gstar(topo: Topo, phase: Phase, certs: Mapping[str, Any], root: Node | None,
                 pv: Verdict, orb: Orbits | None = None) -> None:
    """Checker 4 (trees fit in G*) and checker 3 (G* fits in G) for one phase.

    ``"on": "transposed"`` marks a G* built on the transposed topology (the
    in-trees of reduce-scatter and reduce): its edges, walks and flows are in
    transposed direction. With ``orb`` (a symmetric file) G* lists one arc per
    orbit, and each orbit's load is the representatives' summed over it.
    """
    transposed = certs.get("on") == "transposed"
    on = topo.transposed() if transposed else topo
    caps = _gstar_caps(on, certs)
    if transposed:
        caps = {(b, a): c for (a, b), c in caps.items()}
    gstar = certs["gstar"]
    supply: dict[Node, int] | None = None
    if isinstance(gstar, Mapping) and gstar.get("supply") is not None:
        raw = gstar["supply"]
        if isinstance(raw, Mapping):
            items: list[Any] = [list(kv) for kv in raw.items()]
        elif isinstance(raw, list):
            items = raw
        else:
            raise InputError("gstar supply must be [[node, int], …] or {node: int}")
        supply = {}
        for item in items:
            if not isinstance(item, list | tuple) or len(item) != 2:
                raise InputError("gstar supply entries must be [node, int]")
            supply[on.compute_node(item[0], "gstar supply")] = integer(item[1], "supply", 0,
                                                                   strict=True)
    elif root is not None:
        supply = {root: phase.k}
    gk = integer(gstar.get("k"), "gstar k", 1, strict=True)
    weight = supply if supply is not None else {c: gk for c in topo.compute}
    if orb is not None:
        if certs.get("flows") is not None:
            raise InputError(f"{phase.label}: a symmetric file's G* certificate lists one arc "
                             "per orbit, their routing and no 'flows' (docs/schedules.md)")
        check_gstar_load(orb.canon_trees(phase.trees), orb.canon_caps(caps, pv), pv, weight,
                         phase.k)
    else:
        check_gstar_load(phase.trees, caps, pv, weight, phase.k)
    if certs.get("routing") is None:  # G*'s capacities would be figures nothing proves
        pv.fail("G* certificate: 'certificates.gstar' states capacities but no 'routing' "
                "shows them carried by the topology's links; add the routing (collcert "
                "schedule writes it) or leave 'gstar' out")
    elif orb is not None or certs.get("flows") is None:
        canon, spread = (None, None) if orb is None else (orb.canon, orb.spread)
        pv.absorb(check_routing(on, certs, canon, spread), "G* certificate: ")
    else:
        pv.absorb(check_splitting(on, certs, supply), "G* certificate: ")


def _gstar_caps(topo: Topo, certs: Mapping[str, Any]) -> dict[Link, int]:
    raw = certs.get("gstar")
    if not isinstance(raw, Mapping) or not isinstance(raw.get("capacities"), list):
        raise InputError("certificates.gstar must be {U, k, capacities: [[u, v, int], …]}")
    return gstar_capacities(topo, raw["capacities"], "certificates.gstar.capacities")
