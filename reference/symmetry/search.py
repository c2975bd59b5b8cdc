"""Automorphisms that make the compute nodes few orbits, found by individualisation.

:mod:`.boxes` finds the box shift of a machine of identical boxes (a cyclic
group acting freely). Many topologies have more: the GPUs inside a DGX box are
interchangeable too (with their NICs and rail switches), and rings, tori and
hypercubes are vertex-transitive with no boxes at all. Here the group is grown
one generator at a time: for two compute nodes c0, c1 in different orbits of
the generators found so far, an automorphism τ with τ(c0) = c1 is looked for
by *individualisation-refinement* without backtracking:

1. give c0 (first copy of the colouring) and c1 (second copy) a new colour and
   refine both (1-WL, :func:`.boxes.refine`: colours depend only on the
   structure, so the two refinements can be compared);
2. pair the i-th node of every colour cell in the first copy with the i-th node
   of that cell in the second (node order); if the pairing is an automorphism
   (checked exactly, link by link), done;
3. else individualise the first node of the first non-singleton cell and its
   partner, and go back to 1 (at most ``max_steps`` times).

A failure only means fewer generators (more orbits, a larger LP), never a wrong
answer: every τ returned has been verified as a capacity-preserving permutation
of the nodes that keeps compute nodes, and the certificates built with the
group are checked by ``collcert.certify`` from the listed generators alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..model import Topology
from .boxes import box_symmetry, refine
from .product import product_group
from .translations import translations


class UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, x: int) -> int:
        p = self.parent
        while p[x] != x:
            p[x] = p[p[x]]
            x = p[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)  # the smallest index names the set


def is_automorphism(tau: Sequence[int], num_compute: int,
                    arcs: Mapping[tuple[int, int], object]) -> bool:
    """Whether ``tau`` (on node indices; compute nodes first) is a permutation keeping
    compute nodes and mapping every arc to an arc of the same capacity."""
    n = len(tau)
    if sorted(tau) != list(range(n)):
        return False
    if any((v < num_compute) != (tau[v] < num_compute) for v in range(n)):
        return False
    return all(arcs.get((tau[a], tau[b])) == c for (a, b), c in arcs.items())


WORK_BUDGET = 50_000_000
"""Most work units of colour refinement one search may spend, a round costing one unit
per link plus 5,000 (measured: about 0.1 µs a unit, so about 5 s in all): a long ring
needs a round per hop, and a huge topology without symmetry must not stall the
search before the plain path refuses it with its size."""


class _Refiner:
    def __init__(self, n: int, num_compute: int, arcs: Mapping[tuple[int, int], object]):
        klass: dict[object, int] = {}
        self.tails = np.fromiter((a for a, _ in arcs), dtype=np.int64, count=len(arcs))
        self.heads = np.fromiter((b for _, b in arcs), dtype=np.int64, count=len(arcs))
        self.klass = np.fromiter((klass.setdefault(c, len(klass)) for c in arcs.values()),
                                 dtype=np.int64, count=len(arcs))
        self.cost = len(arcs) + 5000  # per round
        self.left = WORK_BUDGET
        base = np.array([0 if v < num_compute else 1 for v in range(n)], dtype=np.uint64)
        self.colour = self.refine(base)

    def refine(self, colours: np.ndarray) -> np.ndarray:
        """Rounds of :func:`.boxes.refine` until the number of colours is stable, or
        the budget is spent (then :attr:`left` ≤ 0 and the result is not used)."""
        col, classes = colours, len(np.unique(colours))
        while self.left > 0:
            self.left -= self.cost
            col = refine(self.tails, self.heads, self.klass, col, rounds=1)
            count = len(np.unique(col))
            if count == classes:
                break
            classes = count
        return col


def _pair(col_a: np.ndarray, col_b: np.ndarray) -> list[int] | None:
    """τ pairing the i-th node of each colour cell of ``col_a`` with the i-th of ``col_b``."""
    oa = np.lexsort((np.arange(len(col_a)), col_a))
    ob = np.lexsort((np.arange(len(col_b)), col_b))
    if not np.array_equal(col_a[oa], col_b[ob]):
        return None  # the cells differ in size or colour
    tau = np.empty(len(col_a), dtype=np.int64)
    tau[oa] = ob
    return [int(x) for x in tau.tolist()]


def map_node(ref: _Refiner, num_compute: int, arcs: Mapping[tuple[int, int], object],
             c0: int, c1: int, max_steps: int = 24) -> list[int] | None:
    """A verified automorphism τ with τ(c0) = c1, or None (module docstring)."""
    col_a, col_b = ref.colour.copy(), ref.colour.copy()
    mark = np.uint64(0x5EED)
    col_a[c0] = col_b[c1] = mark
    for step in range(max_steps):
        col_a, col_b = ref.refine(col_a), ref.refine(col_b)
        tau = _pair(col_a, col_b)
        if tau is None or ref.left <= 0:
            return None
        if is_automorphism(tau, num_compute, arcs):
            return tau
        values, first, counts = np.unique(col_a, return_index=True, return_counts=True)
        multi = first[counts > 1]
        if not len(multi):
            return None  # all singletons, yet no automorphism
        x = int(multi.min())
        mark = np.uint64(0x5EED + step + 1)
        col_a[x], col_b[tau[x]] = mark, mark
    return None


def refiner(n: int, num_compute: int, arcs: Mapping[tuple[int, int], object]) -> _Refiner:
    """The colour refinement of a topology on node indices that :func:`map_node` takes."""
    return _Refiner(n, num_compute, arcs)


def find_generators(t: Topology, *, max_generators: int = 16,
                    max_attempts: int = 48) -> list[list[int]]:
    """Verified automorphisms of ``t`` (index permutations, compute nodes first) under
    which the compute nodes fall into few orbits; [] when none is found. It starts from
    the generators of the largest free group found (:mod:`.product`, :mod:`.translations`
    or the box shift), then merges orbits that remain."""
    idx = t.index
    n, nc = len(t.nodes), t.num_compute
    arcs = {(idx[a], idx[b]): c for (a, b), c in t.capacity.items()}
    gens: list[list[int]] = []
    found = [box_symmetry(t.nodes, nc, arcs),
             product_group(t.nodes, nc, arcs) if t.switch_nodes else
             translations(t.nodes, nc, arcs)]
    best = max((s for s in found if s is not None), key=lambda s: s.order, default=None)
    if best is not None:  # the largest free group found (one orbit on most machines)
        gens += [[int(x) for x in g.tolist()] for g in best.generators()]
    return extend_generators(_Refiner(n, nc, arcs), nc, arcs, gens,
                             max_generators=max_generators, max_attempts=max_attempts)


def extend_generators(ref: _Refiner, nc: int, arcs: Mapping[tuple[int, int], object],
                      gens: list[list[int]], *, max_generators: int = 16,
                      max_attempts: int = 48) -> list[list[int]]:
    """``gens`` and more verified automorphisms, each merging two orbits of compute nodes
    of equal refined colour (module docstring), up to ``max_generators``."""
    gens = list(gens)
    n = len(ref.colour)
    uf = UnionFind(n)
    for g in gens:
        for v in range(n):
            uf.union(v, g[v])
    attempts = 0
    tried: set[tuple[int, int]] = set()
    progress = True
    while progress:
        progress = False
        cells: dict[int, list[int]] = {}  # orbit representatives by refined colour
        for r in sorted({uf.find(v) for v in range(nc)}):
            cells.setdefault(int(ref.colour[r]), []).append(r)
        for cell in cells.values():
            for i, r0 in enumerate(cell):
                for r in cell[i + 1:]:
                    if len(gens) >= max_generators or attempts >= max_attempts or ref.left <= 0:
                        return gens
                    if (r0, r) in tried or uf.find(r) == uf.find(r0):
                        continue
                    tried.add((r0, r))
                    attempts += 1
                    tau = map_node(ref, nc, arcs, r0, r)
                    if tau is not None:
                        gens.append(tau)
                        for v in range(n):
                            uf.union(v, tau[v])
                        progress = True
                        break
                if progress:
                    break
            if progress:
                break  # recompute the orbits
    return gens
