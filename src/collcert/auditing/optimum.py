"""The certified optimum an audit compares with, and the proof in words.

The optimum is computed by ``collcert.reference`` and used only after its
certificate passes ``collcert.certify`` (for alltoall: the maximum concurrent
flow LP, rebuilt from the topology by the checker). Besides the optimum algbw,
an audit needs the *bound*: the largest algbw any schedule of the collective
can have on the topology (the optimum itself for allgather, reduce-scatter,
broadcast, reduce and alltoall; for allreduce the inverse of the proven lower
bound on the time, since RS+AG is not proven optimal), and the witness that
proves it, to refute claims that beat it.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from collcert.certify.forestcoll import check_optimum
from collcert.certify.model import Topo
from collcert.certify.model import frac_str as fraction_str

from .allreduce import allreduce_optimum
from .bounds import OptimumInfo

if TYPE_CHECKING:
    from collcert.reference.model import Topology


def certified_optimum(topology: Topology, topo: Topo, collective: str, root: Any,
                      weights: Any, check: bool) -> OptimumInfo:
    """The optimum of ``collective`` (its certificate checked when ``check``)."""
    if collective == "alltoall":
        return _alltoall(topology, topo, check)
    from collcert.reference.forestcoll import optimum
    from collcert.reference.model import ScheduleError, TopologyError

    try:
        opt = optimum(topology, collective, root=root, weights=weights)
    except (TopologyError, ScheduleError) as exc:
        if collective == "allreduce":  # any directed graph: LP (5) and the cut-set bound
            why = (topology.forestcoll_problem or str(exc)).split(". ")[0]
            return allreduce_optimum(topology, topo, check, OptimumInfo(
                notes=[f"no RS+AG figures (they need an Eulerian topology): {why}"]))
        return OptimumInfo(notes=[f"no optimum: {exc}"])
    cert = opt.certificate()
    info = OptimumInfo(opt.algbw, opt.extra.get("lower_bound_time_per_unit"))
    if check:
        info.verdict = check_optimum(topo, cert)
        if not info.verdict.ok:
            return OptimumInfo.refused("the optimum's certificate", info.verdict)
        info.algbw = info.verdict.facts["algbw"]
        info.lower = info.verdict.facts.get("lower_bound_time_per_unit")
    if topology.multicast_switches:
        return info  # the optimum assumes no in-network multicast: no bound
    if collective == "allreduce":
        if info.lower:
            info.bound = 1 / info.lower
            info.witness = (f"ForestColl's allreduce lower bounds (the cuts of the optimum "
                            f"certificate: bound6_cut, bound7_cuts) prove time ≥ "
                            f"{fraction_str(info.lower)} per unit of data")
        info = allreduce_optimum(topology, topo, check, info)
    else:
        info.bound = info.algbw
        info.witness = cut_witness(topo, collective, cert)
    return info


def cut_witness(topo: Topo, collective: str, cert: Mapping[str, Any]) -> str:
    """The optimum certificate's cut, and the time it forces, in words."""
    raw = cert.get("cut")
    if not isinstance(raw, list):
        return "the optimum certificate"
    cut = {topo.lookup.get(v, v) for v in raw}
    inside = [v for v in topo.compute if v in cut]
    names = ", ".join(str(v) for v in inside[:6]) + (", …" if len(inside) > 6 else "")
    rs = collective == "reduce-scatter"  # its cut is on the transpose: ingress in G
    cross = sum((c for (u, v), c in topo.cap.items() if (v in cut) != (u in cut)
                 and ((v in cut) if rs else (u in cut))), Fraction(0))
    way = "ingress B⁻(S)" if rs else "egress B⁺(S)"
    if collective in ("allgather", "reduce-scatter") and "weights" not in cert:
        n, a = len(topo.compute), len(inside)
        what = ("their shards must leave S" if not rs else
                "the shards they hold must be reduced from data entering S")
        return (f"the cut S with compute nodes {{{names}}} ({a} of {n}) has {way} = "
                f"{fraction_str(cross)}: {what}, so time ≥ {a}/({n}·{fraction_str(cross)}) "
                f"= {fraction_str(Fraction(a, n) / cross)} per unit of data")
    if collective in ("broadcast", "reduce"):
        return (f"the cut S with compute nodes {{{names}}} has {way} = {fraction_str(cross)}: "
                f"all the data must cross it, so time ≥ {fraction_str(1 / cross)} per unit")
    return f"the optimum certificate's cut S with compute nodes {{{names}}}"


def _alltoall(topology: Topology, topo: Topo, check: bool) -> OptimumInfo:
    """Alltoall: the maximum concurrent flow (``collcert.reference.alltoall.full_lp``)."""
    try:
        from collcert.certify.alltoall import check_alltoall_optimum
        from collcert.reference.alltoall import alltoall_optimum
    except ImportError as exc:  # the exact LP layer is optional at this stage
        return OptimumInfo(notes=[f"no alltoall optimum: {exc}"])
    opt = alltoall_optimum(topology)
    cert = opt.certificate()
    info = OptimumInfo(opt.algbw)
    if check:
        info.verdict = check_alltoall_optimum(topo, cert)
        if not info.verdict.ok:
            return OptimumInfo.refused("the alltoall certificate", info.verdict)
        info.algbw = info.verdict.facts["algbw"]
    if not topology.multicast_switches:
        info.bound = info.algbw
        info.witness = opt.witness()
    return info
