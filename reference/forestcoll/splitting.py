"""Switch removal by edge splitting (Zhao & Krishnamurthy 2023, §2.2, Thm 8, Alg 1; Zhao et al. 2026, §5.3, Thm 6, Alg 2-3).

Input: an integer-capacity Eulerian digraph D on compute and switch nodes,
a *supply* k_u ≥ 0 for every compute node u (the number of unit trees rooted
at u) and the demand D = Σ_u k_u. The invariant is

    min_{v ∈ V_c} F(s, v; D⃗) ≥ D,

where D⃗ is D plus a super source s with an arc s→u of capacity k_u (Zhao &
Krishnamurthy 2023, Thm 5: with k_u = k this is "k edge-disjoint spanning out-trees per compute
node exist"; broadcast uses k_r = λ and 0 elsewhere).

For each switch w, each egress f = (w, t) and each ingress e = (u, w), γ
units of (u, w) and (w, t) are replaced by γ units of (u, t), where γ is the
largest amount that keeps the invariant (Zhao & Krishnamurthy 2023, Thm 8):

    γ = min{ c(u,w), c(w,t), min_v F(u, w; D̂_{(u,w),v}) − D, min_v F(w, t; D̂_{(w,t),v}) − D }

with D̂_{(u,w),v} = D⃗ + ∞ arcs (u,s), (u,t), (v,w) (max-flow u→w) and
D̂_{(w,t),v} = D⃗ + ∞ arcs (w,s), (u,t), (v,t) (max-flow w→t).

How γ is found without 2N max-flows per pair
--------------------------------------------
We keep, for every compute node v, an explicit s→v flow of value D in the
current graph (these flows are also the certificate for G*). Splitting γ
units may keep a flow feasible: at the switch w, flow conservation lets us
re-pair any inflow with any outflow, so δ = min(f(u,w), f(w,t), γ) units
can be moved onto the new arc (u,t); the flow stays feasible iff
f(u,w) − δ ≤ c(u,w) − γ and f(w,t) − δ ≤ c(w,t) − γ. This test is done for
all v at once (numpy) with the optimistic γ0 = min(c(u,w), c(w,t)). Only
for the v whose flow does not survive do we re-solve F(s, v) in the split
graph; only when that is < D do we compute that v's exact bound
γ_v = min(F(u,w; D̂_{(u,w),v}), F(w,t; D̂_{(w,t),v})) − D (two max-flows; per
v the bound is exact by the proof of Zhao & Krishnamurthy 2023, Thm 8), and γ = min(γ0, min γ_v).
The survival test is monotone in γ (a flow that survives γ0 survives every
γ ≤ γ0), so the result is the γ of Thm 8 exactly.

A broken flow is first *repaired* from the kept one (``_Splitter.repair``):
each overloaded arc (a, b) is cut to its new capacity and the excess sent
a → b along residual paths (routes of one or two arcs, then BFS augmenting
paths). A repaired flow is checked exactly before it is kept, so it proves
F(s, v) ≥ D just as a re-solved one does; only when the repair finds no
route is F(s, v) re-solved with the max-flow engine (and, if < D, γ_v
computed as above). On dgx_a100:16 this replaces ≈ 15k max-flows by ≈ 150.
The shrinking graph (``SplitGraph``) and the repair (``FlowRepair``, a base of
the splitter) are in :mod:`.splitting_repair`, the walks in :mod:`.walks`.

Every capacity unit of every arc carries an explicit walk in the original
graph (a multiset of paths), so the routing of G* back to G is exact by
construction; the recursive table routing[(u,t)][w] of Alg 1 is kept too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model import ScheduleError
from ..solvers import FlowNetwork
from .splitting_repair import FlowRepair, Node, Path, SplitGraph, hop_distances
from .walks import join_units, take_units

Progress = Callable[[int, int], None]


@dataclass
class SplitResult:
    """G*: the switch-free graph, with the walk in G of every capacity unit."""

    compute_nodes: tuple[Node, ...]
    supply: dict[Node, int]
    demand: int
    capacity: dict[tuple[Node, Node], int]
    """G* capacities (compute nodes only), unit-tree units."""
    paths: dict[tuple[Node, Node], dict[Path, int]]
    """For each G* arc, its capacity units as walks in G: {path: units}."""
    routing: dict[tuple[Node, Node], dict[Node, int]]
    """Alg 1's recursive table: routing[(u, t)][w] units of (u, t) go via (u, w), (w, t)."""
    flows: dict[Node, dict[tuple[Node | None, Node], int]]
    """For each compute sink v, an s→v flow of value ≥ demand in G*⃗ (None names s)."""
    stats: dict[str, int] = field(default_factory=dict)


