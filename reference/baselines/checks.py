"""The figures of a comparison, each checked: the audited optimum, LP (5), every
baseline through ``collcert.certify``'s schedule checker, the refusal, the α-β times.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from collcert.certify.forestcoll import check_schedule, read_schedule
from collcert.certify.model import InputError, Topo
from collcert.reference.model import CollcertError, Topology, fraction_str

from .results import Comparison, ComparisonRefused, Row


def _busbw(collective: str, n: int) -> Fraction:
    if collective == "allreduce":
        return Fraction(2 * (n - 1), n)
    if collective in ("allgather", "reduce-scatter"):
        return Fraction(n - 1, n)
    return Fraction(1)


def audit_optimum(topology: Topology, collective: str, root: Any) -> tuple[Comparison, Row]:
    """ForestColl's optimal schedule, audited: its row, and the certified optimum."""
    from collcert.reference.forestcoll import schedule
    from collcert.reference.innetwork import unchanged_reason

    s = schedule(topology, collective, root=root)
    n = topology.num_compute
    if collective == "allreduce":
        return _allreduce_optimum(topology, s.root, s.to_json(compact=True))
    # built by the orbits of a verified group: the representatives' trees and the group,
    # which the audit checks by orbits (every image has the same latency under one α per
    # link kind; per-link α may differ between images: then every tree)
    doc = s.to_json(compact=True, symmetric=s.symmetric and not topology.alpha)
    from collcert.auditing import audit

    report = audit(topology, doc)
    if not report.valid or report.algbw is None or report.optimum_algbw is None:
        raise CollcertError("internal: the optimum's own schedule did not audit VALID against "
                            "a certified optimum: " + "; ".join(report.reasons[:3] + report.notes[:3]))
    opt = report.optimum_algbw
    cmp = Comparison(topology.name, collective, s.root, topology.unit, n, opt,
                     report.optimum_kind, report.bound_algbw, [], [])
    cmp.checker_topology = Topo(topology.to_json())
    if topology.in_network or topology.multicast_switches:
        cmp.model = f"any schedule: also in-network, {topology.in_network_model()}"
        cmp.notes.append(f"{collective}: the optimum holds for any schedule, switches that add "
                         f"or copy included: {unchanged_reason(collective)}")
    row = Row("optimum", "ForestColl trees (optimum)", "optimum", report.algbw,
              report.algbw * _busbw(collective, n), report.algbw / opt, document=doc)
    row.phases = read_schedule(cmp.checker_topology, doc, orbits=True).phases
    return cmp, row


def _allreduce_optimum(topology: Topology, root: Any, doc: dict[str, Any],
                       ) -> tuple[Comparison, Row]:
    """Allreduce, as ``collcert audit`` judges it (auditing.allreduce) but solving LP (5)
    once: RS+AG's certified optimum and lower bound, then LP (5) where it is solved,
    each certificate checked by ``collcert.certify``; the LP is kept for its row."""
    from collcert.certify.allreduce import Graph, check_forestcoll_lp
    from collcert.certify.forestcoll import check_optimum
    from collcert.reference.allreduce import forestcoll_lp
    from collcert.reference.forestcoll import optimum

    n = topology.num_compute
    topo = Topo(topology.to_json())
    ov = check_optimum(topo, optimum(topology, "allreduce").certificate())
    if not ov.ok:
        raise CollcertError("internal: the allreduce optimum's certificate did not check: "
                            + "; ".join(ov.all_reasons()[:3]))
    lower = ov.facts.get("lower_bound_time_per_unit")
    cmp = Comparison(topology.name, "allreduce", root, topology.unit, n, ov.facts["algbw"],
                     "RS+AG's certified algbw; not proven optimal",
                     None if not lower or topology.multicast_switches else 1 / lower, [], [])
    cmp.checker_topology = topo
    try:
        lp = forestcoll_lp(topology)
    except CollcertError as exc:
        cmp.notes.append(f"LP (5) not solved: {str(exc).split('; ')[0]}")
    else:
        lv = check_forestcoll_lp(Graph(topology.to_json()), lp.certificate())
        if lv.ok:
            cmp.optimum, cmp.optimum_kind, cmp.lp = lp.value, "certified", lp
        else:
            cmp.notes.append("LP (5)'s certificate did not check: "
                             + "; ".join(lv.all_reasons()[:2]))
    if topology.in_network:
        in_network_optimum(topology, cmp)
    if cmp.optimum_kind != "certified":
        cmp.notes.append(f"allreduce: the optimum column is {cmp.optimum_kind}")
    label = "ForestColl RS+AG trees" + (" (switches forward)" if topology.in_network else "")
    row = checked_row(topology, cmp, "optimum", label, "optimum", doc)
    return cmp, row


