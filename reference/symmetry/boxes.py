"""Automorphisms of a topology: interchangeable boxes as a verified cyclic group.

Large machines are built from identical *boxes* (a DGX, an MI250 chassis)
joined by shared switches. Shifting every box to the next one is then an
automorphism of the topology: a permutation σ of the nodes that maps every
link to a link of the same capacity, compute nodes to compute nodes,
switches to switches and multicast switches to multicast switches. The
cyclic group H = {σ^0, …, σ^(n-1)} acts *freely* on the compute nodes (no
shift but the identity fixes one), so each compute node is h(r) for exactly
one representative r (one per GPU position in a box) and one h ∈ H.

:func:`box_symmetry` finds σ with colour refinement (1-dimensional
Weisfeiler-Leman on the capacitated digraph) and a few exact checks:

1. refine the node colours; individualise the first compute node c0 in one
   copy and a node c1 of the same colour in another box in a second copy;
   pairing the refined cells element by element (in node order) gives a
   candidate τ with τ(c0) = c1: for interchangeable boxes, the swap of
   c0's box and c1's box;
2. the nodes τ fixes next to the ones it moves are the *shared* switches F;
   the connected components of the topology without F are the boxes;
3. σ maps the i-th node of box j to the i-th node of box j+1 (mod n), in
   node order, and fixes F.

Nothing here is trusted: σ is returned only after :meth:`Symmetry.verify`
checked, exactly and link by link, that it is an automorphism of the given
capacities (and supplies) and that it acts freely on compute nodes. Any
failure returns None and the callers use the general algorithms. The
schedules built with the symmetry are checked in full by ``collcert.certify``,
which knows nothing about it.

Reusable pieces: :func:`refine` (colour refinement), :func:`box_components`
(the boxes a candidate automorphism shows); :class:`Symmetry` (group elements as
permutation arrays, orbits, representatives, exact verification) is in
:mod:`.group`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np

from .group import MAX_TABLE_ENTRIES
from .group import Symmetry as Symmetry  # where it lived: re-exported

Node = Hashable


_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on uint64 arrays (wrapping arithmetic)."""
    x = x.astype(np.uint64, copy=True)
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def refine(tails: np.ndarray, heads: np.ndarray, klass: np.ndarray, colours: np.ndarray,
           rounds: int = 64) -> np.ndarray:
    """Colour refinement (1-WL) on a capacitated digraph, by hashing: a node's new
    colour mixes its colour with the multisets of (capacity class, colour) over its
    out-arcs and over its in-arcs (sums of mixed values). Colours are uint64 values
    that depend on the structure only, so two refinements can be compared directly.

    Hash collisions could only merge classes (never split isomorphic nodes): the
    result is a candidate generator, and every automorphism built from it is
    verified exactly (:meth:`Symmetry.verify`)."""
    with np.errstate(over="ignore"):
        col = _mix(np.asarray(colours).astype(np.uint64))
        n = len(col)
        k = klass.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        classes = len(np.unique(col))
        for _ in range(rounds):
            out_sum = np.zeros(n, dtype=np.uint64)
            in_sum = np.zeros(n, dtype=np.uint64)
            np.add.at(out_sum, tails, _mix(k ^ col[heads]))
            np.add.at(in_sum, heads, _mix(k ^ _mix(col[tails])))
            new = _mix(col ^ _mix(out_sum + np.uint64(1)) ^ _mix(_mix(in_sum) + np.uint64(2)))
            count = len(np.unique(new))
            col = new
            if count == classes:
                break
            classes = count
    return col