def without_cycles(walk: Path) -> Path:
    """``walk`` with every closed sub-walk cut out: a path with the same ends.

    Joining the walks of (u, w) and (w, t) can pass a switch twice (fat trees: core →
    agg → core shortcuts split again at the next switch); a unit sent along the path
    uses a subset of the walk's links, so every link load only falls and the routing
    stays within ⌊U·c_e⌋ (the bound certify checks, Zhao & Krishnamurthy 2023, Thm 8).
    Without this, walks grew past the 64 nodes the schedule reader accepts
    (fat_tree:8: 77)."""
    if len(set(walk)) == len(walk):
        return walk
    out: list[Node] = []
    seen: dict[Node, int] = {}
    for x in walk:
        at = seen.get(x)
        if at is not None:
            for y in out[at + 1:]:
                del seen[y]
            del out[at + 1:]
            continue
        seen[x] = len(out)
        out.append(x)
    return tuple(out)


def ingress_order(ins: list[int], t: int, hops: Mapping[int, int]) -> list[int]:
    """The order in which the ingresses u of a switch are split with its egress to t
    (Alg 1 leaves it free): round trips last, far-apart pairs first (``hops[u]``: hop
    distance from u to t without the switch), then cyclically after t (a ring inside
    a box when the distances tie). :mod:`.symsplit` splits in this order too."""
    rank = {u: r for r, u in enumerate(ins)}
    ti = rank.get(t, -1)
    return sorted(ins, key=lambda u: (u == t, -hops[u], (rank[u] - ti - 1) % len(ins)))


@dataclass
class _Pair:
    """γ units of (u, w), (w, t) to become (u, t) (``i_ut`` is -1 for a round trip,
    u = t): the arcs, their capacities, and every kept flow on (u, w) (``a``) and
    (w, t) (``b``), a row per sink."""

    u: int
    t: int
    i_uw: int
    i_wt: int
    i_ut: int
    c_uw: int
    c_wt: int
    c_ut: int
    a: np.ndarray
    b: np.ndarray

    def moved(self, gam: int) -> np.ndarray:
        """Flow re-paired at w onto (u, t), per sink, when γ = ``gam`` units are split."""
        d: np.ndarray = np.minimum(np.minimum(self.a, self.b), gam)
        return d

    def survivors(self, gam: int) -> np.ndarray:
        """The sinks whose kept flow stays feasible, re-paired, after the split."""
        d = self.moved(gam)
        ok: np.ndarray = (self.a - d <= self.c_uw - gam) & (self.b - d <= self.c_wt - gam)
        return ok


