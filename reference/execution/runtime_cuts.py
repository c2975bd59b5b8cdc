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

from ..model import Topology, TopologyError, check_budget

Cut = frozenset[int]

MAX_LP_COLUMNS = 400_000
"""The largest master LP cut generation starts (as the alltoall LP's limit)."""
BYTES_PER_COLUMN = 3500
"""Peak memory per master-LP column (``/usr/bin/time``: ring:240 forced, 57,361 columns,
200 MB)."""
SECONDS_PER_COLUMN = 1e-4
"""One round (building the master LP, its exact solve, a max-flow per sink) per column,
measured on a loaded 2-core machine: ring:120 14,281 columns 1.2 s, ring:240 57,361
columns 5.4 s, dgx_a100:4 5,089 columns 0.6 s."""


def _seconds(s: float) -> str:
    return f"{s:.1f} s" if s < 60 else f"{s / 60:.0f} minutes"


def lp_size(t: Topology) -> tuple[int, int]:
    """(columns, rows) of the first master LP, at most: x, a y per ordered GPU pair, an
    h per source and link touching a switch; a routing row per pair, a conservation row
    per source and switch, a capacity row per switch link, 2N first cuts."""
    n = t.num_compute
    switches = set(t.switch_nodes)
    switch_links = sum(1 for (a, b) in t.capacity if a in switches or b in switches)
    columns = 1 + n * (n - 1) + n * switch_links
    rows = n * (n - 1) + n * len(switches) + switch_links + 2 * n
    return columns, rows


def check_lp_size(t: Topology, notice: Callable[[str, float], None] | None = None,
                  why: str = "") -> None:
    """Refuse (TopologyError, exit 2) a master LP beyond :data:`MAX_LP_COLUMNS` or the
    memory and time budgets (docs/limits.md), else tell ``notice`` (text, seconds) what
    cut generation will cost, before it starts. ``why``: why the LP is needed (prefix)."""
    columns, rows = lp_size(t)
    seconds = SECONDS_PER_COLUMN * columns
    what = (f"the runtime-routes LP of {t.name or 'the topology'} ({t.num_compute} GPUs) "
            f"has about {columns} columns and {rows} rows")
    if columns > MAX_LP_COLUMNS:
        raise TopologyError(f"{why}{what}, more than the {MAX_LP_COLUMNS} columns collcert "
                            "solves exactly; try fewer GPUs (docs/limits.md)")
    try:
        check_budget(what, BYTES_PER_COLUMN * columns, "one round of cut generation",
                     seconds=seconds, action="try fewer GPUs")
    except TopologyError as exc:
        raise TopologyError(f"{why}{exc}") from None
    if notice:
        notice(f"{why}{what}; cut generation solves it once per round, about "
               f"{_seconds(seconds)} a round; the rounds are not known before "
               f"(dgx_a100:4 took 33); --progress shows them", seconds)


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
