"""Tree packing by orbits: trees for one root per orbit, mapped to every root.

When G* is invariant under a group H acting freely on its nodes
(:mod:`collcert.reference.symmetry`, :mod:`.symsplit`), the arcs of G* fall into orbits
("labels"); the arcs of one orbit have equal capacity c(L). Trees built for
the representative roots r and mapped by every h ∈ H load an arc e of label
L with Σ_{e' ∈ L} (uses of e' by the representatives' trees): the mapped
family fits in G* exactly when every label is used at most c(L) times by
the representatives' trees (multiplicities counted). So the representatives'
trees are packed against *label budgets*, then copied to every root.

The representatives' trees are grown like Zhao & Krishnamurthy 2023, Alg 2's batches (one batch of
multiplicity k per root, split when an arc can take only part of it) but
arcs are chosen greedily, Prim-like: the arc with the largest remaining
label budget first (then the shallowest tail), so capacity-rich arcs (inside
a box) are used before scarce ones (between boxes), and each box is entered
once per tree. This is a heuristic, not Zhao & Krishnamurthy 2023, Thm 12: when a tree cannot be
completed, :class:`~.symsplit.SymmetryFailed` is raised and the caller uses
the general packing. Whatever it returns is checked in full by
``collcert.certify`` (spanning arborescences, loads, time) with no knowledge
of the symmetry; the schedule code also recomputes the time exactly.

Walks: G* arc units carry walks in G that are equivariant (the walks of h(e)
are h of the walks of e), so a label's units are handed out from the walks
of its representative arc, and a mapped tree edge uses the mapped walk.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..symmetry import Symmetry
from .nearpack_repair import OrbitRepair
from .splitting import SplitResult
from .symsplit import SymmetryFailed
from .walks import hand_out

Node = Hashable
Path = tuple[Node, ...]
Progress = Callable[[int, int], None]


@dataclass
class OrbitPacking:
    """The representatives' trees and the group that maps them to every root.

    ``canon_walks[c]`` is a walk in G as node indices (of ``sym.nodes``);
    ``rep_trees`` lists (root index, multiplicity, height, edges) of the
    representative roots, in root order, each edge a pair (c, j): walk c mapped
    by σ^j. The tree of ``rep_trees`` mapped by σ^i is rooted at σ^i(root) and
    its edge (c, j) becomes (c, j + i mod order): walk id ``c·order + (j+i) % order``
    of :meth:`walk_table`. Nothing is mapped to other roots here (the schedule maps
    lazily, :mod:`.schedule_sym`, and a symmetric file never does)."""

    sym: Symmetry
    compute: list[Node]
    canon_walks: list[tuple[int, ...]]
    rep_trees: list[tuple[int, int, int, list[tuple[int, int]]]]
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def count(self) -> int:
        """How many trees the packing has, all roots together."""
        return len(self.rep_trees) * self.sym.order

    def walk(self, c: int, j: int) -> Path:
        """Walk ``c`` mapped by σ^j, as nodes."""
        nodes = self.sym.nodes
        return tuple(nodes[v] for v in self.sym.apply(j, list(self.canon_walks[c])).tolist())

    def walk_table(self) -> list[Path]:
        """Every walk the trees of all roots use: id ``c·order + j`` is walk c mapped
        by σ^j (the representatives' trees mapped by σ^i use ids (c, j + i mod order))."""
        sym = self.sym
        order, nodes = sym.order, sym.nodes
        walks: list[Path] = []
        if not sym.tabled:  # a group kept by its generators (module docstring of .symbags)
            for cw in self.canon_walks:
                walks += [tuple(nodes[v] for v in sym.map_nodes(j, cw)) for j in range(order)]
            return walks
        gperm = [p.tolist() for p in sym.perms]
        for cw in self.canon_walks:
            for j in range(order):
                p = gperm[j]
                walks.append(tuple(nodes[p[v]] for v in cw))
        return walks


class _ComputeImages:
    """``self[j][v]``: element j's image of compute node v; the table's rows where the
    group has one, else from each representative's orbit (the group acts freely on
    compute nodes: v = element[v] applied to rep_of[v], so element j takes it to the
    element j ∘ element[v] of the same orbit)."""

    def __init__(self, sym: Symmetry, nc: int) -> None:
        self.sym = sym
        self.table = np.asarray(sym.perms)[:, :nc] if sym.tabled else None
        self.cols = {} if self.table is not None else {r: sym.images(r) for r in sym.reps}

    def __getitem__(self, j: int) -> np.ndarray | _ImagesBy:
        if self.table is not None:
            return np.asarray(self.table[j])
        return _ImagesBy(self, j)


class _ImagesBy:
    """Element j's images of compute nodes, one at a time (:class:`_ComputeImages`)."""

    def __init__(self, ci: _ComputeImages, j: int) -> None:
        self.ci, self.j = ci, j

    def __getitem__(self, v: int) -> int:
        sym = self.ci.sym
        return int(self.ci.cols[sym.rep_of[v]][sym.compose(self.j, sym.element[v])])


@dataclass
class _Batch:
    root: int
    mult: int
    edges: list[tuple[int, int, int, int]]  # (x, y, label, group element of the arc)
    depth: dict[int, int]
    inner: list[tuple[int, int, int, int, int, int]]  # arcs into boxes the tree has entered
    entry: list[tuple[int, int, int, int, int, int]]  # arcs into other boxes
    boxes: set[int]  # boxes (group elements) the tree has entered

    def copy(self, mult: int) -> _Batch:
        return _Batch(self.root, mult, list(self.edges), dict(self.depth), list(self.inner),
                      list(self.entry), set(self.boxes))


def pack_orbits(split: SplitResult, sym: Symmetry, supply: Mapping[Node, int],
                progress: Progress | None = None) -> OrbitPacking:
    """Pack the representatives' trees against label budgets and map them (module doc).

    Tried in turn until one completes: the greedy one batch after the other, then
    growing all batches an arc at a time, then (both again) with each tree entering
    each box once and stuck batches freeing arcs by moving other trees' (nearpack_repair)."""
    tries = ((False, False), (True, False), (True, True), (False, True))
    for n, (interleave, repair) in enumerate(tries):
        packer = _OrbitPacker(split, sym)
        if repair:
            packer.repairer, packer.strict = OrbitRepair(packer), True
        try:
            done = packer.pack(supply, progress, interleave=interleave)
        except SymmetryFailed:
            if n + 1 == len(tries):
                raise
            continue
        if packer.repairer is not None:
            packer.repairer.fix_depths(done)
        break
    out = _map_out(split, sym, packer.compute, packer.canon, done)
    if packer.repairer is not None:
        out.stats["repair_moves"] = packer.repairer.moves
    return out


class _OrbitPacker:
    """The labels of G*'s arcs, their budgets left, and the growing of one tree batch."""

    def __init__(self, split: SplitResult, sym: Symmetry) -> None:
        self.sym = sym
        self.compute = list(split.compute_nodes)
        self.nc = len(self.compute)
        self.idx = {v: i for i, v in enumerate(self.compute)}
        self.perm = _ComputeImages(sym, self.nc)  # element j's images of compute nodes
        order = sym.order
        inv = [sym.inverse(j) for j in range(order)]
        # labels: canonical arc (rep, σ^-j(b)) of arc (σ^j(rep), b)
        label_of: dict[tuple[int, int], int] = {}
        self.budget: list[int] = []
        self.canon: list[tuple[int, int]] = []
        self.out_labels: dict[int, list[tuple[int, int]]] = {}  # rep -> [(head, label)]
        for (a, b), c in split.capacity.items():
            ia, ib = self.idx[a], self.idx[b]
            j = sym.element[ia]
            r = sym.rep_of[ia]
            key = (r, int(self.perm[inv[j]][ib]))
            lab = label_of.get(key)
            if lab is None:
                lab = label_of[key] = len(self.budget)
                self.budget.append(int(c))
                self.canon.append(key)
                self.out_labels.setdefault(r, []).append((key[1], lab))
            elif self.budget[lab] != int(c):
                raise SymmetryFailed("G* is not invariant under the symmetry")
        self.residual = list(self.budget)
        self.repairer: OrbitRepair | None = None
        self.strict = False  # each tree enters each box once (with the repairer)
        # the box of each compute node for the greedy: its group element, or where the
        # group has several cycles of boxes (nearpack) the box the symmetry names
        self.box_of: Sequence[int] = getattr(sym, "box_of", None) or [
            sym.element[v] for v in range(self.nc)]

    def pack(self, supply: Mapping[Node, int], progress: Progress | None,
             interleave: bool = False) -> list[_Batch]:
        """The representatives' batches, each spanning, their m summing to the supply;
        one batch after the other, or (``interleave``) an arc to each batch in turn,
        so that no root takes the largest budgets first."""
        sym, compute = self.sym, self.compute
        total_edges = sum(int(supply.get(compute[r], 0)) for r in sym.reps) * (self.nc - 1)
        placed = 0
        done: list[_Batch] = []
        queue: list[_Batch] = []
        if self.repairer is not None:
            self.repairer.lists = (done, queue)
        for r in reversed(sym.reps):
            k = int(supply.get(compute[r], 0))
            if k > 0:
                bt = _Batch(r, k, [], {r: 0}, [], [], {self.box_of[r]})
                self.push(bt, r)
                queue.append(bt)
        while queue:
            bt = queue.pop(0) if interleave else queue.pop()
            while len(bt.depth) < self.nc:
                placed += self.grow(bt, queue)
                if progress:
                    progress(placed, total_edges)
                if interleave and len(bt.depth) < self.nc:
                    queue.append(bt)
                    break
            else:
                done.append(bt)
        return done

    def grow(self, bt: _Batch, queue: list[_Batch]) -> int:
        """Add the next arc to ``bt`` (a copy takes the trees its budget cannot);
        the tree edges placed."""
        got = self.pick(bt)
        if got is None and self.repairer is not None:
            got = self.repairer.repair(bt)
        if got is None:
            raise SymmetryFailed(f"no arc with budget left extends a tree of "
                                 f"{self.compute[bt.root]!r}")
        d, x, y, lab, j = got
        mu = min(bt.mult, self.residual[lab])
        if mu < bt.mult:
            queue.append(bt.copy(bt.mult - mu))
            bt.mult = mu
        self.residual[lab] -= mu
        bt.edges.append((x, y, lab, j))
        bt.depth[y] = d + 1
        bt.boxes.add(self.box_of[y])
        self.push(bt, y)
        return mu

    def push(self, bt: _Batch, x: int) -> None:
        """Offer the arcs out of x, a new node of ``bt``, with budget left."""
        sym, residual = self.sym, self.residual
        j = sym.element[x]
        p = self.perm[j]
        d = bt.depth[x]
        for hb, lab in self.out_labels.get(sym.rep_of[x], ()):
            y = int(p[hb])
            if y not in bt.depth and residual[lab] > 0:
                heap = bt.inner if self.box_of[y] in bt.boxes else bt.entry
                if heap is bt.inner and self.strict and self.box_of[x] != self.box_of[y]:
                    continue
                heapq.heappush(heap, (-residual[lab], d, x, y, lab, j))

    def pick(self, bt: _Batch) -> tuple[int, int, int, int, int] | None:
        """The next arc: into an entered box first (largest budget left, then shallowest
        tail), else into a new box; None when no arc with budget left remains."""
        residual, element = self.residual, self.box_of
        while bt.inner or bt.entry:
            heap = bt.inner if bt.inner else bt.entry
            key, d, x, y, lab, j = heapq.heappop(heap)
            if y in bt.depth or residual[lab] == 0:
                continue
            if heap is bt.entry and element[y] in bt.boxes:
                if not self.strict:  # strict: a box is entered once
                    heapq.heappush(bt.inner, (key, d, x, y, lab, j))
                continue
            if -key != residual[lab]:
                heapq.heappush(heap, (-residual[lab], d, x, y, lab, j))
                continue
            return d, x, y, lab, j
        return None


def _map_out(split: SplitResult, sym: Symmetry, compute: list[Node],
             canon: list[tuple[int, int]], done: list[_Batch]) -> OrbitPacking:
    """Hand out walk units per label and refine the representatives' batches to one
    walk per edge; the mapping by H is left to :meth:`OrbitPacking.expand`."""
    node_idx = {v: i for i, v in enumerate(sym.nodes)}
    # the walks of each label's representative arc, as index tuples, largest first
    bags: list[list[tuple[tuple[int, ...], int]]] = []
    for r, hb in canon:
        ps = split.paths[(compute[r], compute[hb])]
        items = sorted(ps.items(), key=lambda i: (-i[1], len(i[0])))
        bags.append([(tuple(node_idx[v] for v in p), x) for p, x in items])
    pos = [[0, 0] for _ in bags]
    canon_walks: list[tuple[int, ...]] = []
    canon_id: dict[tuple[int, ...], int] = {}
    rep_trees: list[tuple[int, int, int, list[tuple[int, int]]]] = []  # root, m, height, edges
    for bt in sorted(done, key=lambda b: b.root):
        allocs = []
        for _x, _y, lab, j in bt.edges:
            # every edge carries the batch's final multiplicity
            allocs.append((j, hand_out(bags[lab], pos[lab], bt.mult)))
        cuts = {0, bt.mult}
        for _, parts in allocs:
            acc = 0
            for _, take in parts:
                acc += take
                cuts.add(acc)
        bounds = sorted(cuts)
        height = max(bt.depth.values())
        ptrs = [0] * len(allocs)
        used = [0] * len(allocs)
        for lo, hi in zip(bounds, bounds[1:]):
            chosen = []
            for e, (j, parts) in enumerate(allocs):
                while used[e] + parts[ptrs[e]][1] <= lo:
                    used[e] += parts[ptrs[e]][1]
                    ptrs[e] += 1
                cw = parts[ptrs[e]][0]
                c = canon_id.get(cw)
                if c is None:
                    c = canon_id[cw] = len(canon_walks)
                    canon_walks.append(cw)
                chosen.append((c, j))
            rep_trees.append((bt.root, hi - lo, height, chosen))
    stats = {"representative_trees": len(rep_trees), "labels": len(canon),
             "packing_maxflows": 0, "packing_rejected": 0, "batches": len(done) * sym.order}
    return OrbitPacking(sym, compute, canon_walks, rep_trees, stats)