class _Splitter(FlowRepair):
    """Alg 1 over a :class:`~.splitting_repair.SplitGraph`: one local flow network per
    switch (the repair of kept flows is inherited from
    :class:`~.splitting_repair.FlowRepair`)."""

    def __init__(self, g: SplitGraph, demand: int, engine: str) -> None:
        self.g = g
        self.demand = demand
        self.engine = engine
        self.stats = {"pairs": 0, "pairs_split": 0, "maxflows": 0, "aux_maxflows": 0,
                      "resolves": 0, "repairs": 0}
        self.routing: dict[tuple[Node, Node], dict[Node, int]] = {}
        self.w = -1

    # ------------------------------------------------------------ network
    def build(self, w: int, ins: list[int], outs: list[int]) -> None:
        """The flow network of the live arcs, this switch's new arcs and the switchable
        auxiliary arcs: x→s, the pair (u,t) through hub h1, v→h2→{w, t}."""
        g = self.g
        self.w = w
        ins_s, outs_s = set(ins), set(outs)
        self.local = [i for i in range(len(g.tails)) if g.cap[i] > 0 or (
            g.tails[i] in ins_s and g.heads[i] in outs_s)]
        self.pos = {i: p for p, i in enumerate(self.local)}
        tails = [g.tails[i] for i in self.local]
        heads = [g.heads[i] for i in self.local]
        caps: list[int | None] = [g.cap[i] for i in self.local]
        self.n_real = len(self.local)
        h1, h2 = g.n + 1, g.n + 2
        self.aux: dict[tuple[str, int], int] = {}
        pairs: list[tuple[str, int, int, int]] = []
        if w >= 0:
            for u in ins:
                pairs += [("us", u, u, g.s), ("uh1", u, u, h1)]
            pairs.append(("ws", w, w, g.s))
            for t in outs:
                pairs += [("h1t", t, h1, t), ("h2t", t, h2, t)]
            pairs += [("vh2", v, v, h2) for v in range(g.nc)]
            pairs.append(("h2w", w, h2, w))
        for kind, key, a, b in pairs:
            self.aux[(kind, key)] = len(tails)
            tails.append(a)
            heads.append(b)
            caps.append(0)
        self.net = FlowNetwork(g.n + 3, tails, heads, caps, engine=self.engine)
        self.local_arr = np.asarray(self.local, dtype=np.int64)
        self.tails_arr = np.asarray(g.tails, dtype=np.int64)
        self.heads_arr = np.asarray(g.heads, dtype=np.int64)
        self._csr: tuple[np.ndarray, Any] | None = None
        self._route_cache: dict[tuple[int, int], tuple[Any, ...]] = {}
        self.finite_total = sum(c for c in caps if c is not None)
        # "infinite" auxiliary arcs: more than every finite cut, now and later (a split
        # only lowers the total), so the network never holds None and each update
        # costs O(arcs changed) (FlowNetwork.update_capacities)
        self.big = self.finite_total + 1

    def solve_sink(self, v: int) -> tuple[int, np.ndarray]:
        """F(s, v) in the current graph and its flow on the real arcs (a numpy
        array, compared and copied only; int64 unless the capacities are huge)."""
        value, flow = self.net.solve_array(self.g.s, v)
        self.stats["maxflows"] += 1
        return value, flow[: self.n_real]

    def store_flow(self, v: int, flow: np.ndarray) -> None:
        g = self.g
        g.flow[v, :] = 0
        g.flow[v, self.local_arr] = flow if flow.dtype == g.dtype else flow.astype(g.dtype)

    def set_cap(self, i: int, c: int) -> None:
        self.g.cap[i] = c
        self.net.update_capacities([self.pos[i]], [c])

    def _toggle(self, keys: Sequence[tuple[str, int]], on: bool) -> None:
        self.net.update_capacities([self.aux[key] for key in keys],
                                   [self.big if on else 0] * len(keys))

    def aux_bound(self, u: int, t: int, v: int) -> int | None:
        """min(F(u,w; D̂_(u,w),v), F(w,t; D̂_(w,t),v)) − D for one v (Zhao & Krishnamurthy 2023, Thm 8);
        None when both are infinite (the forced cut is impossible for this v)."""
        w = self.w
        best: int | None = None
        pair = [("uh1", u), ("h1t", t), ("vh2", v)]  # ∞ (u,t) and v→h2
        self._toggle(pair, True)
        if v not in (u, t):  # D̂_(u,w),v: ∞ (u,s), (u,t), (v,w); flow u → w
            self._toggle([("us", u), ("h2w", w)], True)
            r = self.net.solve_value(u, w)
            self.stats["aux_maxflows"] += 1
            if r <= self.finite_total:
                best = r
            self._toggle([("us", u), ("h2w", w)], False)
        if v != t:  # D̂_(w,t),v: ∞ (w,s), (u,t), (v,t); flow w → t
            self._toggle([("ws", w), ("h2t", t)], True)
            r = self.net.solve_value(w, t)
            self.stats["aux_maxflows"] += 1
            if r <= self.finite_total:
                best = r if best is None else min(best, r)
            self._toggle([("ws", w), ("h2t", t)], False)
        self._toggle(pair, False)
        return None if best is None else best - self.demand

    # --------------------------------------------------------------- split
    def split_pair(self, u: int, t: int) -> None:
        """Split off the largest safe γ of (u, w), (w, t) (Zhao & Krishnamurthy 2023, Thm 8)."""
        g, w = self.g, self.w
        i_uw, i_wt, c_uw, c_wt = g.pair(u, w, t)
        if min(c_uw, c_wt) == 0:
            return
        self.stats["pairs"] += 1
        i_ut = g.arc[(u, t)] if u != t else -1
        pr = _Pair(u, t, i_uw, i_wt, i_ut, c_uw, c_wt, g.cap[i_ut] if i_ut >= 0 else 0,
                   g.flow[:, i_uw].copy(), g.flow[:, i_wt].copy())
        gamma, new_flows, new_rows = self._safe_gamma(pr)
        if gamma == 0:
            return
        self.stats["pairs_split"] += 1
        self._keep_flows(pr, gamma, new_flows, new_rows)
        self._move_walks(pr, gamma)

    def _apply(self, pr: _Pair, gam: int) -> None:
        """The capacities after splitting γ = ``gam`` units of the pair (0: before)."""
        self.set_cap(pr.i_uw, pr.c_uw - gam)
        self.set_cap(pr.i_wt, pr.c_wt - gam)
        if pr.i_ut >= 0:
            self.set_cap(pr.i_ut, pr.c_ut + gam)

    def _safe_gamma(self, pr: _Pair) -> tuple[int, dict[int, np.ndarray], dict[int, dict[int, int]]]:
        """γ of Thm 8 (module docstring), with the flows found for it on the way: local
        flows from the solver and rows repaired in place (their undo logs)."""
        gamma0 = min(pr.c_uw, pr.c_wt)
        failing = [int(v) for v in np.nonzero(~pr.survivors(gamma0))[0]]
        if not failing:
            return gamma0, {}, {}
        new_flows: dict[int, np.ndarray] = {}
        new_rows: dict[int, dict[int, int]] = {}
        self._apply(pr, gamma0)
        capw = self.cap_row() if self.g.dtype is not object else None
        bad = []
        for v in failing:
            fixed = self.repair(v, pr.u, pr.t, gamma0, capw)
            if fixed is not None:
                new_rows[v] = fixed
                continue
            value, fl = self.solve_sink(v)
            self.stats["resolves"] += 1
            if value >= self.demand:
                new_flows[v] = fl
            else:
                bad.append(v)
        self._apply(pr, 0)  # undo
        if not bad:
            return gamma0, new_flows, new_rows
        for v, log in new_rows.items():
            self.undo(v, log)
        gamma = gamma0
        for v in bad:  # the exact bound, stopping as soon as it reaches 0
            bound = self.aux_bound(pr.u, pr.t, v)
            if bound is not None:
                gamma = min(gamma, bound)
            if gamma <= 0:
                break
        return max(gamma, 0), {}, {}

    def _keep_flows(self, pr: _Pair, gamma: int, new_flows: dict[int, np.ndarray],
                    new_rows: dict[int, dict[int, int]]) -> None:
        """Split γ units and keep a flow of value ≥ D for every sink: re-paired at w,
        found by :meth:`_safe_gamma`, repaired, or re-solved."""
        g = self.g
        ok = pr.survivors(gamma)
        d = pr.moved(gamma)
        rows = np.nonzero(ok)[0]
        g.flow[rows, pr.i_uw] -= d[rows]
        g.flow[rows, pr.i_wt] -= d[rows]
        if pr.i_ut >= 0:
            g.flow[rows, pr.i_ut] += d[rows]
        self._apply(pr, gamma)
        broken = [int(x) for x in np.nonzero(~ok)[0]]
        capw = (self.cap_row() if broken and not new_rows and not new_flows
                and g.dtype is not object else None)
        for v in broken:
            if v in new_rows:  # repaired in place
                continue
            if v in new_flows:
                fl = new_flows[v]
            else:
                fixed = None if capw is None else self.repair(v, pr.u, pr.t, gamma, capw)
                if fixed is not None:
                    continue
                value, fl = self.solve_sink(v)
                self.stats["resolves"] += 1
                if value < self.demand:
                    raise RuntimeError("internal: edge splitting broke the flow invariant "
                                       "(Zhao & Krishnamurthy 2023, Thm 8)")
            self.store_flow(v, fl)

    def _move_walks(self, pr: _Pair, gamma: int) -> None:
        """The walks of γ units of (u, w) and (w, t) joined into walks of (u, t), and the
        recursive routing table of Alg 1."""
        g = self.g
        left = take_units(g.paths[pr.i_uw], gamma)
        right = take_units(g.paths[pr.i_wt], gamma)
        if pr.i_ut >= 0:
            for p, x in join_units(left, right):
                p = without_cycles(p)
                g.paths[pr.i_ut][p] = g.paths[pr.i_ut].get(p, 0) + x
            key = (g.nodes[pr.u], g.nodes[pr.t])
            row = self.routing.setdefault(key, {})
            row[g.nodes[self.w]] = row.get(g.nodes[self.w], 0) + gamma

    def remove(self, w: int) -> None:
        g = self.g
        ins = sorted({g.tails[i] for i in g.live_in(w)})
        outs = sorted({g.heads[i] for i in g.live_out(w)})
        for u in ins:
            for t in outs:
                if u != t:
                    g.arc_between(u, t)
        self.build(w, ins, outs)
        dist = hop_distances(g, ins, w)
        for t in outs:
            i_wt = g.arc[(w, t)]
            hops = {u: dist[u][t] if dist[u][t] >= 0 else g.n for u in ins}
            order = ingress_order(ins, t, hops)
            for u in order:
                if g.cap[i_wt] == 0:
                    break
                self.split_pair(u, t)
            if g.cap[i_wt] != 0:
                raise RuntimeError(
                    f"internal: egress {g.nodes[w]!r}->{g.nodes[t]!r} kept {g.cap[i_wt]} units "
                    "after every ingress was tried (Zhao & Krishnamurthy 2023, Thm 7 says this cannot happen)"
                )
        if g.live_in(w):
            raise RuntimeError(f"internal: switch {g.nodes[w]!r} not isolated after splitting")


