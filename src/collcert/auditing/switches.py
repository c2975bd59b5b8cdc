"""MSCCL++ plans with switch (NVLS) channels in an audit: their traffic on the links to
and from the switch, the switch's reduction rate, and the optimum they are measured
against (docs/mscclpp.md, "Switch channels").

The simulator (:mod:`collcert.certify.execution.mscclpp_switch`) records what every
``multimem`` op moves per rank group; :mod:`collcert.certify.execution.mscclpp_switch_links`
finds the switch of each group and checks it can add or copy. Here the cells become
exact shares of M on GPU↔switch links, timed with the plan's other traffic; a switch
with a ``reduction_rate`` also takes (cells it adds)/rate. (An allreduce on a topology
whose switches add is measured against the in-network optimum: :mod:`.allreduce`.)
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from collcert.certify.execution import mscclpp_switch_links
from collcert.certify.model import Topo, Verdict
from collcert.certify.model import frac_str as fraction_str

if TYPE_CHECKING:
    from collcert.reference.model import Topology


def switch_traffic(topo: Topo, nodes: list[Any], verdict: Verdict,
                   demands: dict[tuple[Any, Any], Fraction], cells: int,
                   notes: list[str]) -> dict[Any, Fraction]:
    """Add the plan's switch traffic (``verdict.facts["switch"]``, taken out of the facts)
    to ``demands`` as loads of GPU↔switch links in shares of M (``cells`` cells); return
    the share of M each switch adds."""
    facts = verdict.facts.pop("switch", None)
    if not facts or not verdict.ok:
        return {}
    links, added, more = mscclpp_switch_links.switch_links(facts, topo, nodes, verdict)
    notes += more
    for e, n in links.items():
        demands[e] = demands.get(e, Fraction(0)) + Fraction(n, cells)
    return {w: Fraction(n, cells) for w, n in added.items()}


def reduction_time(topology: Topology, added: dict[Any, Fraction], verdict: Verdict,
                   notes: list[str], lower: Fraction | None, bottleneck: str,
                   ) -> tuple[Fraction | None, str]:
    """A switch with a reduction rate ρ outputs at most ρ of sums per unit of time: the
    time is at least (its sums)/ρ. Returns the proven time and the bottleneck."""
    time = verdict.facts.get("time_per_unit")
    for w, share in sorted(added.items(), key=lambda x: str(x[0])):
        rate = topology.reduction_rates.get(w)
        if rate is None or not isinstance(time, Fraction):
            continue
        need = share / rate
        if need > time:
            notes.append(f"switch {w}: it adds {fraction_str(share)} of M at its reduction "
                         f"rate {fraction_str(rate)}: time per unit {fraction_str(need)}, more "
                         "than its links take")
            verdict.facts["time_per_unit"] = time = need
            bottleneck = f"switch {w}'s reduction rate ({fraction_str(rate)})"
            lower = need if lower is None else max(lower, need)
    return lower, bottleneck
