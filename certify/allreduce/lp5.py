"""Checker 8: ForestColl's allreduce LP (Zhao et al. 2026, App. G, LP (5)).

The certificate carries only a value, a primal and a dual, keyed by the
names of docs/allreduce.md (JSON arrays such as ``["x", v]``). The LP itself
is rebuilt here from the topology, so a certificate cannot smuggle in a
different LP: then :func:`~collcert.certify.solvers.check_lp` proves by weak duality that the
primal is feasible and optimal and that its objective, the claimed value,
is the optimum of LP (5).

The LP (docs/allreduce.md): variables x_v ≥ 0 per compute node, c^RE, c^BC
per logical arc; per sink t a broadcast flow from s (arcs s→v ≤ x_v, logical
arcs ≤ c^BC) with Σ_in ≥ Σ_out at other nodes and Σ_in − Σ_out ≥ Σ x at t;
per source t a reduce flow to s (logical arcs ≤ c^RE, arcs v→s ≤ x_v), the
same way round. Without switches the logical arcs are the links, and
c^RE + c^BC ≤ b per link. With switches, every pair α→β joined through
switches only is a logical arc with capacity b'_{αβ} ≥ c^RE + c^BC, and one
flow per source α over the links out of α or a switch, into a switch or a
compute node other than α, conserved at switches and delivering b'_{αβ} at
β, all sources together within each link.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Verdict, frac_str, number
from ..solvers import check_lp
from .lp5_cuts import check_cut_lp
from .rate import Graph

Node = str | int


def _n(*parts: object) -> str:
    return json.dumps(list(parts), separators=(",", ":"))


def lp5(g: Graph) -> dict[str, Any]:
    """LP (5) of ``g`` as check_lp data."""
    arcs = _logical_arcs(g)
    rows = _capacity_rows(g, arcs)
    for t in g.compute:  # broadcast: s -> t
        rows += _broadcast_rows(g, arcs, t)
    for t in g.compute:  # reduce: t -> s
        rows += _reduce_rows(g, arcs, t)
    return {"sense": "max", "objective": {_n("x", v): 1 for v in g.compute}, "rows": rows,
            "free": []}


Row = dict[str, Any]


def _row(name: str, coefs: dict[str, int], sense: str, rhs: Fraction | int = 0) -> Row:
    return {"name": name, "coefs": coefs, "sense": sense, "rhs": rhs}


def _logical_arcs(g: Graph) -> list[tuple[Node, Node]]:
    """The links; with switches, every pair α→β of compute nodes joined through switches."""
    if not g.switches:
        return list(g.cap)
    is_switch = set(g.switches)
    arcs = []
    for a in g.compute:
        reached: set[Node] = set()
        frontier = [a]
        visited = {a}
        while frontier:
            u = frontier.pop()
            for (p, q) in g.cap:
                if p == u and q not in visited:
                    visited.add(q)
                    if q in is_switch:
                        frontier.append(q)
                    else:
                        reached.add(q)
        arcs += [(a, b) for b in g.compute if b in reached]
    return arcs


def _capacity_rows(g: Graph, arcs: list[tuple[Node, Node]]) -> list[Row]:
    """c^RE + c^BC within each link; with switches, within each logical arc's b', and the
    b' carried by one flow per source α over switches, all within each link."""
    if not g.switches:
        return [_row(_n("link", u, v), {_n("cre", u, v): 1, _n("cbc", u, v): 1}, "<=", c)
                for (u, v), c in g.cap.items()]
    is_switch = set(g.switches)
    rows = [_row(_n("logical", u, v),
                 {_n("cre", u, v): 1, _n("cbc", u, v): 1, _n("b", u, v): -1}, "<=")
            for u, v in arcs]
    on_link: dict[tuple[Node, Node], dict[str, int]] = {e: {} for e in g.cap}
    for a in g.compute:
        net: dict[Node, dict[str, int]] = {v: {} for v in g.nodes}
        for (u, v) in g.cap:
            if v == a or (u != a and u not in is_switch):
                continue
            var = _n("g", a, u, v)
            on_link[(u, v)][var] = 1
            net[v][var] = 1
            if u in is_switch:
                net[u][var] = -1
        for w in g.switches:
            rows.append(_row(_n("conserve", a, w), net[w], "="))
        for b in g.compute:
            if b != a and (a, b) in arcs:
                rows.append(_row(_n("deliver", a, b), {**net[b], _n("b", a, b): -1}, "="))
    for e, c in g.cap.items():
        rows.append(_row(_n("link", *e), on_link[e], "<=", c))
    return rows


