"""Routing MSCCL traffic on a topology: the exact time of a traffic matrix.

MSCCL programs name ranks, not paths. Transfers between directly linked ranks
use that link; the rest is routed by a minimum-congestion multicommodity flow,
solved with OR-Tools GLOP in floating point and then certified exactly (an
exact feasible routing gives the time, an exact dual solution the matching
lower bound; ``collcert.certify.lp`` checks both).
"""

from __future__ import annotations

from collections.abc import Mapping
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
    congestion multicommodity flow: GLOP solves it in floats; an exact
    feasible routing is rebuilt from the float solution (its time is
    achievable) and an exact dual from the float duals (its value is a lower
    bound); :func:`collcert.certify.lp.check_lp` checks both.
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
    """min T s.t. one commodity per source, Σ_s f_se + fixed_e ≤ c_e·T (see :func:`route`)."""
    import heapq

    from ortools.linear_solver import pywraplp

    links = list(topology.capacity)
    nodes = list(topology.nodes)
    sources = sorted({p for p, _ in rest}, key=lambda v: topology.index[v])
    sinks = {s: {q: d for (p, q), d in rest.items() if p == s} for s in sources}
    outs: dict[Any, list[tuple[Any, Any]]] = {v: [] for v in nodes}
    ins: dict[Any, list[tuple[Any, Any]]] = {v: [] for v in nodes}
    for e in links:
        outs[e[0]].append(e)
        ins[e[1]].append(e)

    solver = pywraplp.Solver.CreateSolver("GLOP")
    if solver is None:  # pragma: no cover - GLOP ships with ortools
        raise RuntimeError("OR-Tools GLOP is not available")
    inf = solver.infinity()
    t_var = solver.NumVar(0, inf, "T")
    # one variable per (commodity, link): any node may forward (GPUs too, e.g. over
    # NVLink), so the time is the best any routing gives
    f = {(s, e): solver.NumVar(0, inf, f"f{i}_{j}") for i, s in enumerate(sources)
         for j, e in enumerate(links)}
    for s in sources:
        for v in nodes:
            b = sum(sinks[s].values()) if v == s else -sinks[s].get(v, Fraction(0))
            solver.Add(sum(f[(s, e)] for e in outs[v])
                       - sum(f[(s, e)] for e in ins[v]) == float(b))
    cap_rows = {}
    for e in links:
        c = topology.capacity[e]
        cap_rows[e] = solver.Add(float(c) * t_var - sum(f[(s, e)] for s in sources)
                                 >= float(fixed.get(e, Fraction(0))))
    solver.Minimize(t_var)
    status = solver.Solve()
    if status != pywraplp.Solver.OPTIMAL:
        raise RuntimeError(f"GLOP did not solve the routing LP (status {status})")

    # --- exact primal: decompose each commodity into paths, rationalise the shares
    flow_exact: dict[tuple[Any, Any], Fraction] = {}
    for s in sources:
        fl = {e: f[(s, e)].solution_value() for e in links}
        for q, d in sinks[s].items():
            paths: list[tuple[list[Any], float]] = []
            need = float(d)
            while need > 1e-12 * max(1.0, float(d)):
                path = _float_path(s, q, fl, outs)
                if path is None:
                    break
                amount = min(need, min(fl[e] for e in path))
                for e in path:
                    fl[e] -= amount
                paths.append((path, amount))
                need -= amount
            if not paths:
                path = _float_path(s, q, {e: 1.0 for e in links}, outs)
                assert path is not None
                paths = [(path, 1.0)]
            total = sum(a for _, a in paths)
            shares = [Fraction(a / total).limit_denominator(10**6) for _, a in paths]
            shares[-1] = 1 - sum(shares[:-1], Fraction(0))
            if shares[-1] < 0:
                shares = [Fraction(1, len(paths))] * len(paths)
            for (path, _), share in zip(paths, shares):
                for e in path:
                    flow_exact[(s, e)] = flow_exact.get((s, e), Fraction(0)) + share * d
    load = {e: fixed.get(e, Fraction(0)) for e in links}
    for (_, e), x in flow_exact.items():
        load[e] += x
    time = max(load[e] / topology.capacity[e] for e in links)

    # --- exact dual: lengths μ_e from the float duals, potentials by Dijkstra
    mu = {e: Fraction(abs(cap_rows[e].dual_value())).limit_denominator(10**6) for e in links}
    scale = sum(topology.capacity[e] * mu[e] for e in links)
    if scale == 0:
        mu = {e: Fraction(1) for e in links}
        scale = sum(topology.capacity.values(), Fraction(0))
    mu = {e: x / scale for e, x in mu.items()}
    pot: dict[Any, dict[Any, Fraction]] = {}
    for s in sources:
        dist: dict[Any, Fraction] = {s: Fraction(0)}
        heap: list[tuple[Fraction, int, Any]] = [(Fraction(0), topology.index[s], s)]
        while heap:
            d0, _, u = heapq.heappop(heap)
            if d0 > dist[u]:
                continue
            for e in outs[u]:
                nd = d0 + mu[e]
                if e[1] not in dist or nd < dist[e[1]]:
                    dist[e[1]] = nd
                    heapq.heappush(heap, (nd, topology.index[e[1]], e[1]))
        pot[s] = dist

    # --- the LP and both solutions, for the independent exact checker
    def name(x: Any) -> str:
        return str(topology.index[x])

    rows: list[dict[str, Any]] = []
    for s in sources:
        for v in nodes:
            b = sum(sinks[s].values()) if v == s else -sinks[s].get(v, Fraction(0))
            coefs: dict[str, Any] = {}
            for e in outs[v]:
                coefs[f"f{name(s)}:{name(e[0])}>{name(e[1])}"] = 1
            for e in ins[v]:
                coefs[f"f{name(s)}:{name(e[0])}>{name(e[1])}"] = -1
            rows.append({"name": f"cons{name(s)}:{name(v)}", "coefs": coefs, "sense": "=",
                         "rhs": b})
    for e in links:
        coefs = {f"f{name(s)}:{name(e[0])}>{name(e[1])}": -1 for s in sources}
        coefs["T"] = topology.capacity[e]
        rows.append({"name": f"cap{name(e[0])}>{name(e[1])}", "coefs": coefs, "sense": ">=",
                     "rhs": fixed.get(e, Fraction(0))})
    lp = {"objective": {"T": 1}, "rows": rows}
    primal: dict[str, Any] = {"T": time}
    for (s, e), x in flow_exact.items():
        primal[f"f{name(s)}:{name(e[0])}>{name(e[1])}"] = x
    dual: dict[str, Any] = {}
    for s in sources:
        far = max(pot[s].values())  # nodes not reached: as far as the farthest reached one
        for v in nodes:
            dual[f"cons{name(s)}:{name(v)}"] = -pot[s].get(v, far)
    for e in links:
        dual[f"cap{name(e[0])}>{name(e[1])}"] = mu[e]
    verdict = check_lp(lp, primal, dual)
    lower = verdict.facts.get("dual_objective")
    if verdict.ok:
        how = ("min-congestion multicommodity flow (OR-Tools GLOP), certified optimal "
               "exactly: the time is the best any routing could give")
    else:
        how = ("min-congestion multicommodity flow (OR-Tools GLOP), exact routing; "
               "optimality not certified exactly")
    if fixed:
        how = "direct links where ranks are linked; otherwise " + how
    verdict.check = "routing LP certificate"
    return Routing(time, lower, how, verdict, busiest(topology, load))


def _float_path(s: Any, t: Any, fl: Mapping[tuple[Any, Any], float],
                outs: Mapping[Any, list[tuple[Any, Any]]]) -> list[tuple[Any, Any]] | None:
    """A path s → t over links with positive float flow (BFS), or None."""
    from collections import deque

    prev: dict[Any, tuple[Any, Any]] = {}
    seen = {s}
    queue = deque([s])
    while queue:
        u = queue.popleft()
        if u == t:
            break
        for e in outs[u]:
            if fl[e] > 1e-12 and e[1] not in seen:
                seen.add(e[1])
                prev[e[1]] = e
                queue.append(e[1])
    if t not in seen:
        return None
    path = []
    v = t
    while v != s:
        e = prev[v]
        path.append(e)
        v = e[0]
    return path[::-1]
