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
which has the same cuts. The max-flow goes from σ to y.

Speed: D̄ is one persistent :class:`FlowNetwork` for the whole packing (G*
arcs, σ→v and v→T for every v, a pool of hub nodes s_j); each μ updates only
the capacities that differ from the previous one (``update_capacities``)
and asks for the value only. Infinite arcs get a finite capacity ``big`` no
smaller than Σ m(R_j) + min(g, m(R_i)), which leaves μ unchanged (see
:class:`_Dbar`). The μ values, hence the batches, are exactly those of a
network rebuilt for every μ.

Fewer max-flows, same μ: μ only falls as the packing goes on. In cut form
μ's third term is min over S ∋ x, S ∌ y of g(δ⁺(S)) − Σ {m(R_j) : j ≠ i,
R_j ⊆ S}, and every step (an arc placed in any batch, with its split) lowers
or keeps each such S-term: g falls on the placed arc (a, b), and a batch R_j
that becomes R_j + b with μ' of its m_j trees subtracts μ' more from exactly
the S with a ∈ S ∌ b and R_j ⊄ S (for the others the term is unchanged). The
copy split off batch i has, for each S, at most batch i's term before the split.
So an arc rejected (μ = 0) for a batch stays rejected for it and for the copies
split off it: each batch keeps its rejected arcs (``_Batches.dead``, inherited
on split) and never asks for them again. And S = V∖{y} gives μ = 0 without a
max-flow when the residual capacity into y is no more than Σ_{j≠i, y∉R_j} m(R_j).
Both skip only candidates whose μ is 0, so the arcs chosen, and the batches,
are exactly those of asking every candidate (``rejected`` counts each
rejection once, ``bounded`` the ones decided by the bound).

The code: :class:`_Batches` holds the growing batches, :class:`_Dbar` the
network D̄ and the μ of an arc for a batch, :func:`pack_trees` grows one batch
at a time (:func:`_next_arc` picks the arc, :func:`_grow` adds it).
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
    bounded: int = 0
    """Rejections decided by the cut V∖{y} without a max-flow (counted in ``rejected``)."""
    placed: int = 0
    """Arcs placed (one per accepted μ: an arc added to a batch)."""


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
    bt = _Batches(nodes, idx, supply)
    total_edges = sum(bt.mult) * (n - 1)
    dbar = _Dbar(n, g, bt, engine)
    placed = rejected = steps = 0
    queue = list(range(len(bt.roots)))
    while queue:
        i = queue.pop()
        sorted_level: list[Any] = [-1, [], 0]  # batch i's current level, sorted, read up to
        while len(bt.sets[i]) < n:
            mu, x, y, passed = _next_arc(bt, i, dbar, out_adj, nodes, sorted_level)
            rejected += passed
            _grow(bt, dbar, i, x, y, mu, queue)
            placed += mu
            steps += 1
            if progress:
                progress(placed, total_edges)
    batches = [
        Batch(nodes[bt.roots[i]], bt.mult[i], [(nodes[a], nodes[b]) for a, b in bt.edges[i]],
              {nodes[v]: d for v, d in bt.depth[i].items()})
        for i in range(len(bt.roots))
    ]
    batches.sort(key=lambda b: idx[b.root])
    return Packing(batches, dbar.maxflows, rejected, dbar.bounded, steps)


