"""When RS+AG is an optimal allreduce: Zhao & Krishnamurthy 2023, Thm 19, decided exactly.

Setting (Eulerian G, N compute nodes V_c): 1/x* = max over S ⊉ V_c of
|S ∩ V_c| / B⁺(S) (the allgather optimum, eq. (1)); RS+AG takes 2/(N·x*) per
unit of data. Theorem 19: RS+AG is bandwidth optimal if a maximiser S* has

(a) |S* ∩ V_c| = N/2, or
(b) V_c − S* = {v'} and min_{S ∩ V_c = {v'}} B⁺(S) = max_v min_{S ∩ V_c = {v}} B⁺(S).

(The extracted text of (b) prints "S* ∩ V_c = {v'}"; the remark under the theorem,
|S* ∩ V_c| ≥ N/2, and its proof, which uses B⁺(S*) = B⁺(V − S*), need the
complement.) S* is not unique, so "a maximiser" means *some* maximiser. Let
C = min B⁺(S) over S splitting V_c (bound (6), the cut-set bound) and
s_v = min_{S ∩ V_c = {v}} B⁺(S) (bound (7)). Eulerian, B⁺(S) = B⁺(V − S), so
every splitting S gives |S ∩ V_c|, N − |S ∩ V_c| ≤ B⁺(S)/x*, hence always
C ≥ N·x*/2 and s_v ≥ (N − 1)·x*; and

- (a) holds ⟺ C = N·x*/2; then *every* minimum cut of bound (6) has exactly N/2
  compute nodes and is a maximiser S* (the witness);
- (b) holds ⟺ s_v = (N − 1)·x* for *every* v (the max equals the least
  possible value); the witnesses are the bound-(7) cuts S_v, each with
  B⁺(S_v) = (N − 1)·x*, whose complements are maximisers.

So (a) or (b) ⟺ the RS+AG time equals max(bound (6), bound (7)): the theorem's
condition is exactly "the known lower bounds prove RS+AG optimal". When (a)
fails the cut-set certificate (flows of value C, :mod:`.cut_set`) proves
C > N·x*/2; when (b) fails, one max-flow from a node v to V_c − {v} of value
> (N − 1)·x* proves it. Everything is checked by
``collcert.certify.allreduce.check_rsag_condition``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..forestcoll import Optimum, optimum
from ..model import Node, Topology, fraction_str, show
from ..solvers import FlowNetwork
from .cut_set import CutSetBound, cut_set_bound


@dataclass
class RsagCondition:
    """Thm 19 decided: ``a`` and ``b`` (each exactly), with the witnesses of each answer."""

    inv_x: Fraction
    cut_set: Fraction
    a: bool
    b: bool
    a_cut: frozenset[Node]
    b_cuts: dict[Node, frozenset[Node]] = field(default_factory=dict)
    b_refutation: dict[str, Any] | None = None

    @property
    def holds(self) -> bool:
        return self.a or self.b

    @property
    def condition(self) -> str | None:
        """``"a"``, ``"b"``, ``"a+b"`` or ``None``."""
        return "+".join(k for k, ok in (("a", self.a), ("b", self.b)) if ok) or None

    n: int = 0

    @property
    def rsag_time(self) -> Fraction:
        """The RS+AG time per unit of data, 2/(N·x*)."""
        return 2 * self.inv_x / self.n

    def certificate(self, t: Topology) -> dict[str, Any]:
        """What ``check_rsag_condition`` reads (with the optimum and cut-set certificates)."""
        def nodes(s: frozenset[Node]) -> list[Node]:
            return [v for v in t.nodes if v in s]
        out: dict[str, Any] = {
            "kind": "allreduce-rsag-condition", "theorem": "Zhao & Krishnamurthy 2023, Thm 19",
            "inv_x": fraction_str(self.inv_x), "cut_set_bound": fraction_str(self.cut_set),
            "a": self.a, "b": self.b, "condition": self.condition,
            "a_cut": nodes(self.a_cut) if self.a else None,
        }
        if self.b:
            out["b_cuts"] = [[v, nodes(s)] for v, s in self.b_cuts.items()]
        else:
            out["b_refutation"] = self.b_refutation
        return out

    def summary(self) -> str:
        """One line for the allreduce report (figures with their decimals)."""
        n, x = self.n, 1 / self.inv_x
        refuted = self.b_refutation["source"] if self.b_refutation else "?"
        parts = [f"(a) C = {show(self.cut_set)} {'=' if self.a else '>'} N·x*/2 = "
                 f"{show(n * x / 2)}",
                 f"(b) every s_v = (N−1)·x* = {show((n - 1) * x)}" if self.b else
                 f"(b) s_{refuted} > (N−1)·x* = {show((n - 1) * x)} (max-flow)"]
        if self.a:
            verdict = "holds (a): RS+AG is optimal, even with network coding (rate = C)"
        elif self.b:
            verdict = "holds (b): RS+AG is optimal among routing schedules (bound (7))"
        else:
            verdict = "fails: bounds (6) and (7) do not prove RS+AG optimal"
        return f"Thm 19 (Zhao & Krishnamurthy 2023) {verdict}; " + "; ".join(parts)


def rsag_condition(t: Topology, *, opt: Optimum | None = None, cut: CutSetBound | None = None,
                   engine: str = "auto") -> RsagCondition:
    """Decide Thm 19 (a) and (b) exactly for an Eulerian topology (see the module docstring).

    ``opt`` (``optimum(t, "allreduce")``) and ``cut`` (``cut_set_bound(t)``) are computed
    when not given. Raises :class:`~collcert.reference.model.TopologyError` when the
    topology is not Eulerian (the theorem's hypothesis; RS+AG needs it).
    """
    t.require_forestcoll("Thm 19 (Zhao & Krishnamurthy 2023, App. B)")
    if opt is None:
        opt = optimum(t, "allreduce", engine=engine)
    if cut is None:
        cut = cut_set_bound(t, engine=engine)
    assert opt.inv_x is not None
    inv_x, n = opt.inv_x, t.num_compute
    c = cut.value
    a = 2 * inv_x * c == n
    if a and 2 * sum(1 for v in cut.cut if t.is_compute(v)) != n:
        raise RuntimeError("internal: C = N·x*/2 but the minimum cut does not halve V_c")
    cuts: dict[Node, frozenset[Node]] = opt.extra["bound7_cuts"]
    need = (n - 1) / inv_x
    over = [v for v in t.compute_nodes if t.out_capacity(cuts[v]) != need]
    if any(t.out_capacity(cuts[v]) < need for v in over):
        raise RuntimeError("internal: a bound (7) cut is below (N−1)·x*, against eq. (1)")
    refutation = None if not over else _flow_to_others(t, over[0], engine)
    if refutation is not None and Fraction(refutation["value"], t.scale) <= need:
        raise RuntimeError("internal: the bound (7) cut and its max-flow disagree")
    return RsagCondition(inv_x, c, a, not over, cut.cut, dict(cuts) if not over else {},
                         refutation, n)


def _flow_to_others(t: Topology, v: Node, engine: str) -> dict[str, Any]:
    """A maximum flow from ``v`` to the other compute nodes (a super sink), in units of
    1/``t.scale``: its value is s_v."""
    links = list(t.int_capacity)
    big = sum(t.int_capacity.values()) + 1
    others = [c for c in t.compute_nodes if c != v]
    sink = len(t.nodes)
    net = FlowNetwork(sink + 1, [t.index[a] for a, _ in links] + [t.index[c] for c in others],
                      [t.index[b] for _, b in links] + [sink] * len(others),
                      [t.int_capacity[e] for e in links] + [big] * len(others), engine=engine)
    res = net.solve(t.index[v], sink)
    flow = [[a, b, int(f)] for (a, b), f in zip(links, res.flow) if int(f)]
    return {"source": v, "value": int(res.value), "multiplier": t.scale, "flow": flow}
