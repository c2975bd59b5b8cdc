"""ForestColl's allreduce linear program (Zhao et al. 2026, App. G, LP (5)) as App. G writes it.

Allreduce as reduce trees into each compute node v followed (pipelined) by
broadcast trees out of v, with a per-root amount x_v and each link's
bandwidth split between reduce (c^RE) and broadcast (c^BC) traffic:

    max Σ_v x_v
    s.t. F(s, t) ≥ Σ_v x_v  for every t ∈ V_c, in the graph c^BC plus s→v of capacity x_v
         F(t, s) ≥ Σ_v x_v  for every t ∈ V_c, in the graph c^RE plus v→s of capacity x_v
         c^RE_e + c^BC_e ≤ b_e,   everything ≥ 0.

Each max-flow constraint is written as App. G writes it: a flow f^{s,t} per
sink with Σ_in f ≥ Σ_out f at every other node, Σ_in f ≥ Σ_out f + L at the
sink, and f ≤ its arc's capacity variable. By Edmonds' branching theorem
the BC flows are exactly what packing x_v spanning out-trees per root v into
c^BC needs (each tree takes one arc out of s), and the RE flows the same for
in-trees in c^RE: the optimum is the best reduce+broadcast tree schedule,
T = M / Σ x_v.

Switches (App. G, last paragraph): trees span compute nodes only, so the LP
runs on a *logical* graph over V_c whose arc α→β has capacity b'_{αβ}, and
b' must be routable in G: one flow per source α (all its commodities α→β
at once) over links whose inner nodes are switches, delivering b'_{αβ} at
every β, the flows of all sources together within each link's capacity.
Without switches the logical graph is the topology itself.

Variable and row names are JSON arrays (``["x", v]``, ``["cbc", u, v]``,
``["fb", t, u, v]`` with ``null`` for s, …), so that ``collcert.certify``
can rebuild the same LP from the topology and check the primal and dual
against it (:mod:`collcert.certify.allreduce.lp5`; docs/allreduce.md lists
every name).
"""

from __future__ import annotations

import json
import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..model import Topology, TopologyError, fraction_str
from ..solvers import LinearProgram, solve_lp
from ..symmetry import UnionFind

Node = Hashable
Link = tuple[Node, Node]

MAX_LP_NONZEROS = 120_000
"""Above this many constraint entries LP (5) is not attempted: it grows as N·|E| (N²·N
with switches) and would take minutes (8×8 torus: 168 000 entries, 5 min)."""


def name(*parts: Any) -> str:
    """The JSON text of ``parts``: the name of an LP variable or row."""
    return json.dumps(list(parts), separators=(",", ":"))


def logical_arcs(t: Topology) -> list[Link]:
    """Compute-node pairs (α, β) joined by a path whose inner nodes are all switches."""
    if not t.switch_nodes:
        return list(t.capacity)
    out_of: dict[Node, list[Node]] = {v: [] for v in t.nodes}
    for u, v in t.capacity:
        out_of[u].append(v)
    arcs: list[Link] = []
    for a in t.compute_nodes:
        seen = {a}
        stack = [a]
        reached = []
        while stack:
            u = stack.pop()
            for v in out_of[u]:
                if v in seen:
                    continue
                seen.add(v)
                if t.is_compute(v):
                    reached.append(v)
                else:
                    stack.append(v)
        arcs.extend((a, b) for b in t.compute_nodes if b in reached)
    return arcs


def commodity_links(t: Topology, a: Node) -> list[Link]:
    """Links source α's commodity flow may use: out of α or a switch, into a switch or
    β ≠ α."""
    return [(u, v) for (u, v) in t.capacity
            if (u == a or not t.is_compute(u)) and v != a]


def lp5_size(t: Topology) -> int:
    """About how many constraint entries :func:`build_lp5` writes (without building it)."""
    n, arcs = t.num_compute, len(logical_arcs(t))
    flows = 2 * n * (4 * arcs + 4 * n)
    return flows + (2 * len(t.capacity) if not t.switch_nodes
                    else 3 * arcs + 3 * n * len(t.capacity))


