"""The exact LP layer: float solve + exact proof + exact simplex repair.

Every optimum is checked three ways: by the independent certificate checker
(certify/solvers/lp.py, weak duality in rationals), against the pure exact simplex
started from the slack basis (no float anywhere), and, on tiny LPs, against
brute-force vertex enumeration in Fractions.
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction as F

import pytest

from collcert.certify.solvers import check_lp
from collcert.reference.solvers import LinearProgram, LPError, lp_exact, solve_lp


def _check(res):
    cert = res.certificate()
    v = check_lp(cert["lp"], cert["primal"], cert["dual"])
    assert v.ok, v.reasons
    assert v.facts["primal_objective"] == v.facts["dual_objective"] == res.objective
    return v


def _random_lp(rng: random.Random, n: int, m: int, *, free: bool) -> LinearProgram:
    lp = LinearProgram(rng.choice(["min", "max"]))
    for j in range(n):
        lp.add_variable(f"x{j}", rng.randint(-4, 4), free=free and rng.random() < 0.25)
    for i in range(m):
        coefs = {f"x{j}": rng.randint(-3, 3) for j in range(n) if rng.random() < 0.7}
        lp.add_row(f"r{i}", coefs, rng.choice(["<=", "<=", ">=", "="]), rng.randint(-5, 8))
    # keep most LPs bounded: a box on the variables' total
    lp.add_row("box", {f"x{j}": 1 for j in range(n)}, "<=", 20)
    lp.add_row("boxneg", {f"x{j}": 1 for j in range(n)}, ">=", -20)
    return lp


def _outcome(lp, engine):
    try:
        return solve_lp(lp, engine=engine)
    except LPError as exc:
        return str(exc).split(" (")[0]


def test_textbook_max_lp_with_duals():
    lp = LinearProgram("max")
    lp.add_variable("x", 1)
    lp.add_variable("y", 1)
    lp.add_row("c", {"x": 1, "y": 2}, "<=", 4)
    lp.add_row("d", {"x": 3, "y": 1}, "<=", 6)
    for engine in ("glop", "exact"):
        res = solve_lp(lp, engine=engine)
        assert res.objective == F(14, 5)
        assert res.x == {"x": F(8, 5), "y": F(6, 5)}
        assert res.y == {"c": F(2, 5), "d": F(1, 5)}  # max LP: y >= 0 on <= rows
        _check(res)


@pytest.mark.parametrize("seed", range(60))
def test_random_lps_agree_with_pure_exact_simplex(seed):
    rng = random.Random(seed)
    lp = _random_lp(rng, rng.randint(1, 6), rng.randint(1, 6), free=seed % 2 == 0)
    fast, slow = _outcome(lp, "glop"), _outcome(lp, "exact")
    if isinstance(slow, str):
        assert isinstance(fast, str), (slow, fast.objective)
        return
    assert not isinstance(fast, str), fast
    assert fast.objective == slow.objective
    _check(fast)
    _check(slow)


def _vertex_optimum(lp: LinearProgram):
    """Brute force: the best feasible basic solution over all choices of tight rows."""
    n = lp.num_variables
    cons = []  # (coefs list, sense, rhs), nonnegativity included
    for i in range(lp.num_rows):
        row = [lp.cols[j].get(i, F(0)) for j in range(n)]
        cons.append((row, lp.row_sense[i], lp.rhs[i]))
    for j in range(n):
        if not lp.free[j]:
            cons.append(([F(int(k == j)) for k in range(n)], ">=", F(0)))
    best = None
    for pick in itertools.combinations(range(len(cons)), n):
        mat = [list(cons[k][0]) + [cons[k][2]] for k in pick]
        sol = _gauss(mat, n)
        if sol is None:
            continue
        ok = all(
            (lambda v: v <= b if s == "<=" else v >= b if s == ">=" else v == b)(
                sum(a * x for a, x in zip(row, sol)))
            for row, s, b in cons)
        if ok:
            val = sum(c * x for c, x in zip(lp.cost, sol))
            if best is None or (val > best if lp.sense == "max" else val < best):
                best = val
    return best


def _gauss(mat, n):
    mat = [r[:] for r in mat]
    for col in range(n):
        piv = next((r for r in range(col, n) if mat[r][col] != 0), None)
        if piv is None:
            return None
        mat[col], mat[piv] = mat[piv], mat[col]
        for r in range(n):
            if r != col and mat[r][col]:
                f = mat[r][col] / mat[col][col]
                mat[r] = [a - f * b for a, b in zip(mat[r], mat[col])]
    return [mat[i][n] / mat[i][i] for i in range(n)]


@pytest.mark.parametrize("seed", range(25))
def test_tiny_lps_match_vertex_enumeration(seed):
    rng = random.Random(1000 + seed)
    lp = _random_lp(rng, rng.randint(1, 3), rng.randint(1, 3), free=False)
    res = _outcome(lp, "glop")
    best = _vertex_optimum(lp)
    if best is None:
        assert isinstance(res, str) and "infeasible" in res
    else:
        assert not isinstance(res, str), res
        assert res.objective == best


def test_repair_from_a_wrong_basis_and_from_a_singular_one():
    for seed in range(100):  # the first random LP with free variables that has an optimum
        lp = _random_lp(random.Random(seed), 6, 5, free=True)
        want = _outcome(lp, "exact")
        if not isinstance(want, str) and any(lp.free):
            want = want.objective
            break
    # a basis that is valid in size but far from optimal, and one that is singular
    for basis in (lp_exact.Basis(cols={0, 1}, rows=set(range(2, lp.num_rows))),
                  lp_exact.Basis(cols={0}, rows={0, 1, 2, 3, 4, 5})):
        sol, pivots = lp_exact.prove(lp, basis)
        assert sol.objective == want
        assert pivots > 0  # the repair really ran


def test_float_snap_is_never_trusted(monkeypatch):
    """A wrong float guess must not pass: the exact basis proof takes over."""
    lp = LinearProgram("min")
    lp.add_variable("a", 3)
    lp.add_variable("b", 5)
    lp.add_row("need", {"a": 1, "b": 1}, ">=", F(1, 3))
    lp.add_row("cap", {"a": 1}, "<=", F(1, 7))
    monkeypatch.setattr(lp_exact, "snap_all", lambda vals, max_den=10**6: [F(0)] * len(vals))
    res = solve_lp(lp)
    assert res.objective == 3 * F(1, 7) + 5 * (F(1, 3) - F(1, 7))
    assert res.stats["proof"].startswith("exact basis")
    _check(res)


def test_infeasible_and_unbounded_are_reported():
    lp = LinearProgram("min")
    lp.add_row("lo", {"x": 1}, ">=", 2)
    lp.add_row("hi", {"x": 1}, "<=", 1)
    for engine in ("glop", "exact"):
        with pytest.raises(LPError, match="infeasible"):
            solve_lp(lp, engine=engine)
    lp = LinearProgram("max")
    lp.add_variable("x", 1)
    lp.add_row("lo", {"x": 1}, ">=", 2)
    for engine in ("glop", "exact"):
        with pytest.raises(LPError, match="unbounded"):
            solve_lp(lp, engine=engine)


def test_model_errors_name_the_culprit():
    lp = LinearProgram("max")
    lp.add_variable("x", 1)
    with pytest.raises(LPError, match="'x' is used twice"):
        lp.add_variable("x")
    with pytest.raises(LPError, match="sense '<'"):
        lp.add_row("r", {"x": 1}, "<", 1)
    with pytest.raises(LPError, match="right-hand side of row 's'"):
        lp.add_row("s", {"x": 1}, "<=", "nan")
    with pytest.raises(LPError, match="no row named 'zz'"):
        lp.add_variable("y", column={"zz": 1})
    with pytest.raises(LPError, match="sense"):
        LinearProgram("maximise")


def test_column_generation_adds_columns_to_existing_rows():
    lp = LinearProgram("max")
    lp.add_row("cap", {}, "<=", 10)
    lp.add_variable("p1", 1, column={"cap": 2})
    assert solve_lp(lp).objective == 5
    lp.add_variable("p2", 1, column={"cap": 1})
    res = solve_lp(lp)
    assert res.objective == 10 and res.y["cap"] == 1
    _check(res)


def test_sparse_solve_matches_a_dense_solve():
    rng = random.Random(3)
    for size in (1, 5, 30, 90):
        while True:
            rows = [{c: F(rng.randint(-3, 3)) for c in rng.sample(range(size), min(size, 3))}
                    for _ in range(size)]
            rows = [{c: a for c, a in r.items() if a} for r in rows]
            for r in range(size):  # a diagonal keeps most of them regular
                rows[r][r] = F(rng.randint(1, 4))
            rhs = [F(rng.randint(-9, 9), rng.randint(1, 4)) for _ in range(size)]
            z = lp_exact.sparse_solve(rows, rhs, size)
            if z is not None:
                break
        for r, row in enumerate(rows):
            assert sum(a * z[c] for c, a in row.items()) == rhs[r]
    # a singular system is recognised
    assert lp_exact.sparse_solve([{0: F(1), 1: F(1)}, {0: F(2), 1: F(2)}], [F(1), F(2)], 2) is None


def test_large_flow_lp_is_proven():
    """Maximum concurrent flow on a 4x4 unit torus, all pairs: λ = 8/k³ = 1/8.

    Independent value: each source's traffic needs Σ distances = k³/2 arc-units,
    k² sources share 4k² unit arcs, so λ ≤ 8/k³, and the torus's symmetry
    (shortest paths spread evenly over both directions) attains it.
    """
    k = 4
    nodes = [(i, j) for i in range(k) for j in range(k)]
    arcs = [((i, j), ((i + di) % k, (j + dj) % k)) for i, j in nodes
            for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1))]
    lp = LinearProgram("max")
    lp.add_variable("lam", 1)
    for s in nodes:
        for v in nodes:
            coefs = {("f", s, a): (a[1] == v) - (a[0] == v) for a in arcs if v in a}
            coefs["lam"] = len(nodes) - 1 if v == s else -1
            lp.add_row(("cons", s, v), coefs, "=", 0)
    for a in arcs:
        lp.add_row(("cap", a), {("f", s, a): 1 for s in nodes}, "<=", 1)
    assert lp.num_variables > 1000  # a large LP
    res = solve_lp(lp)
    assert res.objective == F(8, k**3)
    _check(res)