def remove_switches(
    compute: Sequence[Node],
    switches: Sequence[Node],
    caps: Mapping[tuple[Node, Node], int],
    supply: Mapping[Node, int],
    *,
    engine: str = "auto",
    progress: Progress | None = None,
) -> SplitResult:
    """Split off every switch (Zhao & Krishnamurthy 2023, Alg 1) keeping min_v F(s, v) ≥ Σ supply.

    ``caps`` are integer capacities on compute and switch nodes (an Eulerian
    graph when there are switches); ``supply[u]`` is the capacity of s→u.
    Raises :class:`ScheduleError` when the invariant does not hold to begin
    with, or when the graph is not Eulerian and has switches.
    """
    g = SplitGraph(compute, switches, caps, supply)
    demand = sum(int(supply.get(c, 0)) for c in compute)
    if switches:
        _require_eulerian(g)
    sp = _Splitter(g, demand, engine)
    sp.build(-1, [], [])
    for v in range(g.nc):  # the initial flows: Zhao & Krishnamurthy 2023, Thm 5's condition, and the first witnesses
        value, fl = sp.solve_sink(v)
        if value < demand:
            raise ScheduleError(
                f"the capacities do not admit {demand} unit trees: the flow from the source to "
                f"compute node {g.nodes[v]!r} is {value} < {demand} (Zhao & Krishnamurthy 2023, Thm 5); the k and U "
                "given do not fit this topology"
            )
        sp.store_flow(v, fl)
    remaining = [g.idx[w] for w in switches]
    for done in range(1, len(remaining) + 1):
        # next switch: the one with the fewest (ingress, egress) pairs
        w = min(remaining, key=lambda x: (len(g.live_in(x)) * len(g.live_out(x)), x))
        remaining.remove(w)
        sp.remove(w)
        if progress:
            progress(done, len(switches))
    return _result(g, sp, tuple(compute), supply, demand)


