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

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..model import Topology
from .boxes import Symmetry
from .search import UnionFind, extend_generators, is_automorphism, map_node, refiner

MAX_GENERATORS = 48
"""Generators kept at most (certify accepts 64 per certificate): two per class of boxes,
the rest for permutations inside boxes."""


MAX_FIRST_MAPS = 8
"""Choices of c1 tried at most for the first map of step 1 (each a refinement)."""


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


def _boxes(t: Topology, tau: Sequence[int]) -> tuple[list[list[int]], set[int]]:
    """The connected components of the topology without the nodes ``tau`` fixes next
    to the ones it moves (step 1 of the module docstring), and those nodes."""
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
    return [c for c in comps if any(v < t.num_compute for v in c)], shared


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


def _first_maps(t: Topology, ref: object, arcs: Mapping[tuple[int, int], object],
                ) -> Iterator[list[int]]:
    """Verified maps τ moving a compute node c0 of the largest colour cell onto another
    node c1 of it (step 1), for up to :data:`MAX_FIRST_MAPS` choices of c1 (the last of
    the cell, its middle, its second, then the others in order)."""
    nc = t.num_compute
    colour = ref.colour  # type: ignore[attr-defined]
    cells: dict[int, list[int]] = {}
    for v in range(nc):
        cells.setdefault(int(colour[v]), []).append(v)
    cell = max(cells.values(), key=len)
    if len(cell) < 2:
        return
    order = [cell[-1], cell[len(cell) // 2], cell[1], *cell[2:]]
    tried: set[int] = set()
    for c1 in order:
        if c1 == cell[0] or c1 in tried:
            continue
        tried.add(c1)
        if len(tried) > MAX_FIRST_MAPS:
            return
        tau = map_node(ref, nc, arcs, cell[0], c1)  # type: ignore[arg-type]
        if tau is not None:
            yield tau


@dataclass
class _Found:
    """Steps 1-2 of the module docstring on node indices: the arcs, node kinds, the
    refinement, the first map τ, the boxes, their classes and the shared nodes."""

    arcs: Mapping[tuple[int, int], object]
    kinds: list[int]
    ref: object
    tau: list[int]
    boxes: list[list[int]]
    classes: list[list[list[int]]]
    shared: set[int]


def _find(t: Topology, min_boxes: int = 0) -> _Found | None:
    """Steps 1-2, with the first map τ found; with ``min_boxes``, the first that splits
    the machine into at least that many boxes, if any does."""
    idx = t.index
    n, nc = len(t.nodes), t.num_compute
    arcs = {(idx[a], idx[b]): c for (a, b), c in t.capacity.items()}
    multicast = {idx[v] for v in t.multicast_switches}
    kinds = [0 if v < nc else (2 if v in multicast else 1) for v in range(n)]
    ref = refiner(n, nc, arcs)
    first = None
    for tau in _first_maps(t, ref, arcs):
        boxes, shared = _boxes(t, tau)
        if first is None:
            first = (tau, boxes, shared)
        if not min_boxes or len(boxes) >= min_boxes:
            break
    else:
        if first is None:
            return None
        tau, boxes, shared = first  # no map splits the machine into enough boxes
    classes = _classes(boxes, arcs, kinds, n) if len(boxes) > 1 else [[b] for b in boxes]
    return _Found(arcs, kinds, ref, tau, boxes, classes, shared)


def box_classes(t: Topology) -> tuple[list[list[int]], list[list[list[int]]], set[int]] | None:
    """The boxes of ``t`` (node indices, each sorted), its classes of interchangeable
    boxes (each swap checked exactly) and the shared nodes (steps 1-2 of the module
    docstring); None when no two compute nodes are found interchangeable."""
    got = _find(t, min_boxes=3)
    return None if got is None else (got.boxes, got.classes, got.shared)


def near_symmetry(t: Topology) -> NearSymmetry | None:
    """Verified generators of the box permutations (and moves inside boxes) that ``t``
    still has, or None when there are none (module docstring)."""
    got = _find(t)
    if got is None:
        return None
    n, nc = len(t.nodes), t.num_compute
    arcs, kinds, ref, tau, classes = got.arcs, got.kinds, got.ref, got.tau, got.classes
    gens: list[list[int]] = []
    for cls in classes:
        if len(cls) >= 2:
            gens.append(_swap(cls[0], cls[1], n))
        if len(cls) >= 3:
            gens.append(_cycle(cls, n))
    gens = [g for g in gens if _keeps(g, nc, arcs, kinds)]
    if not gens:
        gens = [tau] if _keeps(tau, nc, arcs, kinds) else []
    gens = extend_generators(ref, nc, arcs, gens,  # type: ignore[arg-type]
                             max_generators=MAX_GENERATORS)
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
    form), for a group of box shifts (every generator) or a near-symmetry."""
    perms = sym.generators() if isinstance(sym, Symmetry) else sym.generators
    return [[[nodes[i], nodes[j]] for i, j in enumerate(np.asarray(p).tolist()) if i != j]
            for p in perms]
