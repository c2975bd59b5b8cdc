"""Checker 8b: ForestColl's allreduce LP (5) in its cut form (Zhao et al. 2026, App. G).

The LP, rebuilt here from the topology (docs/allreduce.md, "LP (5) at
scale"): x_v per compute node, c^RE_e and c^BC_e per link, c^RE + c^BC ≤ b
per link, c^BC and c^RE each balanced at every switch, and for every node
set A that misses a compute node c^BC(δ⁺A) ≥ x(A ∩ V_c) and
c^RE(δ⁻A) ≥ x(A ∩ V_c). It has the value of App. G's LP (5).

The certificate (``"method": "cuts"``) lists generators of a group H of
automorphisms, verified here link by link; the orbits are computed here.

* **Primal** (value ≥): x per class (an orbit of compute nodes, or one class of
  all of them for ``"shares": "uniform"``) and c^RE, c^BC per link orbit, so the
  solution is fixed by H. The link and switch rows are checked on every link
  and switch; every cut row through *flows*: for each orbit of compute nodes a
  broadcast flow from s to one sink r in it (arcs s→v ≤ x_v, links ≤ c^BC) and a
  reduce flow from r to s (links ≤ c^RE, v→s ≤ x_v), each of value ≥ Σx with
  inflow ≥ outflow at every other node. A flow into r proves the cut rows of
  every A ∌ r; for a sink h(r), h ∈ H, the rows of A are those of h⁻¹A ∌ r,
  since x and c are constant on orbits.
* **Dual** (value ≤): cuts A with multipliers μ_A ≥ 0 (each A must miss a
  compute node) and a multiplier π per switch orbit and side. With
  cover_K = Σ_A μ_A |A ∩ K| ≥ |K| for every class K, and
  Y_P = max(0, Σ_A μ_A |δ^±A ∩ P| − Σ_W π_W (in_w(P) − out_w(P))) per link
  orbit P and side, every feasible solution has Σx ≤ Σ_P b_P Y_P: spread each μ_A
  evenly over the images h(A) (h ∈ H) and each π_W over the switches of W; that
  is a dual solution of the LP of all cuts of the same value (docs/allreduce.md).

Both values must equal the claimed one.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Topo, Verdict, frac_str, number
from ..symmetry import automorphisms
from .rate import Graph

Node = str | int
Link = tuple[Node, Node]


class _Orbits:
    """Node orbits, link orbits and x classes under the verified generators."""

    def __init__(self, g: Graph, raw: object, uniform: bool, v: Verdict) -> None:
        self.node: dict[Node, Node] = {u: u for u in g.nodes}
        self.link: dict[Link, Link] = {e: e for e in g.cap}
        if raw not in (None, []):
            if not g.cap:
                raise InputError("the certificate lists automorphisms of a topology without links")
            topo = Topo({"compute_nodes": g.compute, "switch_nodes": g.switches,
                         "links": [[a, b, frac_str(c)] for (a, b), c in g.cap.items()]})
            perms = automorphisms.read(topo, raw)
            for i, sigma in enumerate(perms):
                v.absorb(automorphisms.verify(topo, sigma, None, f"automorphism {i}"))
            if not v.ok:
                return
            self.node = automorphisms.orbits(topo, perms)
            self.link = automorphisms.link_orbits(topo, perms)
        first = g.compute[0]
        self.cls = {u: (first if uniform else self.node[u]) for u in g.compute}
        self.size: dict[Node, int] = {}
        for u in g.compute:
            self.size[self.cls[u]] = self.size.get(self.cls[u], 0) + 1
        self.link_size: dict[Link, int] = {}
        for e in g.cap:
            self.link_size[self.link[e]] = self.link_size.get(self.link[e], 0) + 1


def _nonneg(raw: object, what: str) -> Fraction:
    q = number(raw, what)
    if q < 0:
        raise InputError(f"{what} is negative")
    return q


def _entries(cert: Mapping[str, Any], key: str) -> list[Any]:
    raw = cert.get(key, [])
    if not isinstance(raw, list):
        raise InputError(f"the certificate's {key!r} must be an array")
    return raw


def _primal(g: Graph, orb: _Orbits, cert: Mapping[str, Any], v: Verdict,
            ) -> tuple[dict[Node, Fraction], dict[str, dict[Link, Fraction]]]:
    """x per compute node and c per side and link, from values per orbit (one value per
    orbit; orbits not listed are 0)."""
    xk: dict[Node, Fraction] = {}
    for i, rec in enumerate(_entries(cert, "x")):
        if not isinstance(rec, list) or len(rec) != 2:
            raise InputError(f"x[{i}] is not a [node, value] pair")
        u = g.node(rec[0], f"x[{i}]")
        if u not in orb.cls:
            raise InputError(f"x[{i}] names {u!r}, a switch, where a compute node is required")
        val = _nonneg(rec[1], f"x[{i}] value")
        if xk.setdefault(orb.cls[u], val) != val:
            v.fail(f"x[{i}] gives {u!r} {frac_str(val)}, but its class has "
                   f"{frac_str(xk[orb.cls[u]])}: the primal is not fixed by the automorphisms")
    cp: dict[str, dict[Link, Fraction]] = {"re": {}, "bc": {}}
    for i, rec in enumerate(_entries(cert, "c")):
        if not isinstance(rec, list) or len(rec) != 4:
            raise InputError(f"c[{i}] is not a [src, dst, c_re, c_bc] entry")
        e = (g.node(rec[0], f"c[{i}] src"), g.node(rec[1], f"c[{i}] dst"))
        if e not in g.cap:
            raise InputError(f"c[{i}]: {e[0]!r} -> {e[1]!r} is not a link of the topology")
        for side, raw in (("re", rec[2]), ("bc", rec[3])):
            val = _nonneg(raw, f"c[{i}] c_{side}")
            if cp[side].setdefault(orb.link[e], val) != val:
                v.fail(f"c[{i}] gives link {e[0]!r} -> {e[1]!r} c_{side} {frac_str(val)}, but "
                       "its orbit has another value: the primal is not fixed by the automorphisms")
    x = {u: xk.get(orb.cls[u], Fraction(0)) for u in g.compute}
    c = {s: {e: cp[s].get(orb.link[e], Fraction(0)) for e in g.cap} for s in ("re", "bc")}
    return x, c


def _check_rows(g: Graph, x: dict[Node, Fraction], c: dict[str, dict[Link, Fraction]],
                v: Verdict) -> None:
    """Every link row and every switch's balance, on the expanded primal."""
    for e, b in g.cap.items():
        if c["re"][e] + c["bc"][e] > b:
            v.fail(f"link {e[0]!r} -> {e[1]!r}: c_re + c_bc = {frac_str(c['re'][e] + c['bc'][e])}"
                   f" exceeds its capacity {frac_str(b)}")
            return
    for side in ("re", "bc"):
        net = {w: Fraction(0) for w in g.switches}
        for (tail, head), val in c[side].items():
            if head in net:
                net[head] += val
            if tail in net:
                net[tail] -= val
        for w, d in net.items():
            if d:
                v.fail(f"switch {w!r}: c_{side} in and out differ by {frac_str(d)} (must balance)")
                return


