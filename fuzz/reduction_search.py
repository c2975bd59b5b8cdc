"""Exhaustive search of reduction schedules for small n (Canon & Antoniu, RR-7898).

The optimum is found without Algorithm 1-3 and without Prop 2's formula:

* **every tree**, built as in the proof of Lemma 1: machines are added one by
  one, each sending to a machine already placed; trees equal up to
  isomorphism are kept once (A000081: 1, 1, 2, 4, 9, 20, 48, 115, 286 trees
  for n = 1..9);
* **every order of the transfers** into each machine, each transfer as early
  as it can go (its sender ready, the receiver's port free), reductions in
  arrival order as early as possible. Subtrees do not interact without a
  global limit, so each machine's best finish is a minimum over the orders of
  its senders;
* with at most K concurrent transfers the subtrees do interact: every list of
  the transfers (senders before their receivers) is scheduled by the serial
  schedule-generation scheme (each transfer at the earliest date where its
  sender is ready, the receiver's port is free and fewer than K transfers run
  throughout); the set of such *active* schedules contains an optimal one for
  a makespan objective (Kolisch 1996, resource-constrained project
  scheduling). Reductions stay in arrival order, as early as possible.

Costs are integers (scale rationals first). Practical sizes: all trees up to
n = 9 in well under a second per (d, c); K transfers up to n = 7 in about a
second, n = 8 in a few seconds, n = 9 in about a minute (all K, 12 cost pairs).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

Tree = tuple[int, ...]  # parent of machine i (0-based), -1 for the sink (machine 0)


def _kids(parent: Sequence[int]) -> list[list[int]]:
    kids: list[list[int]] = [[] for _ in parent]
    for i, p in enumerate(parent):
        if p >= 0:
            kids[p].append(i)
    return kids


def canonical(parent: Sequence[int]) -> tuple[str, Tree]:
    """(AHU code, canonical parent tuple) of a rooted tree: equal codes ⇔ isomorphic."""
    kids = _kids(parent)
    root = parent.index(-1)
    memo: dict[int, str] = {}
    for v in _postorder(kids, root):
        memo[v] = "(" + "".join(sorted(memo[k] for k in kids[v])) + ")"
    out: list[int] = [-1]
    queue = [(root, 0)]
    while queue:  # relabel breadth-first, children in code order
        nxt = []
        for v, label in queue:
            for k in sorted(kids[v], key=memo.__getitem__):
                out.append(label)
                nxt.append((k, len(out) - 1))
        queue = nxt
    return memo[root], tuple(out)


def _postorder(kids: list[list[int]], root: int) -> list[int]:
    order, stack = [], [root]
    while stack:
        v = stack.pop()
        order.append(v)
        stack.extend(kids[v])
    return order[::-1]


def trees(n: int) -> list[Tree]:
    """Every rooted tree on n machines up to isomorphism, by Lemma 1's greedy
    construction (add a machine sending to any machine already placed)."""
    level: dict[str, Tree] = {"()": (-1,)}
    for _ in range(n - 1):
        grown: dict[str, Tree] = {}
        for t in level.values():
            for v in range(len(t)):
                code, canon = canonical(t + (v,))
                grown.setdefault(code, canon)
        level = grown
    return sorted(level.values())


def _receive(ready: Sequence[int], D: int, C: int, overlap: bool) -> int:
    """Finish of a machine receiving from senders ready at ``ready`` in that order."""
    port = f = 0
    for a in ready:
        if overlap:
            at = max(a, port)
            port = at + D
            f = max(f, port) + C
        else:
            f = max(a, f) + D + C
    return f


def tree_best(parent: Sequence[int], D: int, C: int, overlap: bool = True) -> int:
    """The shortest length of one tree, over every order of every machine's senders."""
    kids = _kids(parent)
    ready = [0] * len(parent)
    for v in _postorder(kids, parent.index(-1)):
        if kids[v]:
            times = [ready[k] for k in kids[v]]
            ready[v] = min(_receive(p, D, C, overlap)
                           for p in set(itertools.permutations(times)))
    return ready[parent.index(-1)]


def reducers(parent: Sequence[int]) -> int:
    return len({p for p in parent if p >= 0})


def optimum(n: int, D: int, C: int, *, overlap: bool = True,
            max_reducers: int | None = None, max_transfers: int | None = None
            ) -> tuple[int, list[Tree]]:
    """(optimal length, the trees that reach it) by exhaustive search."""
    best, winners = None, []
    for t in trees(n):
        if max_reducers is not None and reducers(t) > max_reducers:
            continue
        if max_transfers is not None and D > 0:
            length = k_transfers_best(t, D, C, max_transfers)
        else:
            length = tree_best(t, D, C, overlap)
        if best is None or length < best:
            best, winners = length, [t]
        elif length == best:
            winners.append(t)
    assert best is not None
    return best, winners


