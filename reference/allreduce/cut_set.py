"""The cut-set upper bound on the all-reduce computation rate (Zhou & Sun 2026, Thm 1).

*On the Computation Rate of All-Reduce*. Model: K nodes on any directed graph,
link i→j carrying β_ij per network use (β_ij and β_ji independent, 0 = no
link); every node must learn the sum of all inputs; block coding and network
coding are allowed. R* is the best rate (sums per network use; here: data per
unit of time in the topology's bandwidth unit, so an allreduce of M takes
M / R).

Theorem 1 (cut-set bound, holds with network coding)
    R* ≤ C = min over ∅ ≠ S, S ∩ V_c ≠ V_c of B⁺(S). Computed with
    2(K−1) max-flows between a fixed compute node v0 and every other one, in
    both directions: every such S separates v0 from some v, one way or the
    other. Switches (relay nodes without input) may lie on either side.
    Certificate: the cut S with B⁺(S) = C, and one flow of value ≥ C for
    every pair (v0 → v, v → v0).

The lower bound of Theorem 2, the MAC-BC LP, is :mod:`.rate`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..model import Link, Node, Topology, TopologyError, fraction_str
from ..solvers import FlowNetwork


def check_two_compute_nodes(t: Topology) -> None:
    """Refuse a topology with one compute node: its allreduce needs no communication,
    and its rate is unbounded (both of Zhou & Sun 2026's bounds need K ≥ 2)."""
    if t.num_compute < 2:
        raise TopologyError(
            f"the topology has one compute node ({t.compute_nodes[0]!r}): an allreduce over it "
            "needs no communication, so its rate is unbounded; add compute nodes"
        )


@dataclass
class CutSetBound:
    """C = min B⁺(S) over node sets S that split the compute nodes, with its proof."""

    value: Fraction
    cut: frozenset[Node]
    flows: list[dict[str, Any]] = field(repr=False, default_factory=list)
    multiplier: int = 1
    maxflows: int = 0

    def certificate(self, t: Topology) -> dict[str, Any]:
        return {
            "kind": "allreduce-cut-set",
            "value": fraction_str(self.value),
            "cut": [v for v in t.nodes if v in self.cut],
            "multiplier": self.multiplier,
            "flows": self.flows,
        }


def cut_set_bound(t: Topology, *, engine: str = "auto") -> CutSetBound:
    """The cut-set bound C of Zhou & Sun 2026, Thm 1, exact, with witnesses."""
    check_two_compute_nodes(t)
    v0 = t.compute_nodes[0]
    links = list(t.int_capacity)
    if not links:
        return CutSetBound(Fraction(0), frozenset([v0]), [], t.scale, 0)
    idx = t.index
    net = FlowNetwork(len(t.nodes), [idx[u] for u, _ in links], [idx[v] for _, v in links],
                      [t.int_capacity[e] for e in links], engine=engine)
    best: tuple[int, frozenset[Node]] | None = None
    flows: list[dict[str, Any]] = []
    for v in t.compute_nodes[1:]:
        for src, dst in ((v0, v), (v, v0)):
            res = net.solve(idx[src], idx[dst])
            value = int(res.value)
            flows.append({"source": src, "sink": dst, "value": value,
                          "flow": [[u, w, int(a)] for (u, w), a in zip(links, res.flow) if a]})
            if best is None or value < best[0]:
                best = (value, _residual_side(links, t.int_capacity, res.flow, src))
    assert best is not None
    value, side = best
    if sum(t.int_capacity[e] for e in links if e[0] in side and e[1] not in side) != value:
        raise RuntimeError("internal: the max-flow engine's cut does not match its flow value")
    return CutSetBound(Fraction(value, t.scale), side, flows, t.scale, len(flows))


def _residual_side(links: list[Link], cap: dict[Link, int], flow: Any, source: Node,
                   ) -> frozenset[Node]:
    """Nodes reachable from ``source`` in the residual network of a maximum flow: the
    source side of a minimum cut. Computed here from the flow itself (the OR-Tools
    engine's own source side is {source} when the flow is 0 and the sink has no links)."""
    nxt: dict[Node, list[Node]] = {}
    for e, f in zip(links, flow):
        u, v = e
        if int(f) < cap[e]:
            nxt.setdefault(u, []).append(v)
        if int(f) > 0:
            nxt.setdefault(v, []).append(u)
    seen = {source}
    stack = [source]
    while stack:
        for w in nxt.get(stack.pop(), []):
            if w not in seen:
                seen.add(w)
                stack.append(w)
    return frozenset(seen)
