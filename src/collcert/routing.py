"""Routing MSCCL traffic on a topology: the exact time of a traffic matrix.

MSCCL programs name ranks, not paths. Transfers between directly linked ranks
use that link; the rest is routed by a minimum-congestion multicommodity flow,
solved exactly by the LP layer (an exact optimal routing gives the time, the
exact dual the matching lower bound; ``collcert.certify.lp`` checks both).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple

from collcert.certify.base import Verdict
from collcert.certify.base import frac_str as fraction_str
from collcert.certify.lp import check_lp

if TYPE_CHECKING:
    from collcert.reference.topology import Topology


class Routing(NamedTuple):
    time: Fraction  # achieved by an exact routing, per unit of data
    lower: Fraction | None  # proven: no routing of this traffic is faster
    how: str  # the routing used, in words
    verdict: Verdict | None  # the LP certificate's check, when an LP was solved
    bottleneck: str  # the busiest link of the routing and its load


def busiest(topology: Topology, load: Mapping[tuple[Any, Any], Fraction]) -> str:
    """The link with the highest load / capacity, in words."""
    e = max(load, key=lambda e: (load[e] / topology.capacity[e], -topology.index[e[0]]))
    return (f"{e[0]} -> {e[1]} carries {fraction_str(load[e])} per unit of data at capacity "
            f"{fraction_str(topology.capacity[e])}")


def route(topology: Topology, demands: Mapping[tuple[Any, Any], Fraction]) -> Routing:
    """Exact time of ``demands`` (data per unit of M between compute nodes) on G.

    Directly linked pairs use their link. The rest is routed by a minimum-
    congestion multicommodity flow (min T with every link's load ≤ T·capacity),
    solved exactly: the optimal routing achieves T, and the exact dual proves
    that no routing does better; :func:`collcert.certify.lp.check_lp` checks both.
    """
    fixed: dict[tuple[Any, Any], Fraction] = {}
    rest: dict[tuple[Any, Any], Fraction] = {}
    for (p, q), d in demands.items():
        if (p, q) in topology.capacity:
            fixed[(p, q)] = fixed.get((p, q), Fraction(0)) + d
        else:
            rest[(p, q)] = d
    if not rest:
        time = max(d / topology.capacity[e] for e, d in fixed.items())
        return Routing(time, time, "direct links only (every transfer is between linked ranks)",
                       None, busiest(topology, fixed))
    return _min_congestion(topology, fixed, rest)


def _min_congestion(
    topology: Topology, fixed: Mapping[tuple[Any, Any], Fraction],
    rest: Mapping[tuple[Any, Any], Fraction],
) -> Routing:
    """min T s.t. one commodity per source, Σ_s f_se + fixed_e ≤ c_e·T (see :func:`route`).

    Solved by the exact LP layer (a float simplex basis, proven in rationals:
    :func:`collcert.reference.lp.solve_lp`); its certificate is checked by
    :func:`collcert.certify.lp.check_lp` before the time is used.
    """
    from collcert.reference.lp import LinearProgram, solve_lp

    idx = topology.index
    links = list(topology.capacity)
    sources = sorted({p for p, _ in rest}, key=lambda v: idx[v])
    sinks = {s: {q: d for (p, q), d in rest.items() if p == s} for s in sources}
    touching: dict[Any, list[tuple[tuple[Any, Any], int]]] = {v: [] for v in topology.nodes}
    for e in links:
        touching[e[0]].append((e, 1))
        touching[e[1]].append((e, -1))

    def var(s: Any, e: tuple[Any, Any]) -> str:
        return f"f{idx[s]}:{idx[e[0]]}>{idx[e[1]]}"

    lp = LinearProgram("min")
    lp.add_variable("T", 1)
    for s in sources:
        for v in topology.nodes:
            b = sum(sinks[s].values()) if v == s else -sinks[s].get(v, Fraction(0))
            lp.add_row(f"cons{idx[s]}:{idx[v]}", {var(s, e): a for e, a in touching[v]}, "=", b)
    for e in links:
        coefs: dict[Hashable, object] = {var(s, e): -1 for s in sources}
        coefs["T"] = topology.capacity[e]
        lp.add_row(f"cap{idx[e[0]]}>{idx[e[1]]}", coefs, ">=", fixed.get(e, Fraction(0)))
    res = solve_lp(lp)
    cert = res.certificate()
    verdict = check_lp(cert["lp"], cert["primal"], cert["dual"])
    verdict.check = "routing LP certificate"
    if not verdict.ok:  # the exact layer proved it; the checker must agree
        raise RuntimeError("internal: the routing LP certificate did not check: "
                           + "; ".join(verdict.all_reasons()[:3]))
    time = res.objective
    load = {e: fixed.get(e, Fraction(0)) + sum((res.x.get(var(s, e), Fraction(0))
                                                for s in sources), Fraction(0)) for e in links}
    how = ("min-congestion multicommodity flow, certified optimal exactly (GLOP basis, exact "
           "proof): the time is the best any routing could give")
    if fixed:
        how = "direct links where ranks are linked; otherwise " + how
    return Routing(time, verdict.facts.get("dual_objective"), how, verdict,
                   busiest(topology, load))