def _flow(g: Graph, x: dict[Node, Fraction], cap: dict[Link, Fraction], side: str,
          sink: Node, arcs: object, total: Fraction, where: str) -> str | None:
    """Why the witness ``arcs`` is not a flow of value ≥ total, or None."""
    if not isinstance(arcs, list):
        raise InputError(f"{where}: 'flow' must be an array of [src, dst, amount]")
    amount: dict[tuple[Node | None, Node | None], Fraction] = {}
    for i, rec in enumerate(arcs):
        if not isinstance(rec, list) or len(rec) != 3:
            raise InputError(f"{where} flow[{i}] is not a [src, dst, amount] entry")
        a = None if rec[0] is None else g.node(rec[0], f"{where} flow[{i}] src")
        b = None if rec[1] is None else g.node(rec[1], f"{where} flow[{i}] dst")
        key = (a, b)
        amount[key] = amount.get(key, Fraction(0)) + _nonneg(rec[2], f"{where} flow[{i}]")
    net = {u: Fraction(0) for u in g.nodes}
    for (a, b), f in amount.items():
        if a is None or b is None:
            end = b if a is None else a
            if (a is None) != (side == "bc") or end not in x:
                return f"arc {a!r} -> {b!r} is not an arc of the {side} flow network"
            limit = x[end]
        elif (a, b) in cap:
            limit = cap[(a, b)]
        else:
            return f"{a!r} -> {b!r} is not a link of the topology"
        if f > limit:
            return f"arc {a!r} -> {b!r} carries {frac_str(f)}, more than its {frac_str(limit)}"
        if b is not None:
            net[b] += f
        if a is not None:
            net[a] -= f
    goal = {u: Fraction(0) for u in g.nodes}
    goal[sink] = total if side == "bc" else -total
    for u in g.nodes:
        if net[u] < goal[u] if side == "bc" else net[u] > goal[u]:
            return (f"at node {u!r} inflow − outflow is {frac_str(net[u])}, "
                    + ("short of the value Σx" if u == sink else
                       "negative" if side == "bc" else "positive"))
    return None