def _require_eulerian(g: SplitGraph) -> None:
    bal = [0] * g.n
    for i, (a, b) in enumerate(zip(g.tails, g.heads)):
        if a != g.s:
            bal[a] += g.cap[i]
            bal[b] -= g.cap[i]
    bad = [g.nodes[v] for v in range(g.n) if bal[v] != 0]
    if bad:
        raise ScheduleError(
            f"the integer capacities are not Eulerian at {', '.join(map(str, bad[:6]))}"
            f"{'…' if len(bad) > 6 else ''}: edge splitting (Zhao & Krishnamurthy 2023, Thm 7-8) needs every node "
            "to send as much as it receives, so switches cannot be removed"
        )


def _result(g: SplitGraph, sp: _Splitter, comp: tuple[Node, ...], supply: Mapping[Node, int],
            demand: int) -> SplitResult:
    """G* (the arcs left between compute nodes, with their walks), the routing table
    and the kept flows, one per compute sink (the certificates of G*)."""
    nc = g.nc
    capacity: dict[tuple[Node, Node], int] = {}
    paths: dict[tuple[Node, Node], dict[Path, int]] = {}
    arcs_cc = g.gstar_arcs(g.s, nc)
    for i in arcs_cc:
        key = (g.nodes[g.tails[i]], g.nodes[g.heads[i]])
        capacity[key] = g.cap[i]
        paths[key] = dict(g.paths[i])
    flows: dict[Node, dict[tuple[Node | None, Node], int]] = {}
    for v in range(nc):
        fv: dict[tuple[Node | None, Node], int] = {}
        for j, i in enumerate(g.src_arc):
            x = int(g.flow[v, i])
            if x:
                fv[(None, comp[j])] = x
        for i in arcs_cc:
            x = int(g.flow[v, i])
            if x:
                fv[(g.nodes[g.tails[i]], g.nodes[g.heads[i]])] = x
        flows[comp[v]] = fv
    return SplitResult(comp, {c: int(supply.get(c, 0)) for c in comp}, demand, capacity,
                       paths, sp.routing, flows, sp.stats)