# ---------------------------------------------------------------------------
# at most K transfers in flight: serial schedule generation over all lists


def _earliest(ready: int, D: int, K: int, port: list[int], placed: list[int]) -> int:
    """Earliest t ≥ ready with [t, t+D) clear of ``port`` and < K of ``placed`` throughout."""
    for t in sorted({ready} | {s + D for s in placed if s + D > ready}):
        if any(s < t + D and t < s + D for s in port):
            continue
        points = [t] + [s for s in placed if t < s < t + D]
        if all(sum(1 for s in placed if s <= x < s + D) < K for x in points):
            return t
    raise AssertionError("unreachable: after the last transfer ends the slot is free")


def k_transfers_best(parent: Sequence[int], D: int, C: int, K: int) -> int:
    """Shortest length of a tree with at most K concurrent transfers (D > 0)."""
    n = len(parent)
    kids = _kids(parent)
    sink = parent.index(-1)
    best = [None]  # type: list[int | None]
    seen: set[tuple[tuple[int, int], ...]] = set()

    def finish(v: int, start: dict[int, int]) -> int:
        return _receive(sorted(start[k] + D for k in kids[v]), 0, C, True) if kids[v] else 0

    def go(start: dict[int, int], placed: list[int]) -> None:
        if len(start) == n - 1:
            length = finish(sink, start)
            if best[0] is None or length < best[0]:
                best[0] = length
            return
        key = tuple(sorted(start.items()))
        if key in seen:
            return
        seen.add(key)
        twins: set[tuple[int, int]] = set()
        for i in range(n):
            if i == sink or i in start or any(k not in start for k in kids[i]):
                continue
            if not kids[i]:  # leaves of one receiver are interchangeable
                if (parent[i], -1) in twins:
                    continue
                twins.add((parent[i], -1))
            ready = finish(i, start)
            port = [start[k] for k in kids[parent[i]] if k in start]
            t = _earliest(ready, D, K, port, placed)
            start[i] = t
            go(start, placed + [t])
            del start[i]

    go({}, [])
    assert best[0] is not None
    return best[0]



# ---------------------------------------------------------------------------
# the full comparison against Algorithms 1-3 (python -m collcert.fuzz.reduction_search)

GRID = ((1, 1), (1, 2), (2, 1), (1, 0), (0, 1), (0, 0), (2, 3), (3, 2), (1, 3), (3, 1),
        (5, 1), (1, 5))


def compare(max_n: int = 9, k_transfers_max_n: int = 9, grid: Sequence[tuple[int, int]] = GRID,
            z3_max_n: int = 6, log: Callable[[str], None] = print) -> int:
    """Every algorithm against the exhaustive optimum (and Z3 up to ``z3_max_n``);
    returns the number of disagreements. Costs are integers here: the algorithms
    scale rationals to integers first, so integer grids cover them."""
    from collcert.reference.reduction import trees as rt

    bad = 0
    started = time.monotonic()
    for n in range(1, max_n + 1):
        checked = 0
        for D, C in grid:
            variants: list[tuple[str, dict[str, Any], Fraction]] = [
                ("Algorithm 1", {}, rt.algorithm1(n, D, C).makespan),
                ("non-overlapping", {"overlap": False}, rt.non_overlapping(n, D, C).makespan)]
            best_by_tree = {t: tree_best(t, D, C) for t in trees(n)}
            for K in range(1, n + 1):
                best = min(v for t, v in best_by_tree.items() if reducers(t) <= K)
                got = rt.algorithm3(n, D, C, K).makespan
                checked += 1
                if got != best:
                    bad += 1
                    log(f"MISMATCH Algorithm 3 n={n} d={D} c={C} K={K}: {got} vs {best}")
                if n <= k_transfers_max_n and 2 * K <= n:
                    variants.append((f"Algorithm 2 K={K}", {"max_transfers": K},
                                     rt.algorithm2(n, D, C, K).makespan))
            for name, kw, got in variants:
                best, _ = optimum(n, D, C, **kw)
                checked += 1
                if got != best:
                    bad += 1
                    log(f"MISMATCH {name} n={n} d={D} c={C}: {got} vs exhaustive {best}")
                if n <= z3_max_n:
                    from .reduction_z3 import prove

                    answers = prove(n, Fraction(D), Fraction(C), got, **kw)
                    checked += 1
                    if [a.result for a in answers] != ["unsat", "sat"]:
                        bad += 1
                        log(f"Z3 DISAGREES {name} n={n} d={D} c={C}: "
                            f"{[a.result for a in answers]}")
        log(f"n = {n}: {checked} comparisons, {len(trees(n))} trees, "
            f"{time.monotonic() - started:.1f} s so far")
    return bad


if __name__ == "__main__":  # pragma: no cover - a long run, reported in docs/reduction-trees.md
    import sys

    sys.exit(1 if compare() else 0)
