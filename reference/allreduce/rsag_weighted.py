"""Weighted RS+AG: reduce-scatter, then allgather, with shard sizes chosen optimally.

ForestColl's allreduce (Zhao & Krishnamurthy 2023, App. B) runs a reduce-scatter
and then an allgather, one after the other, every compute node owning an
equal shard. Zhao et al. 2026, §5.7 gives both phases *unequal* shard sizes
(non-uniform allgather); this module chooses the sizes ``f_v`` (Σ f = 1) that
make the two phases together as fast as possible, exactly.

The time of each phase (per unit of data, Zhao & Krishnamurthy 2023, eq. (1);
Zhao et al. 2026, §5.7), over node sets S that split the compute nodes
(S ∩ V_c ∉ {∅, V_c})::

    T_AG(f) = max_S f(S ∩ V_c) / B⁺(S)      (what S owns must leave S)
    T_RS(f) = max_S f(V_c − S) / B⁺(S)      (what the others own needs S's inputs)

On an Eulerian topology B⁺(S) = B⁺(V − S), so T_RS(f) = T_AG(f) and the best
time is 2 / W* with W* the optimum of the LP

    max Σ_v w_v   subject to   w(S ∩ V_c) ≤ B⁺(S) for every splitting S,  w ≥ 0,

(f = w / W*): the weighted RS+AG rate is W*/2. It lies between RS+AG (equal
shards) and LP (5): it is LP (5) with every link split between the phases in
one ratio (c^RE = c^BC = c/2, time-shared instead of pipelined).

The LP has 2^|V| rows, so it is solved by cut generation: the master (the
rows found so far) is solved exactly (:func:`collcert.reference.solvers.solve_lp`:
a float basis, then an exact proof); for its w, one max-flow per compute sink t
from a super source (arcs s→u of capacity w_u) finds a violated row when the
flow is below Σ w (the test of Zhao & Krishnamurthy 2023, Thm 1, with weights).
With no row violated, W* is proven: every row holds (the flows), and the
master's dual y bounds every w (Σ w ≤ Σ_S y_S B⁺(S)). A second pass then picks,
among the optimal w, one whose least shard is largest, so that equal shards
come back whenever they are optimal and zero shards only where forced.

Certificate (``allreduce-rsag-weighted``, checked by
:func:`collcert.certify.allreduce.check_rsag_weighted`): the shards f, the phase
times, per compute node an allgather flow and a reduce-scatter flow of
Σ w (T_AG(f), T_RS(f) ≤ the phase times), a tight cut per phase (≥), and the
dual cuts with their multipliers (no other f does better).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..model import Node, Topology, TopologyError, fraction_str, show
from ..solvers import FlowNetwork, LinearProgram, solve_lp
from .cut_set import check_two_compute_nodes

KIND = "allreduce-rsag-weighted"
MAX_ROUNDS = 500
"""Cut-generation rounds before giving up (each adds at least one new row)."""


@dataclass
class WeightedRSAG:
    """The best reduce-scatter-then-allgather allreduce with unequal shards."""

    topology: Topology
    shards: dict[Node, Fraction]
    """f_v, the share of the data owned (reduced to, gathered from) by v; Σ f = 1."""
    total: Fraction
    """W* = 1 / (time of one phase): the optimum of the LP of the module docstring."""
    ag_cut: frozenset[Node]
    rs_cut: frozenset[Node]
    dual: list[tuple[frozenset[Node], Fraction]]
    multiplier: int
    ag_flows: list[dict[str, Any]] = field(repr=False, default_factory=list)
    rs_flows: list[dict[str, Any]] = field(repr=False, default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def phase_time(self) -> Fraction:
        """The time per unit of data of each phase (reduce-scatter, allgather)."""
        return 1 / self.total

    @property
    def time_per_unit(self) -> Fraction:
        return 2 / self.total

    @property
    def value(self) -> Fraction:
        """The rate (algbw): an allreduce of M takes M / value."""
        return self.total / 2

    def weights(self) -> list[Fraction]:
        """The shards in compute-node order."""
        return [self.shards[v] for v in self.topology.compute_nodes]

    def certificate(self) -> dict[str, Any]:
        t = self.topology
        nodes = list(t.nodes)
        return {
            "kind": KIND,
            "rate": fraction_str(self.value),
            "time_per_unit": fraction_str(self.time_per_unit),
            "ag_time": fraction_str(self.phase_time),
            "rs_time": fraction_str(self.phase_time),
            "shards": [[v, fraction_str(self.shards[v])] for v in t.compute_nodes],
            "multiplier": self.multiplier,
            "ag_flows": self.ag_flows,
            "rs_flows": self.rs_flows,
            "ag_cut": [v for v in nodes if v in self.ag_cut],
            "rs_cut": [v for v in nodes if v in self.rs_cut],
            "dual": [{"cut": [v for v in nodes if v in s], "y": fraction_str(y)}
                     for s, y in self.dual],
        }

    def to_json(self) -> dict[str, Any]:
        t = self.topology
        return {"rate": fraction_str(self.value), "time_per_unit": fraction_str(self.time_per_unit),
                "shards": {str(v): fraction_str(self.shards[v]) for v in t.compute_nodes},
                "ag_cut": [v for v in t.nodes if v in self.ag_cut],
                "stats": dict(self.stats)}

    def summary(self) -> str:
        t = self.topology
        shards = ", ".join(f"{v}: {show(f)}" for v, f in self.shards.items())
        return (f"weighted RS+AG on {t.name or 'topology'}: algbw {show(self.value)} {t.unit} "
                f"(time per unit {show(self.time_per_unit)}, each phase "
                f"{show(self.phase_time)}); shards {shards}")


class _Separator:
    """One max-flow per compute sink on G plus a super source (arcs s→u of capacity w_u)."""

    def __init__(self, t: Topology, engine: str, transposed: bool = False) -> None:
        self.t = t
        n = len(t.nodes)
        self.links = list(t.int_capacity)
        ends = [(v, u) if transposed else (u, v) for u, v in self.links]
        tails = [t.index[a] for a, _ in ends] + [n] * t.num_compute
        heads = [t.index[b] for _, b in ends] + list(range(t.num_compute))
        self.net = FlowNetwork(n + 1, tails, heads, [0] * len(tails), engine=engine)
        self.transposed = transposed

    def set_weights(self, w: dict[Node, Fraction]) -> int:
        """Capacities for ``w`` in units of 1/m; returns m."""
        t = self.t
        m = t.scale
        for x in w.values():
            m = m * x.denominator // math.gcd(m, x.denominator)
        link_caps = [c * (m // t.scale) for c in t.int_capacity.values()]
        src = [int(w[v] * m) for v in t.compute_nodes]
        self.net.set_all_capacities([*link_caps, *src])
        return m

    def flow(self, sink: Node) -> Any:
        """The max-flow from the super source to ``sink`` (value, flow, source_side)."""
        return self.net.solve(len(self.t.nodes), self.t.index[sink])

    def side(self, res: Any) -> frozenset[Node]:
        """The nodes of G on the source side of ``res``'s minimum cut."""
        nodes = self.t.nodes
        return frozenset(nodes[i] for i in res.source_side if i < len(nodes))

    def flow_record(self, sink: Node, flow: Any) -> dict[str, Any]:
        arcs = [[u, v, int(a)] for (u, v), a in zip(self.links, flow) if a]
        key = "source" if self.transposed else "sink"
        return {key: sink, "flow": arcs}


