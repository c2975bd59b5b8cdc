"""Spanning out-tree packing in batches (Zhao & Krishnamurthy 2023, §2.3, Thm 12, Alg 2; Zhao et al. 2026, §5.4, Alg 4).

Input: a switch-free digraph G* with integer capacities g and a demand
k_u ≥ 0 per root u such that min_v F(s, v; G*⃗) ≥ Σ_u k_u (s→u of capacity
k_u). Output: batches R = (root, edges, m): m identical out-trees rooted at
the root spanning every node, with Σ m = k_u per root and, for every arc,
Σ {m(R) : arc ∈ E(R)} ≤ g(arc).

Each batch grows from {root}. For an arc (x, y) with x ∈ R_i, y ∉ R_i,

    μ = min{ g(x,y), m(R_i), F(x, y; D̄) − Σ_{j≠i} m(R_j) }      (Zhao & Krishnamurthy 2023, Thm 12)

where D̄ is G* (residual capacities g) plus a node s_j per other batch R_j
with an arc x→s_j of capacity m(R_j) and ∞ arcs s_j→(every vertex of R_j).
If μ < m(R_i) the batch is split into a copy with m − μ (without the arc)
and R_i with μ (with it). One max-flow per μ.

Simplifications that keep μ exact: a batch R_j that already contains y adds
exactly m(R_j) to the flow (every x–y cut must cut x→s_j, since s_j→y is
infinite) and is dropped together with its m(R_j) from the sum; batches
with the same vertex set share one s_j (their m add up); a batch that is
still just {r} needs no s_j (the arc x→r of capacity m does the same);
x→s_j arcs are written σ→s_j from a super source σ with σ→x infinite,
which has the same cuts. The max-flow goes to a sink arc y→T capped at
Σ m(R_j) + min(g, m(R_i)): nothing above that is needed.

Speed: D̄ is one persistent :class:`FlowNetwork` for the whole packing (G*
arcs, σ→v and v→T for every v, a pool of hub nodes s_j); each μ updates only
the capacities that differ from the previous one (``update_capacities``)
and asks for the value only. Infinite arcs get a finite capacity ``big`` no
smaller than the sink arc's, which leaves the maximum flow unchanged (see
the comment in :func:`pack_trees`). The μ values, hence the batches, are
exactly those of a network rebuilt for every μ.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..solvers import FlowNetwork

Node = Hashable
Progress = Callable[[int, int], None]


@dataclass
class Batch:
    """``multiplicity`` identical out-trees rooted at ``root``."""

    root: Node
    multiplicity: int
    edges: list[tuple[Node, Node]] = field(default_factory=list)
    depth: dict[Node, int] = field(default_factory=dict)

    @property
    def height(self) -> int:
        return max(self.depth.values()) if self.depth else 0


@dataclass
class Packing:
    batches: list[Batch]
    maxflows: int
    rejected: int


def pack_trees(
    nodes: Sequence[Node],
    capacity: Mapping[tuple[Node, Node], int],
    supply: Mapping[Node, int],
    *,
    engine: str = "auto",
    progress: Progress | None = None,
) -> Packing:
    """Batches of spanning out-trees, Σ m = supply[u] per root u (Zhao & Krishnamurthy 2023, Alg 2)."""
    nodes = list(nodes)
    n = len(nodes)
    idx = {v: i for i, v in enumerate(nodes)}
    g: dict[tuple[int, int], int] = {}
    for (a, b), c in capacity.items():
        if c > 0:
            g[(idx[a], idx[b])] = g.get((idx[a], idx[b]), 0) + int(c)
    out_adj: list[list[int]] = [[] for _ in range(n)]
    for a, b in g:
        out_adj[a].append(b)

    # batch state (indices): root, vertex set (a set and the same set as a bitmask,
    # the mask keys batches with equal vertex sets), vertices in order of joining,
    # edges, m, depth
    roots: list[int] = []
    sets: list[set[int]] = []
    masks: list[int] = []
    members: list[list[int]] = []
    edges: list[list[tuple[int, int]]] = []
    mult: list[int] = []
    depth: list[dict[int, int]] = []
    for v in nodes:
        k = int(supply.get(v, 0))
        if k > 0:
            i = idx[v]
            roots.append(i)
            sets.append({i})
            masks.append(1 << i)
            members.append([i])
            edges.append([])
            mult.append(k)
            depth.append({i: 0})
    total_edges = sum(mult) * (n - 1)
    placed = 0
    queue = list(range(len(roots)))
    maxflows = 0
    rejected = 0
    sigma, sink = n, n + 1

    # D̄ is one persistent network, re-solved for every μ with only the arcs that
    # change updated (FlowNetwork.update_capacities). Node layout: 0..n-1 the
    # vertices, σ = n, T = n+1, then a pool of hub nodes s_j. Arc layout: the
    # G* arcs (residual capacities g), σ→v and v→T for every v, then per hub
    # σ→hub and hub→v for every v. An unused arc has capacity 0 (no effect on
    # the flow). Infinite arcs get capacity ``big`` ≥ Σ_j m(R_j) ≥ ``need``,
    # the capacity of the sink arc: every σ–T cut crossing one costs at least
    # as much as the cut of the sink arc alone, so the maximum flow (the
    # minimum cut, at most ``need``) is that of D̄ with infinite arcs.
    arc_pos = {a: p for p, a in enumerate(g)}
    m_g = len(arc_pos)
    big = sum(mult) + max(g.values(), default=0) + 1
    huge = big * (2 * n + 4) + sum(g.values()) >= 2**61
    dtype: Any = object if huge else np.int64
    sig_arc = [m_g + v for v in range(n)]
    snk_arc = [m_g + n + v for v in range(n)]
    net: FlowNetwork | None = None
    pool = 0  # hub slots in the network
    slots: dict[int, int] = {}  # vertex-set mask -> hub slot holding it

    def hub_sig(h: int) -> int:
        return m_g + 2 * n + h * (n + 1)

    def build(hubs: int) -> FlowNetwork:
        nonlocal pool
        pool = hubs
        tails = [a for a, _ in g] + [sigma] * n + list(range(n))
        heads = [b for _, b in g] + list(range(n)) + [sink] * n
        for h in range(hubs):
            tails += [sigma] + [n + 2 + h] * n
            heads += [n + 2 + h] + list(range(n))
        caps = np.zeros(len(tails), dtype=dtype)
        caps[:m_g] = list(g.values())
        slots.clear()
        return FlowNetwork.from_arrays(n + 2 + hubs, np.array(tails, dtype=np.int64),
                                       np.array(heads, dtype=np.int64), caps, engine=engine)

    def slot_of(mask: int, j: int) -> int:
        """The hub slot of a vertex set, (re)using a slot whose set no batch has."""
        assert net is not None
        h = slots.get(mask)
        if h is None:
            used = set(slots.values())
            free = [x for x in range(pool) if x not in used]
            if not free:
                live = set(masks)
                for key in [key for key in slots if key not in live]:
                    del slots[key]
                used = set(slots.values())
                free = [x for x in range(pool) if x not in used]
            h = free[0]  # the caller made sure the pool is large enough
            slots[mask] = h
            base = hub_sig(h) + 1
            inside = set(members[j])
            net.update_capacities([base + v for v in range(n)],
                                  [big if v in inside else 0 for v in range(n)])
        return h

    # Batches other than the one growing enter D̄ in two kinds (module docstring):
    # still-{r} batches as σ→r (their m summed per root in ``single_total``,
    # which the σ→r arcs hold between calls), and the few partly grown batches
    # (``grown``) through hub nodes. A call changes only the arcs that differ
    # from that baseline (``exceptions``), so it costs O(changed arcs + grown).
    single_total = [0] * n
    for j, r in enumerate(roots):
        single_total[r] += mult[j]
    single_sum = sum(single_total)
    grown: set[int] = set()  # batches with 1 < |R| < n
    exceptions: dict[int, int] = {}  # σ/T/hub arcs whose capacity differs from baseline

    def baseline(arc: int) -> int:
        v = arc - m_g
        return single_total[v] if 0 <= v < n else 0

    def mu_of(i: int, x: int, y: int) -> int:
        """μ of Zhao & Krishnamurthy 2023, Thm 12 for arc (x, y) and batch i: one max-flow on D̄."""
        nonlocal maxflows, net, exceptions
        want = min(g.get((x, y), 0), mult[i])
        if want == 0:
            return 0
        i_single = len(members[i]) == 1
        others = single_sum - single_total[y] - (mult[i] if i_single else 0)
        groups: dict[int, tuple[int, int]] = {}  # mask -> (Σ m, a batch with that set)
        ybit = 1 << y
        for j in grown:
            mask = masks[j]
            if j == i or mask & ybit:
                continue
            others += mult[j]
            prev = groups.get(mask)
            groups[mask] = (mult[j], j) if prev is None else (prev[0] + mult[j], prev[1])
        need = others + want
        if net is None or len(groups) > pool:
            net = build(max(2 * pool, len(groups) + 4) if groups else pool)
            exceptions = {a: 0 for a in sig_arc}  # build() starts with 0 on σ→r
        new: dict[int, int] = {sig_arc[y]: 0, snk_arc[y]: need}
        new[sig_arc[x]] = big  # σ→x is infinite (it also covers x's own {x} batches)
        for mask, (m, j) in groups.items():
            new[hub_sig(slot_of(mask, j))] = m
        arcs: list[int] = []
        caps: list[int] = []
        for a in exceptions:
            if a not in new:
                arcs.append(a)
                caps.append(baseline(a))
        for a, c in new.items():
            if exceptions.get(a, baseline(a)) != c:
                arcs.append(a)
                caps.append(c)
        net.update_capacities(arcs, caps)
        exceptions = {a: c for a, c in new.items() if c != baseline(a)}
        value = net.solve_value(sigma, sink)
        maxflows += 1
        if value < others:
            raise RuntimeError(
                "internal: tree packing lost feasibility (F(x, y; D̄) < Σ m(R_j), Zhao & Krishnamurthy 2023, Thm 12)"
            )
        return min(want, value - others)

    def set_single_total(r: int, value: int) -> None:
        nonlocal single_sum
        single_sum += value - single_total[r]
        single_total[r] = value
        if net is not None and sig_arc[r] not in exceptions:
            net.update_capacities([sig_arc[r]], [value])

    while queue:
        i = queue.pop()
        while len(sets[i]) < n:
            # candidate arcs in the order (depth of x, −g, x, y), listed one depth
            # level at a time: the first level with an arc of μ > 0 ends the search
            levels: dict[int, list[int]] = {}
            di = depth[i]
            for x in members[i]:
                levels.setdefault(di[x], []).append(x)
            mu = 0
            for level in sorted(levels):
                cands = [
                    (-g[(x, y)], x, y)
                    for x in levels[level]
                    for y in out_adj[x]
                    if y not in sets[i] and g[(x, y)] > 0
                ]
                cands.sort()
                for _, x, y in cands:
                    mu = mu_of(i, x, y)
                    if mu > 0:
                        break
                    rejected += 1
                if mu > 0:
                    break
            if mu == 0:
                raise RuntimeError(
                    f"internal: no arc can extend a tree rooted at {nodes[roots[i]]!r} "
                    "(Zhao & Krishnamurthy 2023, Thm 11-12 say one exists)"
                )
            was_single = len(members[i]) == 1
            if mu < mult[i]:
                if not was_single:
                    grown.add(len(roots))
                roots.append(roots[i])
                sets.append(set(sets[i]))
                masks.append(masks[i])
                members.append(list(members[i]))
                edges.append(list(edges[i]))
                mult.append(mult[i] - mu)
                depth.append(dict(depth[i]))
                queue.append(len(roots) - 1)
                mult[i] = mu
            edges[i].append((x, y))
            sets[i].add(y)
            masks[i] |= 1 << y
            members[i].append(y)
            if was_single:  # batch i (now m = μ) leaves the still-{r} batches
                set_single_total(roots[i], single_total[roots[i]] - mult[i])
                grown.add(i)
            if len(members[i]) == n:
                grown.discard(i)
            depth[i][y] = depth[i][x] + 1
            g[(x, y)] -= mu
            if net is not None:
                net.update_capacities([arc_pos[(x, y)]], [g[(x, y)]])
            placed += mu
            if progress:
                progress(placed, total_edges)
    batches = [
        Batch(nodes[roots[i]], mult[i], [(nodes[a], nodes[b]) for a, b in edges[i]],
              {nodes[v]: d for v, d in depth[i].items()})
        for i in range(len(roots))
    ]
    batches.sort(key=lambda bt: idx[bt.root])
    return Packing(batches, maxflows, rejected)
