"""Routing MSCCL traffic on a topology: the exact time of a traffic matrix.

MSCCL programs name ranks, not paths. Transfers between directly linked ranks
use that link; the rest is routed by a minimum-congestion multicommodity flow,
solved exactly by column generation over paths with the exact LP layer: the
routing found gives the time, link lengths (the LP's exact duals, or the
links the routing saturates) the matching lower bound, and
``collcert.certify.solvers.routing`` checks both. Column generation solves LPs of one
row per demand and link (the node-arc LP, one commodity per source, has
sources × nodes rows: 35 000 on dgx_a100:16, 40 s for the float solver
alone); it stops as soon as the lower bound meets the time. Should it not
converge within :data:`MAX_ROUNDS` rounds, the node-arc LP decides.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple

from collcert.certify.model import Verdict
from collcert.certify.model import frac_str as fraction_str
from collcert.certify.solvers import check_lp, check_routing

if TYPE_CHECKING:
    from collcert.reference.model import Topology


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
    solved exactly: the optimal routing achieves T, and link lengths prove that
    no routing does better; :func:`collcert.certify.solvers.routing.check_routing` checks
    both (:func:`collcert.certify.solvers.lp.check_lp` when the node-arc LP decides).
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
    return _by_paths(topology, fixed, rest) or _min_congestion(topology, fixed, rest)


MAX_ROUNDS = 400
HOW = ("min-congestion multicommodity flow, certified optimal exactly ({}): the time is the "
       "best any routing could give")


def _by_paths(
    topology: Topology, fixed: Mapping[tuple[Any, Any], Fraction],
    rest: Mapping[tuple[Any, Any], Fraction],
) -> Routing | None:
    """Column generation for the LP of :func:`_min_congestion` over paths, from shortest
    paths (in hops): the master LP ``min T`` s.t. the paths of each demand carry it and
    ``fixed_e + Σ_paths through e ≤ c_e·T`` is solved exactly; a demand whose shortest path
    under the exact duals of the link rows is shorter than its own dual gets that path
    (Dantzig-Wolfe pricing). After each solve the length bound of
    :func:`collcert.certify.solvers.routing.check_routing` is tried with the duals and with the
    saturated links; the first that meets T ends it. None after MAX_ROUNDS rounds."""
    from collcert.reference.model import ScheduleError
    from collcert.reference.solvers import LinearProgram, solve_lp

    cap = topology.capacity
    out: dict[Any, list[tuple[Any, Any]]] = {}
    for e in cap:
        out.setdefault(e[0], []).append(e)
    sources: dict[Any, list[Any]] = {}
    for s, t in rest:
        sources.setdefault(s, []).append(t)
    paths: dict[tuple[Any, Any], list[tuple[Any, ...]]] = {}
    hops = {e: 1 for e in cap}
    for s, ts in sources.items():
        prev = _shortest(s, out, hops)[1]
        for t in ts:
            if t not in prev and t != s:
                raise ScheduleError(f"no path leads from {s} to {t} in the topology")
            paths[(s, t)] = [_path(prev, s, t)]
    for _ in range(MAX_ROUNDS):
        lp = LinearProgram("min")
        lp.add_variable("T", 1)
        through: dict[tuple[Any, Any], dict[Any, object]] = {e: {"T": cap[e]} for e in cap}
        for k, ps in paths.items():
            lp.add_row(("d", k), {(k, i): 1 for i in range(len(ps))}, "=", rest[k])
            for i, p in enumerate(ps):
                for e in zip(p, p[1:]):
                    through[e][(k, i)] = -1
        for e in cap:
            lp.add_row(("c", e), through[e], ">=", fixed.get(e, Fraction(0)))
        res = solve_lp(lp)
        flows = {k: [(p, res.x[(k, i)]) for i, p in enumerate(ps) if res.x[(k, i)]]
                 for k, ps in paths.items()}
        load = dict(fixed)
        for fl in flows.values():
            for p, x in fl:
                for e in zip(p, p[1:]):
                    load[e] = load.get(e, Fraction(0)) + x
        duals = {e: res.y[("c", e)] for e in cap}
        saturated = {e: Fraction(load.get(e, 0) == res.objective * cap[e]) for e in cap}
        for lengths, what in ((saturated, "the saturated links"), (duals, "the LP duals")):
            if not any(lengths.values()):
                continue
            verdict = check_routing(cap, rest, fixed, flows, lengths)
            if not verdict.ok:  # the exact layer computed it; the checker must agree
                raise RuntimeError("internal: the routing certificate did not check: "
                                   + "; ".join(verdict.all_reasons()[:3]))
            if verdict.facts["lower"] == verdict.facts["time_per_unit"] == res.objective:
                how = HOW.format(f"paths by column generation, lower bound from {what}")
                if fixed:
                    how = "direct links where ranks are linked; otherwise " + how
                return Routing(res.objective, verdict.facts["lower"], how, verdict,
                               busiest(topology, load))
        denominator = math.lcm(*(y.denominator for y in duals.values()))
        whole = {e: int(y * denominator) for e, y in duals.items()}
        added = 0
        for s, ts in sources.items():
            dist, prev = _shortest(s, out, whole)
            for t in ts:
                if Fraction(dist[t], denominator) < res.y[("d", (s, t))]:
                    paths[(s, t)].append(_path(prev, s, t))
                    added += 1
        if not added:  # cannot happen: then the duals' bound meets T (LP duality)
            raise RuntimeError("internal: column generation stalled below its bound")
    return None


def _shortest(s: Any, out: Mapping[Any, list[tuple[Any, Any]]], length: Mapping[Any, int],
              ) -> tuple[dict[Any, int], dict[Any, Any]]:
    """Dijkstra from s with integer lengths: distances and each node's predecessor."""
    dist, prev = {s: 0}, {}
    heap = [(0, 0, s)]
    pushed = 0
    while heap:
        d, _, u = heapq.heappop(heap)
        if d > dist[u]:
            continue
        for e in out.get(u, ()):
            w = d + length[e]
            if e[1] not in dist or w < dist[e[1]]:
                dist[e[1]], prev[e[1]] = w, u
                pushed += 1
                heapq.heappush(heap, (w, pushed, e[1]))
    return dist, prev


def _path(prev: Mapping[Any, Any], s: Any, t: Any) -> tuple[Any, ...]:
    p = [t]
    while p[-1] != s:
        p.append(prev[p[-1]])
    return tuple(reversed(p))


def _min_congestion(
    topology: Topology, fixed: Mapping[tuple[Any, Any], Fraction],
    rest: Mapping[tuple[Any, Any], Fraction],
) -> Routing:
    """min T s.t. one commodity per source, Σ_s f_se + fixed_e ≤ c_e·T (see :func:`route`).

    Solved by the exact LP layer (a float simplex basis, proven in rationals:
    :func:`collcert.reference.solvers.lp.solve_lp`); its certificate is checked by
    :func:`collcert.certify.solvers.lp.check_lp` before the time is used.
    """
    from collcert.reference.solvers import LinearProgram, solve_lp

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