def in_network_optimum(topology: Topology, cmp: Comparison) -> None:
    """Where switches add (NVLS, SHARP), the allreduce optimum of the in-network model the
    topology declares (``collcert.reference.innetwork``, docs/in-network.md), its
    certificate checked by ``collcert.certify.innetwork``: the optimum column (exact),
    or the best schedule found with the bound above it (a bracket); routing's bounds
    (ForestColl's (6), (7)) do not hold there, the model's upper bound does."""
    from collcert.certify.innetwork import check_in_network
    from collcert.reference.innetwork import in_network_rate

    rate = in_network_rate(topology)
    if rate is None:
        return
    verdict = check_in_network(topology.to_json(), rate.certificate())
    if not verdict.ok:
        raise CollcertError("internal: the in-network certificate did not check: "
                            + "; ".join(verdict.all_reasons()[:3]))
    low, up = verdict.facts["lower"], verdict.facts["upper"]
    cmp.model = rate.model
    cmp.optimum, cmp.bound = low, up
    if low == up:
        cmp.optimum_kind = "certified"
    else:
        cmp.optimum_kind = (f"the best in-network schedule found, certified; no schedule beats "
                            f"{fraction_str(up)}")
    cmp.notes.append(f"allreduce in the in-network model ({rate.model}; docs/in-network.md): "
                     + ("the optimum" if low == up else "between the best schedule found and "
                        f"the bound {fraction_str(up)}"))


def lp5_row(topology: Topology, cmp: Comparison) -> Row | None:
    """ForestColl's LP (5) schedule of reduce and broadcast trees (None: not solved)."""
    from collcert.reference.allreduce import lp_schedule

    lp = cmp.lp
    if lp is None:
        return None
    try:
        sched = lp_schedule(topology, lp=lp)
    except CollcertError as exc:
        cmp.notes.append(f"LP (5) trees not built: {exc}")
        return None
    row = checked_row(topology, cmp, "lp5", "ForestColl LP (5) trees", "lp5",
                      sched.to_json(certificates=False))
    if row.algbw != lp.value:
        raise CollcertError(f"internal: the LP (5) schedule checks at {fraction_str(row.algbw)}, "
                            f"not at the LP's value {fraction_str(lp.value)}")
    return row


def checked_row(topology: Topology, cmp: Comparison, name: str, label: str, kind: str,
                doc: dict[str, Any]) -> Row:
    """A schedule checked by ``collcert.certify`` (as ``collcert audit`` does): its row."""
    try:
        sched = read_schedule(cmp.checker_topology, doc)
    except InputError as exc:
        raise CollcertError(f"internal: the {name} schedule cannot be read: {exc}") from None
    verdict = check_schedule(cmp.checker_topology, sched)
    if not verdict.ok:
        raise CollcertError(f"internal: the {name} schedule did not check: "
                            + "; ".join(verdict.all_reasons()[:3]))
    algbw = verdict.facts["algbw"]
    row = Row(name, label, kind, algbw, algbw * _busbw(cmp.collective, cmp.ranks),
              algbw / cmp.optimum, document=doc)
    row.phases = sched.phases
    return row


def check_rows(cmp: Comparison) -> None:
    """Refuse a baseline above the certified optimum or the proven bound."""
    certified = cmp.collective != "allreduce" or cmp.optimum_kind == "certified"
    for row in cmp.rows:
        if row.kind == "optimum":
            continue
        if cmp.bound is not None and row.algbw > cmp.bound:
            raise ComparisonRefused(
                f"refusing to rank {row.name}: it checks at algbw {fraction_str(row.algbw)}, "
                f"above the proven bound {fraction_str(cmp.bound)} {cmp.unit}; a checker or "
                "the bound is wrong (please report it)")
        if certified and row.algbw > cmp.optimum:
            raise ComparisonRefused(
                f"refusing to rank {row.name}: it checks at algbw {fraction_str(row.algbw)}, "
                f"above the certified optimum {fraction_str(cmp.optimum)} {cmp.unit}; a "
                "checker or the optimum is wrong (please report it)")
        if not certified and row.algbw > cmp.optimum:
            row.notes.append("above RS+AG's algbw, which is not proven optimal")


def alpha_beta(topology: Topology, cmp: Comparison, sizes: list[int], alpha: Fraction) -> None:
    """Every row's α-β time per size, and the fastest row per size."""
    from collcert.reference.execution import (
        AlphaBeta,
        bytes_per_unit,
        link_alphas,
        tree_schedule_latency,
    )

    unit = bytes_per_unit(topology.unit)
    alphas = link_alphas(topology, alpha)
    cmp.sizes, cmp.alpha = sizes, alpha
    for row in cmp.rows:
        lat = tree_schedule_latency(topology, row.phases, alphas, reorder=_root_first)
        model = AlphaBeta(1 / row.algbw, lat, unit)
        row.latency_us, row.hops = lat.latency, lat.hops
        row.times_us = [model.time_us(s) for s in sizes]
    for i in range(len(sizes)):
        fastest = min(cmp.rows, key=lambda r: r.times_us[i])
        cmp.best.append(fastest.name)


class _Tree:
    def __init__(self, root: Any, direction: str, edges: list[Any]) -> None:
        self.root, self.direction, self.edges = root, direction, edges


def _root_first(tree: Any) -> _Tree:
    """The tree with its edges in breadth-first order from the root (in-trees: the edge
    into the root first), so the latency's relaxation over the paths settles in one
    pass; the paths are unchanged."""
    into = tree.direction == "in"
    below: dict[Any, list[Any]] = {}
    for e in tree.edges:
        below.setdefault(e.dst if into else e.src, []).append(e)
    ordered, todo = [], [tree.root]
    while todo:
        nxt = []
        for v in todo:
            for e in below.pop(v, []):
                ordered.append(e)
                nxt.append(e.src if into else e.dst)
        todo = nxt
    for rest in below.values():  # not reached from the root: keep them (checked)
        ordered += rest
    return _Tree(tree.root, tree.direction, ordered)