class _Batches:
    """The batches being grown, on vertex indices: root, vertex set (a set and the
    same set as a bitmask, the mask keys batches with equal vertex sets), vertices
    in order of joining, edges, m, depth. A batch starts as {root} with m = k_root."""

    def __init__(self, nodes: Sequence[Node], idx: Mapping[Node, int],
                 supply: Mapping[Node, int]) -> None:
        self.roots: list[int] = []
        self.sets: list[set[int]] = []
        self.masks: list[int] = []
        self.members: list[list[int]] = []
        self.edges: list[list[tuple[int, int]]] = []
        self.mult: list[int] = []
        self.depth: list[dict[int, int]] = []
        self.dead: list[set[tuple[int, int]]] = []
        self.levels: list[list[list[int]]] = []  # members by depth
        self.low: list[int] = []  # depths below this have no candidate arc left
        for v in nodes:
            k = int(supply.get(v, 0))
            if k > 0:
                i = idx[v]
                self.roots.append(i)
                self.sets.append({i})
                self.masks.append(1 << i)
                self.members.append([i])
                self.edges.append([])
                self.mult.append(k)
                self.depth.append({i: 0})
                self.dead.append(set())
                self.levels.append([[i]])
                self.low.append(0)

    def split(self, i: int, mu: int) -> int:
        """Keep μ of batch i's m trees in it and the rest in a new copy (its index)."""
        self.roots.append(self.roots[i])
        self.sets.append(set(self.sets[i]))
        self.masks.append(self.masks[i])
        self.members.append(list(self.members[i]))
        self.edges.append(list(self.edges[i]))
        self.mult.append(self.mult[i] - mu)
        self.depth.append(dict(self.depth[i]))
        self.dead.append(set(self.dead[i]))
        self.levels.append([list(level) for level in self.levels[i]])
        self.low.append(self.low[i])
        self.mult[i] = mu
        return len(self.roots) - 1

    def extend(self, i: int, x: int, y: int) -> None:
        """Add the arc (x, y), x in batch i and y not, to batch i."""
        self.edges[i].append((x, y))
        self.sets[i].add(y)
        self.masks[i] |= 1 << y
        self.members[i].append(y)
        d = self.depth[i][y] = self.depth[i][x] + 1
        if d == len(self.levels[i]):
            self.levels[i].append([])
        self.levels[i][d].append(y)


