"""Schedules a runtime runs as planned: every GPU pair on the route the runtime gives it.

An MSCCL-style runtime names ranks, not links: all traffic from GPU p to GPU q
goes over their direct link when there is one, otherwise through the switches
(:mod:`.runtime_rate`). ForestColl's optimum (Zhao & Krishnamurthy 2023, eq. (1);
Zhao et al. 2026, §5) lets a linked pair use switch paths too, so under this
constraint the best allgather rate can be lower. It is the optimum of the LP
(docs/schedules.md, "Runtime routes"; node ids are indices, compute nodes first)

    max x  s.t.
      y_pq ≤ c_pq                              linked pair (p, q): the direct link only
      y_pq ≤ Σ_w h^p_wq                        unlinked pair: what p's switch flow brings q
      Σ_out h^p − Σ_in h^p = 0                 at every switch, for every source p
      Σ_p h^p_e ≤ c_e                          every link touching a switch
      g^v_pq ≤ y_pq                            every sink v, logical arc (p, q)
      Σ_q g^v_uq − Σ_p g^v_pu − x = 0          every sink v, compute node u ≠ v

y is the logical graph of GPU-to-GPU rates the runtime can carry (h^p is p's flow
through the switches, which leaves p on links to switches and enters only the
compute nodes p has no link to); g^v is a flow in y bringing x from every other
compute node to v. The cut condition this expresses, every S ∌ v has logical
capacity B⁺_y(S) ≥ x·|S ∩ V_c|, is the allgather condition of Zhao &
Krishnamurthy 2023, Thm 1 on the logical graph, where Edmonds' arborescence
packing (Thm 12) reaches rate N·x (algbw) with no Eulerian assumption: any
constrained schedule defines such a y, and the trees on an optimal y reach it.
Without the constraint (``constrained=False``: h^p may also enter linked compute
nodes, and y_pq ≤ c_pq + Σ_w h^p_wq) the LP's optimum is ForestColl's, which the
tests compare. The exact LP layer proves the optimum; the certificate
(``runtime-routes-optimum``) is checked by :mod:`collcert.certify.execution`, which
rebuilds the LP from the topology.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..model import Topology, fraction_str


@dataclass
class RuntimeOptimum:
    """The best allgather rate under (or without) the runtime's routes, proven by an LP."""

    topology: Topology
    constrained: bool
    x: Fraction
    logical: dict[tuple[Any, Any], Fraction]  # y: GPU-to-GPU rates, positive ones
    switch_flow: dict[Any, dict[tuple[Any, Any], Fraction]]  # h^p per source p
    lp_certificate: dict[str, Any]
    balanced: bool = False
    collective: str = "allgather"  # reduce-scatter: ``topology`` is the machine transposed
    machine: Topology | None = None  # the machine itself (None: ``topology``)

    @property
    def algbw(self) -> Fraction:
        return self.topology.num_compute * self.x

    def certificate(self) -> dict[str, Any]:
        t = self.machine or self.topology
        return {"format": "collcert-certificate/1", "kind": "runtime-routes-optimum",
                "collective": self.collective, "topology": t.content_hash(),
                "constrained": self.constrained, "balanced": self.balanced,
                "x": fraction_str(self.x),
                "algbw": fraction_str(self.algbw),
                "time_per_unit": fraction_str(1 / self.algbw), **self.lp_certificate}


def _names(t: Topology) -> dict[Any, int]:
    return {v: i for i, v in enumerate(t.nodes)}


def build_lp(t: Topology, constrained: bool = True, balanced: bool = False,
             sinks: bool = True) -> Any:
    """The LP of the module docstring (a :class:`~collcert.reference.solvers.LinearProgram`);
    ``balanced`` adds Σ_q y_pq = Σ_q y_qp at every compute node p (an Eulerian logical
    graph, which the tree builder needs); ``sinks=False`` leaves out the flows g^v (the
    routing part only, to which :mod:`.runtime_cuts` adds cut rows)."""
    from ..solvers import LinearProgram

    ix = _names(t)
    comp = list(t.compute_nodes)
    switches = set(t.switch_nodes)
    cap = t.capacity
    lp = LinearProgram("max")
    lp.add_variable("x", 1)
    for p in comp:
        for q in comp:
            if p == q:
                continue
            y = f"y{ix[p]}>{ix[q]}"
            into: dict[Hashable, object] = {f"h{ix[p]}:{ix[w]}>{ix[q]}": -1 for w in switches
                    if (w, q) in cap and (not constrained or (p, q) not in cap)}
            if (p, q) in cap:
                lp.add_row(f"dir{ix[p]}>{ix[q]}", {y: 1, **into}, "<=", cap[(p, q)])
            else:  # with no switch route, y_pq ≤ 0
                lp.add_row(f"sw{ix[p]}>{ix[q]}", {y: 1, **into}, "<=", 0)
    if balanced:
        for p in comp:
            bal: dict[Hashable, object] = {}
            for q in comp:
                if q != p:
                    bal[f"y{ix[p]}>{ix[q]}"] = 1
                    bal[f"y{ix[q]}>{ix[p]}"] = -1
            lp.add_row(f"bal{ix[p]}", bal, "=", 0)
    for p in comp:
        for w in sorted(switches, key=lambda n: ix[n]):
            row: dict[Hashable, object] = {}
            for (a, b) in cap:
                if b == w and _uses(p, a, b, switches, comp, cap, constrained):
                    row[f"h{ix[p]}:{ix[a]}>{ix[b]}"] = -1  # into w
                if a == w and _uses(p, a, b, switches, comp, cap, constrained):
                    row[f"h{ix[p]}:{ix[a]}>{ix[b]}"] = 1  # out of w
            if row:
                lp.add_row(f"swc{ix[p]}:{ix[w]}", row, "=", 0)
    for (a, b), c in cap.items():
        if a in switches or b in switches:
            users = [p for p in comp if _uses(p, a, b, switches, comp, cap, constrained)]
            if users:
                lp.add_row(f"link{ix[a]}>{ix[b]}",
                           {f"h{ix[p]}:{ix[a]}>{ix[b]}": 1 for p in users}, "<=", c)
    if sinks:
        add_sink_rows(lp, t)
    return lp


