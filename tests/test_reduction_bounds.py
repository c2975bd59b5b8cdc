"""Bounds on reduction lengths (Canon & Antoniu 2012, §5-6) and hypothesis properties of the optimum."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from collcert.fuzz import reduction_search as rs
from collcert.reference.reduction import length_bounds as rb
from collcert.reference.reduction import ratios as rr
from collcert.reference.reduction import trees as rt

costs = st.fractions(min_value=0, max_value=20, max_denominator=12)
sizes = st.integers(min_value=1, max_value=300)


@settings(max_examples=60, deadline=None)
@given(sizes, costs, costs)
def test_symmetric_in_d_and_c(n: int, d: Fraction, c: Fraction) -> None:
    """T(n, d, c) = T(n, c, d): Algorithm 1 sees only d + c and max(d, c) (digest §3)."""
    assert rt.algorithm1(n, d, c).makespan == rt.algorithm1(n, c, d).makespan
    K = max(1, n // 3)
    assert rt.algorithm3(n, d, c, K).makespan == rt.algorithm3(n, c, d, K).makespan


@settings(max_examples=60, deadline=None)
@given(sizes, costs, costs, st.fractions(min_value=Fraction(1, 7), max_value=9))
def test_scaling(n: int, d: Fraction, c: Fraction, lam: Fraction) -> None:
    assert rt.algorithm1(n, lam * d, lam * c).makespan == lam * rt.algorithm1(n, d, c).makespan
    K = max(1, n // 2)
    assert (rt.algorithm2(n, lam * d, lam * c, K).makespan
            == lam * rt.algorithm2(n, d, c, K).makespan)


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=200), costs, costs)
def test_monotone_in_n(n: int, d: Fraction, c: Fraction) -> None:
    assert rt.algorithm1(n, d, c).makespan <= rt.algorithm1(n + 1, d, c).makespan
    assert rt.non_overlapping(n, d, c).makespan <= rt.non_overlapping(n + 1, d, c).makespan


@settings(max_examples=60, deadline=None)
@given(sizes, costs, costs)
def test_lemma5_and_prop6(n: int, d: Fraction, c: Fraction) -> None:
    T = rt.algorithm1(n, d, c).makespan
    assert rb.lemma5(n, d, c) <= T <= rb.prop6(n, d, c)
    if min(d, c) == 0:  # tight (§5)
        assert rb.lemma5(n, d, c) == T == rb.prop6(n, d, c)
    assert rt.non_overlapping(n, d, c).makespan == rb.prop6(n, d, c)


def test_ceil_log2_is_exact() -> None:
    assert [rb.ceil_log2(n) for n in range(1, 10)] == [0, 1, 2, 2, 3, 3, 3, 3, 4]
    assert rb.ceil_log2(2**60) == 60 and rb.ceil_log2(2**60 + 1) == 61


def test_degree_and_depth_bounds_hold_for_every_small_tree() -> None:
    for n in range(1, 8):
        for t in rs.trees(n):
            for d, c in [(1, 1), (2, 5), (3, 0)]:
                assert rb.tree_lower(list(t), Fraction(d), Fraction(c)) <= rs.tree_best(t, d, c)


def test_k_transfer_bounds_hold() -> None:
    """Lower ≤ Algorithm 2 ≤ corrected upper bound, for n < 60 and every K."""
    for n in range(1, 60):
        for K in range(1, n + 1):
            for d, c in [(1, 1), (5, 1), (1, 5), (1, 0), (0, 1), (2, 3)]:
                d_, c_ = Fraction(d), Fraction(c)
                length = rt.algorithm2(n, d, c, K).makespan
                assert max(rb.transfers_lower(n, d_, c_, K), rb.lemma5(n, d_, c_)) <= length
                assert length <= rb.transfers_upper(n, d_, c_, K), (n, K, d, c)


def test_k_reducer_bounds_hold() -> None:
    for n in range(1, 50):
        for K in range(1, n + 1):
            for d, c in [(1, 1), (5, 1), (1, 5), (0, 1), (2, 3)]:
                d_, c_ = Fraction(d), Fraction(c)
                length = rt.algorithm3(n, d, c, K).makespan
                assert rb.reducers_lower(n, d_, c_, K) <= length <= rb.reducers_upper(n, d_, c_, K)


def test_printed_prop8_counterexamples() -> None:
    """Prop 8 / Cor 11 as printed is below the optimum (exhaustive search)."""
    best, _ = rs.optimum(6, 1, 0, max_transfers=3)
    assert rb.printed_prop8(6, Fraction(1), Fraction(0), 3) == 2 < best == 3
    best, _ = rs.optimum(8, 5, 1, max_transfers=3)
    assert rb.printed_prop8(8, Fraction(5), Fraction(1), 3) == 18 < best == 21
    assert rt.algorithm2(8, 5, 1, 3).makespan == 21 <= rb.transfers_upper(8, Fraction(5), 1, 3)


def test_bounds_facade() -> None:
    kinds = {b.name for b in rb.bounds(10, Fraction(1), Fraction(2), max_transfers=3)}
    assert {"Lemma 5", "K transfers [derived]", "corrected Prop 8 [derived]"} == kinds
    low, high = rb.best(rb.bounds(10, Fraction(1), Fraction(2)))
    assert (low, high) == (8, 12)


def test_figure2_ratios() -> None:
    """Prefix evaluation equals evaluating each prefix tree; ratios within Thms 18-19."""
    tree = rt.strategy_tree(200, "fibonacci")
    lengths = rr.prefix_lengths(tree, 2, 5)
    for m in (1, 2, 3, 10, 77, 200):
        assert lengths[m - 1] == rt.evaluate(tree[:m], 2, 5)[0][0]
    curves = rr.figure2(400)
    assert all(r is None or 1 <= r <= 2 for r in curves["binomial"] + curves["fibonacci"])
    assert max(r for r in curves["binomial"] if r) > 1  # the strategies are not optimal
    worst = rr.ratios_against_costs(60, rr.ratio_grid(5))
    for r, w, _ in worst["binomial"]:
        assert w <= rr.theorem_bound("binomial", 1, r)