class _Dbar:
    """D̄ of Zhao & Krishnamurthy 2023, Thm 12 as a network rebuilt now and then, and μ.

    D̄ is re-solved for every μ with only the arcs that change updated
    (FlowNetwork.update_capacities). Node layout: 0..n-1 the vertices, σ = n,
    then one hub node s_j per vertex set of a partly grown batch. Arc layout: the
    G* arcs with residual capacity left when the network was built (``g``), σ→v
    for every v, then per hub σ→hub and hub→v for the members of its set; the
    flow goes from σ to y. Infinite arcs get capacity ``big`` > Σ_j m(R_j) +
    min(g, m(R_i)) = ``need``: a minimum σ–y cut that crosses one is worth at
    least ``need`` with or without them, so μ = min(want, F − others) is the same
    as with infinite arcs; any other minimum cut is the same cut.

    Batches other than the one growing enter D̄ in two kinds (module docstring):
    still-{r} batches as σ→r (their m summed per root in ``single_total``,
    which the σ→r arcs hold between calls), and the few partly grown batches
    (``grown``: 1 < |R| < n) through their hubs. A call changes only the arcs that
    differ from that baseline (``exceptions``), so it costs O(changed arcs + grown).
    The network is rebuilt when a vertex set without a hub is needed (a split) or
    when half its G* arcs are used up: arcs of capacity 0 cost the max-flow solver
    as much as live ones (measured: 900 zero arcs beside 600 live ones double the
    time of a solve).
    """

    def __init__(self, n: int, g: dict[tuple[int, int], int], bt: _Batches, engine: str) -> None:
        self.n, self.g, self.engine = n, g, engine
        self.sigma = n
        self.big = sum(bt.mult) + max(g.values(), default=0) + 1
        huge = self.big * (2 * n + 4) + sum(g.values()) >= 2**61
        self.dtype: Any = object if huge else np.int64
        self.net: FlowNetwork | None = None
        self.arc_pos: dict[tuple[int, int], int] = {}  # live G* arc -> its arc in the network
        self.m_g = 0  # G* arcs in the network
        self.spent = 0  # of which used up since it was built
        self.hubs: dict[int, int] = {}  # vertex-set mask -> its σ→hub arc
        self.single_total = [0] * n
        for j, r in enumerate(bt.roots):
            self.single_total[r] += bt.mult[j]
        self.single_sum = sum(self.single_total)
        self.grown: set[int] = set()  # batches with 1 < |R| < n
        self.exceptions: dict[int, int] = {}  # σ/T/hub arcs whose capacity differs from baseline
        self.maxflows = 0
        self.bounded = 0  # μ = 0 decided by the cut V∖{y}, without a max-flow
        self.g_in = [0] * n
        for (_, b), c in g.items():
            self.g_in[b] += c

    def build(self, bt: _Batches, i: int) -> None:
        """The network for the current state: live G* arcs, σ→v at the still-{r}
        totals, a hub (σ→hub at 0) for every set of a grown batch but i."""
        n, sigma = self.n, self.sigma
        live = [(a, c) for a, c in self.g.items() if c > 0]
        self.arc_pos = {a: p for p, (a, _) in enumerate(live)}
        self.m_g, self.spent = len(live), 0
        tails = [a for (a, _), _ in live] + [sigma] * n
        heads = [b for (_, b), _ in live] + list(range(n))
        caps = [c for _, c in live] + self.single_total
        members: dict[int, list[int]] = {}
        for j in self.grown:
            if j != i:
                members.setdefault(bt.masks[j], bt.members[j])
        self.hubs = {}
        for h, (mask, inside) in enumerate(members.items()):
            self.hubs[mask] = len(tails)
            tails += [sigma] + [n + 1 + h] * len(inside)
            heads += [n + 1 + h] + inside
            caps += [0] + [self.big] * len(inside)
        self.net = FlowNetwork.from_arrays(n + 1 + len(members), np.array(tails, dtype=np.int64),
                                           np.array(heads, dtype=np.int64),
                                           np.array(caps, dtype=self.dtype), engine=self.engine)
        self.exceptions = {}

    def baseline(self, arc: int) -> int:
        v = arc - self.m_g
        return self.single_total[v] if 0 <= v < self.n else 0

    def mu(self, bt: _Batches, i: int, x: int, y: int) -> int:
        """μ of Zhao & Krishnamurthy 2023, Thm 12 for arc (x, y) and batch i: one max-flow on D̄."""
        want = min(self.g.get((x, y), 0), bt.mult[i])
        if want == 0:
            return 0
        others, groups = self._others(bt, i, y)
        if self.g_in[y] <= others:  # the cut V∖{y} already leaves no slack
            self.bounded += 1
            return 0
        if (self.net is None or 2 * self.spent > self.m_g
                or any(mask not in self.hubs for mask in groups)):
            self.build(bt, i)
        assert self.net is not None
        sig = self.m_g  # σ→v is arc m_g + v
        new: dict[int, int] = {sig + y: 0}
        new[sig + x] = self.big  # σ→x is infinite (it also covers x's own {x} batches)
        for mask, m in groups.items():
            new[self.hubs[mask]] = m
        self._set_exceptions(new)
        value = self.net.solve_value(self.sigma, y)
        self.maxflows += 1
        if value < others:
            raise RuntimeError(
                "internal: tree packing lost feasibility (F(x, y; D̄) < Σ m(R_j), Zhao & Krishnamurthy 2023, Thm 12)"
            )
        return min(want, value - others)

    def _others(self, bt: _Batches, i: int, y: int) -> tuple[int, dict[int, int]]:
        """Σ m(R_j) over the batches j ≠ i without y, and the grown ones among them by
        vertex set: mask -> Σ m."""
        i_single = len(bt.members[i]) == 1
        others = self.single_sum - self.single_total[y] - (bt.mult[i] if i_single else 0)
        groups: dict[int, int] = {}
        ybit = 1 << y
        for j in self.grown:
            mask = bt.masks[j]
            if j == i or mask & ybit:
                continue
            others += bt.mult[j]
            groups[mask] = groups.get(mask, 0) + bt.mult[j]
        return others, groups

    def _set_exceptions(self, new: dict[int, int]) -> None:
        """Give the arcs of ``new`` their capacities and every other arc its baseline."""
        assert self.net is not None
        arcs: list[int] = []
        caps: list[int] = []
        for a in self.exceptions:
            if a not in new:
                arcs.append(a)
                caps.append(self.baseline(a))
        for a, c in new.items():
            if self.exceptions.get(a, self.baseline(a)) != c:
                arcs.append(a)
                caps.append(c)
        self.net.update_capacities(arcs, caps)
        self.exceptions = {a: c for a, c in new.items() if c != self.baseline(a)}

    def set_single_total(self, r: int, value: int) -> None:
        self.single_sum += value - self.single_total[r]
        self.single_total[r] = value
        arc = self.m_g + r
        if self.net is not None and arc not in self.exceptions:
            self.net.update_capacities([arc], [value])

    def use(self, x: int, y: int, mu: int) -> None:
        """μ units of the G* arc (x, y) are taken by a batch."""
        self.g[(x, y)] -= mu
        self.g_in[y] -= mu
        pos = self.arc_pos.get((x, y))
        if self.net is not None and pos is not None:
            self.net.update_capacities([pos], [self.g[(x, y)]])
            if self.g[(x, y)] == 0:
                self.spent += 1