def symmetry_ties(t: Topology, gens: list[list[int]]) -> list[list[str]]:
    """Groups of LP (5) variables an automorphism group maps onto each other: x per orbit
    of compute nodes, c^RE and c^BC per orbit of logical arcs (for :func:`build_lp5`)."""
    idx, nodes = t.index, t.nodes
    arcs = [(idx[a], idx[b]) for a, b in logical_arcs(t)]
    pos = {e: i for i, e in enumerate(arcs)}
    node_uf, arc_uf = UnionFind(len(nodes)), UnionFind(len(arcs))
    for g in gens:
        for v in range(len(nodes)):
            node_uf.union(v, g[v])
        for i, (a, b) in enumerate(arcs):
            arc_uf.union(i, pos[(g[a], g[b])])
    groups: dict[tuple[str, int], list[str]] = {}
    for v in range(t.num_compute):
        groups.setdefault(("x", node_uf.find(v)), []).append(name("x", nodes[v]))
    for i, (a, b) in enumerate(arcs):
        for kind in ("cre", "cbc"):
            groups.setdefault((kind, arc_uf.find(i)), []).append(name(kind, nodes[a], nodes[b]))
    return [g for g in groups.values() if len(g) > 1]


def build_lp5(t: Topology, *, uniform: bool = False,
              ties: list[list[str]] | None = None) -> LinearProgram:
    """LP (5) of Zhao et al. 2026, App. G for ``t`` (with the switch indirection when needed).

    ``uniform``: every root gets the same share (rows ``["uniform", v]``:
    x_v = x_{v0}); App. G's point (i) is then given up and only (ii), the
    split of each link between reduce and broadcast traffic, is optimised.
    """
    if t.num_compute < 2:
        raise TopologyError("LP (5) needs at least two compute nodes")
    comp = list(t.compute_nodes)
    arcs = logical_arcs(t)
    lp = LinearProgram(sense="max")
    for v in comp:
        lp.add_variable(name("x", v), cost=1)
    if uniform:
        for v in comp[1:]:
            lp.add_row(name("uniform", v), {name("x", v): 1, name("x", comp[0]): -1}, "=", 0)
    for u, v in arcs:
        lp.add_variable(name("cre", u, v))
        lp.add_variable(name("cbc", u, v))
    if not t.switch_nodes:
        for (u, v), c in t.capacity.items():
            lp.add_row(name("link", u, v), {name("cre", u, v): 1, name("cbc", u, v): 1}, "<=", c)
    else:
        for u, v in arcs:
            lp.add_row(name("logical", u, v),
                       {name("cre", u, v): 1, name("cbc", u, v): 1, name("b", u, v): -1}, "<=", 0)
        usage: dict[Link, dict[Hashable, int]] = {e: {} for e in t.capacity}
        logical = set(arcs)
        for a in comp:
            links = commodity_links(t, a)
            into: dict[Node, dict[Hashable, int]] = {v: {} for v in t.nodes}
            for u, v in links:
                g = name("g", a, u, v)
                usage[(u, v)][g] = 1
                into[v][g] = into[v].get(g, 0) + 1
                if not t.is_compute(u):
                    into[u][g] = into[u].get(g, 0) - 1
            for w in t.switch_nodes:
                lp.add_row(name("conserve", a, w), into[w], "=", 0)
            for b in comp:
                if b != a and (a, b) in logical:
                    lp.add_row(name("deliver", a, b), {**into[b], name("b", a, b): -1}, "=", 0)
        for (u, v), c in t.capacity.items():
            lp.add_row(name("link", u, v), usage[(u, v)], "<=", c)
    for group in ties or []:  # a solution fixed by automorphisms (symmetry_ties)
        for var in group[1:]:
            lp.add_row(name("tie", var), {var: 1, group[0]: -1}, "=", 0)
    xs: dict[Hashable, int] = {name("x", v): -1 for v in comp}
    for kind, cap in (("fb", "cbc"), ("fr", "cre")):
        for tt in comp:
            # BC: flow s -> tt over s->v (≤ x_v) and logical arcs (≤ c^BC);
            # RE: flow tt -> s over logical arcs (≤ c^RE) and v->s (≤ x_v)
            bal: dict[Node, dict[Hashable, int]] = {v: {} for v in comp}
            sink_in: dict[Hashable, int] = {}
            for u, v in arcs:
                f = name(kind, tt, u, v)
                lp.add_row(name(kind + "cap", tt, u, v), {f: 1, name(cap, u, v): -1}, "<=", 0)
                bal[v][f] = bal[v].get(f, 0) + 1
                bal[u][f] = bal[u].get(f, 0) - 1
            for v in comp:
                if kind == "fb":
                    f = name(kind, tt, None, v)
                    bal[v][f] = bal[v].get(f, 0) + 1
                else:
                    f = name(kind, tt, v, None)
                    bal[v][f] = bal[v].get(f, 0) - 1
                    sink_in[f] = 1
                lp.add_row(name(kind + "x", tt, v), {f: 1, name("x", v): -1}, "<=", 0)
            for v in comp:
                if kind == "fb" and v == tt:
                    lp.add_row(name(kind + "sink", tt), {**bal[v], **xs}, ">=", 0)
                elif not (kind == "fr" and v == tt):
                    lp.add_row(name(kind + "node", tt, v), bal[v], ">=", 0)
            if kind == "fr":
                lp.add_row(name(kind + "sink", tt), {**sink_in, **xs}, ">=", 0)
    return lp


