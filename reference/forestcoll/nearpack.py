"""Degraded machines with faults at different positions: the faults grouped, one per box
orbit, so that a box symmetry acting freely comes back (Zhao & Krishnamurthy 2023, §2;
Zhao et al. 2026, §5).

:mod:`.symmetrize` borrows the schedule of M_sym, the healthy machine H with every link at
the least capacity of its orbit under the box shift σ0 (order n, one orbit of n boxes). A
fault in one box is then copied to *every* box; with faults at different positions (8
random NIC failures on dgx_a100:128) every box loses every faulty position, the optimum
of M_sym drops and borrowing is refused.

Here the box shift is replaced by another cyclic group that still acts freely: when the
boxes of H are interchangeable in any order (any permutation π of the box indices moves
H onto itself; checked, not assumed), a permutation π of the n boxes made of c cycles of
equal length m = n/c gives the node permutation σ' (node v of box j goes to the node in
the same place of box π(j): σ0^(π(j)−j)(v); nodes σ0 fixes stay). <σ'> has order m and acts
freely on compute nodes (every compute cycle has length m). The cycles are chosen so that
each holds the faulty boxes of one *fault signature* only (the links of the box whose
capacity differs from H's, with the capacity M gives them), filled up with healthy boxes:
the symmetrized machine

    M' : every link of H at the least capacity of its σ'-orbit in the degraded M

then has in every box at most one signature, the one of its cycle (or none): each box is
degraded like some faulty box of M, never worse. So c' ≤ c_M link by link (a schedule of
M' runs on M, no slower), σ' is an automorphism of M' by construction, and when the
certified optimum of M' equals M's, the orbit-wise build of M' (:mod:`.symsplit`,
:mod:`.sympack`, by the orbits of σ') is optimal on M. The caller compares the two
certified optima; nothing here is trusted: σ' is verified exactly on M'
(:meth:`~collcert.reference.symmetry.Symmetry.verify`) and the schedule is certified on
M, knowing nothing of M'.

c is the least divisor of n with m = n/c ≥ 2 that has room for every signature:
Σ_s ⌈f_s/m⌉ ≤ c (f_s faulty boxes of signature s). dgx_a100:128 with 8 NICs failed at 6
positions: c = 8 cycles of m = 16 boxes, 64 representative roots instead of 8.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from fractions import Fraction

import numpy as np

from ..model import Topology
from ..symmetry import Symmetry, map_node, orbits, refiner
from .symmetrize import orbit_minimum, symmetrized

Signature = tuple[tuple[int, int, int], ...]


class GroupedSymmetry(Symmetry):
    """σ' of the module docstring: a :class:`Symmetry` whose group elements do not name
    boxes (several cycles of boxes), with ``box_of``, the box of each compute node, for
    the greedy of :mod:`.sympack` (each tree enters each box once)."""


def symmetrized_machines(t: Topology, healthy: Topology,
                         ) -> Iterator[tuple[Topology, Symmetry | None]]:
    """The machines ≤ ``t`` link by link that have a free box symmetry again, to try in
    turn: :func:`.symmetrize.symmetrized` (the box shift; its symmetry is searched
    again on it, None), then :func:`regrouped` with its σ'. Each is computed only when
    the caller asks for it (after the one before did not serve)."""
    m = symmetrized(t, healthy)
    if m is not None:
        yield m, None
    got = regrouped(t, healthy)
    if got is not None:
        yield got


def regrouped(t: Topology, healthy: Topology) -> tuple[Topology, Symmetry] | None:
    """M' and its verified σ' (module docstring) for the degraded ``t`` of ``healthy``;
    None when it does not apply (no box shift of H, boxes not interchangeable, a compute
    node failed, no fault in a box, no room for the signatures)."""
    if tuple(t.compute_nodes) != tuple(healthy.compute_nodes):
        return None
    sym0 = orbits.box_shift(healthy)
    if sym0 is None or not sym0.tabled:
        return None
    box = _box_index(healthy, sym0)
    if box is None:
        return None
    sig = _signatures(t, healthy, sym0, box)
    classes = _Aligner(healthy, box).classes(sig)
    got = _cycles(classes, [j for j, x in enumerate(sig) if not x], len(sig))
    if got is None:
        return None
    cycles, frame = got
    sigma = _sigma(sym0, box, cycles, frame)
    m_t = _orbit_minimum(t, healthy, sigma, len(cycles[0]))
    if m_t is None:
        return None
    s = _on(m_t, healthy, sigma, len(cycles[0]), box)
    return None if s is None else (m_t, s)


def _sigma(sym0: Symmetry, box: np.ndarray, cycles: list[list[int]],
           frame: dict[int, np.ndarray]) -> np.ndarray:
    """σ' on H's node indices: node v of box p, in box 0's frame x = σ0^−p(v) and in its
    class's frame z = α_p^−1(x), goes to σ0^π(p)(α_π(p)(z)) (α: the identity for boxes
    without an own frame); the nodes σ0 fixes stay."""
    n = sym0.order
    nodes = len(box)
    ident = np.arange(nodes)
    pi = list(range(n))
    for cyc in cycles:
        for a, b in zip(cyc, cyc[1:] + cyc[:1]):
            pi[a] = b
    inv_frame = {p: np.argsort(a) for p, a in frame.items()}
    sigma = ident.copy()
    for p in range(n):
        v = np.flatnonzero(box == p)
        x = sym0.perms[(n - p) % n][v]
        z = inv_frame[p][x] if p in frame else x
        q = pi[p]
        sigma[v] = sym0.perms[q][frame[q][z] if q in frame else z]
    return sigma


def _box_index(h: Topology, sym0: Symmetry) -> np.ndarray | None:
    """For every node of H, the index j of the box it lies in (node = σ0^j of a node of
    box 0), −1 for the nodes σ0 fixes; None when the nodes σ0 moves do not split into n
    boxes that σ0 shifts (then box permutations are not defined)."""
    n_nodes, n = len(h.nodes), sym0.order
    perms = sym0.perms
    fixed = perms[1] == np.arange(n_nodes)
    if bool(((perms[1:] == np.arange(n_nodes)).any(axis=0) & ~fixed).any()):
        return None  # a moved node on a shorter cycle
    idx = h.index
    adj: list[list[int]] = [[] for _ in range(n_nodes)]
    for a, b in h.capacity:
        ia, ib = idx[a], idx[b]
        if not fixed[ia] and not fixed[ib]:
            adj[ia].append(ib)
            adj[ib].append(ia)
    box = np.full(n_nodes, -1, dtype=np.int64)
    for v in range(h.num_compute):
        if box[v] >= 0:
            continue
        j = sym0.element[v]
        box[v] = j
        stack = [v]
        while stack:
            for y in adj[stack.pop()]:
                if box[y] < 0:
                    box[y] = j
                    stack.append(y)
                elif box[y] != j:
                    return None  # two boxes joined by links that avoid the fixed nodes
    if bool((box[~fixed] < 0).any()):
        return None  # a moved node in a part without compute nodes
    # σ0 must map box j onto box j+1
    moved = np.flatnonzero(~fixed)
    if bool((box[perms[1][moved]] != (box[moved] + 1) % n).any()):
        return None
    return box


def _signatures(t: Topology, h: Topology, sym0: Symmetry, box: np.ndarray,
                ) -> list[Signature]:
    """Per box j, the links of H in box j (an end σ0 moves) whose capacity in ``t``
    differs from H's, as (tail, head, capacity) moved back to box 0 (σ0^−j), capacities
    scaled to ``t``'s integers (0: the link failed)."""
    n = sym0.order
    idx = h.index
    inv = [sym0.perms[(n - j) % n] for j in range(n)]
    out: list[list[tuple[int, int, int]]] = [[] for _ in range(n)]
    for (a, b), c in h.capacity.items():
        ia, ib = idx[a], idx[b]
        j = int(box[ia]) if box[ia] >= 0 else int(box[ib])
        if j < 0:
            continue  # both ends fixed: σ' fixes the link as σ0 does
        got = t.capacity.get((a, b), Fraction(0))
        if got != c:
            own = int(got * t.scale)
            out[j].append((int(inv[j][ia]), int(inv[j][ib]), own))
    return [tuple(sorted(x)) for x in out]