def box_symmetry(nodes: Sequence[Node], num_compute: int,
                 arcs: Mapping[tuple[int, int], object],
                 multicast: frozenset[int] = frozenset(),
                 supply: Mapping[int, int] | None = None) -> Symmetry | None:
    """The box-shift group of a topology on node indices (module docstring), verified;
    None when there is none (or it could not be found)."""
    n = len(nodes)
    if num_compute < 2:
        return None
    # capacities as small integers (classes of equal values) for the refinement;
    # verify() compares the values themselves
    klass: dict[object, int] = {}
    tails = np.fromiter((a for a, _ in arcs), dtype=np.int64, count=len(arcs))
    heads = np.fromiter((b for _, b in arcs), dtype=np.int64, count=len(arcs))
    kl = np.fromiter((klass.setdefault(c, len(klass)) for c in arcs.values()), dtype=np.int64,
                     count=len(arcs))
    base = np.array([0 if v < num_compute else (2 if v in multicast else 1) for v in range(n)],
                    dtype=np.int64)
    colour = refine(tails, heads, kl, base)
    c0 = 0
    a_side = base.copy()
    a_side[c0] = 3
    col_a = refine(tails, heads, kl, a_side)
    same = [v for v in range(num_compute) if v != c0 and colour[v] == colour[c0]]
    if not same:
        return None
    # c1: in one of the largest refined cells of c0's colour (a node "far" from c0);
    # up to four candidates are tried, the first verified group is taken
    cells: dict[int, list[int]] = {}
    for v in same:
        cells.setdefault(int(col_a[v]), []).append(v)
    adj: list[set[int]] = [set() for _ in range(n)]
    for a, b in arcs:
        adj[a].add(b)
        adj[b].add(a)
    for cell in sorted(cells.values(), key=lambda c: (-len(c), c[0]))[:4]:
        b_side = base.copy()
        b_side[cell[0]] = 3
        col_b = refine(tails, heads, kl, b_side)
        got = _shift_from(nodes, num_compute, arcs, adj, col_a.tolist(), col_b.tolist(),
                          multicast, supply)
        if got is not None:
            return got
    return None


def _shift_from(nodes: Sequence[Node], num_compute: int, arcs: Mapping[tuple[int, int], object],
                adj: Sequence[set[int]], col_a: list[int], col_b: list[int],
                multicast: frozenset[int], supply: Mapping[int, int] | None) -> Symmetry | None:
    """Steps 1-3 of the module docstring for one candidate c1 (verified, or None)."""
    n = len(nodes)
    tau = _pair_cells(col_a, col_b)
    if tau is None:
        return None
    moved = {v for v in range(n) if tau[v] != v}
    shared = {v for v in range(n) if v not in moved and adj[v] & moved}
    boxes = _components(n, adj, shared)
    if len(boxes) < 2:
        return None
    size = len(boxes[0])
    if any(len(b) != size for b in boxes) or sum(map(len, boxes)) + len(shared) != n:
        return None
    per_box = [sum(1 for v in b if v < num_compute) for b in boxes]
    if per_box[0] == 0 or any(x != per_box[0] for x in per_box):
        return None
    sigma = np.arange(n)
    for j, box in enumerate(boxes):
        nxt = boxes[(j + 1) % len(boxes)]
        sigma[np.asarray(box)] = np.asarray(nxt)
    order = len(boxes)
    reps = sorted(v for v in boxes[0] if v < num_compute)
    element: dict[int, int] = {}
    rep_of: dict[int, int] = {}
    for j, box in enumerate(boxes):  # σ^j takes box 0's i-th node to box j's i-th
        for r, v in zip(boxes[0], box):
            if r < num_compute:
                element[v] = j
                rep_of[v] = r
    if order * n > MAX_TABLE_ENTRIES:  # kept by σ alone (module docstring of .group)
        sym = Symmetry(tuple(nodes), None, reps, element, rep_of, gens=[sigma], size=order)
    else:
        perms = np.empty((order, n), dtype=np.int64)
        perms[0] = np.arange(n)
        for j in range(1, order):
            perms[j] = sigma[perms[j - 1]]
        sym = Symmetry(tuple(nodes), perms, reps, element, rep_of)
    if len(element) != num_compute or sym.verify(num_compute, arcs, multicast, supply):
        return None
    return sym


def _pair_cells(col_a: Sequence[int], col_b: Sequence[int]) -> list[int] | None:
    """τ with τ(x) = y for the i-th node x of a colour in ``col_a`` and the i-th node
    y of that colour in ``col_b`` (node order); None if the cells differ in size."""
    by_a: dict[int, list[int]] = {}
    by_b: dict[int, list[int]] = {}
    for v, c in enumerate(col_a):
        by_a.setdefault(c, []).append(v)
    for v, c in enumerate(col_b):
        by_b.setdefault(c, []).append(v)
    tau = [-1] * len(col_a)
    for c, xs in by_a.items():
        ys = by_b.get(c, [])
        if len(ys) != len(xs):
            return None
        for x, y in zip(xs, ys):
            tau[x] = y
    return tau


def _components(n: int, adj: Sequence[set[int]], removed: set[int]) -> list[list[int]]:
    """Connected components (undirected) without ``removed``, each sorted, by first node."""
    seen = [False] * n
    comps = []
    for v in range(n):
        if seen[v] or v in removed:
            continue
        seen[v] = True
        stack, comp = [v], [v]
        while stack:
            x = stack.pop()
            for y in adj[x]:
                if not seen[y] and y not in removed:
                    seen[y] = True
                    stack.append(y)
                    comp.append(y)
        comps.append(sorted(comp))
    return comps
