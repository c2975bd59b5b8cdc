"""Translations of a torus (and of other products of cycles), found by completing squares.

A 2D or 3D torus has no switches and no boxes, so :mod:`.boxes` and
:mod:`.product` find nothing; but its translations Z_a × Z_b × Z_c act freely on
the nodes, and one translation per axis generates them all (one orbit).

A translation τ by one step along an axis maps every node v to a neighbour, and
for every other neighbour w of v the four nodes v, w, τ(w), τ(v) form a square:
τ(w) is the common neighbour of w and τ(v) other than v. :func:`translation`
grows τ from τ(c0) = c1 by these square completions (breadth first, a node
mapped only where the completion is unique) and returns it when every node got
an image; :func:`translations` tries c1 = each neighbour of c0 and keeps each τ
that is an automorphism (verified exactly, link by link, with the capacities),
moves every compute node, commutes with those kept before and enlarges the
group by its whole order (so the group is their direct product). A wrong
completion only means that τ is rejected; nothing found here is trusted by the
certificates, which list the generators for ``collcert.certify`` to verify.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence

import numpy as np

from .boxes import Node
from .group import Symmetry, _automorphism_problem, product_symmetry

MAX_NEIGHBOURS = 16
"""Neighbours of c0 tried at most as c1 (a 3D torus has 6)."""


def translation(adj: Sequence[set[int]], c0: int, c1: int,
                budget: int = 64) -> list[int] | None:
    """τ with τ(c0) = c1 grown by square completions (module docstring); when they stall
    (a layer done), τ(τ(x)) is the node after τ(x) on the line through x, τ(x) (no
    common neighbour with x but τ(x); on a triangle, the third node; on an axis of two
    nodes, x itself), trying each where that is not unique (at most ``budget`` tries).
    None when no try gives a bijection."""
    tau = [-1] * len(adj)
    tau[c0] = c1
    return _grow(adj, tau, [c0], [budget])


def _grow(adj: Sequence[set[int]], tau: list[int], fresh: list[int],
          budget: list[int]) -> list[int] | None:
    queue = deque(fresh)
    while True:
        while queue:
            v = queue.popleft()
            tv = tau[v]
            for w in adj[v]:
                if tau[w] >= 0 or w == tv:
                    continue
                cand = (adj[w] & adj[tv]) - {v}
                if len(cand) == 1:
                    tau[w] = next(iter(cand))
                    queue.append(w)
        if min(tau) >= 0:
            return tau if len(set(tau)) == len(tau) else None
        stalled = next((x for x in range(len(tau)) if tau[x] >= 0 and tau[tau[x]] < 0), None)
        if stalled is None:
            return None
        y = tau[stalled]
        options = _continuations(adj, stalled, y)
        if len(options) == 1:
            tau[y] = options[0]
            queue.append(y)
            continue
        for z in options:
            budget[0] -= 1
            if budget[0] < 0:
                return None
            trial = list(tau)
            trial[y] = z
            got = _grow(adj, trial, [y], budget)
            if got is not None:
                return got
        return None


def _continuations(adj: Sequence[set[int]], x: int, y: int) -> list[int]:
    """The candidates for the node after y on the line x, y (see :func:`translation`)."""
    line = [z for z in sorted(adj[y]) if z != x and not (adj[x] & adj[z]) - {y}]
    if line:
        return line
    triangle = sorted((adj[y] & adj[x]) - {x, y})
    return triangle + [x] if triangle else [x] + sorted(adj[y] - {x})


def translations(nodes: Sequence[Node], num_compute: int,
                 arcs: Mapping[tuple[int, int], object],
                 multicast: frozenset[int] = frozenset(),
                 supply: Mapping[int, int] | None = None) -> Symmetry | None:
    """The verified group of translations (module docstring) when the topology has no
    switches, else None."""
    n = len(nodes)
    if num_compute != n or n < 2:
        return None
    adj: list[set[int]] = [set() for _ in range(n)]
    for a, b in arcs:
        if a != b:
            adj[a].add(b)
            adj[b].add(a)
    gens: list[np.ndarray] = []
    orders: list[int] = []
    orbit = np.zeros(n, dtype=bool)
    orbit[0] = True
    for c1 in sorted(adj[0])[:MAX_NEIGHBOURS]:
        if orbit[c1]:
            continue  # already reached: this step adds nothing
        tau = translation(adj, 0, c1)
        if tau is None or _automorphism_problem(nodes, tau, num_compute, arcs, multicast,
                                                supply):
            continue
        g = np.asarray(tau, dtype=np.int64)
        m = _cycle_length(g, 0)
        if not _free(g, m) or any(not np.array_equal(g[h], h[g]) for h in gens):
            continue
        grown = _orbit(gens + [g], 0, n)
        if grown.sum() != orbit.sum() * m:
            continue  # not a direct factor (it meets the group found so far)
        gens.append(g)
        orders.append(m)
        orbit = grown
        if orbit.all():
            break
    if not gens or math.prod(orders) < 2:
        return None
    sym = product_symmetry(nodes, num_compute, [g.tolist() for g in gens], orders)
    if sym is None or sym.verify(num_compute, arcs, multicast, supply):
        return None
    return sym


def _cycle_length(g: np.ndarray, v: int) -> int:
    x, m = int(g[v]), 1
    while x != v:
        x, m = int(g[x]), m + 1
    return m


def _free(g: np.ndarray, m: int) -> bool:
    """Whether every cycle of ``g`` has length ``m`` (<g> acts freely, of order m)."""
    power = g.copy()
    for _ in range(1, m):
        if (power == np.arange(len(g))).any():
            return False
        power = g[power]
    return bool((power == np.arange(len(g))).all())


def _orbit(gens: list[np.ndarray], v: int, n: int) -> np.ndarray:
    seen = np.zeros(n, dtype=bool)
    seen[v] = True
    frontier = np.asarray([v])
    while len(frontier):
        nxt = np.unique(np.concatenate([g[frontier] for g in gens]))
        nxt = nxt[~seen[nxt]]
        seen[nxt] = True
        frontier = nxt
    return seen
