"""Bounds on the length of associative reductions (Canon & Antoniu 2012, Lemma 5, Props 6 and 8).

Every bound comes with where it is from: a result of the paper, or
**derived** here with its one-line proof. Upper bounds on the optimum come
with a schedule that reaches them (:func:`step_schedule`,
:func:`star_then_binomial`), so certify's simulator can check them.

The paper's Prop 8 and Corollary 11, ``(⌊log2 K + 1⌋ + ⌈n/K − 2⌉)(d + c)``,
are **false** (n = 6, K = 3, d = 1, c = 0 gives 2 < Lemma 5's 3; n = 8, K = 3,
d = 5, c = 1 gives 18 but the optimum is 21): :func:`printed_prop8` is kept
only so that a test can show the counterexamples. The corrected bound is
:func:`transfers_upper`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from .trees import ReductionError, tree_shape


def ceil_log2(n: int) -> int:
    """⌈log2 n⌉ for n ≥ 1, exactly: (n − 1).bit_length()."""
    return (n - 1).bit_length()


def floor_log2(n: int) -> int:
    return n.bit_length() - 1


@dataclass(frozen=True)
class Bound:
    """A bound, its value and where it comes from."""

    kind: str  # "lower" or "upper"
    value: Fraction
    name: str
    source: str


def lemma5(n: int, d: Fraction, c: Fraction) -> Fraction:
    """Lemma 5: any schedule takes at least ⌈log2 n⌉·max(d, c)."""
    return ceil_log2(n) * max(Fraction(d), Fraction(c))


def prop6(n: int, d: Fraction, c: Fraction) -> Fraction:
    """Prop 6: the optimum is at most ⌈log2 n⌉·(d + c) (binomial steps)."""
    return ceil_log2(n) * (Fraction(d) + Fraction(c))


def tree_lower(parent: Sequence[int], d: Fraction, c: Fraction) -> Fraction:
    """§5: a tree with max in-degree deg and depth (in machines) takes at least
    d + (deg − 1)·max(d, c) + c and (depth − 1)·(d + c)."""
    depth, deg = tree_shape(parent)
    d, c = Fraction(d), Fraction(c)
    by_degree = d + (deg - 1) * max(d, c) + c if deg else Fraction(0)
    return max(by_degree, (depth - 1) * (d + c))


def transfers_lower(n: int, d: Fraction, c: Fraction, K: int) -> Fraction:
    """[derived] With at most K transfers in flight: ⌈(n − 1)/K⌉·d + c (n ≥ 2).

    Proof: sort the n − 1 transfers by start; transfers j and j + K cannot
    overlap (with j..j+K all running at the start of j + K, K + 1 would be in
    flight), so the last ends at ⌈(n − 1)/K⌉·d at the earliest, and a reduction
    of c follows it.
    """
    if n < 2:
        return Fraction(0)
    return -(-(n - 1) // K) * Fraction(d) + Fraction(c)


def transfers_upper(n: int, d: Fraction, c: Fraction, K: int) -> Fraction:
    """[derived, corrects Prop 8] steps·(d + c) with at most K transfers in flight.

    p = 2^⌊log2 K⌋; doubling for ⌊log2 K⌋ + 1 steps gives 2p holders (time
    reversed), then K new holders per step: steps = ⌊log2 K⌋ + 1 +
    max(0, ⌈(n − 2p)/K⌉), or ⌈log2 n⌉ when n ≤ 2p. :func:`step_schedule`
    builds this schedule.
    """
    return step_count(n, K) * (Fraction(d) + Fraction(c))


def step_count(n: int, K: int) -> int:
    p = 1 << floor_log2(K)
    if n <= 2 * p:
        return ceil_log2(n)
    return floor_log2(K) + 1 + -(-(n - 2 * p) // K)


def printed_prop8(n: int, d: Fraction, c: Fraction, K: int) -> Fraction:
    """Prop 8 / Cor 11 AS PRINTED: (⌊log2(K) + 1⌋ + ⌈n/K − 2⌉)(d + c). FALSE in
    general - never use it as a bound; kept to exhibit the counterexamples."""
    steps = floor_log2(K) + 1 + -((-Fraction(n, K) + 2).__floor__())
    return steps * (Fraction(d) + Fraction(c))


def reducers_lower(n: int, d: Fraction, c: Fraction, K: int) -> Fraction:
    """[derived] With at most K reducers one of them receives m ≥ ⌈(n − 1)/K⌉
    elements, which takes d + (m − 1)·max(d, c) + c on its own (§3.1)."""
    if n < 2:
        return Fraction(0)
    m = -(-(n - 1) // K)
    d, c = Fraction(d), Fraction(c)
    return d + (m - 1) * max(d, c) + c


def reducers_upper(n: int, d: Fraction, c: Fraction, K: int) -> Fraction:
    """[derived] A schedule of :func:`star_then_binomial`: the n − K other
    machines send to the K reducers (at most m = ⌈(n − K)/K⌉ each), then the
    reducers combine in a binomial tree: [m ≥ 1]·(d + (m − 1)·max(d, c) + c)
    + ⌈log2 K⌉·(d + c). When 2K ≥ n, the binomial steps of Prop 6 fit too (at
    most ⌈n/2⌉ machines receive). :func:`reducers_schedule` builds the better."""
    value = _star_value(n, d, c, K)
    if 2 * K >= n:
        value = min(value, prop6(n, d, c))
    return value


def _star_value(n: int, d: Fraction | int, c: Fraction | int, K: int) -> Fraction:
    d, c = Fraction(d), Fraction(c)
    m = -(-(n - K) // K)
    star = d + (m - 1) * max(d, c) + c if m else Fraction(0)
    return star + ceil_log2(K) * (d + c)


def bounds(n: int, d: Fraction, c: Fraction, *, max_transfers: int | None = None,
           max_reducers: int | None = None, overlap: bool = True) -> list[Bound]:
    """The bounds on the optimum that apply to the problem asked."""
    d, c = Fraction(d), Fraction(c)
    out = [Bound("lower", lemma5(n, d, c), "Lemma 5", "⌈log2 n⌉·max(d, c)")]
    if not overlap:
        value = prop6(n, d, c)
        out = [Bound("lower", value, "Lemma 5 with d' = 0, c' = d + c",
                     "⌈log2 n⌉·(d + c): without overlap k elements cost k(d + c)"),
               Bound("upper", value, "Prop 6", "⌈log2 n⌉·(d + c)")]
    elif max_transfers is not None:
        K = max_transfers
        out += [Bound("lower", transfers_lower(n, d, c, K), "K transfers [derived]",
                      "⌈(n − 1)/K⌉·d + c"),
                Bound("upper", transfers_upper(n, d, c, K), "corrected Prop 8 [derived]",
                      "(⌊log2 K⌋ + 1 + max(0, ⌈(n − 2p)/K⌉))·(d + c), "
                      "p = 2^⌊log2 K⌋")]
    elif max_reducers is not None:
        K = max_reducers
        out += [Bound("lower", reducers_lower(n, d, c, K), "K reducers [derived]",
                      "d + (⌈(n − 1)/K⌉ − 1)·max(d, c) + c"),
                Bound("upper", reducers_upper(n, d, c, K), "star then binomial [derived]",
                      "d + (m − 1)·max(d, c) + c + ⌈log2 K⌉·(d + c), "
                      "m = ⌈(n − K)/K⌉")]
    else:
        out.append(Bound("upper", prop6(n, d, c), "Prop 6", "⌈log2 n⌉·(d + c)"))
    return out


def best(found: list[Bound]) -> tuple[Fraction, Fraction]:
    """(greatest lower bound, least upper bound)."""
    low = max(b.value for b in found if b.kind == "lower")
    high = min(b.value for b in found if b.kind == "upper")
    if low > high:  # pragma: no cover - would mean a wrong theorem
        raise ReductionError(f"internal: lower bound {low} above upper bound {high}")
    return low, high


# ---------------------------------------------------------------------------
# schedules that reach the upper bounds (integer costs D, C)


def step_schedule(n: int, D: int, C: int, K: int) -> tuple[list[int], list[int | None]]:
    """The step schedule behind :func:`transfers_upper`: (parent, send dates).

    Time reversed, each step every holder (at most K of them) hands an element
    to a new machine; forward, the transfers of step s start at s·(D + C), at
    most K at a time, each machine receiving at most one element per step.
    """
    S = step_count(n, K)
    parent = [-1] * n
    send: list[int | None] = [None] * n
    holders = [0]
    made = 1
    for step in range(S):  # reversed step `step` is forward step S - 1 - step
        new = []
        for h in holders[:K]:
            if made == n:
                break
            parent[made] = h
            send[made] = (S - 1 - step) * (D + C)
            new.append(made)
            made += 1
        holders += new
    if made != n:  # pragma: no cover - step_count guarantees room
        raise ReductionError("internal: the step schedule lacks steps")
    return parent, send


def reducers_schedule(n: int, D: int, C: int, K: int) -> tuple[list[int], list[int | None]]:
    """The schedule behind :func:`reducers_upper` (integer costs)."""
    if 2 * K >= n and prop6(n, Fraction(D), Fraction(C)) <= _star_value(n, D, C, K):
        return step_schedule(n, D, C, n)
    return star_then_binomial(n, D, C, K)


def star_then_binomial(n: int, D: int, C: int, K: int) -> tuple[list[int], list[int | None]]:
    """The schedule behind :func:`reducers_upper` (reducers are machines 0..K-1)."""
    parent = [-1] * n
    send: list[int | None] = [None] * n
    big = max(D, C)
    m = -(-(n - K) // K)
    for j, i in enumerate(range(K, n)):
        r = j % K
        parent[i] = r
        send[i] = (j // K) * big
    star = D + (m - 1) * big + C if m else 0
    # binomial among the reducers: r sends to r without its lowest set bit, at
    # the step of that bit
    for r in range(1, K):
        low = (r & -r).bit_length() - 1
        parent[r] = r & (r - 1)
        send[r] = star + low * (D + C)
    return parent, send