def _out(t: Topology, s: frozenset[Node]) -> Fraction:
    return sum((c for (u, v), c in t.capacity.items() if u in s and v not in s), Fraction(0))


def _violated(t: Topology, sep: _Separator, w: dict[Node, Fraction],
              ) -> list[frozenset[Node]]:
    """The rows w(S ∩ V_c) ≤ B⁺(S) that ``w`` violates, one per failing sink."""
    m = sep.set_weights(w)
    need = sum(w.values(), Fraction(0)) * m
    found: list[frozenset[Node]] = []
    for v in t.compute_nodes:
        res = sep.flow(v)
        if res.value < need:
            side = sep.side(res)
            inside = sum((w[u] for u in side if t.is_compute(u)), Fraction(0))
            if inside <= _out(t, side):
                raise RuntimeError("internal: a failed flow without a violated cut")
            if side not in found:
                found.append(side)
    return found


def _master(t: Topology, cuts: list[frozenset[Node]], second: Fraction | None,
            ) -> tuple[dict[Node, Fraction], dict[int, Fraction], Fraction]:
    """Solve the master LP exactly: max Σ w (``second`` None) or, with Σ w = second,
    max the least w_v. Returns w, the duals of the cut rows, the objective."""
    lp = LinearProgram("max")
    names = {v: ("w", i) for i, v in enumerate(t.compute_nodes)}
    for v in t.compute_nodes:
        lp.add_variable(names[v], 1 if second is None else 0)
    if second is not None:
        lp.add_variable("least", 1)
    for i, s in enumerate(cuts):
        lp.add_row(("cut", i), {names[v]: 1 for v in t.compute_nodes if v in s}, "<=",
                   _out(t, s))
    if second is not None:
        lp.add_row("total", {names[v]: 1 for v in t.compute_nodes}, "=", second)
        for v in t.compute_nodes:
            lp.add_row(("least", names[v][1]), {names[v]: 1, "least": -1}, ">=", 0)
    res = solve_lp(lp)
    w = {v: res.x[names[v]] for v in t.compute_nodes}
    y = {i: res.y.get(("cut", i), Fraction(0)) for i in range(len(cuts))}
    return w, y, res.objective


