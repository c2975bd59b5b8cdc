"""Spanning out-tree packing in batches (seed 000 §2.3, Thm 12, Alg 2; seed 003 §5.4, Alg 4).

Input: a switch-free digraph G* with integer capacities g and a demand
k_u ≥ 0 per root u such that min_v F(s, v; G*⃗) ≥ Σ_u k_u (s→u of capacity
k_u). Output: batches R = (root, edges, m): m identical out-trees rooted at
the root spanning every node, with Σ m = k_u per root and, for every arc,
Σ {m(R) : arc ∈ E(R)} ≤ g(arc).

Each batch grows from {root}. For an arc (x, y) with x ∈ R_i, y ∉ R_i,

    μ = min{ g(x,y), m(R_i), F(x, y; D̄) − Σ_{j≠i} m(R_j) }      (000 Thm 12)

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
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field

from .maxflow import FlowNetwork

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
    """Batches of spanning out-trees, Σ m = supply[u] per root u (000 Alg 2)."""
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

    # batch state (indices): root, set, edges, m, depth
    roots: list[int] = []
    sets: list[set[int]] = []
    edges: list[list[tuple[int, int]]] = []
    mult: list[int] = []
    depth: list[dict[int, int]] = []
    for v in nodes:
        k = int(supply.get(v, 0))
        if k > 0:
            i = idx[v]
            roots.append(i)
            sets.append({i})
            edges.append([])
            mult.append(k)
            depth.append({i: 0})
    total_edges = sum(mult) * (n - 1)
    placed = 0
    queue = list(range(len(roots)))
    maxflows = 0
    rejected = 0
    sigma, sink = n, n + 1

    def mu_of(i: int, x: int, y: int) -> int:
        nonlocal maxflows
        want = min(g.get((x, y), 0), mult[i])
        if want == 0:
            return 0
        tails: list[int] = []
        heads: list[int] = []
        caps: list[int | None] = []
        for (a, b), c in g.items():
            if c > 0:
                tails.append(a)
                heads.append(b)
                caps.append(c)
        tails.append(sigma)
        heads.append(x)
        caps.append(None)
        single: dict[int, int] = {}
        groups: dict[frozenset[int], int] = {}
        others = 0
        for j in range(len(roots)):
            if j == i or mult[j] == 0 or y in sets[j] or len(sets[j]) == n:
                continue
            others += mult[j]
            if len(sets[j]) == 1:
                single[roots[j]] = single.get(roots[j], 0) + mult[j]
            else:
                key = frozenset(sets[j])
                groups[key] = groups.get(key, 0) + mult[j]
        for r, m in single.items():
            tails.append(sigma)
            heads.append(r)
            caps.append(m if r != x else None)
        hub = n + 2
        for members, m in groups.items():
            tails.append(sigma)
            heads.append(hub)
            caps.append(m)
            for v in members:
                tails.append(hub)
                heads.append(v)
                caps.append(None)
            hub += 1
        need = others + want
        tails.append(y)
        heads.append(sink)
        caps.append(need)
        net = FlowNetwork(hub, tails, heads, caps, engine=engine)
        value = net.solve(sigma, sink).value
        maxflows += 1
        if value < others:
            raise RuntimeError(
                "internal: tree packing lost feasibility (F(x, y; D̄) < Σ m(R_j), 000 Thm 12)"
            )
        return min(want, value - others)

    while queue:
        i = queue.pop()
        while len(sets[i]) < n:
            cands = [
                (depth[i][x], -g[(x, y)], x, y)
                for x in sets[i]
                for y in out_adj[x]
                if y not in sets[i] and g[(x, y)] > 0
            ]
            cands.sort()
            mu = 0
            for _, _, x, y in cands:
                mu = mu_of(i, x, y)
                if mu > 0:
                    break
                rejected += 1
            if mu == 0:
                raise RuntimeError(
                    f"internal: no arc can extend a tree rooted at {nodes[roots[i]]!r} "
                    "(000 Thm 11-12 say one exists)"
                )
            if mu < mult[i]:
                roots.append(roots[i])
                sets.append(set(sets[i]))
                edges.append(list(edges[i]))
                mult.append(mult[i] - mu)
                depth.append(dict(depth[i]))
                queue.append(len(roots) - 1)
                mult[i] = mu
            edges[i].append((x, y))
            sets[i].add(y)
            depth[i][y] = depth[i][x] + 1
            g[(x, y)] -= mu
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
