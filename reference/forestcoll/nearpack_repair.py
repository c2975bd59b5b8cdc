"""Unsticking the orbit packing of :mod:`.sympack` by re-routing one arc of another tree
(Zhao & Krishnamurthy 2023, §2.3; Zhao et al. 2026, §5.4).

The representatives' trees of :mod:`.sympack` are grown greedily against label budgets
(the arcs of G* in orbits of a free box symmetry, :mod:`.nearpack`). Where G* is tight
everywhere (every box at the bottleneck, as in the grouped machine of a cluster with
NICs failed in many boxes) the greedy can spend a label that a later tree needed:
inside a box whose G* arcs are gpu0 → gpu7 and gpu1 → gpu7, a tree that had reached
gpu0 took gpu1 → gpu7, and a tree that can reach gpu7 only from gpu1 finds that label
spent.

:class:`OrbitRepair` is the one-step augmenting path of matching and flow algorithms,
on trees: when batch B is stuck (no arc out of its nodes has budget left), it looks for
an arc (x, y) with x in B, y not in B, whose label L is spent, and another batch T that
uses L on an edge (a, y') and can reach y' by another arc (a'', y') of a label with budget
left, a'' in T but not below y' in T (so T stays a spanning arborescence), and from
inside the box of y' exactly when a is (so T still enters every box once). T (or the
part of its multiplicity that the budgets allow: T is split) moves to (a'', y'), which
gives back budget on L, and B takes (x, y). Label budgets are kept exactly: every move
takes from the new label what it gives back to the old one.

Nothing here is trusted more than the greedy: trees are still checked in full by
``collcert.certify``; when no such move exists :class:`~.symsplit.SymmetryFailed` is
raised as before. Heights are recomputed from the edges at the end
(:meth:`OrbitRepair.fix_depths`): moved edges change depths.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MAX_REPAIRS = 10_000
"""Moves tried at most per packing (each scans the batches once)."""


class OrbitRepair:
    """In-arcs by node, and the batch lists of the packer it unsticks (module doc)."""

    def __init__(self, packer: Any) -> None:
        self.p = packer
        sym = packer.sym
        perm = packer.perm
        self.in_arcs: list[list[tuple[int, int, int]]] = [[] for _ in range(packer.nc)]
        for x in range(packer.nc):
            j = sym.element[x]
            for hb, lab in packer.out_labels.get(sym.rep_of[x], ()):
                self.in_arcs[int(perm[j][hb])].append((x, lab, j))
        self.lists: tuple[list[Any], ...] = ()
        self.touched: set[int] = set()
        self.moves = 0

    def repair(self, bt: Any) -> tuple[int, int, int, int, int] | None:
        """Free budget for an arc out of stuck ``bt`` by moving another batch's edge;
        the arc as :meth:`sympack._OrbitPacker.pick` gives it, or None."""
        residual = self.p.residual
        reached = bt.depth
        for y in range(self.p.nc):
            if y in reached:
                continue
            for x, lab, j in self.in_arcs[y]:
                if x in reached and residual[lab] == 0 and self._free(lab, bt):
                    return reached[x], x, y, lab, j
        return None

    def _free(self, lab: int, stuck: Any) -> bool:
        """Move an edge of label ``lab`` of another batch to a label with budget left."""
        if self.moves >= MAX_REPAIRS:
            return False
        residual, box = self.p.residual, self.p.box_of
        for batches in self.lists:
            for other in batches:
                if other is stuck:
                    continue
                parent = {e[1]: i for i, e in enumerate(other.edges)}
                for i, (a, y2, lab2, _j) in enumerate(other.edges):
                    if lab2 != lab:
                        continue
                    inner = box[a] == box[y2]
                    for a3, lab3, j3 in self.in_arcs[y2]:
                        if (lab3 == lab or residual[lab3] == 0 or a3 not in other.depth
                                or (box[a3] == box[y2]) != inner
                                or _below(a3, y2, other.edges, parent)):
                            continue
                        amount = min(other.mult, residual[lab3], stuck.mult)
                        if amount < other.mult:
                            batches.append(other.copy(other.mult - amount))
                            other.mult = amount
                        other.edges[i] = (a3, y2, lab3, j3)
                        residual[lab3] -= amount
                        residual[lab] += amount
                        self.touched.add(id(other))
                        self.moves += 1
                        return True
        return False

    def fix_depths(self, done: Sequence[Any]) -> None:
        """Depths (hence heights) of every batch recomputed from its edges."""
        for bt in done:
            children: dict[int, list[int]] = {}
            for x, y, _lab, _j in bt.edges:
                children.setdefault(x, []).append(y)
            depth = {bt.root: 0}
            stack = [bt.root]
            while stack:
                x = stack.pop()
                for y in children.get(x, ()):
                    depth[y] = depth[x] + 1
                    stack.append(y)
            if len(depth) != len(bt.depth):
                raise RuntimeError("internal: a repaired tree no longer spans")
            bt.depth = depth


def _below(a: int, y: int, edges: Sequence[tuple[int, int, int, int]],
           parent: dict[int, int]) -> bool:
    """Whether ``a`` lies in the subtree of ``y`` (walking up from a by parents)."""
    x = a
    while True:
        if x == y:
            return True
        i = parent.get(x)
        if i is None:
            return False
        x = edges[i][0]
