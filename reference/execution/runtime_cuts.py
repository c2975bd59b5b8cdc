"""The runtime-routes optimum by cut generation: the same optimum as the full LP, at scale.

The full LP of :mod:`.runtime_routes` carries one flow g^v per sink over every logical
arc: N·N(N−1) variables, which did not finish in 600 s on mi250:2 (32 GPUs). The flows
only express the allgather condition on the logical graph y (Zhao & Krishnamurthy
2023, eq. (1), Thm 1):

    Σ_{p∈S, q∉S} y_pq ≥ x·|S|      for every proper non-empty set S of compute nodes

so this module keeps the routing rows (y, h: exactly the full LP's) and adds these cut
rows a few at a time (docs/schedules.md, "Runtime routes at scale"):

1. solve the master LP (routing rows, the cuts found so far; first the singletons
   {p} and the complements V_c − {v}) exactly: x̄, ȳ;
2. for every sink v, one max-flow in ȳ from a source giving x̄ to every u ≠ v; if it
   falls short, its minimum cut S (S ∌ v) violates a cut row, which is added;
3. when every sink's flow is full, stop.

Each cut row holds for every schedule on the runtime's routes, so the master LP is a
relaxation: its optimum x̄ bounds every such schedule (upper bound, proven by the LP's
dual). The final flows g^v show that ȳ, which the routing rows realise, meets the
allgather condition at x̄, so x̄ is reached (Edmonds' packing on ȳ, Thm 12): x̄ is
the optimum. The certificate carries the master LP, its primal and dual, and the
flows; :mod:`collcert.certify.execution.runtime_routes` checks all three.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from ..model import Topology

Cut = frozenset[int]


class _Source:
    """The super source of a sink's flow (a key no node has)."""


def cut_row(lp: Any, t: Topology, cut: Cut) -> None:
    """Add Σ_{p∈S, q∉S} y_pq − |S|·x ≥ 0 for S = ``cut`` (node indices)."""
    comp = list(t.compute_nodes)
    ix = {v: i for i, v in enumerate(t.nodes)}
    inside = [p for p in comp if ix[p] in cut]
    outside = [q for q in comp if ix[q] not in cut]
    row: dict[Any, object] = {f"y{ix[p]}>{ix[q]}": 1 for p in inside for q in outside}
    row["x"] = -len(inside)
    lp.add_row("cut:" + ",".join(str(i) for i in sorted(cut)), row, ">=", 0)


def sink_flow(comp: list[Any], y: dict[tuple[Any, Any], Fraction], x: Fraction,
              v: Any) -> tuple[dict[tuple[Any, Any], Fraction] | None, set[Any]]:
    """A flow in y bringing x from every u ≠ v to v (exact: integers after scaling), or
    None and the compute nodes of a minimum cut's source side (a set S ∌ v with
    B⁺_y(S) < x·|S|)."""
    from ..solvers import max_flow

    scale = math.lcm(x.denominator, *(a.denominator for a in y.values()))
    src = _Source()
    caps: dict[Any, int | None] = {(p, q): int(a * scale) for (p, q), a in y.items()
                                   if p != v and a > 0}
    for u in comp:
        if u != v:
            caps[(src, u)] = int(x * scale)
    res = max_flow(caps, src, v)
    if res.value == x * scale * (len(comp) - 1):
        return ({e: Fraction(f, scale) for e, f in res.flow.items()
                 if f and e[0] is not src}, set())
    return None, {u for u in res.source_side if u is not src}


def solve_by_cuts(t: Topology, routing: Callable[[], Any],
                  progress: Callable[[str], None] | None = None) -> tuple[Any, dict[Any, Any]]:
    """The proven optimum: (the exact LP result of the last master LP, {sink: flow});
    ``routing()`` gives a new LP of the routing rows (:func:`.runtime_routes.build_lp`
    with ``sinks=False``) to which the cut rows are added."""
    from ..solvers import solve_lp

    comp = list(t.compute_nodes)
    ix = {v: i for i, v in enumerate(t.nodes)}
    everyone = frozenset(ix[p] for p in comp)
    cuts: set[Cut] = set()
    if len(comp) > 1:
        cuts = {frozenset([ix[p]]) for p in comp} | {everyone - {ix[v]} for v in comp}
    rounds = 0
    while True:
        rounds += 1
        lp = routing()
        for cut in sorted(cuts, key=sorted):
            cut_row(lp, t, cut)
        res = solve_lp(lp)
        x = res.objective
        y = {(p, q): res.x.get(f"y{ix[p]}>{ix[q]}", Fraction(0)) for p in comp for q in comp
             if p != q}
        flows: dict[Any, Any] = {}
        new: set[Cut] = set()
        for v in comp:
            flow, side = sink_flow(comp, y, x, v) if x > 0 else ({}, set())
            if flow is None:
                new.add(frozenset(ix[u] for u in side))
            else:
                flows[v] = flow
        if progress:
            progress(f"runtime routes: round {rounds}, {len(cuts)} cuts, x = {x}, "
                     f"{len(new)} new")
        if not new:
            return res, flows
        if new <= cuts:
            raise RuntimeError("internal: a violated cut the master LP already holds")
        cuts |= new
