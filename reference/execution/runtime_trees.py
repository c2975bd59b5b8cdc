"""A tree schedule on the runtime's routes, at its certified optimum (issue 22 item 2).

:func:`.runtime_routes.runtime_optimum` gives the best GPU-to-GPU rates y (a switch-free
logical graph) and each source's flow through the switches. ForestColl's trees on y
(Zhao & Krishnamurthy 2023, Thm 12, Edmonds' packing: the logical graph has no
switches) reach its optimum, which is the LP's x. Every tree edge then gets its real
path: a linked pair its direct link; an unlinked pair a path of its source's switch
flow toward it, each path taking at most U·(its flow) unit trees (U: the trees'
bandwidth unit), so no link carries more than the LP's flow through it. Where a
tree's edge takes units from two paths, the tree is split into copies with the same
edges (k and every multiplicity are first scaled so that every path's share is
integral), as ForestColl's mapping back does (Zhao et al. 2026, §5).

Allreduce is reduce-scatter then allgather (Zhao & Krishnamurthy 2023, App. B), each
phase built here at its own constrained optimum: the best two-phase schedule on the
runtime's routes, proven; whether a schedule that is not two phases could do better
under the constraint is not proven (docs/schedules.md, "Allreduce on runtime routes").
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ..model import ScheduleError, Topology, fraction_str
from .runtime_routes import RuntimeOptimum, allreduce_certificate, runtime_optimum

COLLECTIVES = ("allgather", "reduce-scatter", "allreduce")


def runtime_schedule(t: Topology, collective: str = "allgather", progress: Any = None,
                     method: str = "auto", *, stages: Any = None, estimate: Any = None,
                     notice: Any = None) -> dict[str, Any]:
    """A ``collcert-schedule/1`` dict whose every GPU pair uses the runtime's route, at
    the certified optimum under that constraint (the LP certificate under
    ``certificates.runtime_routes``). Allreduce: reduce-scatter then allgather, each at
    its own optimum under the constraint.

    ``method="auto"`` first builds ForestColl's own schedule: when every tree edge between
    linked GPUs already takes the direct link, it is on the runtime's routes at
    ForestColl's optimum, which no constrained schedule beats, so it is returned (with
    ForestColl's optimum certificate) and no LP is solved. ``"cuts"`` always solves the
    constrained optimum (:mod:`.runtime_cuts`).

    ``progress(line)``: the rounds of cut generation; ``stages`` and ``estimate``: passed
    to ForestColl's :func:`~collcert.reference.forestcoll.schedule` (its bars and the
    general path's estimate); ``notice(text, seconds)``: the estimate of cut generation,
    told before it starts (:func:`.runtime_cuts.check_lp_size`, which also refuses an
    LP beyond the limits)."""
    if collective not in COLLECTIVES:
        raise ScheduleError(f"--routes runtime builds allgather, reduce-scatter and allreduce "
                            f"schedules, not {collective}")
    if method not in ("auto", "cuts"):
        raise ValueError(f"method {method!r}: use 'auto' or 'cuts'")
    why = ""
    if method == "auto":
        fits, why = _forestcoll_fits(t, collective, stages, estimate)
        if fits is not None:
            return fits
    if collective == "allreduce":
        return _allreduce(t, progress, notice, why, stages, estimate)
    rs = collective == "reduce-scatter"
    opt = runtime_optimum(t, constrained=True, collective=collective, progress=progress,
                          notice=notice, why=why)
    doc = _trees(t, opt, rs, stages, estimate)
    doc["certificates"] = {"runtime_routes": opt.certificate()}
    doc["generator"]["target_time_per_unit"] = fraction_str(1 / opt.algbw)
    return doc


def _forestcoll_fits(t: Topology, collective: str, stages: Any = None, estimate: Any = None,
                     ) -> tuple[dict[str, Any] | None, str]:
    """(ForestColl's schedule, "") when no tree edge between linked GPUs leaves their
    direct link (then it is on the runtime's routes), else (None, why not: a prefix for
    the cut-generation estimate)."""
    from ..forestcoll import schedule
    from ..model import CollcertError

    try:
        s = schedule(t, collective, multicast=False, progress=stages, estimate=estimate)
    except CollcertError as exc:  # e.g. not Eulerian: the constrained LP needs no such
        reason = str(exc).split("; ")[0]  # condition
        return None, f"ForestColl's own schedule is not built ({reason}), so "
    for phase in s.phases:
        for tree in phase.trees:
            for e in tree.edges:
                if (e.src, e.dst) in t.capacity and tuple(e.path) != (e.src, e.dst):
                    return None, (f"ForestColl's own schedule sends {e.src} -> {e.dst} "
                                  "off their direct link, so ")
    # compact trees (each phase's walks once): ring:2000's 8 million edges written out
    # one by one made a document of minutes to encode
    doc: dict[str, Any] = s.to_json(compact=True)
    doc["routes"] = "runtime"
    return doc, ""


def _allreduce(t: Topology, progress: Any, notice: Any = None, why: str = "",
               stages: Any = None, estimate: Any = None) -> dict[str, Any]:
    """Reduce-scatter then allgather, each on the runtime's routes at its own certified
    optimum (:func:`.runtime_routes.allreduce_certificate` says what that proves)."""
    def tell(phase: str) -> Any:
        return (lambda line: progress(f"{phase}: {line}")) if progress else None

    opts = [runtime_optimum(t, collective=c, progress=tell(c), notice=notice,
                            why=f"{why}{c}: ") for c in ("reduce-scatter", "allgather")]
    if min(o.x for o in opts) <= 0:
        raise ScheduleError("under the runtime's routes some GPU cannot reach another: no "
                            "schedule exists")
    rs, ag = (_trees(t, o, o.collective == "reduce-scatter", stages, estimate) for o in opts)
    cert = allreduce_certificate(*opts)
    doc = dict(ag, collective="allreduce", phases=rs["phases"] + ag["phases"])
    doc["claimed"] = {"algbw": cert["algbw"], "time_per_unit": cert["time_per_unit"]}
    doc["certificates"] = {"runtime_routes": cert}
    doc["generator"]["target_time_per_unit"] = cert["time_per_unit"]
    return doc


def _trees(t: Topology, opt: RuntimeOptimum, rs: bool, stages: Any = None,
           estimate: Any = None) -> dict[str, Any]:
    """ForestColl's trees on the logical graph y, every edge on its real path (``stages``,
    ``estimate``: schedule()'s bars and general-path estimate)."""
    from ..forestcoll import schedule

    if opt.x <= 0:
        raise ScheduleError("under the runtime's routes some GPU cannot reach another: no "
                            "schedule exists")
    links = [(p, q, c) for (p, q), c in opt.logical.items()]
    logical = Topology(list(t.compute_nodes), links, [], name=f"{t.name} (logical)",
                       unit=t.unit, strict=False)
    # y need not be Eulerian: ForestColl needs that only to remove switches (Zhao &
    # Krishnamurthy 2023, Thm 8), and y has none; its tree packing rests on Edmonds'
    # branching theorem (Thm 5, 12), which holds in every digraph. The trees are
    # checked by collcert.certify all the same. Reduce-scatter: the allgather of the
    # transposed machine, every tree reversed into an in-tree (App. B).
    logical.forestcoll_problem = None
    doc = schedule(logical, "allgather", multicast=False, progress=stages,
                   estimate=estimate).to_json(certificates=False, compact=False)
    if rs:
        doc["collective"] = "reduce-scatter"
        for phase in doc["phases"]:
            phase["collective"] = "reduce-scatter"
            for tree in phase["trees"]:
                tree["direction"] = "in"
                tree["edges"] = [{"src": e["dst"], "dst": e["src"]} for e in tree["edges"]]
    paths = _paths(opt, rs)
    for phase in doc["phases"]:
        _map_phase(phase, paths, opt, rs)
    doc.update({"topology": t.content_hash(), "topology_name": t.name, "routes": "runtime"})
    gen = doc.setdefault("generator", {})
    gen.pop("lower_bound_time_per_unit", None)
    gen.pop("rsag_proven_optimal", None)
    return doc


def _paths(opt: RuntimeOptimum, rs: bool) -> dict[tuple[Any, Any], list[tuple[list[Any],
                                                                             Fraction]]]:
    """Per logical pair (in the real direction): its real paths and their amounts."""
    t = opt.topology  # the topology the LP ran on (transposed for reduce-scatter)
    out: dict[tuple[Any, Any], list[tuple[list[Any], Fraction]]] = {}
    for (p, q), amount in opt.logical.items():
        if (p, q) in t.capacity:
            routes = [([p, q], amount)]
        else:
            routes = _decompose(opt.switch_flow[p], p, q, amount)
        if rs:
            out[(q, p)] = [(list(reversed(path)), a) for path, a in routes]
        else:
            out[(p, q)] = routes
    return out


def _decompose(flow: dict[tuple[Any, Any], Fraction], p: Any, q: Any,
               need: Fraction) -> list[tuple[list[Any], Fraction]]:
    """Paths p -> … -> q carrying ``need`` in all, taken out of ``flow`` (which is
    reduced): walk from q back along arcs with flow left, as a flow decomposition does."""
    routes: list[tuple[list[Any], Fraction]] = []
    while need > 0:
        path = [q]
        seen = {q}
        while path[-1] != p:
            prev = next((a for (a, b), x in flow.items() if b == path[-1] and x > 0
                         and a not in seen), None)
            if prev is None:
                raise RuntimeError(f"internal: the switch flow of {p} does not reach {q}")
            path.append(prev)
            seen.add(prev)
        path.reverse()
        arcs = list(zip(path, path[1:]))
        amount = min([need] + [flow[e] for e in arcs])
        for e in arcs:
            flow[e] -= amount
        routes.append((path, amount))
        need -= amount
    return routes


def _map_phase(phase: dict[str, Any], paths: dict[tuple[Any, Any], list[tuple[list[Any],
                                                                            Fraction]]],
               opt: RuntimeOptimum, rs: bool) -> None:
    """Give every tree edge a real path (splitting trees where an edge takes two)."""
    u = Fraction(phase["U"])
    scale = 1
    for routes in paths.values():
        for _, amount in routes:
            scale = math.lcm(scale, (u * amount).denominator)
    units: dict[tuple[Any, Any], list[list[Any]]] = {
        pair: [[path, int(u * amount * scale)] for path, amount in routes]
        for pair, routes in paths.items()}
    phase["k"] *= scale
    phase["U"] = fraction_str(u * scale)
    out = []
    work = [dict(tree, multiplicity=tree["multiplicity"] * scale) for tree in phase["trees"]]
    while work:
        tree = work.pop()
        m = tree["multiplicity"]
        for i, e in enumerate(tree["edges"]):
            if e.get("mapped"):
                continue
            left = units[(e["src"], e["dst"])]
            j = next(j for j, (_, r) in enumerate(left) if r > 0)
            take = min(m, left[j][1])
            left[j][1] -= take
            edges = list(tree["edges"])
            edges[i] = {"src": e["src"], "dst": e["dst"], "path": left[j][0], "mapped": True}
            if take < m:
                work.append(dict(tree, multiplicity=m - take))
            tree = dict(tree, multiplicity=take, edges=edges)
            m = take
        out.append(tree)
    for tree in out:
        tree["edges"] = [{k: v for k, v in e.items() if k != "mapped"} for e in tree["edges"]]
    phase["trees"] = sorted(out, key=lambda tr: str(tr["root"]))
    counts: dict[str, int] = {}
    for tree in phase["trees"]:
        tree["index"] = counts.get(str(tree["root"]), 0)
        counts[str(tree["root"])] = tree["index"] + 1