def _check_flows(g: Graph, orb: _Orbits, x: dict[Node, Fraction],
                 c: dict[str, dict[Link, Fraction]], cert: Mapping[str, Any], v: Verdict) -> None:
    """A valid broadcast and reduce witness for a sink in every orbit of compute nodes."""
    total = sum(x.values(), Fraction(0))
    covered: dict[str, set[Node]] = {"bc": set(), "re": set()}
    for i, rec in enumerate(_entries(cert, "flows")):
        if not isinstance(rec, Mapping) or rec.get("side") not in ("bc", "re"):
            raise InputError(f"flows[{i}] is not an object with side 'bc' or 're'")
        side = str(rec["side"])
        sink = g.node(rec.get("sink"), f"flows[{i}] sink")
        if sink not in x:
            raise InputError(f"flows[{i}] sink {sink!r} is a switch, not a compute node")
        why = _flow(g, x, c[side], side, sink, rec.get("flow"), total, f"flows[{i}]")
        if why:
            v.fail(f"flows[{i}] ({side}, sink {sink!r}): {why}")
            return
        covered[side].add(orb.node[sink])
    for side, word in (("bc", "broadcast"), ("re", "reduce")):
        for u in g.compute:
            if orb.node[u] not in covered[side]:
                v.fail(f"no {word} flow witness for a sink in the orbit of {u!r}: the cut rows "
                       "of the sets that miss it are not proven")
                return


def _cut_set(g: Graph, rec: Mapping[str, Any], where: str) -> set[Node]:
    if ("nodes" in rec) == ("outside" in rec):
        raise InputError(f"{where} needs exactly one of 'nodes' and 'outside'")
    listed = rec["nodes"] if "nodes" in rec else rec["outside"]
    if not isinstance(listed, list):
        raise InputError(f"{where}: the node list must be an array")
    named = {g.node(u, f"{where} node") for u in listed}
    return named if "nodes" in rec else set(g.nodes) - named


