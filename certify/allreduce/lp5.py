"""Checker 8: ForestColl's allreduce LP (Zhao et al. 2026, App. G, LP (5)).

The certificate carries only a value, a primal and a dual, keyed by the
names of docs/allreduce.md (JSON arrays such as ``["x", v]``). The LP itself
is rebuilt here from the topology, so a certificate cannot smuggle in a
different LP: then :func:`~.lp.check_lp` proves by weak duality that the
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
from .rate import Graph

Node = str | int


def _n(*parts: object) -> str:
    return json.dumps(list(parts), separators=(",", ":"))


def lp5(g: Graph) -> dict[str, Any]:
    """LP (5) of ``g`` as check_lp data."""
    comp = g.compute
    is_switch = set(g.switches)
    if is_switch:
        arcs = []
        for a in comp:
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
            arcs += [(a, b) for b in comp if b in reached]
    else:
        arcs = list(g.cap)
    rows: list[dict[str, Any]] = []

    def row(name: str, coefs: dict[str, int], sense: str, rhs: Fraction | int = 0) -> None:
        rows.append({"name": name, "coefs": coefs, "sense": sense, "rhs": rhs})

    if not is_switch:
        for (u, v), c in g.cap.items():
            row(_n("link", u, v), {_n("cre", u, v): 1, _n("cbc", u, v): 1}, "<=", c)
    else:
        for u, v in arcs:
            row(_n("logical", u, v), {_n("cre", u, v): 1, _n("cbc", u, v): 1, _n("b", u, v): -1},
                "<=")
        on_link: dict[tuple[Node, Node], dict[str, int]] = {e: {} for e in g.cap}
        for a in comp:
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
                row(_n("conserve", a, w), net[w], "=")
            for b in comp:
                if b != a and (a, b) in arcs:
                    row(_n("deliver", a, b), {**net[b], _n("b", a, b): -1}, "=")
        for e, c in g.cap.items():
            row(_n("link", *e), on_link[e], "<=", c)
    minus_x = {_n("x", v): -1 for v in comp}
    for t in comp:  # broadcast: s -> t
        node: dict[Node, dict[str, int]] = {v: {} for v in comp}
        for u, v in arcs:
            f = _n("fb", t, u, v)
            row(_n("fbcap", t, u, v), {f: 1, _n("cbc", u, v): -1}, "<=")
            node[v][f] = 1
            node[u][f] = -1
        for v in comp:
            f = _n("fb", t, None, v)
            node[v][f] = 1
            row(_n("fbx", t, v), {f: 1, _n("x", v): -1}, "<=")
        for v in comp:
            if v == t:
                row(_n("fbsink", t), {**node[v], **minus_x}, ">=")
            else:
                row(_n("fbnode", t, v), node[v], ">=")
    for t in comp:  # reduce: t -> s
        node = {v: {} for v in comp}
        into_s: dict[str, int] = {}
        for u, v in arcs:
            f = _n("fr", t, u, v)
            row(_n("frcap", t, u, v), {f: 1, _n("cre", u, v): -1}, "<=")
            node[v][f] = 1
            node[u][f] = -1
        for v in comp:
            f = _n("fr", t, v, None)
            node[v][f] = -1
            into_s[f] = 1
            row(_n("frx", t, v), {f: 1, _n("x", v): -1}, "<=")
        for v in comp:
            if v != t:
                row(_n("frnode", t, v), node[v], ">=")
        row(_n("frsink", t), {**into_s, **minus_x}, ">=")
    return {"sense": "max", "objective": {_n("x", v): 1 for v in comp}, "rows": rows,
            "free": []}


def check_forestcoll_lp(topology: Mapping[str, Any] | Graph, cert: Mapping[str, Any],
                        ) -> Verdict:
    """LP (5) optimum: primal and dual checked against the LP rebuilt from the topology.

    ``facts``: ``forestcoll_lp`` (when ``ok``).
    """
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
