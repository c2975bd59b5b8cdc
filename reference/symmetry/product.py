"""Box shifts inside boxes: the product group a machine built in levels has, verified.

Real fabrics are built in levels: racks of trays of GPUs, scalable units of
servers whose GPUs each sit on their own rail. Each level is a *box shift*
(:mod:`.boxes`) of the level above it, and together they are a product group
Z_{m_0} × Z_{m_1} × … acting freely on the GPUs: on a rail-optimized DGX H100
fabric of 4 scalable units of 32 servers, the unit shift, the server shift and
the rail shift make 4 × 32 × 8 = 1024 elements, one orbit for 1024 GPUs (the box
shift alone: the servers as boxes, 8 orbits, or the rails, 128).

:func:`product_group` finds the levels one after the other, in a *region*
(at first the whole topology):

1. in the subgraph the region induces, a candidate automorphism τ swapping two
   compute nodes is found by colour refinement and individualisation (as in
   :mod:`.boxes`); the nodes τ fixes next to the ones it moves are the shared
   nodes F; the components of the region without F that hold compute nodes are
   the boxes (components without one join F), all of one size and compute count;
   when no candidate shows boxes (an MI300X box links every GPU to every other), each
   compute node's *private part* is a box: the nodes that become singletons of the
   refinement when it is individualised (its NIC), paired by their colours;
2. the level's shift σ maps the i-th node of box j to the i-th node of box j+1
   (node order) and fixes F; the next region is box 0 together with F;
3. σ is *extended* to the whole topology through the levels above: on box j of
   level ℓ it is σ_ℓ^j ∘ σ ∘ σ_ℓ^-j, on the shared nodes of level ℓ σ itself
   (σ_ℓ fixes them). This is an automorphism of the whole topology exactly when σ
   is one of its region that keeps box 0 of every level above (argued in
   docs/optimum.md), and it commutes with every σ_ℓ;
4. the extended σ is verified exactly, link by link, on the whole topology
   (:func:`.search.is_automorphism`, the multicast switches and supplies kept),
   and checked to commute with the generators found before; then the next level.

It stops when the region holds one compute node or no level is found. The
result is a :class:`.group.Symmetry`, verified again as a whole
(:meth:`.group.Symmetry.verify`: commuting generators, orders, free action).
A failure only means a smaller group (more orbits), never a wrong answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .boxes import Node, _components, _pair_cells, refine
from .group import Symmetry, _automorphism_problem, product_symmetry

MAX_LEVELS = 8
CANDIDATES = 4
"""Cells of c0's colour tried per level for the second compute node c1."""


@dataclass
class _Level:
    """A level's boxes (global node indices, node order) and its shared nodes."""

    boxes: list[np.ndarray]
    shared: np.ndarray
    pos0: dict[int, int]  # node of box 0 -> its position


def product_group(nodes: Sequence[Node], num_compute: int,
                  arcs: Mapping[tuple[int, int], object],
                  multicast: frozenset[int] = frozenset(),
                  supply: Mapping[int, int] | None = None) -> Symmetry | None:
    """The verified product of box shifts by levels (module docstring), or None when no
    level is found (or the whole fails verification)."""
    n = len(nodes)
    adj: list[set[int]] = [set() for _ in range(n)]
    for a, b in arcs:
        adj[a].add(b)
        adj[b].add(a)
    region = np.arange(n)
    levels: list[_Level] = []
    gens: list[np.ndarray] = []
    orders: list[int] = []
    for _ in range(MAX_LEVELS):
        if int((region < num_compute).sum()) < 2:
            break
        found = _level(region, num_compute, arcs, adj, multicast, supply, levels, gens)
        if found is None:
            break
        level, g = found
        levels.append(level)
        gens.append(g)
        orders.append(len(level.boxes))
        region = np.sort(np.concatenate([level.boxes[0], level.shared]))
    if not gens:
        return None
    sym = product_symmetry(nodes, num_compute, [g.tolist() for g in gens], orders)
    if sym is None or sym.verify(num_compute, arcs, multicast, supply):
        return None
    return sym


class _Local:
    """The subgraph a region induces, on local indices (the region's order), refined."""

    def __init__(self, region: np.ndarray, nc: int, arcs: Mapping[tuple[int, int], object],
                 multicast: frozenset[int], supply: Mapping[int, int] | None) -> None:
        self.inside = {int(v): i for i, v in enumerate(region.tolist())}
        local = [(self.inside[a], self.inside[b], c) for (a, b), c in arcs.items()
                 if a in self.inside and b in self.inside]
        klass: dict[object, int] = {}
        self.tails = np.fromiter((a for a, _, _ in local), dtype=np.int64, count=len(local))
        self.heads = np.fromiter((b for _, b, _ in local), dtype=np.int64, count=len(local))
        self.kl = np.fromiter((klass.setdefault(c, len(klass)) for _, _, c in local),
                              dtype=np.int64, count=len(local))
        base = np.array([0 if v < nc else (2 if v in multicast else 1)
                         for v in region.tolist()], dtype=np.int64)
        if supply is not None:
            base += np.array([4 * (1 + supply.get(v, 0)) if v < nc else 0
                              for v in region.tolist()], dtype=np.int64)
        self.base = base
        self.colour = refine(self.tails, self.heads, self.kl, base)
        self.compute = int((region < nc).sum())

    def marked(self, v: int) -> np.ndarray:
        """The refinement with local node v individualised."""
        side = self.base.copy()
        side[v] = -1
        return refine(self.tails, self.heads, self.kl, side)


