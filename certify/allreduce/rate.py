"""Checker 9: the all-reduce computation rate (Zhou & Sun 2026, Thm 1-2).

Two certificates, each checked from the topology alone:

``allreduce-cut-set`` (Theorem 1, R* ≤ C)
    A node set S that splits the compute nodes (S ∩ V_c ∉ {∅, V_c}) with
    B⁺(S) = C shows min ≤ C. For the other direction, one flow of value ≥ C
    from a fixed compute node v0 to every other compute node v and one from v
    to v0: every splitting S separates v0 from some v one way or the other, so
    B⁺(S) ≥ C by weak max-flow/min-cut duality. Together: C is the minimum.

``allreduce-mac-bc-lp`` (Theorem 2, R* ≥ R_LP; networks without switches)
    Primal: weighted MAC-BC networks (a spanning in-arborescence into r plus a
    spanning out-arborescence from r), each checked for shape, and
    Σ w·uses ≤ β on every link: so R_LP ≥ Σ w. Dual: y ≥ 0 on the links
    under which *every* MAC-BC network costs ≥ 1. There are K^(2K−3) of them,
    so this checker finds the cheapest one itself: for every root r the
    cheapest in-arborescence into r plus the cheapest out-arborescence from
    r, by its own Chu-Liu/Edmonds below (weights scaled to integers), and
    requires ≥ 1. Then Σ β y is an upper bound on R_LP (weak LP duality), and
    Σ w = Σ β y proves R_LP exactly. Corollary 2.1 (R_LP ≤ Σβ / (2(K−1)))
    is reported as a fact.

The topology is read by the model room's link reader (as :class:`~collcert.certify.model.Topo`
reads it) with this model's rules: any directed graph, one compute node refused
with a reason, zero capacities meaning no link, and a graph may have no links at all.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

from ..model import (
    InputError,
    Link,
    LinkFormat,
    Node,
    Verdict,
    find_node,
    frac_str,
    integer,
    number,
    read_links,
    topology_nodes,
)

MAX_PRICE_BITS = 2**28
"""Links × the bits of the dual prices' common denominator (the integer arc weights)."""
GRAPH = LinkFormat("topology", "capacity", missing="{where} needs src, dst and capacity",
                   not_a_link="{where} is not a link",
                   bad="{where}: capacity must be ≥ 0 and src ≠ dst",
                   zero=True, optional=True, ends=False)
"""Any directed graph: capacities ≥ 0 (0: no link), parallel links summed, no links at all
allowed."""


