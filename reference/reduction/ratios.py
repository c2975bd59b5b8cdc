"""Approximation ratios of the binomial and Fibonacci strategies (Canon & Antoniu 2012, §7.3).

A strategy builds the tree of Algorithm 1 under fixed costs - (d, c) = (1, 0)
for the binomial strategy, (1, 1) for the Fibonacci strategy - and the tree
is then measured under the real costs with Prop 2. Algorithm 1's loop does not
depend on n, so the tree for n machines is the first n machines of the tree
for any N ≥ n: one run to N and an *incremental* evaluation (add machine i,
update the lengths on its path to the sink) give every n ≤ N in
O(N log² N).

**Tie-break.** Algorithm 1's argmin takes the smallest index among equal
s_j (heap key (s_j, j)). Ties are frequent under the strategies' own costs,
and a different tie-break builds a different tree with a different length
under the real costs, so the curves depend on it (digest of Canon & Antoniu 2012, §6).

Figure 2 of the paper plots, for 2 ≤ n ≤ 10000, the binomial strategy's
length over the optimum at d = c, and the Fibonacci strategy's at
min(d, c) = 0 (conjectured to be the worst cases; Thm 18 bounds the first by
2, Thm 19 the second by 2). :func:`ratios_against_costs` gives the worst
ratio over n ≤ N for each c/d instead.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Sequence
from fractions import Fraction

from ..model import parse_number
from .trees import greedy_reversed, scaled, strategy_tree


def prefix_lengths(parent: Sequence[int], D: int, C: int) -> list[int]:
    """Length (Prop 2-3) of the tree on machines 0..m-1, for m = 1..len(parent).

    ``parent[i] < i`` is required (trees of the greedy algorithms).
    """
    n = len(parent)
    big, step = max(D, C), D + C
    ready = [0] * n
    arrivals: list[list[int]] = [[] for _ in range(n)]  # sorted ready times of senders
    out = [0]
    for i in range(1, n):
        v, old, new = parent[i], None, 0
        while v >= 0:
            a = arrivals[v]
            if old is not None:
                del a[bisect_left(a, old)]
            insort(a, new)
            m = len(a)
            value = max(x + step + (m - 1 - j) * big for j, x in enumerate(a))
            if value == ready[v]:
                break
            old, new = ready[v], value
            ready[v] = value
            v = parent[v]
        out.append(ready[0])
    return out


def strategy_ratios(N: int, transfer: object, compute: object, strategy: str
                    ) -> list[Fraction | None]:
    """strategy length / optimum for n = 1..N (None where the optimum is 0)."""
    d, c = parse_number(transfer), parse_number(compute)
    D, C, _ = scaled(d, c)
    mine = prefix_lengths(strategy_tree(N, strategy), D, C)
    best = prefix_lengths(greedy_reversed(N, D, C)[0], D, C)
    return [Fraction(a, b) if b else None for a, b in zip(mine, best)]


def figure2(N: int = 10000) -> dict[str, list[Fraction | None]]:
    """Figure 2: binomial at d = c, Fibonacci at (d, c) = (1, 0), n = 1..N."""
    return {"binomial": strategy_ratios(N, 1, 1, "binomial"),
            "fibonacci": strategy_ratios(N, 1, 0, "fibonacci")}


def ratio_grid(points: int = 41, low: int = -5, high: int = 5) -> list[Fraction]:
    """Values of c/d, exact rationals spaced about evenly in log2 from 2^low to 2^high."""
    out = []
    for k in range(points):
        e = low + (high - low) * Fraction(k, points - 1)
        whole = e.numerator // e.denominator
        rest = e - whole
        # 2^rest rounded to a rational with denominator 64, times 2^whole
        approx = Fraction(round(2 ** float(rest) * 64), 64)
        out.append(approx * Fraction(2) ** whole)
    return out


def ratios_against_costs(N: int, grid: Sequence[Fraction]
                         ) -> dict[str, list[tuple[Fraction, Fraction, int]]]:
    """For each c/d in ``grid`` (d = 1): the worst ratio over 2 ≤ n ≤ N and the n
    where it occurs, for both strategies."""
    out: dict[str, list[tuple[Fraction, Fraction, int]]] = {"binomial": [], "fibonacci": []}
    for r in grid:
        for name in out:
            ratios = strategy_ratios(N, 1, r, name)
            worst, where = Fraction(1), 1
            for n, x in enumerate(ratios, start=1):
                if x is not None and x > worst:
                    worst, where = x, n
            out[name].append((r, worst, where))
    return out


def theorem_bound(strategy: str, transfer: object, compute: object) -> Fraction:
    """Thm 18: 1 + min(d,c)/max(d,c) for the binomial strategy; Thm 19: 2 for Fibonacci."""
    if strategy == "fibonacci":
        return Fraction(2)
    d, c = parse_number(transfer), parse_number(compute)
    return 1 + min(d, c) / max(d, c) if max(d, c) else Fraction(1)