def _level(region: np.ndarray, nc: int, arcs: Mapping[tuple[int, int], object],
           adj: Sequence[set[int]], multicast: frozenset[int], supply: Mapping[int, int] | None,
           levels: list[_Level], gens: list[np.ndarray]) -> tuple[_Level, np.ndarray] | None:
    """The next level in ``region``: its boxes and its shift extended to every node and
    verified (steps 1-4), trying up to :data:`CANDIDATES` choices of c1, then the
    private parts of the compute nodes (:func:`_private_parts`)."""
    loc = _Local(region, nc, arcs, multicast, supply)
    col_a = loc.marked(0)  # c0: the region's first compute node
    cells: dict[int, list[int]] = {}
    for v in range(1, loc.compute):
        if loc.colour[v] == loc.colour[0]:
            cells.setdefault(int(col_a[v]), []).append(v)
    found: list[_Level] = []
    for cell in sorted(cells.values(), key=lambda c: (-len(c), c[0]))[:CANDIDATES]:
        tau = _pair_cells(col_a.tolist(), loc.marked(cell[0]).tolist())
        level = None if tau is None else _boxes_of(region, tau, adj, loc.inside, nc)
        if level is not None:
            found.append(level)
    if not found:
        level = _private_parts(region, loc, col_a, nc)
        found = [] if level is None else [level]
    for level in found:
        g = _extended(level, levels, len(adj))
        if g is None or not _keeps(g, nc, arcs, multicast, supply):
            continue
        if all(np.array_equal(g[h], h[g]) for h in gens):
            return level, g
    return None


def _private_parts(region: np.ndarray, loc: _Local, col_a: np.ndarray, nc: int,
                   ) -> _Level | None:
    """Boxes where no node separates the GPUs (an MI300X's Infinity Fabric mesh links
    every GPU to every other): each compute node with the nodes that become singletons
    when it is individualised (its NIC), in the order of their refined colours; the
    shift takes each part to the next one, fixing the rest."""
    if loc.compute < 2 or any(loc.colour[v] != loc.colour[0] for v in range(loc.compute)):
        return None
    alone = {int(c) for c, k in zip(*np.unique(loc.colour, return_counts=True)) if k == 1}
    parts: list[list[int]] = []
    for v in range(loc.compute):
        col = col_a if v == 0 else loc.marked(v)
        values, counts = np.unique(col, return_counts=True)
        single = set(values[counts == 1].tolist())
        part = sorted((i for i in range(len(col)) if int(col[i]) in single
                       and int(loc.colour[i]) not in alone), key=lambda i: int(col[i]))
        if v not in part:
            return None
        parts.append([int(region[i]) for i in part])
    if any(len(p) != len(parts[0]) for p in parts) or len({x for p in parts for x in p}) != sum(
            map(len, parts)):
        return None
    used = {x for p in parts for x in p}
    shared = np.asarray(sorted(set(region.tolist()) - used), dtype=np.int64)
    return _Level([np.asarray(p, dtype=np.int64) for p in parts], shared,
                  {x: i for i, x in enumerate(parts[0])})


def _boxes_of(region: np.ndarray, tau: list[int], adj: Sequence[set[int]],
              inside: Mapping[int, int], nc: int) -> _Level | None:
    """Step 1: the boxes and shared nodes that the local candidate ``tau`` shows."""
    glob = region.tolist()
    moved = {glob[i] for i, x in enumerate(tau) if x != i}
    if not moved:
        return None
    shared = {v for v in glob if v not in moved and adj[v] & moved}
    sub_adj = [({w for w in adj[v] if w in inside} if v in inside else set())
               for v in range(len(adj))]
    comps = [c for c in _components(len(adj), sub_adj, shared | _outside(len(adj), inside))
             if c]
    boxes = [c for c in comps if c[0] < nc]  # a component's first node: compute if any
    for c in comps:
        if c[0] >= nc:
            shared.update(c)
    if len(boxes) < 2 or any(v < nc for v in shared):
        return None  # every compute node of the region in a box: the shift acts freely
    size, per = len(boxes[0]), sum(1 for v in boxes[0] if v < nc)
    if any(len(b) != size or sum(1 for v in b if v < nc) != per for b in boxes):
        return None
    arrays = [np.asarray(b, dtype=np.int64) for b in boxes]
    return _Level(arrays, np.asarray(sorted(shared), dtype=np.int64),
                  {v: i for i, v in enumerate(boxes[0])})


def _outside(n: int, inside: Mapping[int, int]) -> set[int]:
    return {v for v in range(n) if v not in inside}


def _extended(level: _Level, above: list[_Level], n: int) -> np.ndarray | None:
    """Step 2 and 3: the level's shift on its region, extended through the levels above
    to every node; None when it does not keep box 0 of a level above."""
    g = np.arange(n)
    boxes = level.boxes
    for j, box in enumerate(boxes):
        g[box] = boxes[(j + 1) % len(boxes)]
    for lev in reversed(above):
        b0 = lev.boxes[0]
        img = g[b0]
        pos = np.fromiter((lev.pos0.get(int(y), -1) for y in img.tolist()), dtype=np.int64,
                          count=len(img))
        if (pos < 0).any():
            return None  # box 0 of that level is not kept
        shared_img = g[lev.shared]
        if not np.isin(shared_img, lev.shared).all():
            return None
        for box in lev.boxes[1:]:
            g[box] = box[pos]
    return g


def _keeps(g: np.ndarray, nc: int, arcs: Mapping[tuple[int, int], object],
           multicast: frozenset[int], supply: Mapping[int, int] | None) -> bool:
    """Step 4: ``g`` is a permutation keeping compute nodes, multicast switches, the
    supplies and every link with its capacity (exactly): the check every verified
    generator passes (:func:`.group._automorphism_problem`)."""
    gl = g.tolist()
    return _automorphism_problem(range(len(gl)), gl, nc, arcs, multicast, supply) is None