class Graph:
    """A ``collcert-topology/1`` dict as any directed graph (parallel links summed)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        if not isinstance(data, Mapping):
            raise InputError("the topology must be a JSON object (collcert-topology/1)")
        self.compute, self.switches = topology_nodes(data)
        self.nodes = self.compute + self.switches
        if len(self.compute) < 2:
            raise InputError("the topology has fewer than two compute nodes: an allreduce over "
                             "one node needs no communication, its rate is unbounded")
        self.by_text = {str(v): v for v in self.nodes}
        self.node_set = set(self.nodes)
        self.cap = read_links(data, GRAPH, self.node)

    def node(self, ref: object, where: str) -> Node:
        hit = find_node(ref, self.node_set, self.by_text)
        if hit is not None:
            return hit
        raise InputError(f"{where} names {ref!r}, which is not a node of the topology")

    def out_capacity(self, s: set[Node]) -> Fraction:
        return sum((c for (u, v), c in self.cap.items() if u in s and v not in s), Fraction(0))


def _objects(raw: object, name: str, not_array: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """The entries of the certificate's array ``name`` (InputError ``not_array`` if ``raw``
    is not one), each an object (InputError for the first that is not, when reached)."""
    if not isinstance(raw, list):
        raise InputError(not_array)
    for i, rec in enumerate(raw):
        if not isinstance(rec, Mapping):
            raise InputError(f"{name}[{i}] is not an object")
        yield i, rec


def _graph(topology: Mapping[str, Any] | Graph) -> Graph:
    return topology if isinstance(topology, Graph) else Graph(topology)


# --------------------------------------------------------------------------- #
# Theorem 1
# --------------------------------------------------------------------------- #
def check_cut_set(topology: Mapping[str, Any] | Graph, cert: Mapping[str, Any]) -> Verdict:
    """The cut-set bound C: a splitting cut of capacity C and flows of value ≥ C.

    ``facts``: ``cut_set_bound`` (proven equal to the minimum when ``ok``).
    """
    g = _graph(topology)
    v = Verdict("all-reduce cut-set bound")
    value = number(cert.get("value"), "cut-set value")
    cut_raw = cert.get("cut")
    if not isinstance(cut_raw, list):
        raise InputError("the cut-set certificate needs 'cut': [node, …]")
    cut = {g.node(x, "cut entry") for x in cut_raw}
    inside = [c for c in g.compute if c in cut]
    if not inside or len(inside) == len(g.compute):
        v.fail("the cut must contain some compute nodes but not all of them")
    b_out = g.out_capacity(cut)
    if b_out != value:
        v.fail(f"the cut has B⁺(S) = {frac_str(b_out)}, not the claimed {frac_str(value)}")
    if value > 0:
        m = integer(cert.get("multiplier", 1), "multiplier", 1)
        v0 = g.compute[0]
        need = {(v0, c) for c in g.compute[1:]} | {(c, v0) for c in g.compute[1:]}
        for i, rec in _objects(cert.get("flows"), "flows",
                               "a positive cut-set bound needs 'flows'"):
            src = g.node(rec.get("source"), f"flows[{i}] source")
            dst = g.node(rec.get("sink"), f"flows[{i}] sink")
            got = _flow_value(g, rec.get("flow"), m, src, dst, v, f"flow {src!r} -> {dst!r}")
            if got is not None and "value" in rec and integer(
                    rec["value"], f"flows[{i}] value", 0) != got:  # a stated figure
                v.fail(f"flows[{i}] ({src!r} -> {dst!r}): its value is stated as "
                       f"{rec['value']}, but the flow carries {got} (in 1/{m} units)")
            if got is not None and Fraction(got, m) >= value:
                need.discard((src, dst))
        for src, dst in sorted(need, key=str)[:5]:
            v.fail(f"no valid flow of value ≥ {frac_str(value)} from {src!r} to {dst!r}: "
                   "the cut is not shown to be the minimum")
    if v.ok:
        v.facts["cut_set_bound"] = value
    return v


def arc_net(g: Graph, arcs: object, m: int, v: Verdict, label: str,
            ) -> tuple[dict[Node, int], bool]:
    """Net outflow (in 1/m units) of every node under ``arcs`` ([u, v, amount] entries; an
    arc listed twice carries the sum), and whether every arc is within its capacity
    (each one over it fails ``v``)."""
    if not isinstance(arcs, list):
        raise InputError(f"{label}: 'flow' must be an array of [u, v, amount]")
    net = {x: 0 for x in g.nodes}
    ok = True
    on_arc: dict[Link, int] = {}
    for item in arcs:
        if not isinstance(item, list) or len(item) != 3:
            raise InputError(f"{label}: flow entries are [u, v, amount]")
        a, b = g.node(item[0], label), g.node(item[1], label)
        amount = integer(item[2], f"{label} amount", 0)
        on_arc[(a, b)] = on_arc.get((a, b), 0) + amount
        net[a] += amount
        net[b] -= amount
    for (a, b), amount in on_arc.items():
        cap = g.cap.get((a, b))
        if cap is None or amount > cap * m:
            v.fail(f"{label}: {a!r} -> {b!r} carries {frac_str(Fraction(amount, m))} over "
                   f"capacity {frac_str(cap or 0)}")
            ok = False
    return net, ok


def _flow_value(g: Graph, arcs: object, m: int, src: Node, dst: Node, v: Verdict,
                label: str) -> int | None:
    """Net amount (in 1/m units) leaving ``src``, if ``arcs`` is a valid flow; else None."""
    net, ok = arc_net(g, arcs, m, v, label)
    for x, bal in net.items():
        if x not in (src, dst) and bal:
            v.fail(f"{label}: flow is not conserved at {x!r}")
            ok = False
    return net[src] if ok else None


# --------------------------------------------------------------------------- #
# Theorem 2
# --------------------------------------------------------------------------- #
def check_mac_bc_lp(topology: Mapping[str, Any] | Graph, cert: Mapping[str, Any]) -> Verdict:
    """R_LP of LP (16): weighted MAC-BC networks (primal) and link prices y (dual).

    ``facts``: ``mac_bc_lp`` (when ``ok``), ``corollary_2_1``.
    """
    g = _graph(topology)
    v = Verdict("all-reduce MAC-BC LP")
    if g.switches:
        v.fail("the MAC-BC LP is defined for networks without switches")
        return v
    k = len(g.compute)
    v.facts["corollary_2_1"] = sum(g.cap.values(), Fraction(0)) / (2 * (k - 1))
    claimed = number(cert.get("value"), "MAC-BC LP value")
    load: dict[Link, Fraction] = {}
    primal = Fraction(0)
    for i, col in _objects(cert.get("columns", []), "columns", "'columns' must be an array"):
        root = g.node(col.get("root"), f"columns[{i}] root")
        w = number(col.get("weight"), f"columns[{i}] weight")
        if w < 0:
            v.fail(f"columns[{i}] has negative weight {frac_str(w)}")
        label = f"columns[{i}] (root {root!r})"
        for key, direction in (("reduce", "in"), ("broadcast", "out")):
            arcs = _arcs(g, col.get(key), f"{label} {key}")
            if _spanning(g, arcs, root, direction, v, f"{label} {key}"):
                for e in arcs:
                    load[e] = load.get(e, Fraction(0)) + w
        primal += w
    for e, amount in load.items():
        cap = g.cap.get(e, Fraction(0))
        if amount > cap:
            v.fail(f"link {e[0]!r} -> {e[1]!r} carries {frac_str(amount)} > capacity "
                   f"{frac_str(cap)}")
    y: dict[Link, Fraction] = {}
    dual_raw = cert.get("dual", [])
    if not isinstance(dual_raw, list):
        raise InputError("'dual' must be an array of [u, v, y]")
    for item in dual_raw:
        if not isinstance(item, list) or len(item) != 3:
            raise InputError("dual entries are [u, v, y]")
        e = (g.node(item[0], "dual"), g.node(item[1], "dual"))
        val = number(item[2], f"dual of {e}")
        if e not in g.cap or val < 0:
            v.fail(f"dual price {frac_str(val)} on {e[0]!r} -> {e[1]!r}: prices must be ≥ 0 "
                   "and on links")
        y[e] = y.get(e, Fraction(0)) + val
    dual = sum((g.cap.get(e, Fraction(0)) * val for e, val in y.items()), Fraction(0))
    _check_prices(g, y, v)
    if primal != dual:
        v.fail(f"the weights sum to {frac_str(primal)} but Σ β·y = {frac_str(dual)}: "
               "not both optimal")
    if primal != claimed:
        v.fail(f"the certificate claims {frac_str(claimed)} but its weights sum to "
               f"{frac_str(primal)}")
    if v.ok:
        v.facts["mac_bc_lp"] = primal
    return v


def _arcs(g: Graph, raw: object, label: str) -> list[Link]:
    if not isinstance(raw, list):
        raise InputError(f"{label} must be an array of [u, v]")
    out = []
    for item in raw:
        if not isinstance(item, list) or len(item) != 2:
            raise InputError(f"{label}: arcs are [u, v]")
        out.append((g.node(item[0], label), g.node(item[1], label)))
    return out


def _spanning(g: Graph, arcs: list[Link], root: Node, direction: str, v: Verdict,
              label: str) -> bool:
    """Out: one arc into every non-root node, reach all from root; in: the mirror."""
    parent: dict[Node, Node] = {}
    for a, b in arcs:
        child, par = (b, a) if direction == "out" else (a, b)
        if (a, b) not in g.cap:
            v.fail(f"{label}: {a!r} -> {b!r} is not a link")
            return False
        if child == root or child in parent:
            v.fail(f"{label}: {child!r} has two parents or is the root")
            return False
        parent[child] = par
    joined = {root}  # nodes whose parent chain is known to reach the root
    for x in g.compute:
        path: list[Node] = []
        y = x
        while y not in joined and y in parent and len(path) <= len(g.compute):
            path.append(y)
            y = parent[y]
        if y not in joined:
            v.fail(f"{label}: {x!r} is not joined to the root (not a spanning "
                   f"{direction}-arborescence)")
            return False
        joined.update(path)
    return True


def _check_prices(g: Graph, y: Mapping[Link, Fraction], v: Verdict) -> None:
    """Every MAC-BC network costs ≥ 1: per root, cheapest in- plus out-arborescence."""
    den = 1
    for val in y.values():
        den = den * val.denominator // math.gcd(den, val.denominator)
        if den.bit_length() * len(g.cap) > MAX_PRICE_BITS:
            raise InputError(f"the dual prices have a common denominator of about "
                             f"{den.bit_length() * 3 // 10} digits: {len(g.cap)} prices over it "
                             "are too large to check exactly (write them over a few common "
                             "denominators)")
    index = {x: i for i, x in enumerate(g.compute)}
    arcs = [(index[a], index[b], int(y.get((a, b), Fraction(0)) * den)) for a, b in g.cap]
    back = [(b, a, w) for a, b, w in arcs]
    for r in g.compute:
        if _entering_floor(len(g.compute), arcs, index[r]) + _entering_floor(
                len(g.compute), back, index[r]) >= den:
            continue  # Chu-Liu/Edmonds' first step alone already pays 1 (uniform y: always)
        out = directed_mst(len(g.compute), arcs, index[r])
        inn = directed_mst(len(g.compute), back, index[r])
        if out is None or inn is None:
            continue  # no MAC-BC network has this root
        if out + inn < den:
            cost = frac_str(Fraction(out + inn, den))
            v.fail(f"the MAC-BC networks rooted at {r!r} cost as little as "
                   f"{cost if len(cost) < 80 else f'{(out + inn) / den:.9f}'} < 1 under y: "
                   "y is not dual feasible")


def _entering_floor(n: int, arcs: list[tuple[int, int, int]], root: int) -> int:
    """A lower bound on every out-arborescence from ``root``: the sum over the other
    nodes of their cheapest entering weight (Chu-Liu/Edmonds' first step; its later
    steps only add reduced weights, which are ≥ 0). -1 when some node has no entering
    arc (then :func:`directed_mst` decides)."""
    inw: list[int | None] = [None] * n
    for a, b, w in arcs:
        if a != b and b != root:
            cur = inw[b]
            if cur is None or w < cur:
                inw[b] = w
    if any(w is None for x, w in enumerate(inw) if x != root):
        return -1
    return sum(w for x, w in enumerate(inw) if x != root and w is not None)


def directed_mst(n: int, arcs: list[tuple[int, int, int]], root: int) -> int | None:
    """Weight of a cheapest out-arborescence from ``root`` (None if some node is unreachable).

    Chu-Liu/Edmonds, value only: add every node's cheapest entering weight;
    if those arcs have no cycle, done; else contract every cycle, lower the
    arcs entering a cycle by the weight already paid for their head, repeat.
    """
    total = 0
    while True:
        inw: list[int | None] = [None] * n
        pre = [-1] * n
        for a, b, w in arcs:
            if a != b and b != root:
                cur = inw[b]
                if cur is None or w < cur:
                    inw[b], pre[b] = w, a
        paid = [0] * n
        for x in range(n):
            if x != root:
                w_in = inw[x]
                if w_in is None:
                    return None
                paid[x] = w_in
                total += w_in
        group = [-1] * n
        seen = [-1] * n
        groups = 0
        for x in range(n):
            z = x
            while z != root and group[z] < 0 and seen[z] < 0:  # each node walked once
                seen[z] = x
                z = pre[z]
            if z != root and group[z] < 0 and seen[z] == x:  # z lies on a new cycle
                group[z] = groups
                c = pre[z]
                while c != z:
                    group[c] = groups
                    c = pre[c]
                groups += 1
        if groups == 0:
            return total
        for x in range(n):
            if group[x] < 0:
                group[x] = groups
                groups += 1
        arcs = [(group[a], group[b], w - paid[b]) for a, b, w in arcs if group[a] != group[b]]
        n, root = groups, group[root]
