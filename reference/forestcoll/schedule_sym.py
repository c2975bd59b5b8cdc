"""Phases built by orbits, kept as orbits: representative trees, the group, lazy mapping.

A phase packed by :mod:`.sympack` has trees for one root per orbit of a symmetry
group H (a box shift <σ>, or a product of shifts; acting freely on the compute
nodes); the trees of every other root are their images (Zhao & Krishnamurthy 2023, §2: a
pipeline of spanning trees is correct and as fast on every automorphic
image). :class:`OrbitTrees` keeps the representatives' trees as
:class:`~.schedule_result.Tree` objects and maps them to every root only when
something asks for all trees (:class:`LazyTrees`: a phase's ``trees``), so
a symmetric schedule file (docs/schedules.md, "Symmetric schedule files") of
8192 GPUs is written from the representatives alone. :func:`orbit_phase_time`
is the exact time from the representatives' loads, summed over link orbits:
the images of all trees load link e with (order/|O(e)|)·Σ_{e'∈O(e)} load(e').
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from fractions import Fraction
from typing import overload

import numpy as np

from ..model import Topology
from ..symmetry import Symmetry, orbits
from .schedule_result import Path, Tree, TreeEdge
from .sympack import OrbitPacking

Node = Hashable


class LazyTrees(Sequence[Tree]):
    """A phase's trees, made by ``make`` on first use; ``len`` without making them."""

    def __init__(self, make: Callable[[], list[Tree]], count: int) -> None:
        self._make: Callable[[], list[Tree]] | None = make
        self._count = count
        self._items: list[Tree] = []

    def _all(self) -> list[Tree]:
        if self._make is not None:
            make, self._make = self._make, None
            self._items = make()
        return self._items

    @property
    def made(self) -> bool:
        """Whether every tree has been made (mapped to its root) already."""
        return self._make is None

    def __len__(self) -> int:
        return self._count if self._make is not None else len(self._items)

    @overload
    def __getitem__(self, i: int) -> Tree: ...

    @overload
    def __getitem__(self, i: slice) -> list[Tree]: ...

    def __getitem__(self, i: int | slice) -> Tree | list[Tree]:
        return self._all()[i]

    def __iter__(self) -> Iterator[Tree]:
        return iter(self._all())


class OrbitTrees:
    """The representative roots' trees of a phase (edges in the phase's direction:
    in-trees reversed), the symmetry whose images are the other roots' trees, and
    their mapping."""

    def __init__(self, orb: OrbitPacking, transposed: bool) -> None:
        self.orb = orb
        self.sym: Symmetry = orb.sym
        self.transposed = transposed
        self.direction = "in" if transposed else "out"
        self._edges: dict[int, TreeEdge] = {}
        order = self.sym.order
        self.reps: list[Tree] = []
        self._ids: list[tuple[np.ndarray, np.ndarray]] = []
        for root, m, height, chosen in orb.rep_trees:
            edges = [self._edge(c * order + j, orb.walk(c, j)) for c, j in chosen]
            self.reps.append(Tree(orb.compute[root], m, self.direction, edges, height))
            self._ids.append((np.fromiter((c for c, _ in chosen), np.int64, len(chosen)),
                              np.fromiter((j for _, j in chosen), np.int64, len(chosen))))

    @property
    def count(self) -> int:
        """The trees of all roots together."""
        return len(self.reps) * self.sym.order

    def _edge(self, w: int, path: Path) -> TreeEdge:
        e = self._edges.get(w)
        if e is None:
            e = self._edges[w] = (TreeEdge(path[-1], path[0], tuple(reversed(path)))
                                  if self.transposed else TreeEdge(path[0], path[-1], path))
        return e

    def lazy(self) -> LazyTrees:
        return LazyTrees(self.expand, self.count)

    def expand(self) -> list[Tree]:
        """Every root's trees (root order; a root's trees in its representative's order),
        the representatives' own trees among them; trees share equal walks' edges."""
        sym, orb = self.sym, self.orb
        order, nodes = sym.order, sym.nodes
        table = [self._edge(w, p) for w, p in enumerate(orb.walk_table())]
        idx = {v: i for i, v in enumerate(orb.compute)}
        node_idx = {v: i for i, v in enumerate(nodes)}
        trees: list[Tree] = list(self.reps)
        for i in range(1, order):
            for rep, (cs, js) in zip(self.reps, self._ids):
                ids = (cs * order + sym.compose_many(js, i)).tolist()
                root = nodes[sym.image(i, node_idx[rep.root])]
                trees.append(Tree(root, rep.multiplicity, rep.direction,
                                  [table[w] for w in ids], rep.height, rep.index))
        trees.sort(key=lambda tr: idx[tr.root])
        return trees

    def generator(self) -> list[list[Node]]:
        """σ as ``[[u, σ(u)], …]`` over the nodes it moves (the first generator)."""
        return orbits.generator_pairs(self.sym, self.sym.nodes)[0]

    def generators(self) -> list[list[list[Node]]]:
        """Every generator as ``[[u, g(u)], …]`` over the nodes it moves."""
        return orbits.generator_pairs(self.sym, self.sym.nodes)

    def representatives(self) -> list[Node]:
        """One compute node per orbit: the roots whose trees a symmetric file holds."""
        return [self.orb.compute[r] for r in self.sym.reps]

    def acts_on(self, t: Topology) -> bool:
        return tuple(self.sym.nodes) == tuple(t.nodes)


def orbit_phase_time(topology: Topology, ot: OrbitTrees, per_root: dict[Node, Fraction],
                     ) -> Fraction:
    """The exact time per unit of a phase whose trees are ``ot``'s representatives and
    their images: max over link orbits O of (order/|O|)·Σ_{e∈O} load(e) / c(O), load
    from the representatives' trees (``per_root`` as :func:`.schedule_build.phase_time`)."""
    sym = ot.sym
    order = sym.order
    k_of: dict[Node, int] = {}
    for tr in ot.reps:
        k_of[tr.root] = k_of.get(tr.root, 0) + tr.multiplicity
    amount: dict[int, Fraction] = {}
    edge: dict[int, TreeEdge] = {}
    for tr in ot.reps:
        share = per_root[tr.root] / k_of[tr.root] * tr.multiplicity
        for e in tr.edges:
            key = id(e)
            amount[key] = amount.get(key, Fraction(0)) + share
            edge[key] = e
    load: dict[tuple[Node, Node], Fraction] = {}
    for key, share in amount.items():
        p = edge[key].path
        for a, b in zip(p, p[1:]):
            load[(a, b)] = load.get((a, b), Fraction(0)) + share
    nodes = sym.nodes
    idx = {v: i for i, v in enumerate(nodes)}
    gens = [g.tolist() for g in sym.generators()]
    seen: set[tuple[Node, Node]] = set()
    worst = Fraction(0)
    for link in load:
        if link in seen:
            continue
        orbit = _link_orbit((idx[link[0]], idx[link[1]]), gens)
        members = [(nodes[a], nodes[b]) for a, b in orbit]
        seen.update(members)
        total = sum((load.get(y, Fraction(0)) for y in members), Fraction(0))
        worst = max(worst, total * order / len(members) / topology.capacity[link])
    return worst


def _link_orbit(link: tuple[int, int], gens: list[list[int]]) -> list[tuple[int, int]]:
    """The orbit of a link under the group the generators generate (closure)."""
    orbit = [link]
    known = {link}
    for a, b in orbit:  # grows while it is walked
        for g in gens:
            img = (g[a], g[b])
            if img not in known:
                known.add(img)
                orbit.append(img)
    return orbit