@dataclass
class ForestCollLP:
    """The exact optimum of LP (5) with its primal and dual."""

    value: Fraction
    x: dict[Node, Fraction]
    c_re: dict[Link, Fraction]
    c_bc: dict[Link, Fraction]
    primal: dict[str, Fraction] = field(repr=False)
    dual: dict[str, Fraction] = field(repr=False)
    stats: dict[str, Any] = field(default_factory=dict)

    def certificate(self) -> dict[str, Any]:
        return {
            "kind": "allreduce-forestcoll-lp",
            "value": fraction_str(self.value),
            "primal": {k: fraction_str(v) for k, v in self.primal.items() if v},
            "dual": {k: fraction_str(v) for k, v in self.dual.items() if v},
        }


def forestcoll_lp_flows(t: Topology, *, uniform: bool = False,
                        ties: list[list[str]] | None = None) -> ForestCollLP:
    """Solve LP (5) in App. G's flow form exactly (float simplex basis, exact proof:
    :func:`collcert.reference.solvers.solve_lp`). It grows as N·|E| (N³ with switches):
    above :data:`MAX_LP_NONZEROS` entries it is refused; :mod:`.lp5_cuts` scales.

    ``uniform``: the variant with equal shares; ``ties``: variables held equal (see
    :func:`build_lp5`; its dual then proves only the tied LP: certify the value by the
    cut form)."""
    started = time.perf_counter()
    estimate = lp5_size(t)
    if estimate > MAX_LP_NONZEROS:
        raise TopologyError(
            f"LP (5) of this topology has about {estimate} constraint entries (more than "
            f"{MAX_LP_NONZEROS}): too large for its flow form (the cut form, method 'cuts', "
            "scales)")
    lp = build_lp5(t, uniform=uniform, ties=ties)
    nonzeros = sum(len(c) for c in lp.cols)
    res = solve_lp(lp)
    x = {v: res.x[name("x", v)] for v in t.compute_nodes}
    arcs = logical_arcs(t)
    c_re = {e: res.x[name("cre", *e)] for e in arcs}
    c_bc = {e: res.x[name("cbc", *e)] for e in arcs}
    primal = {str(k): v for k, v in res.x.items()}
    dual = {str(k): v for k, v in res.y.items()}
    stats = dict(res.stats)
    stats.update(method="flows", nonzeros=nonzeros, seconds=time.perf_counter() - started)
    return ForestCollLP(res.objective, x, c_re, c_bc, primal, dual, stats)