def _generate(t: Topology, sep: _Separator, cuts: list[frozenset[Node]],
              second: Fraction | None, stats: dict[str, Any],
              ) -> tuple[dict[Node, Fraction], dict[int, Fraction], Fraction]:
    """Cut generation until the master's w violates no row."""
    for _ in range(MAX_ROUNDS):
        w, y, obj = _master(t, cuts, second)
        stats["rounds"] += 1
        new = _violated(t, sep, w)
        stats["maxflows"] += t.num_compute
        if not new:
            return w, y, obj
        for s in new:
            if s in cuts:
                raise RuntimeError("internal: a violated cut is already in the master")
            cuts.append(s)
    raise RuntimeError(f"weighted RS+AG: no convergence in {MAX_ROUNDS} rounds (report this)")


def _initial_cuts(t: Topology) -> list[frozenset[Node]]:
    """Every compute node alone, and every compute node left out."""
    everything = frozenset(t.nodes)
    cuts = [frozenset([v]) for v in t.compute_nodes]
    cuts += [everything - {v} for v in t.compute_nodes]
    return cuts


def _tight(t: Topology, w: dict[Node, Fraction], cuts: list[frozenset[Node]],
           y: dict[int, Fraction], reverse: bool) -> frozenset[Node]:
    """A row the final w meets with equality (one with y > 0 in the first pass)."""
    def slack(s: frozenset[Node]) -> Fraction:
        owned = sum((w[v] for v in t.compute_nodes if (v in s) != reverse), Fraction(0))
        return _out(t, s) - owned
    everything = frozenset(t.nodes)
    for i in sorted(y, key=lambda i: -y[i]):
        s = cuts[i] if not reverse else everything - cuts[i]
        if slack(s) == 0:
            return s
    for s in cuts:
        s2 = s if not reverse else everything - s
        if slack(s2) == 0:
            return s2
    raise RuntimeError("internal: no tight cut at the optimum")


def weighted_rsag(topology: Topology, *, engine: str = "auto") -> WeightedRSAG:
    """The best RS+AG allreduce with unequal shards, exact, with its certificate."""
    t = topology
    check_two_compute_nodes(t)
    if t.forestcoll_problem is not None:
        raise TopologyError("weighted RS+AG needs an Eulerian topology (Zhao & Krishnamurthy "
                            "2023, §1): " + t.forestcoll_problem.split(". ")[0])
    stats: dict[str, Any] = {"rounds": 0, "maxflows": 0}
    sep = _Separator(t, engine)
    cuts = _initial_cuts(t)
    _, y, total = _generate(t, sep, cuts, None, stats)
    dual = [(cuts[i], y[i]) for i in range(len(cuts)) if y[i]]
    stats["cuts"] = len(cuts)
    if total == 0:
        raise TopologyError("the allreduce rate of this topology is 0: a set of nodes has no "
                            "outgoing link")
    w, _, _ = _generate(t, sep, cuts, total, stats)
    stats["cuts"] = len(cuts)
    ag_cut = _tight(t, w, cuts, y, False)
    rs_cut = _tight(t, w, cuts, y, True)
    m = sep.set_weights(w)
    ag_flows = [sep.flow_record(v, sep.flow(v).flow) for v in t.compute_nodes]
    rev = _Separator(t, engine, transposed=True)
    rev.set_weights(w)
    rs_flows = [rev.flow_record(v, rev.flow(v).flow) for v in t.compute_nodes]
    stats["maxflows"] += 2 * t.num_compute
    shards = {v: w[v] / total for v in t.compute_nodes}
    return WeightedRSAG(t, shards, total, ag_cut, rs_cut, dual, m, ag_flows, rs_flows, stats)