def _arc_flow(g: Graph, arcs: list[tuple[Node, Node]], kind: str, t: Node,
              cap: str) -> tuple[list[Row], dict[Node, dict[str, int]]]:
    """The flow ``kind`` of ``t`` on the logical arcs, each within the variable ``cap`` of
    its arc: its rows and, per node, the flow's coefficients (+1 in, −1 out)."""
    rows = []
    node: dict[Node, dict[str, int]] = {v: {} for v in g.compute}
    for u, v in arcs:
        f = _n(kind, t, u, v)
        rows.append(_row(_n(kind + "cap", t, u, v), {f: 1, _n(cap, u, v): -1}, "<="))
        node[v][f] = 1
        node[u][f] = -1
    return rows, node


def _broadcast_rows(g: Graph, arcs: list[tuple[Node, Node]], t: Node) -> list[Row]:
    """The broadcast flow from s to t: arcs s→v ≤ x_v, logical arcs ≤ c^BC, Σ_in ≥ Σ_out at
    the other nodes and Σ_in − Σ_out ≥ Σ x at t."""
    rows, node = _arc_flow(g, arcs, "fb", t, "cbc")
    for v in g.compute:
        f = _n("fb", t, None, v)
        node[v][f] = 1
        rows.append(_row(_n("fbx", t, v), {f: 1, _n("x", v): -1}, "<="))
    minus_x = {_n("x", v): -1 for v in g.compute}
    for v in g.compute:
        if v == t:
            rows.append(_row(_n("fbsink", t), {**node[v], **minus_x}, ">="))
        else:
            rows.append(_row(_n("fbnode", t, v), node[v], ">="))
    return rows


def _reduce_rows(g: Graph, arcs: list[tuple[Node, Node]], t: Node) -> list[Row]:
    """The reduce flow from t to s, the mirror: logical arcs ≤ c^RE, arcs v→s ≤ x_v."""
    rows, node = _arc_flow(g, arcs, "fr", t, "cre")
    into_s: dict[str, int] = {}
    for v in g.compute:
        f = _n("fr", t, v, None)
        node[v][f] = -1
        into_s[f] = 1
        rows.append(_row(_n("frx", t, v), {f: 1, _n("x", v): -1}, "<="))
    for v in g.compute:
        if v != t:
            rows.append(_row(_n("frnode", t, v), node[v], ">="))
    rows.append(_row(_n("frsink", t), {**into_s, **{_n("x", v): -1 for v in g.compute}}, ">="))
    return rows


def check_forestcoll_lp(topology: Mapping[str, Any] | Graph, cert: Mapping[str, Any],
                        ) -> Verdict:
    """LP (5) optimum: primal and dual checked against the LP rebuilt from the topology.

    ``facts``: ``forestcoll_lp`` (when ``ok``). A certificate with ``"method": "cuts"``
    (the cut form that scales) goes to :func:`.lp5_cuts.check_cut_lp`.
    """
    if cert.get("method") == "cuts":  # the cut form, at scale (:mod:`.lp5_cuts`)
        return check_cut_lp(topology, cert)
    g = topology if isinstance(topology, Graph) else Graph(topology)
    v = Verdict("ForestColl allreduce LP (5)")
    primal, dual = cert.get("primal"), cert.get("dual")
    if not isinstance(primal, Mapping) or not isinstance(dual, Mapping):
        raise InputError("the LP (5) certificate needs 'primal' and 'dual' objects")
    claimed = number(cert.get("value"), "LP (5) value")
    lv = check_lp(lp5(g), primal, dual)
    v.absorb(lv, "LP (5): ")
    got = lv.facts.get("primal_objective")
    if got is not None and got != claimed:
        v.fail(f"the certificate claims {frac_str(claimed)}, its primal achieves {frac_str(got)}")
    if v.ok:
        v.facts["forestcoll_lp"] = claimed
    return v
