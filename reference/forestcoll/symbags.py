"""The walks of arc units under a group that may fix links: one bag per arc orbit (Zhao & Krishnamurthy 2023, Alg 1).

Switch removal by orbits (:mod:`.symsplit`) keeps the graph invariant under a
finite abelian group H (:class:`collcert.reference.symmetry.Symmetry`, acting
freely on compute nodes but not on switches: on a rail-optimized fabric the
server shift fixes every leaf and spine). The walks that the units of the arcs
stand for are kept *equivariant*: the walks of g(e) are g of the walks of e.
So one bag per orbit of arcs is enough, kept for the orbit's *canonical* arc
(the image with the least (tail, head)); an arc's walks are the canonical
bag mapped back.

The stabilizer K_e of an arc e (the elements fixing both ends) may be
non-trivial; its bag is then K_e-invariant, and an entry (W, x) of the bag
stands for x units of *each* walk of the orbit K_e·W. Let S_W be the
stabilizer of the walk W (of all its nodes; S_W ⊆ K_e).

An orbit split of the pair P = (u, w, t) by γ (:mod:`.symsplit`) gives each
image g(P) γ units of (g u, g w) and (g w, g t); the images of P that share the
arc (u, w) are k(P), k ∈ K_(u,w)/K_P, K_P the stabilizer of P. The units P
takes must be K_P-invariant: from an entry (W, x), P takes z *blocks*, a block
being the K_P-orbit of W (|K_P : K_P ∩ S_W| walks, one unit each); all images
sharing the arc then take together z·|S_W : S_W ∩ K_P| units of each walk of
K_e·W (counted over the cosets), so the entry loses exactly that. A block of
the left arc and a block of the right arc are joined walk by walk (k·W_l with
k·W_r), which is a K_P-orbit of joined walks J when the three orbits have the
same size; each image sharing the new arc (u, t) adds its blocks, which gives
z units of each walk of K_(u,t)·J (S_J ⊆ K_P). When the sizes differ the split
is not attempted (:class:`~.symsplit.SymmetryFailed`: the general algorithm runs).

Nothing here is trusted: the walks end up in the schedule's paths, whose link
loads ``collcert.certify`` checks.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from ..symmetry import Symmetry

Node = Hashable
Walk = tuple[int, ...]


class SymmetryFailed(Exception):
    """The orbit-wise algorithm cannot go on; use the general one."""


@dataclass
class Taken:
    """Blocks P takes from one arc: (walk in P's frame, blocks) and the block size."""

    blocks: list[tuple[Walk, int]]
    size: int


class GroupView:
    """The group's table and the stabilizers of nodes, arcs, pairs and walks. A group
    kept without its table (:attr:`Symmetry.tabled` false: 131,072 elements on 278,529
    nodes) is asked by its generators instead (:class:`_FreeView`)."""

    def __new__(cls, sym: Symmetry) -> GroupView:
        if cls is GroupView and not sym.tabled:
            return super().__new__(_FreeView)
        return super().__new__(cls)

    def __init__(self, sym: Symmetry) -> None:
        self.sym = sym
        self.P = np.asarray(sym.perms)
        self.order = sym.order
        self.n = self.P.shape[1]
        self._stab: dict[int, np.ndarray] = {}
        self._inv = [sym.inverse(j) for j in range(self.order)] if sym.orders else [
            (self.order - j) % self.order for j in range(self.order)]
        self._canon: dict[tuple[int, int], tuple[int, int, int]] = {}
        # a compute node's orbit: its least node is its representative (the group acts
        # freely on compute nodes, so one element takes it there)
        self.nc = len(sym.element)
        self._free = all(sym.rep_of[r] == r and r == int(self.P[:, r].min()) for r in sym.reps)

    def inverse(self, j: int) -> int:
        return self._inv[j]

    def stab(self, v: int) -> np.ndarray:
        """The elements fixing node v, as a boolean mask over the group."""
        s = self._stab.get(v)
        if s is None:
            s = self._stab[v] = self.P[:, v] == v
        return s

    def stab_of(self, nodes: Walk) -> np.ndarray:
        mask = np.ones(self.order, dtype=bool)
        for v in set(nodes):
            mask &= self.stab(v)
            if mask.sum() == 1:
                break
        return mask

    def canonical(self, a: int, b: int) -> tuple[int, int, int]:
        """The canonical arc of the orbit of (a, b) (its image of least (tail, head)) and
        the element h with h(a, b) = it."""
        got = self._canon.get((a, b))
        if got is not None:
            return got
        if a < self.nc and self._free:  # the one element taking a to its representative
            h = self._inv[self.sym.element[a]]
            got = (self.sym.rep_of[a], self.image(h, b), h)
        else:
            got = self._canonical_search(a, b)
        self._canon[(a, b)] = got
        return got

    def _canonical_search(self, a: int, b: int) -> tuple[int, int, int]:
        keys = self.P[:, a].astype(np.int64) * self.n + self.P[:, b]
        h = int(keys.argmin())
        ca, cb = divmod(int(keys[h]), self.n)
        return ca, cb, h

    def image(self, j: int, v: int) -> int:
        return int(self.P[j, v])

    def column(self, v: int) -> np.ndarray:
        """Every element's image of v (element order)."""
        return self.P[:, v]

    def images(self, nodes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """The distinct images of a tuple of nodes (rows) and, for each, an element that
        gives it; the identity's image first."""
        rows = np.stack([self.column(v) for v in nodes], axis=1)
        _, first = np.unique(rows, axis=0, return_index=True)
        first = np.sort(first)
        return rows[first], first

    def map_walk(self, walk: Walk, j: int) -> Walk:
        if j == 0:
            return walk
        row = self.P[j]
        return tuple(int(row[v]) for v in walk)

    def row(self, j: int) -> np.ndarray:
        """Element j as an index array over every node."""
        return np.asarray(self.P[j])

    def least_images(self) -> list[int]:
        """Each node's orbit's least node."""
        return [int(x) for x in self.P.min(axis=0)]

    def moved(self) -> list[bool]:
        """Whether some element moves the node, for every node."""
        return [bool(x) for x in (self.P != np.arange(self.n)).any(axis=0)]

    def orbit_nodes(self, v: int) -> set[int]:
        return set(self.P[:, v].tolist())

    def least_under(self, fix: np.ndarray, t: int) -> int:
        """The least image of t by the elements of the mask ``fix``."""
        return int(self.P[fix, t].min())


class _FreeView(GroupView):
    """:class:`GroupView` of a group kept by its generators: images by the generators'
    cycles (:meth:`Symmetry.apply`), columns made when asked, each node's orbit (its
    least node and an element taking it there) from one search over the generators,
    stabilizers once per orbit (the group is abelian: every node of an orbit has the
    same one) and canonical arcs from the stabilizer of their tail."""

    def __init__(self, sym: Symmetry) -> None:
        self.sym = sym
        self.P = None  # type: ignore[assignment]
        self.order = sym.order
        self.n = len(sym.nodes)
        self._all = np.arange(self.order, dtype=np.int64)
        self._stab = {}
        self._inv = [sym.inverse(j) for j in range(self.order)] if sym.orders else [
            (self.order - j) % self.order for j in range(self.order)]
        self._canon = {}
        self.nc = len(sym.element)
        self._least, self._to_least = _orbit_search(sym)
        self._free = all(sym.rep_of[r] == r and r == int(self._least[r]) for r in sym.reps)
        self._trivial = np.zeros(self.order, dtype=bool)
        self._trivial[0] = True

    def stab(self, v: int) -> np.ndarray:
        if v < self.nc and self._free:  # the group acts freely on compute nodes
            return self._trivial
        key = int(self._least[v])
        s = self._stab.get(key)
        if s is None:
            s = self._stab[key] = self.column(key) == key
        return s

    def _canonical_search(self, a: int, b: int) -> tuple[int, int, int]:
        ca, h0 = int(self._least[a]), int(self._to_least[a])
        fix = self.stab(a)
        if bool(fix.all()):  # every element fixes a: b's orbit's least node
            return ca, int(self._least[b]), int(self._to_least[b])
        els = np.flatnonzero(fix)
        imgs = self.sym.images_under(self.image(h0, b), els)
        k = int(imgs.argmin())
        return ca, int(imgs[k]), self.sym.compose(int(els[k]), h0)

    def image(self, j: int, v: int) -> int:
        return self.sym.image(j, v)

    def column(self, v: int) -> np.ndarray:
        return self.sym.images_under(v, self._all)

    def map_walk(self, walk: Walk, j: int) -> Walk:
        if j == 0:
            return walk
        return self.sym.map_nodes(j, walk)

    def row(self, j: int) -> np.ndarray:
        return self.sym.apply(j, np.arange(self.n))

    def least_images(self) -> list[int]:
        return [int(x) for x in self._least]

    def moved(self) -> list[bool]:
        out = np.zeros(self.n, dtype=bool)
        for g in self.sym.generators():
            out |= np.asarray(g) != np.arange(self.n)
        return out.tolist()

    def orbit_nodes(self, v: int) -> set[int]:
        return set(np.flatnonzero(self._least == self._least[v]).tolist())

    def least_under(self, fix: np.ndarray, t: int) -> int:
        if bool(fix.all()):
            return int(self._least[t])
        return int(self.sym.images_under(t, np.flatnonzero(fix)).min())


def _orbit_search(sym: Symmetry) -> tuple[np.ndarray, np.ndarray]:
    """Each node's orbit's least node and an element taking the node there: a search
    over the generators from each orbit's least node (nodes in increasing order)."""
    n = len(sym.nodes)
    gens = [g.tolist() for g in sym.generators()]
    steps = list(zip(sym.strides, sym.factors))
    least = np.full(n, -1, dtype=np.int64)
    reach = [0] * n  # element taking the orbit's least node to the node
    for v in range(n):
        if least[v] >= 0:
            continue
        least[v] = v
        queue = [v]
        for x in queue:  # grows while it is walked
            for g, (s, m) in zip(gens, steps):
                y = g[x]
                if least[y] < 0:
                    least[y] = v
                    j = reach[x]  # one more in digit i: j + s, wrapping modulo m
                    reach[y] = j + s if (j // s) % m + 1 < m else j - (m - 1) * s
                    queue.append(y)
    return least, np.asarray([sym.inverse(e) for e in reach], dtype=np.int64)


class OrbitBags:
    """One bag of walks per orbit of arcs, kept for its canonical arc (module docstring).
    ``bag[c]``: {walk (node indices, in the canonical arc's frame): units per walk}."""

    def __init__(self, group: GroupView) -> None:
        self.g = group
        self.bag: dict[tuple[int, int], dict[Walk, int]] = {}

    def add_link(self, a: int, b: int, units: int) -> None:
        """An original link of the topology: its canonical bag holds the direct walk
        (once per orbit: every link of the orbit has the same capacity)."""
        ca, cb, _ = self.g.canonical(a, b)
        bag = self.bag.setdefault((ca, cb), {})
        bag.setdefault((ca, cb), units)

    def _stab_size(self, walk: Walk, within: np.ndarray) -> tuple[int, int]:
        """|S_W| and |S_W ∩ within|."""
        s = self.g.stab_of(walk)
        return int(s.sum()), int((s & within).sum())

    def blocks(self, a: int, b: int, k_p: np.ndarray) -> tuple[list[tuple[Walk, int, int, int]],
                                                               int]:
        """What the pair with stabilizer ``k_p`` may take from arc (a, b): for each entry of
        the canonical bag (walk in the canonical frame, blocks available, units lost per
        block, block size), and the element that maps (a, b) to the canonical arc."""
        ca, cb, h = self.g.canonical(a, b)
        out = []
        kp = int(k_p.sum())
        for walk, x in self.bag.get((ca, cb), {}).items():
            s, s_kp = self._stab_size(walk, k_p)
            lose = s // s_kp
            size = kp // s_kp
            if x >= lose:
                out.append((walk, x // lose, lose, size))
        return out, h

    def available(self, a: int, b: int, k_p: np.ndarray) -> dict[int, int]:
        """Units the pair may take from (a, b), by block size."""
        got, _ = self.blocks(a, b, k_p)
        out: dict[int, int] = {}
        for _, z, _, size in got:
            out[size] = out.get(size, 0) + z * size
        return out

    def take(self, a: int, b: int, k_p: np.ndarray, units: int, size: int) -> Taken:
        """Take ``units`` in whole blocks of ``size`` walks (largest entries first) for the
        pair from (a, b); the walks in the pair's own frame (the arc (a, b) itself)."""
        got, h = self.blocks(a, b, k_p)
        ca, cb, _ = self.g.canonical(a, b)
        bag = self.bag[(ca, cb)]
        back = self.g.inverse(h)
        taken: list[tuple[Walk, int]] = []
        left = units
        for walk, z_max, lose, bsize in sorted(got, key=lambda e: (-e[1], len(e[0]))):
            if left == 0:
                break
            z = min(z_max, left // size)
            if bsize != size or z == 0:
                continue
            bag[walk] -= z * lose
            if bag[walk] == 0:
                del bag[walk]
            taken.append((self.g.map_walk(walk, back), z))
            left -= z * size
        if left:
            raise RuntimeError("internal: an arc's walks hold fewer units than it splits")
        return Taken(taken, size)

    def join_add(self, left: Taken, right: Taken, k_p: np.ndarray, u: int, t: int) -> None:
        """Join the blocks walk by walk and add them to the new arc (u, t) (u ≠ t)."""
        if left.size != right.size:
            raise SymmetryFailed("the walks of a split pair have different symmetry")
        ca, cb, h = self.g.canonical(u, t)
        bag = self.bag.setdefault((ca, cb), {})
        kp = int(k_p.sum())
        i = j = 0
        lrem = left.blocks[0][1] if left.blocks else 0
        rrem = right.blocks[0][1] if right.blocks else 0
        while i < len(left.blocks) and j < len(right.blocks):
            z = min(lrem, rrem)
            joined = left.blocks[i][0] + right.blocks[j][0][1:]
            if left.size > 1 and kp // int((self.g.stab_of(joined) & k_p).sum()) != left.size:
                raise SymmetryFailed("joined walks of a split pair have another symmetry")
            key = self.g.map_walk(joined, h)
            bag[key] = bag.get(key, 0) + z
            lrem -= z
            rrem -= z
            if lrem == 0:
                i += 1
                lrem = left.blocks[i][1] if i < len(left.blocks) else 0
            if rrem == 0:
                j += 1
                rrem = right.blocks[j][1] if j < len(right.blocks) else 0

    def walks_of(self, a: int, b: int) -> dict[Walk, int]:
        """The walks of an arc whose stabilizer is trivial (an arc of G*), in its frame."""
        ca, cb, h = self.g.canonical(a, b)
        back = self.g.inverse(h)
        return {self.g.map_walk(w, back): x for w, x in self.bag.get((ca, cb), {}).items()}
