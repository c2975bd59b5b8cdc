"""Checker of weighted RS+AG: reduce-scatter, then allgather, with the best unequal shards.

Zhao et al. 2026, §5.7 (non-uniform allgather) and Zhao & Krishnamurthy 2023, eq. (1),
App. B. With shards f (f ≥ 0, Σ f = 1), over node sets S that split the compute
nodes (S ∩ V_c ∉ {∅, V_c}), the phases take per unit of data

    T_AG(f) = max_S f(S ∩ V_c) / B⁺(S),    T_RS(f) = max_S f(V_c − S) / B⁺(S).

Certificate ``allreduce-rsag-weighted`` (every figure checked here, from the
topology alone; flows in units of 1/multiplier):

* ``shards`` f and the phase times ``ag_time``, ``rs_time`` (> 0), with
  ``time_per_unit`` = their sum and ``rate`` = 1 / time_per_unit.
* T_AG(f) ≤ ag_time: with w = f / ag_time, for every compute sink t a flow on
  the links in which every other compute node u puts in between 0 and w_u,
  switches conserve, and t receives at least Σ w − w_t. For any S ∌ t the net
  flow out of S is what S puts in, so w(S ∩ V_c) ≤ B⁺(S) (weak duality).
* T_RS(f) ≤ rs_time: with w = f / rs_time, for every compute source t a flow
  that every other compute node u takes out between 0 and w_u, and t sends at
  least Σ w − w_t: for any S ∋ t, w(V_c − S) ≤ B⁺(S).
* ``ag_cut``, ``rs_cut``: a splitting S with f(S ∩ V_c) = ag_time·B⁺(S), and one
  with f(V_c − S) = rs_time·B⁺(S): the times are exact.
* ``dual``: splitting cuts S_i with y_i ≥ 0 and Σ_{i: v ∈ S_i} y_i ≥ 1 for every
  compute node v. Then for *any* shards f: T_AG(f) ≥ Σ y_i f(S_i) / Σ y_i B⁺(S_i)
  ≥ 1 / Σ y_i B⁺(S_i), and (S = V − S_i) T_RS(f) ≥ 1 / Σ y_i B⁺(V − S_i). Their
  sum must equal time_per_unit: no shards do better.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Node, Verdict, frac_str, integer, number
from .rate import Graph, arc_net

KIND = "allreduce-rsag-weighted"


def check_rsag_weighted(topology: Mapping[str, Any] | Graph,
                        cert: Mapping[str, Any]) -> Verdict:
    """Weighted RS+AG: its shards, their time, and that no shards do better.

    ``facts``: ``rsag_weighted`` (the rate), ``shards`` ({node: f}) when ``ok``.
    """
    g = topology if isinstance(topology, Graph) else Graph(topology)
    v = Verdict("weighted RS+AG")
    if cert.get("kind") != KIND:
        raise InputError(f"not a weighted RS+AG certificate (kind must be {KIND!r})")
    f = _shards(g, cert.get("shards"), v)
    ag = number(cert.get("ag_time"), "ag_time")
    rs = number(cert.get("rs_time"), "rs_time")
    total = number(cert.get("time_per_unit"), "time_per_unit")
    rate = number(cert.get("rate"), "rate")
    if ag <= 0 or rs <= 0:
        v.fail("the phase times must be positive")
        return v
    if total != ag + rs or rate * total != 1:
        v.fail(f"time_per_unit {frac_str(total)} and rate {frac_str(rate)} do not match the "
               f"phases {frac_str(ag)} + {frac_str(rs)}")
    m = integer(cert.get("multiplier", 1), "multiplier", 1)
    _flows(g, cert.get("ag_flows"), {u: x / ag for u, x in f.items()}, m, False, v)
    _flows(g, cert.get("rs_flows"), {u: x / rs for u, x in f.items()}, m, True, v)
    for key, phase, reverse in (("ag_cut", ag, False), ("rs_cut", rs, True)):
        s = _cut(g, cert.get(key), key)
        if s is None:
            v.fail(f"{key} does not split the compute nodes")
            continue
        owned = sum((x for u, x in f.items() if (u in s) != reverse), Fraction(0))
        if owned != phase * g.out_capacity(s):
            v.fail(f"{key}: its shards {frac_str(owned)} are not {frac_str(phase)} · B⁺(S) = "
                   f"{frac_str(phase * g.out_capacity(s))}: the phase time is not reached")
    lower = _dual_bound(g, cert.get("dual"), v)
    if lower is not None and lower != total:
        v.fail(f"the dual proves a time of at least {frac_str(lower)} for any shards, not "
               f"{frac_str(total)}")
    if v.ok:
        v.facts["rsag_weighted"] = rate
        v.facts["shards"] = f
    return v


def _shards(g: Graph, raw: object, v: Verdict) -> dict[Node, Fraction]:
    if not isinstance(raw, list):
        raise InputError("'shards' must be an array of [node, share]")
    f: dict[Node, Fraction] = {}
    for i, item in enumerate(raw):
        if not isinstance(item, list) or len(item) != 2:
            raise InputError(f"shards[{i}] must be [node, share]")
        u = g.node(item[0], f"shards[{i}]")
        if u not in g.compute or u in f:
            raise InputError(f"shards[{i}]: {u!r} is not a compute node, or listed twice")
        f[u] = number(item[1], f"shards[{i}] share")
        if f[u] < 0:
            v.fail(f"the shard of {u!r} is negative")
    if len(f) != len(g.compute):
        raise InputError("'shards' must give every compute node its share")
    if sum(f.values(), Fraction(0)) != 1:
        v.fail(f"the shards add up to {frac_str(sum(f.values(), Fraction(0)))}, not 1")
    return f


def _cut(g: Graph, raw: object, where: str) -> set[Node] | None:
    """A node set that splits the compute nodes, or None."""
    if not isinstance(raw, list):
        raise InputError(f"{where} must be an array of nodes")
    s = {g.node(x, where) for x in raw}
    inside = sum(1 for c in g.compute if c in s)
    return s if 0 < inside < len(g.compute) else None


def _flows(g: Graph, raw: object, w: dict[Node, Fraction], m: int, reverse: bool,
           v: Verdict) -> None:
    """One flow per compute node (module docstring); failures go to ``v``."""
    key, end = ("rs_flows", "source") if reverse else ("ag_flows", "sink")
    if not isinstance(raw, list):
        raise InputError(f"'{key}' must be an array of flows")
    need = sum(w.values(), Fraction(0))
    done: set[Node] = set()
    for i, rec in enumerate(raw):
        if not isinstance(rec, Mapping):
            raise InputError(f"{key}[{i}] is not an object")
        t = g.node(rec.get(end), f"{key}[{i}] {end}")
        net = _net(g, rec.get("flow"), m, f"{key}[{i}]", v)
        if net is None:
            continue
        sign = -1 if reverse else 1  # what u puts in (AG) or takes out (RS)
        ok = True
        for u in g.nodes:
            if u == t:
                continue
            put = sign * net[u]
            limit = w.get(u, Fraction(0)) * m
            if put < 0 or put > limit:
                ok = False
                v.fail(f"{key}[{i}] ({end} {t!r}): {u!r} puts {frac_str(Fraction(put, m))} "
                       f"in or out, outside [0, {frac_str(limit / m)}]")
                break
        if ok and -sign * net[t] < (need - w.get(t, Fraction(0))) * m:
            v.fail(f"{key}[{i}]: {t!r} moves {frac_str(Fraction(-sign * net[t], m))}, less "
                   f"than Σw − w_t = {frac_str(need - w.get(t, Fraction(0)))}")
        elif ok:
            done.add(t)
    for t in [c for c in g.compute if c not in done][:3]:
        v.fail(f"{key}: no valid flow for compute node {t!r}: the phase time is not proven")


def _net(g: Graph, arcs: object, m: int, label: str, v: Verdict) -> dict[Node, int] | None:
    """Net outflow (units of 1/m) of every node, if ``arcs`` respects the capacities."""
    net, ok = arc_net(g, arcs, m, v, label)
    return net if ok else None


def _dual_bound(g: Graph, raw: object, v: Verdict) -> Fraction | None:
    """The least time of any shards that the dual cuts prove, or None (failures in ``v``)."""
    if not isinstance(raw, list) or not raw:
        raise InputError("'dual' must be a non-empty array of {cut, y}")
    cover = {c: Fraction(0) for c in g.compute}
    b_in = Fraction(0)
    b_out = Fraction(0)
    everything = set(g.nodes)
    for i, rec in enumerate(raw):
        if not isinstance(rec, Mapping):
            raise InputError(f"dual[{i}] is not an object")
        s = _cut(g, rec.get("cut"), f"dual[{i}] cut")
        y = number(rec.get("y"), f"dual[{i}] y")
        if s is None or y < 0:
            v.fail(f"dual[{i}]: the cut must split the compute nodes and y must be ≥ 0")
            return None
        for c in g.compute:
            if c in s:
                cover[c] += y
        b_in += y * g.out_capacity(s)
        b_out += y * g.out_capacity(everything - s)
    short = [c for c, x in cover.items() if x < 1]
    if short:
        v.fail(f"the dual covers compute node {short[0]!r} only {frac_str(cover[short[0]])} "
               "times (each needs ≥ 1)")
        return None
    if b_in <= 0 or b_out <= 0:
        v.fail("the dual's cuts have no capacity: it bounds nothing")
        return None
    return 1 / b_in + 1 / b_out