def _next_arc(bt: _Batches, i: int, dbar: _Dbar, out_adj: list[list[int]],
              nodes: Sequence[Node], cache: list[Any]) -> tuple[int, int, int, int]:
    """The arc that extends batch i, with its μ > 0 and how many arcs were passed over.

    Candidate arcs in the order (depth of x, −g, x, y), listed one depth level at
    a time: the first level with an arc of μ > 0 ends the search. A level passed
    over has none for good (its arcs only get rejected, used up or closed), for
    batch i and the copies split off it: ``low`` skips it from then on.

    ``cache`` = [level, its candidates sorted, how far they were read] while batch
    i grows: no other batch changes meanwhile, the arcs batch i takes leave the
    level (their head joins it), and new members join one level deeper, so the
    order of what is left stands and the entries read past stay out for good."""
    g, inside, dead, levels = dbar.g, bt.sets[i], bt.dead[i], bt.levels[i]
    passed = 0
    for level in range(bt.low[i], len(levels)):
        if cache[0] != level:
            cands = [(-g[(x, y)], x, y) for x in levels[level] for y in out_adj[x]
                     if y not in inside and g[(x, y)] > 0 and (x, y) not in dead]
            cands.sort()
            cache[:] = [level, cands, 0]
        cands, pos = cache[1], cache[2]
        while pos < len(cands):
            _, x, y = cands[pos]
            if y not in inside and (x, y) not in dead and g[(x, y)] > 0:
                cache[2] = pos
                mu = dbar.mu(bt, i, x, y)
                if mu > 0:
                    return mu, x, y, passed
                dead.add((x, y))
                passed += 1
            pos += 1
        bt.low[i] = level + 1  # none left at this depth, for good (module docstring)
    raise RuntimeError(
        f"internal: no arc can extend a tree rooted at {nodes[bt.roots[i]]!r} "
        "(Zhao & Krishnamurthy 2023, Thm 11-12 say one exists)"
    )


def _grow(bt: _Batches, dbar: _Dbar, i: int, x: int, y: int, mu: int, queue: list[int]) -> None:
    """Add (x, y) to μ of batch i's trees; the other m − μ become a batch of their own."""
    was_single = len(bt.members[i]) == 1
    if mu < bt.mult[i]:
        if not was_single:
            dbar.grown.add(len(bt.roots))
        queue.append(bt.split(i, mu))
    bt.extend(i, x, y)
    if was_single:  # batch i (now m = μ) leaves the still-{r} batches
        r = bt.roots[i]
        dbar.set_single_total(r, dbar.single_total[r] - bt.mult[i])
        dbar.grown.add(i)
    if len(bt.members[i]) == dbar.n:
        dbar.grown.discard(i)
    dbar.use(x, y, mu)
