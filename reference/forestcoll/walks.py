"""The walks in G that the capacity units of G* arcs stand for (Zhao & Krishnamurthy 2023, Alg 1).

Switch removal replaces γ units of (u, w), (w, t) by γ units of (u, t)
(Zhao & Krishnamurthy 2023, Thm 8): every unit of an arc is a walk in the original
graph, kept as a multiset ``{walk: units}``, and the new units are walks u..w
joined to walks w..t (:func:`take_units`, :func:`join_units`). Once the trees
are packed, each tree edge of G* is given the next units of its arc's walks
(:func:`hand_out`), so the routing of G* back to G is exact by construction.
:class:`ArcTable` is the arc registry both switch removals keep these in
(:mod:`.splitting`, :mod:`.symsplit`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

Node = Hashable
Path = tuple[Node, ...]


class ArcTable:
    """Arcs on node indices 0..n (n is the super source s): tail, head, capacity and
    the walks of the capacity units, by arc index; an arc, once added, keeps its
    index (a split-off arc keeps capacity 0)."""

    def __init__(self, n: int) -> None:
        self.tails: list[int] = []
        self.heads: list[int] = []
        self.cap: list[int] = []
        self.arc: dict[tuple[int, int], int] = {}
        self.out: list[set[int]] = [set() for _ in range(n + 1)]
        self.inn: list[set[int]] = [set() for _ in range(n + 1)]
        self.paths: list[dict[Any, int]] = []

    def add_arc(self, a: int, b: int) -> int:
        """A new arc a → b of capacity 0 with no walks; its index."""
        i = len(self.tails)
        self.arc[(a, b)] = i
        self.tails.append(a)
        self.heads.append(b)
        self.cap.append(0)
        self.paths.append({})
        self.out[a].add(i)
        self.inn[b].add(i)
        return i

    def gstar_arcs(self, s: int, nc: int) -> list[int]:
        """The arcs of G* once every switch is split off: those with capacity left that do
        not leave the super source ``s``; all join compute nodes (indices below ``nc``),
        anything else is an internal error."""
        live = []
        for i, (a, b) in enumerate(zip(self.tails, self.heads)):
            if a == s or self.cap[i] == 0:
                continue
            if a >= nc or b >= nc:
                raise RuntimeError("internal: a switch arc survived switch removal")
            live.append(i)
        return live

    def pair(self, u: int, w: int, t: int) -> tuple[int, int, int, int]:
        """The arcs (u, w) and (w, t) through a switch w, and their capacities."""
        i_uw, i_wt = self.arc[(u, w)], self.arc[(w, t)]
        return i_uw, i_wt, self.cap[i_uw], self.cap[i_wt]


def take_units(bag: dict[Path, int], amount: int) -> list[tuple[Path, int]]:
    """Remove ``amount`` units from a path multiset (largest chunks first)."""
    taken: list[tuple[Path, int]] = []
    for p in sorted(bag, key=lambda q: (-bag[q], len(q))):
        if amount == 0:
            break
        x = min(bag[p], amount)
        taken.append((p, x))
        amount -= x
        bag[p] -= x
        if bag[p] == 0:
            del bag[p]
    if amount:
        raise RuntimeError("internal: path multiset smaller than the arc capacity")
    return taken


def join_units(left: list[tuple[Path, int]], right: list[tuple[Path, int]]) -> list[tuple[Path, int]]:
    """Pair units of two equally large path lists: walks u..w + w..t."""
    out: list[tuple[Path, int]] = []
    i = j = 0
    lrem = left[0][1] if left else 0
    rrem = right[0][1] if right else 0
    while i < len(left) and j < len(right):
        x = min(lrem, rrem)
        out.append((left[i][0] + right[j][0][1:], x))
        lrem -= x
        rrem -= x
        if lrem == 0:
            i += 1
            lrem = left[i][1] if i < len(left) else 0
        if rrem == 0:
            j += 1
            rrem = right[j][1] if j < len(right) else 0
    return out


def hand_out(bag: Sequence[tuple[Any, int]], ptr: list[int], need: int,
              ) -> list[tuple[Any, int]]:
    """The next ``need`` units of an arc's walks: ``bag`` lists (walk, units) largest
    first, ``ptr`` = [entry, units of it used] is the cursor, advanced in place (mapping
    tree edges of G* back to walks in G: :mod:`.schedule_build`, :mod:`.sympack`)."""
    parts = []
    while need:
        p, avail = bag[ptr[0]]
        x = min(avail - ptr[1], need)
        parts.append((p, x))
        need -= x
        ptr[1] += x
        if ptr[1] == avail:
            ptr[0] += 1
            ptr[1] = 0
    return parts
