"""The optimum an allreduce audit compares with: ForestColl's LP (5), certified.

RS+AG (reduce-scatter then allgather trees) is not proven optimal; LP (5) of
Zhao et al. 2026, App. G is the best schedule of reduce and broadcast trees, which RS+AG
is one of, so an audit reports a schedule's ratio to LP (5) when it can be
solved (:data:`collcert.reference.allreduce.lp5.MAX_LP_NONZEROS`), and to RS+AG
otherwise. Both are used only after ``collcert.certify`` accepts their
certificates. The bound that refutes claims stays the proven lower bound on
the time of Zhao & Krishnamurthy 2023, (bounds (6), (7), Eulerian topologies), or else the
cut-set bound of *On the Computation Rate of All-Reduce*, which holds for any
schedule, network coding included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from collcert.certify.model import Topo
from collcert.certify.model import frac_str as fraction_str

from .bounds import OptimumInfo

if TYPE_CHECKING:
    from collcert.reference.model import Topology


def allreduce_optimum(topology: Topology, topo: Topo, check: bool,
                      rsag: OptimumInfo | None) -> OptimumInfo:
    """``rsag``: the RS+AG figures (None on a topology that is not Eulerian)."""
    from collcert.certify.allreduce import Graph, check_cut_set, check_forestcoll_lp
    from collcert.reference.allreduce import cut_set_bound, forestcoll_lp
    from collcert.reference.model import CollcertError

    info = rsag or OptimumInfo()
    graph = Graph(topology.to_json())
    try:
        lp = forestcoll_lp(topology)
    except CollcertError as exc:
        info.notes.append(f"allreduce: ForestColl's LP (5) not solved ({exc}); the optimum "
                          "shown is that of RS+AG")
        info.kind = "RS+AG's certified algbw; not proven optimal"
        lp = None
    if lp is not None:
        if check:
            verdict = check_forestcoll_lp(graph, lp.certificate())
            if not verdict.ok:
                info.notes.append("internal: the LP (5) certificate did not check: "
                                  + "; ".join(verdict.all_reasons()[:3]))
                return info
        rs = info.algbw
        info.algbw = lp.value
        text = (f"allreduce: the optimum is ForestColl's LP (5) (Zhao et al. 2026, App. G), the best "
                f"schedule of reduce and broadcast trees: algbw {fraction_str(lp.value)}")
        if rs is not None:
            text += ("; RS+AG reaches it" if rs == lp.value else
                     f"; RS+AG reaches {fraction_str(rs / lp.value)} of it")
        info.notes.append(text)
    if topology.in_network:  # switches add: the optimum and bound of the in-network model
        return _in_network(topology, info, check, lp)
    if info.bound is None and not topology.multicast_switches:
        cut = cut_set_bound(topology)
        cert: dict[str, Any] = cut.certificate(topology)
        if not check or check_cut_set(graph, cert).ok:
            if cut.value:
                info.bound = cut.value
            names = ", ".join(str(v) for v in topology.nodes if v in cut.cut)
            info.witness = (f"the cut-set bound (On the Computation Rate of All-Reduce, Thm 1): "
                            f"S = {{{names}}} has B⁺(S) = {fraction_str(cut.value)}, which every "
                            "allreduce must cross, network coding included")
    return info


def _in_network(topology: Topology, info: OptimumInfo, check: bool, lp: Any) -> OptimumInfo:
    """Where switches add (NVLS, SHARP: docs/in-network.md), a schedule that adds in them
    may beat LP (5) and ForestColl's routing bounds: the optimum is the in-network
    model's (:func:`collcert.reference.innetwork.in_network_rate`, its certificate checked
    by :func:`collcert.certify.innetwork.check_in_network`), the bound its upper bound."""
    from collcert.certify.innetwork import check_in_network
    from collcert.reference.innetwork import in_network_rate
    from collcert.reference.model import CollcertError

    try:  # once, warm-started by LP (5) (it was solved twice: a note, then the figures)
        rate = in_network_rate(topology, lp5=lp)
    except CollcertError as exc:
        info.notes.append(f"allreduce: the switches add ({topology.in_network_model()}): {exc}")
        return info
    if rate is None:
        return info
    cert = rate.certificate()
    low, up = rate.lower, rate.upper
    if check:
        verdict = check_in_network(topology.to_json(), cert)
        if not verdict.ok:
            info.notes.append("internal: the in-network certificate did not check: "
                              + "; ".join(verdict.all_reasons()[:3]))
            info.algbw = info.bound = info.lower = None
            return info
        low, up = verdict.facts["lower"], verdict.facts["upper"]
    info.algbw, info.bound, info.lower = low, up, 1 / up
    info.kind = ("certified" if low == up else
                 f"the best in-network schedule found; not proven optimal (≤ {fraction_str(up)})")
    info.witness = (f"the in-network model's upper bound ({rate.model}): "
                    + (rate.bound.text() if rate.bound is not None else
                       "the exact dual of its column generation"))
    info.notes = [n for n in info.notes if not n.startswith(_ROUTING_NOTES)]
    info.notes.append(f"allreduce: the optimum is the in-network model's ({rate.model}; "
                      f"docs/in-network.md): algbw {fraction_str(low)}"
                      + ("" if low == up else f", no schedule beats {fraction_str(up)}")
                      + "; ForestColl's routing figures hold where switches only forward"
                      + ("" if lp is None else f" (LP (5): {fraction_str(lp.value)})"))
    return info


_ROUTING_NOTES = ("allreduce: the optimum is ForestColl's LP (5)",)
