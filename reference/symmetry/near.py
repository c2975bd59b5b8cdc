"""Near-symmetry: the group a degraded machine of boxes still has, found and verified.

A machine of identical boxes with one NIC at half speed (or one failed link,
or one box of another generation) has no box shift any more (:mod:`.boxes`
needs every box alike), yet almost all of its symmetry is left: any
permutation of the unaffected boxes is an automorphism, and inside a box the
unaffected GPUs are often interchangeable too. :func:`near_symmetry` finds
generators of such a group:

1. two compute nodes c0, c1 of the largest refined colour cell are mapped
   onto each other by individualisation-refinement (:func:`.search.map_node`,
   verified); the nodes the map fixes next to the ones it moves are the
   shared switches F, the connected components of the rest are the boxes;
2. boxes are sorted into classes of interchangeable boxes: box B joins the
   class of box A when swapping A and B node by node (in node order) keeps
   every link at A and B, exactly;
3. a class [B0, …, Bm−1] with m ≥ 2 contributes the swap (B0 B1) and, for
   m ≥ 3, the cycle (B0 B1 … Bm−1): together they generate every
   permutation of the class (the symmetric group S_m), so every unaffected
   box lies in one orbit while an affected box stays on its own;
4. the search of :mod:`.search` then adds automorphisms that move GPUs inside
   boxes (one at a time, between nodes of equal colour in different orbits).

Every generator is verified exactly, link by link, against the whole topology
(:func:`.search.is_automorphism`, the multicast switches kept) before it is
returned; the certificate that uses them lists them and ``collcert.certify``
verifies them again (``certify.symmetry``). The group need not act freely: the
optimum needs one max-flow per orbit of compute nodes and nothing else
(docs/optimum.md, "Large machines"); a failure here only means the general
algorithm runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..model import Topology
from .boxes import Symmetry
from .search import UnionFind, extend_generators, is_automorphism, map_node, refiner

MAX_GENERATORS = 48
"""Generators kept at most (certify accepts 64 per certificate): two per class of boxes,
the rest for permutations inside boxes."""


MAX_CLASSES = 256
"""Classes of boxes looked for at most: beyond, the boxes are hardly alike and the
search (a swap check against each class) would cost more than it saves."""


@dataclass
class NearSymmetry:
    """A verified group of automorphisms given by ``generators`` (index permutations
    over ``nodes``, compute nodes first), not necessarily acting freely. ``reps``: one
    compute node (index) per orbit; ``classes``: the sizes of the classes of
    interchangeable boxes it found."""

    nodes: tuple[object, ...]
    generators: list[list[int]]
    reps: list[int]
    classes: list[int]

    def describe(self) -> str:
        big = sorted((c for c in self.classes if c > 1), reverse=True)
        boxes = (f"interchangeable boxes in classes of {', '.join(map(str, big))} "
                 f"({sum(self.classes)} boxes), " if big else "")
        return (f"near-symmetry: {boxes}{len(self.generators)} verified generators; one "
                f"max-flow per orbit ({len(self.reps)} orbits of compute nodes)")


def _boxes(t: Topology, tau: Sequence[int]) -> list[list[int]]:
    """The connected components of the topology without the nodes ``tau`` fixes next
    to the ones it moves (step 1 of the module docstring)."""
    n = len(tau)
    adj: list[set[int]] = [set() for _ in range(n)]
    idx = t.index
    for a, b in t.capacity:
        adj[idx[a]].add(idx[b])
        adj[idx[b]].add(idx[a])
    moved = {v for v in range(n) if tau[v] != v}
    shared = {v for v in range(n) if v not in moved and adj[v] & moved}
    seen = [v in shared for v in range(n)]
    comps: list[list[int]] = []
    for v in range(n):
        if seen[v]:
            continue
        seen[v] = True
        stack, comp = [v], [v]
        while stack:
            for y in adj[stack.pop()]:
                if not seen[y]:
                    seen[y] = True
                    stack.append(y)
                    comp.append(y)
        comps.append(sorted(comp))
    return [c for c in comps if any(v < t.num_compute for v in c)]


def _swap(a: Sequence[int], b: Sequence[int], n: int) -> list[int]:
    perm = list(range(n))
    for x, y in zip(a, b):
        perm[x], perm[y] = y, x
    return perm


def _cycle(boxes: Sequence[Sequence[int]], n: int) -> list[int]:
    perm = list(range(n))
    for j, box in enumerate(boxes):
        for x, y in zip(box, boxes[(j + 1) % len(boxes)]):
            perm[x] = y
    return perm


def _swap_keeps(a: Sequence[int], b: Sequence[int], incident: Sequence[list[tuple[int, int]]],
                arcs: Mapping[tuple[int, int], object], kinds: Sequence[int]) -> bool:
    """Whether swapping boxes ``a`` and ``b`` node by node keeps every link at them."""
    if len(a) != len(b):
        return False
    pi = dict(zip(a, b))
    pi.update(zip(b, a))
    if any(kinds[x] != kinds[y] for x, y in pi.items()):
        return False
    for x in a:
        for u, v in incident[x]:
            if arcs.get((pi.get(u, u), pi.get(v, v))) != arcs[(u, v)]:
                return False
    return True


def _classes(boxes: list[list[int]], arcs: Mapping[tuple[int, int], object],
             kinds: Sequence[int], n: int) -> list[list[list[int]]]:
    incident: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for u, v in arcs:
        incident[u].append((u, v))
        if v != u:
            incident[v].append((u, v))
    classes: list[list[list[int]]] = []
    for box in boxes:
        if len(classes) > MAX_CLASSES:  # hardly any box alike: not worth the search
            return [[b] for b in boxes]
        for cls in classes:
            if _swap_keeps(cls[0], box, incident, arcs, kinds):
                cls.append(box)
                break
        else:
            classes.append([box])
    return classes


def _first_map(t: Topology, ref: object, arcs: Mapping[tuple[int, int], object],
               ) -> list[int] | None:
    """A verified τ moving a compute node of the largest colour cell (step 1)."""
    nc = t.num_compute
    colour = ref.colour  # type: ignore[attr-defined]
    cells: dict[int, list[int]] = {}
    for v in range(nc):
        cells.setdefault(int(colour[v]), []).append(v)
    cell = max(cells.values(), key=len)
    if len(cell) < 2:
        return None
    for c1 in (cell[-1], cell[len(cell) // 2], cell[1]):
        if c1 != cell[0]:
            tau = map_node(ref, nc, arcs, cell[0], c1)  # type: ignore[arg-type]
            if tau is not None:
                return tau
    return None


def near_symmetry(t: Topology) -> NearSymmetry | None:
    """Verified generators of the box permutations (and moves inside boxes) that ``t``
    still has, or None when there are none (module docstring)."""
    idx = t.index
    n, nc = len(t.nodes), t.num_compute
    arcs = {(idx[a], idx[b]): c for (a, b), c in t.capacity.items()}
    multicast = {idx[v] for v in t.multicast_switches}
    kinds = [0 if v < nc else (2 if v in multicast else 1) for v in range(n)]
    ref = refiner(n, nc, arcs)
    tau = _first_map(t, ref, arcs)
    if tau is None:
        return None
    boxes = _boxes(t, tau)
    classes = _classes(boxes, arcs, kinds, n) if len(boxes) > 1 else [[b] for b in boxes]
    gens: list[list[int]] = []
    for cls in classes:
        if len(cls) >= 2:
            gens.append(_swap(cls[0], cls[1], n))
        if len(cls) >= 3:
            gens.append(_cycle(cls, n))
    gens = [g for g in gens if _keeps(g, nc, arcs, kinds)]
    if not gens:
        gens = [tau] if _keeps(tau, nc, arcs, kinds) else []
    gens = extend_generators(ref, nc, arcs, gens, max_generators=MAX_GENERATORS)
    gens = [g for g in gens if _keeps(g, nc, arcs, kinds)]
    if not gens:
        return None
    uf = UnionFind(n)
    for g in gens:
        for v in range(n):
            uf.union(v, g[v])
    reps = sorted({uf.find(v) for v in range(nc)})
    return NearSymmetry(tuple(t.nodes), gens, reps, [len(c) for c in classes])


def _keeps(g: Sequence[int], nc: int, arcs: Mapping[tuple[int, int], object],
           kinds: Sequence[int]) -> bool:
    """Exact check of one generator: an automorphism keeping the multicast switches."""
    return is_automorphism(g, nc, arcs) and all(kinds[v] == kinds[g[v]]
                                                for v in range(len(g)))


def certificate_generators(sym: Symmetry | NearSymmetry, nodes: Sequence[object],
                    ) -> list[list[list[object]]]:
    """The generators as ``[[u, σ(u)], …]`` over the nodes each moves (the certificate's
    form), for a box shift or a near-symmetry."""
    perms = [sym.perms[1].tolist()] if isinstance(sym, Symmetry) else sym.generators
    return [[[nodes[i], nodes[j]] for i, j in enumerate(np.asarray(p).tolist()) if i != j]
            for p in perms]
