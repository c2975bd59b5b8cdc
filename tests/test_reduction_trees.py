"""Algorithms 1-3, the special trees and the evaluator of Canon & Antoniu 2012, (Canon & Antoniu, RR-7898).

Optimality is checked against an exhaustive search that uses neither the
algorithms nor Prop 2's formula (collcert.fuzz.reduction_search), and against
a Z3 model that chooses the tree and every date itself.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from collcert.fuzz import reduction_search as rs
from collcert.reference.reduction import ReductionError
from collcert.reference.reduction import trees as rt

# the grid of (d, c): zero costs, equal costs, both orders, rationals
GRID = [(1, 1), (1, 2), (2, 1), (1, 0), (0, 1), (0, 0), (2, 3), (3, 1),
        (Fraction(1, 2), Fraction(1, 3))]


def _int_costs(d: object, c: object) -> tuple[int, int, int]:
    return rt.scaled(Fraction(d), Fraction(c))  # type: ignore[arg-type]


@pytest.mark.parametrize("d,c", GRID)
def test_algorithm1_and_non_overlapping_are_optimal_up_to_8(d: object, c: object) -> None:
    D, C, L = _int_costs(d, c)
    for n in range(1, 9):
        best, _ = rs.optimum(n, D, C)
        assert rt.algorithm1(n, d, c).makespan == Fraction(best, L), n
        best, _ = rs.optimum(n, D, C, overlap=False)
        assert rt.non_overlapping(n, d, c).makespan == Fraction(best, L), n


@pytest.mark.parametrize("d,c", [(1, 1), (1, 2), (3, 1), (0, 1), (2, 3)])
def test_algorithm3_is_optimal_with_k_reducers(d: object, c: object) -> None:
    D, C, L = _int_costs(d, c)
    for n in range(2, 8):
        for K in range(1, n + 1):
            best, _ = rs.optimum(n, D, C, max_reducers=K)
            assert rt.algorithm3(n, d, c, K).makespan == Fraction(best, L), (n, K)


@pytest.mark.parametrize("d,c", [(1, 1), (1, 2), (2, 1), (1, 0), (0, 1), (1, 3)])
def test_algorithm2_is_optimal_with_k_transfers(d: object, c: object) -> None:
    D, C, L = _int_costs(d, c)
    for n in range(2, 7):
        for K in range(1, n // 2 + 1):
            best, _ = rs.optimum(n, D, C, max_transfers=K)
            assert rt.algorithm2(n, d, c, K).makespan == Fraction(best, L), (n, K)


def test_z3_confirms_the_optimum_on_small_cases() -> None:
    pytest.importorskip("z3")
    from collcert.fuzz.reduction_z3 import prove

    for n, d, c, kw in [(4, 1, 1, {}), (5, 2, 1, {}), (5, 0, 1, {}),
                        (5, 1, 2, {"max_transfers": 2}), (5, 1, 1, {"max_reducers": 1}),
                        (4, 1, 1, {"overlap": False})]:
        sched = rt.solve(n, d, c, **kw)
        answers = prove(n, Fraction(d), Fraction(c), sched.makespan, **kw)
        assert [a.result for a in answers] == ["unsat", "sat"], (n, d, c, kw)
        # and a claim one unit too short is refuted (the SAT half fails)
        answers = prove(n, Fraction(d), Fraction(c), sched.makespan - 1, **kw)
        assert answers[1].result == "unsat"


def test_tree_count_follows_a000081() -> None:
    assert [len(rs.trees(n)) for n in range(1, 10)] == [1, 1, 2, 4, 9, 20, 48, 115, 286]


def test_prop2_sorted_ascending_matches_every_order() -> None:
    """The evaluator (senders in ascending readiness) equals the best over all orders."""
    for n in range(2, 8):
        for t in rs.trees(n):
            for d, c in [(1, 1), (1, 3), (3, 1), (2, 0)]:
                assert rt.evaluate(list(t), d, c)[0][0] == rs.tree_best(t, d, c), (t, d, c)


def test_prop2_descending_as_printed_is_wrong() -> None:
    """'j-th largest' (descending) overestimates: senders ready at 0 and 100."""
    d, c = 1, 1
    ready = [0, 100]

    def formula(a: list[int]) -> int:
        m = len(a)
        return max(x + d + (m - 1 - j) * max(d, c) + c for j, x in enumerate(a))

    assert formula(sorted(ready)) == 100 + d + c
    assert formula(sorted(ready, reverse=True)) > 100 + d + c


def test_reversed_time_length_equals_the_evaluated_tree() -> None:
    for n in (1, 2, 3, 17, 100, 1000):
        for d, c in GRID:
            D, C, _ = _int_costs(d, c)
            parent, created, T = rt.greedy_reversed(n, D, C)
            assert T == created[-1]  # the s_i are non-decreasing: T = s_n
            assert rt.evaluate(parent, D, C)[0][0] == T


def test_figure1_and_a_star_for_one_reducer() -> None:
    s = rt.algorithm1(4, 5, 5)
    assert s.parent == [-1, 0, 0, 0] and s.makespan == 20
    assert [s.time(i) for i in (3, 2, 1)] == [0, 5, 10]
    for n in range(2, 12):
        s = rt.algorithm3(n, 2, 3, 1)
        assert set(s.parent[1:]) == {0}
        assert s.makespan == 2 + (n - 2) * 3 + 3


def test_binomial_and_fibonacci_trees() -> None:
    for k in range(0, 7):
        t = rt.binomial_tree(k)
        assert len(t) == 2**k
        for d, c in [(1, 1), (2, 5), (3, 0)]:
            assert rt.evaluate(t, d, c)[0][0] == k * (d + c)  # Prop 13
    for k in range(1, 9):
        t = rt.fibonacci_tree(k)
        assert len(t) == rt.fibonacci(k + 2)
        for d, c in [(1, 1), (2, 5), (3, 0)]:
            assert rt.evaluate(t, d, c)[0][0] == d + (k - 1) * max(d, c) + c  # Prop 16
    assert len(rt.fibonacci_tree(-1)) == len(rt.fibonacci_tree(0)) == 1


def test_algorithm1_builds_the_special_trees() -> None:
    """Corollaries of Thms 14 and 17: binomial trees at 2^k when min(d,c) = 0,
    Fibonacci trees at F_{k+2} when d = c."""
    for k in range(1, 7):
        tree = rt.algorithm1(2**k, 1, 0).parent
        assert rs.canonical(tree)[0] == rs.canonical(rt.binomial_tree(k))[0]
    for k in range(1, 8):
        tree = rt.algorithm1(rt.fibonacci(k + 2), 1, 1).parent
        assert rs.canonical(tree)[0] == rs.canonical(rt.fibonacci_tree(k))[0]


def test_special_trees_are_the_unique_optima() -> None:
    """Thm 14 (min(d, c) = 0, n = 2^k) and Thm 17 (d = c, n = F_{k+2}) by exhaustive search."""
    for n, k in [(2, 1), (4, 2), (8, 3)]:
        for d, c in [(1, 0), (0, 1)]:
            _, winners = rs.optimum(n, d, c)
            assert [rs.canonical(w)[0] for w in winners] == [
                rs.canonical(rt.binomial_tree(k))[0]]
    for n, k in [(2, 1), (3, 2), (5, 3), (8, 4)]:
        _, winners = rs.optimum(n, 1, 1)
        assert [rs.canonical(w)[0] for w in winners] == [rs.canonical(rt.fibonacci_tree(k))[0]]


def test_strategies_stay_within_their_ratios() -> None:
    for n in range(1, 60):
        for d, c in [(1, 1), (1, 3), (4, 1), (1, 0), (0, 2)]:
            best = rt.algorithm1(n, d, c).makespan
            binom = rt.binomial_strategy(n, d, c).makespan
            fib = rt.fibonacci_strategy(n, d, c).makespan
            assert best <= binom <= best * (1 + Fraction(min(d, c), max(d, c)))  # Thm 18
            assert best <= fib <= 2 * best  # Thm 19


def test_thm10_and_where_the_limits_differ() -> None:
    for n in range(2, 30):
        for K in range(1, n // 2 + 1):
            for d, c in [(1, 1), (2, 1), (5, 2), (1, 0)]:  # d ≥ c
                assert rt.algorithm3(n, d, c, K).makespan == rt.algorithm2(n, d, c, K).makespan
    # digest: for d < c they differ
    assert (rt.algorithm2(10, 1, 2, 2).makespan, rt.algorithm3(10, 1, 2, 2).makespan) == (10, 12)


def test_large_k_transfers_is_algorithm1() -> None:
    for n in range(2, 25):
        for K in range(n // 2 + 1, n + 1):
            for d, c in [(1, 2), (3, 1)]:
                assert rt.algorithm2(n, d, c, K).makespan == rt.algorithm1(n, d, c).makespan


def test_operand_order_is_a_preorder_in_arrival_order() -> None:
    s = rt.algorithm1(8, 2, 1)
    order = rt.operand_order(s.parent, s.send_time)
    assert sorted(order) == list(range(8)) and order[0] == 0
    # each machine comes right before its subtree, its senders in arrival order
    senders = [i for i, p in enumerate(s.parent) if p == 0]
    firsts = [order.index(i) for i in senders]
    times = [s.send_time[i] for i in senders]
    assert [t for _, t in sorted(zip(firsts, times))] == sorted(times)  # type: ignore[type-var]


@pytest.mark.parametrize("args,message", [
    ((0, 1, 1), "at least one element"),
    ((3, -1, 1), "non-negative"),
    ((3, 1, "nan"), "compute cost"),
    ((3, "inf", 1), "transfer cost"),
    ((3, True, 1), "boolean"),
    ((2.5, 1, 1), "integer"),
])
def test_bad_problems(args: tuple[object, object, object], message: str) -> None:
    with pytest.raises(ReductionError, match=message):
        rt.algorithm1(*args)  # type: ignore[arg-type]


@pytest.mark.parametrize("K", [0, -1, 5])
def test_bad_limits(K: int) -> None:
    with pytest.raises(ReductionError, match="between 1 and n = 4"):
        rt.algorithm2(4, 1, 1, K)
    with pytest.raises(ReductionError, match="between 1 and n = 4"):
        rt.algorithm3(4, 1, 1, K)


def test_solve_refuses_mixed_requests() -> None:
    with pytest.raises(ReductionError, match="at most one"):
        rt.solve(4, 1, 1, max_transfers=1, max_reducers=1)
    with pytest.raises(ReductionError, match="plain model"):
        rt.solve(4, 1, 1, strategy="binomial", max_reducers=2)
    with pytest.raises(ReductionError, match="no limit"):
        rt.solve(4, 1, 1, overlap=False, max_transfers=2)


def test_comparison_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("z3")
    lines: list[str] = []
    grid = ((1, 2), (0, 1))
    assert rs.compare(max_n=5, k_transfers_max_n=5, grid=grid, z3_max_n=3, log=lines.append) == 0
    assert len(lines) == 5 and lines[-1].startswith("n = 5:")
    real = rt.algorithm3

    def off_by_one(n: int, d: object, c: object, K: int) -> rt.ReductionSchedule:
        s = real(n, d, c, K)
        s.makespan += 1
        return s

    monkeypatch.setattr(rt, "algorithm3", off_by_one)
    lines.clear()
    assert rs.compare(max_n=3, k_transfers_max_n=0, grid=grid, z3_max_n=0, log=lines.append) > 0
    assert any("MISMATCH Algorithm 3" in line for line in lines)