def _dual(g: Graph, orb: _Orbits, cert: Mapping[str, Any], v: Verdict) -> Fraction | None:
    """The dual value Σ_P b_P Y_P, or None (with the reason) when coverage fails."""
    cover = {k: Fraction(0) for k in orb.size}
    load: dict[str, dict[Link, Fraction]] = {"re": {}, "bc": {}}
    for i, rec in enumerate(_entries(cert, "cuts")):
        if not isinstance(rec, Mapping) or rec.get("side") not in ("bc", "re"):
            raise InputError(f"cuts[{i}] is not an object with side 'bc' or 're'")
        side, mu = str(rec["side"]), _nonneg(rec.get("multiplier"), f"cuts[{i}] multiplier")
        inside = _cut_set(g, rec, f"cuts[{i}]")
        if all(u in inside for u in g.compute):
            v.fail(f"cuts[{i}] contains every compute node: it is no row of LP (5)")
            return None
        for u in inside:
            if u in orb.cls:
                cover[orb.cls[u]] += mu
        for (a, b) in g.cap:
            if (a in inside) != (b in inside) and (a in inside) == (side == "bc"):
                p = orb.link[(a, b)]
                load[side][p] = load[side].get(p, Fraction(0)) + mu
    for k, size in orb.size.items():
        if cover[k] < size:
            v.fail(f"the cuts cover the class of {k!r} {frac_str(cover[k])} times, less than "
                   f"its {size} compute nodes: not a dual solution")
            return None
    _balance_terms(g, orb, cert, load)
    value = Fraction(0)
    for p in orb.link_size:
        need = max(Fraction(0), load["re"].get(p, Fraction(0)), load["bc"].get(p, Fraction(0)))
        value += g.cap[p] * need
    return value


def _balance_terms(g: Graph, orb: _Orbits, cert: Mapping[str, Any],
                   load: dict[str, dict[Link, Fraction]]) -> None:
    """Subtract π_W (in_w(P) − out_w(P)) from the loads, one π per switch orbit and side."""
    seen: set[tuple[str, Node]] = set()
    for i, rec in enumerate(_entries(cert, "balance")):
        if not isinstance(rec, list) or len(rec) != 3 or rec[0] not in ("re", "bc"):
            raise InputError(f"balance[{i}] is not a ['re' or 'bc', switch, multiplier] entry")
        side, w = str(rec[0]), g.node(rec[1], f"balance[{i}] switch")
        if w in g.compute:
            raise InputError(f"balance[{i}] names {w!r}, a compute node, not a switch")
        if (side, orb.node[w]) in seen:
            raise InputError(f"balance[{i}]: the orbit of switch {w!r} has a {side} multiplier "
                             "already")
        seen.add((side, orb.node[w]))
        pi = number(rec[2], f"balance[{i}] multiplier")
        for (a, b) in g.cap:
            if w in (a, b) and a != b:
                p = orb.link[(a, b)]
                sign = 1 if b == w else -1
                load[side][p] = load[side].get(p, Fraction(0)) - sign * pi


def check_cut_lp(topology: Mapping[str, Any] | Graph, cert: Mapping[str, Any]) -> Verdict:
    """LP (5) by cuts: the primal by flow witnesses, the dual by cuts (module docstring).

    ``facts``: ``forestcoll_lp`` (when ``ok``; ``uniform_lp`` for equal shares)."""
    g = topology if isinstance(topology, Graph) else Graph(topology)
    v = Verdict("ForestColl allreduce LP (5), cut form")
    claimed = number(cert.get("value"), "LP (5) value")
    shares = cert.get("shares", "free")
    if shares not in ("free", "uniform"):
        raise InputError("the certificate's 'shares' must be 'free' or 'uniform'")
    orb = _Orbits(g, cert.get("automorphisms"), shares == "uniform", v)
    if not v.ok:
        return v
    x, c = _primal(g, orb, cert, v)
    if v.ok:
        _check_rows(g, x, c, v)
    total = sum(x.values(), Fraction(0))
    if v.ok and total != claimed:
        v.fail(f"the certificate claims {frac_str(claimed)}, its primal gives Σx = "
               f"{frac_str(total)}")
    if v.ok:
        _check_flows(g, orb, x, c, cert, v)
    dual = _dual(g, orb, cert, v) if v.ok else None
    if v.ok and dual != claimed:
        v.fail(f"the dual (cuts and multipliers) bounds LP (5) by {frac_str(dual or 0)}, not by "
               f"the claimed {frac_str(claimed)}")
    if v.ok:  # equal shares: the optimum of LP (5) with x_v all equal, a lower bound only
        v.facts["uniform_lp" if shares == "uniform" else "forestcoll_lp"] = claimed
    return v