class _Aligner:
    """Faulty boxes sorted into classes whose signatures an automorphism of H inside box
    0 (fixing every node outside it) maps onto each other: box 0's frame α_j of box j
    maps its class's first signature onto box j's. Found by individualisation-refinement
    (:func:`~collcert.reference.symmetry.map_node`) from a node of one signature to a
    node of the other, then checked exactly (an automorphism of H, inside box 0, the
    signature mapped onto the other one)."""

    def __init__(self, h: Topology, box: np.ndarray) -> None:
        idx = h.index
        self.arcs = {(idx[a], idx[b]): c for (a, b), c in h.capacity.items()}
        self.nc = h.num_compute
        self.outside = np.flatnonzero(box != 0)
        self.box = box
        self.ref = refiner(len(h.nodes), self.nc, self.arcs)

    def classes(self, sig: Sequence[Signature],
                ) -> list[list[tuple[int, np.ndarray | None]]]:
        """Per class, its faulty boxes j with their frame α_j (None: the identity)."""
        out: list[tuple[Signature, list[tuple[int, np.ndarray | None]]]] = []
        for j, s in enumerate(sig):
            if not s:
                continue
            for s_ref, members in out:
                alpha = None if s == s_ref else self.frame(s_ref, s)
                if s == s_ref or alpha is not None:
                    members.append((j, alpha))
                    break
            else:
                out.append((s, [(j, None)]))
        return [members for _, members in out]

    def frame(self, a: Signature, b: Signature) -> np.ndarray | None:
        """An automorphism of H inside box 0 mapping signature ``a`` onto ``b``, or None."""
        if len(a) != len(b):
            return None
        ends_a = sorted({v for x, y, _ in a for v in (x, y) if self.box[v] == 0})
        ends_b = sorted({v for x, y, _ in b for v in (x, y) if self.box[v] == 0})
        if not ends_a or len(ends_a) != len(ends_b):
            return None
        want = set(b)
        for y in ends_b[:8]:
            tau = map_node(self.ref, self.nc, self.arcs, ends_a[0], y)
            if tau is None:
                continue
            arr = np.asarray(tau)
            if bool((arr[self.outside] != self.outside).any()):
                continue  # moves nodes outside box 0
            if {(int(arr[x]), int(arr[z]), c) for x, z, c in a} == want:
                return arr
        return None