def add_sink_rows(lp: Any, t: Topology) -> None:
    """The flows g^v of every sink v in y (the full LP's allgather condition)."""
    ix = _names(t)
    comp = list(t.compute_nodes)
    for v in comp:
        for u in comp:
            if u == v:
                continue
            row: dict[Hashable, object] = {"x": -1}
            for q in comp:
                if q != u:
                    row[f"g{ix[v]}:{ix[u]}>{ix[q]}"] = 1  # out of u (into v too)
                if q not in (u, v):
                    row[f"g{ix[v]}:{ix[q]}>{ix[u]}"] = -1  # into u (nothing leaves v)
            lp.add_row(f"cons{ix[v]}:{ix[u]}", row, "=", 0)
        for p in comp:
            for q in comp:
                if p != q and p != v:
                    lp.add_row(f"cap{ix[v]}:{ix[p]}>{ix[q]}",
                               {f"g{ix[v]}:{ix[p]}>{ix[q]}": 1, f"y{ix[p]}>{ix[q]}": -1},
                               "<=", 0)


def _delivers(p: Any, q: Any, comp: list[Any], cap: Any, constrained: bool) -> bool:
    """May p's switch flow enter compute node q?"""
    return q != p and q in comp and (not constrained or (p, q) not in cap)


def _uses(p: Any, a: Any, b: Any, switches: set[Any], comp: list[Any], cap: Any,
          constrained: bool) -> bool:
    """Is link (a, b) one that p's switch flow may use?"""
    if a == p:
        return b in switches
    if a in switches:
        return b in switches or _delivers(p, b, comp, cap, constrained)
    return False


def runtime_optimum(machine: Topology, constrained: bool = True, balanced: bool = False,
                    collective: str = "allgather", method: str = "cuts",
                    progress: Any = None, notice: Any = None, why: str = "",
                    ) -> RuntimeOptimum:
    """The certified best allgather (or reduce-scatter: the allgather of the transposed
    machine) rate when every GPU pair uses the runtime's route (``constrained``), or any
    route (ForestColl's optimum, for comparison). ``method``: ``"cuts"`` (cut generation,
    :mod:`.runtime_cuts`; scales to 32 GPUs and more) or ``"lp"`` (the full LP with one
    flow per sink; the two prove the same optimum, which the tests compare)."""
    from ..solvers import solve_lp
    from .runtime_cuts import check_lp_size, solve_by_cuts

    if method not in ("cuts", "lp"):
        raise ValueError(f"method {method!r}: use 'cuts' or 'lp'")
    t = machine.transpose() if collective == "reduce-scatter" else machine
    if method == "cuts":  # the estimate (``notice(text, seconds)``), or a refusal, first
        check_lp_size(t, notice, why)
    ix = _names(t)
    flows: dict[Any, Any] = {}
    if method == "lp":
        res = solve_lp(build_lp(t, constrained, balanced))
    else:
        res, flows = solve_by_cuts(t, lambda: build_lp(t, constrained, balanced, sinks=False),
                                   progress)
    comp = list(t.compute_nodes)
    y = {(p, q): res.x.get(f"y{ix[p]}>{ix[q]}", Fraction(0)) for p in comp for q in comp
         if p != q}
    h: dict[Any, dict[tuple[Any, Any], Fraction]] = {}
    for p in comp:
        flow = {(a, b): res.x.get(f"h{ix[p]}:{ix[a]}>{ix[b]}", Fraction(0))
                for (a, b) in t.capacity}
        h[p] = {e: amount for e, amount in flow.items() if amount}
    cert = res.certificate()
    cert.pop("format", None)
    if method == "cuts":
        cert["method"] = "cuts"
        cert["flows"] = {str(ix[v]): {f"{ix[p]}>{ix[q]}": fraction_str(a)
                                      for (p, q), a in sorted(g.items(), key=lambda e: (
                                          ix[e[0][0]], ix[e[0][1]]))}
                         for v, g in flows.items()}
    return RuntimeOptimum(t, constrained, res.objective, {e: v for e, v in y.items() if v},
                          h, cert, balanced, collective, machine)


def allreduce_certificate(rs: RuntimeOptimum, ag: RuntimeOptimum) -> dict[str, Any]:
    """The allreduce of ``--routes runtime``: reduce-scatter, then allgather, each at its
    own runtime-routes optimum (both proven). Time per unit 1/rs + 1/ag: the best of
    every such two-phase schedule on the runtime's routes (each phase moves the same
    equal shards, and the phases' times add), and reached by the schedule; not proven
    to be the best allreduce on these routes (an allreduce need not be two phases)."""
    t = ag.machine or ag.topology
    time = 1 / rs.algbw + 1 / ag.algbw
    return {"format": "collcert-certificate/1", "kind": "runtime-routes-optimum",
            "collective": "allreduce", "topology": t.content_hash(),
            "constrained": rs.constrained and ag.constrained, "scope": "reduce-scatter then "
            "allgather", "algbw": fraction_str(1 / time), "time_per_unit": fraction_str(time),
            "reduce_scatter": rs.certificate(), "allgather": ag.certificate()}