def _cycles(classes: Sequence[Sequence[tuple[int, np.ndarray | None]]], healthy: list[int],
            n: int) -> tuple[list[list[int]], dict[int, np.ndarray]] | None:
    """Cycles of box indices, all of one length m ≥ 2, each with faulty boxes of one
    class only, and the frames of the faulty boxes that have one (module docstring);
    None when no divisor of n has room or no box is faulty."""
    if not classes:
        return None
    frame = {j: a for members in classes for j, a in members if a is not None}
    for c in range(1, n // 2 + 1):
        if n % c:
            continue
        m = n // c
        if sum(-(-len(bs) // m) for bs in classes) > c:
            continue
        cycles: list[list[int]] = []
        spare = list(healthy)
        for members in classes:
            bs = [j for j, _ in members]
            for i in range(0, len(bs), m):
                cyc = bs[i:i + m]
                while len(cyc) < m:
                    cyc.append(spare.pop())
                cycles.append(cyc)
        while spare:
            cycles.append([spare.pop() for _ in range(m)])
        return cycles, frame
    return None


def _orbit_minimum(t: Topology, h: Topology, sigma: np.ndarray, order: int,
                   ) -> Topology | None:
    """M': every link of H at the least capacity of its <σ'>-orbit in ``t``."""
    def powers() -> Iterator[np.ndarray]:
        p = sigma
        for _ in range(1, order):
            yield p
            p = sigma[p]
    return orbit_minimum(t, h, powers(), "faults grouped")


def _on(m_t: Topology, h: Topology, sigma: np.ndarray, order: int, box: np.ndarray,
        ) -> Symmetry | None:
    """σ' as a :class:`Symmetry` of M' (its node indices), verified; None if it is not
    a free automorphism of M'."""
    hn = h.nodes
    mi = m_t.index
    n = len(m_t.nodes)
    s1 = np.empty(n, dtype=np.int64)
    for v in m_t.nodes:
        img = hn[int(sigma[h.index[v]])]
        if img not in mi:
            return None
        s1[mi[v]] = mi[img]
    perms = np.empty((order, n), dtype=np.int64)
    perms[0] = np.arange(n)
    for j in range(1, order):
        perms[j] = s1[perms[j - 1]]
    element: dict[int, int] = {}
    rep_of: dict[int, int] = {}
    reps: list[int] = []
    for v in range(m_t.num_compute):
        if v in element:
            continue
        reps.append(v)
        for j in range(order):
            w = int(perms[j][v])
            element[w] = j
            rep_of[w] = v
    box_of = [int(box[h.index[v]]) for v in m_t.compute_nodes]
    s = GroupedSymmetry(tuple(m_t.nodes), perms, reps, element, rep_of, box_of=box_of)
    return s if orbits.symmetry_problem(s, m_t) is None else None
