"""Exact rational LP algebra behind :func:`collcert.reference.solvers.lp.solve_lp`.

Work is done on the *minimisation form* of the LP (a ``max`` LP has its costs
negated, and its duals negated back at the end). Each row ``a_i·x  sense  b_i``
has a logical variable r_i = a_i·x bounded by its sense (≤: r_i ≤ b_i,
≥: r_i ≥ b_i, =: r_i = b_i); structural variables are ≥ 0 or free. A *basis*
is a set of m basic variables among structurals and logicals (the simplex codes' own
formulation, so a float solver's basis maps over one to one). Nonbasic structurals are 0
and nonbasic logicals sit at b_i: their rows are *tight*. The basic
structurals J then solve the square system A[T, J]·x_J = b_T over the tight
rows T, and the duals solve A[T, J]ᵀ·y_T = c_J (y = 0 on the other rows).

Square systems are solved by :func:`sparse_solve`: exact sparse Gaussian
elimination with Markowitz-style pivoting (triangular parts, all of a network
basis, cost no fill), handing a dense remainder to python-flint's exact
rational solver.

If a basis is not exactly optimal, :func:`prove` pivots: the dual simplex
while the basis is dual feasible, the primal simplex while it is primal
feasible, and, from a basis that is neither, the dual simplex on the LP with
zero costs (every basis is dual feasible there) to reach primal feasibility
first. Leaving and entering variables are chosen by Bland's smallest-index
rule, so no pivot sequence cycles.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .linear_program import LinearProgram, LPError

ZERO = Fraction(0)


@dataclass
class Basis:
    """Basic structural columns and basic logicals (rows whose slack is basic)."""

    cols: set[int]
    rows: set[int]


@dataclass
class Solution:
    x: list[Fraction]  # structural values
    y: list[Fraction]  # duals in the sign convention of the LP as stated
    objective: Fraction


def snap_all(values: list[float], max_den: int = 10**6) -> list[Fraction]:
    """Nearby fractions of small denominator: only a guess, checked exactly after."""
    out = []
    for v in values:
        if v != v or v in (float("inf"), float("-inf")):
            out.append(ZERO)
        else:
            out.append(Fraction(v).limit_denominator(max_den))
    return out


def sparse_solve(rows: list[dict[int, Fraction]], rhs: list[Fraction], n: int,
                 ) -> list[Fraction] | None:
    """Solve M·z = rhs exactly for a square sparse M given by rows (col -> coef).

    Gaussian elimination in Fractions with Markowitz-style pivoting (a
    shortest active row, and in it the column in fewest active rows), so that
    triangular parts cost nothing and a dense coupling column (such as a
    common rate variable in every row) is eliminated last instead of filling
    everything. When what remains is dense, it goes to python-flint's exact
    solver. Returns None if M is singular (or not square).
    """
    k = len(rows)
    if k != n:
        return None
    if n == 0:
        return []
    work = [dict(r) for r in rows]
    b = list(rhs)
    col_rows: list[set[int]] = [set() for _ in range(n)]
    for r, row in enumerate(work):
        for c in row:
            col_rows[c].add(r)
    buckets: dict[int, set[int]] = {}
    for r, row in enumerate(work):
        buckets.setdefault(len(row), set()).add(r)
    active = set(range(k))
    order: list[tuple[int, int]] = []

    def move(r: int, old: int) -> None:
        buckets[old].discard(r)
        buckets.setdefault(len(work[r]), set()).add(r)

    while active:
        if buckets.get(0):
            return None  # an empty active row: singular
        count = min(c for c, rs in buckets.items() if rs)
        if count > 6 and len(active) > 120:
            break  # dense: hand the rest to flint
        r = min(buckets[count])
        c = min(work[r], key=lambda col: (len(col_rows[col]), col))
        a = work[r][c]
        pivot_row = work[r]
        for r2 in col_rows[c]:
            if r2 == r:
                continue
            row2 = work[r2]
            old = len(row2)
            f = row2.pop(c) / a
            for c2, v in pivot_row.items():
                if c2 == c:
                    continue
                val = row2.get(c2, ZERO) - f * v
                if val:
                    if c2 not in row2:
                        col_rows[c2].add(r2)
                    row2[c2] = val
                elif c2 in row2:
                    del row2[c2]
                    col_rows[c2].discard(r2)
            b[r2] -= f * b[r]
            move(r2, old)
        for c2 in pivot_row:
            col_rows[c2].discard(r)
        col_rows[c] = set()
        buckets[count].discard(r)
        active.discard(r)
        order.append((r, c))
    z: list[Fraction | None] = [None] * n
    if active:
        if _dense_solve(work, b, sorted(active), z) is None:
            return None
    for r, c in reversed(order):
        acc = b[r]
        for c2, v in work[r].items():
            if c2 != c:
                acc -= v * z[c2]  # type: ignore[operator]
        z[c] = acc / work[r][c]
    return z  # type: ignore[return-value]


def _dense_solve(work: list[dict[int, Fraction]], b: list[Fraction], rows: list[int],
                 z: list[Fraction | None]) -> bool | None:
    """Solve the remaining active block (rows over the columns they still hold) by flint."""
    import flint

    cols = sorted({c for r in rows for c in work[r]})
    if len(cols) != len(rows):
        return None
    pos = {c: p for p, c in enumerate(cols)}
    size = len(cols)
    mat = flint.fmpq_mat(size, size)
    vec = flint.fmpq_mat(size, 1)
    for p, r in enumerate(rows):
        for c, a in work[r].items():
            mat[p, pos[c]] = flint.fmpq(a.numerator, a.denominator)
        vec[p, 0] = flint.fmpq(b[r].numerator, b[r].denominator)
    try:
        sol = mat.solve(vec, algorithm="dixon" if size > 60 else None)  # type: ignore[call-arg]
    except ZeroDivisionError:
        return None
    for p, c in enumerate(cols):
        q = sol[p, 0]
        z[c] = Fraction(int(q.p), int(q.q))
    return True


class _Problem:
    """The LP in minimisation form, with row-wise access, and one basis's values."""

    def __init__(self, lp: LinearProgram) -> None:
        self.n, self.m = lp.num_variables, lp.num_rows
        self.sign = -1 if lp.sense == "max" else 1
        self.c = [self.sign * c for c in lp.cost]
        self.free = lp.free
        self.cols = lp.cols
        self.sense = lp.row_sense
        self.b = lp.rhs
        self.rows: list[dict[int, Fraction]] = [{} for _ in range(self.m)]
        for j, col in enumerate(lp.cols):
            for i, a in col.items():
                self.rows[i][j] = a

    # -- feasibility of values ------------------------------------------------
    def row_ok(self, i: int, r: Fraction) -> bool:
        s, b = self.sense[i], self.b[i]
        return r <= b if s == "<=" else r >= b if s == ">=" else r == b

    def dual_ok(self, i: int, y: Fraction) -> bool:  # min form
        s = self.sense[i]
        return y <= 0 if s == "<=" else y >= 0 if s == ">=" else True

    def activity(self, x: list[Fraction]) -> list[Fraction]:
        r = [ZERO] * self.m
        for j, xj in enumerate(x):
            if xj:
                for i, a in self.cols[j].items():
                    r[i] += a * xj
        return r

    def reduced(self, y: list[Fraction], j: int) -> Fraction:
        return self.c[j] - sum((a * y[i] for i, a in self.cols[j].items() if y[i]), ZERO)

    # -- one basis --------------------------------------------------------------
    def evaluate(self, basis: Basis) -> tuple[list[Fraction], list[Fraction]] | None:
        """Structural values and (min-form) duals of a basis; None if singular."""
        tight = [i for i in range(self.m) if i not in basis.rows]
        cols = sorted(basis.cols)
        if len(tight) != len(cols):
            return None
        cpos = {j: p for p, j in enumerate(cols)}
        tpos = {i: p for p, i in enumerate(tight)}
        prow = [{cpos[j]: a for j, a in self.rows[i].items() if j in cpos} for i in tight]
        xs = sparse_solve(prow, [self.b[i] for i in tight], len(cols))
        if xs is None:
            return None
        drow = [{tpos[i]: a for i, a in self.cols[j].items() if i in tpos} for j in cols]
        ys = sparse_solve(drow, [self.c[j] for j in cols], len(tight))
        if ys is None:
            return None
        x = [ZERO] * self.n
        for p, j in enumerate(cols):
            x[j] = xs[p]
        y = [ZERO] * self.m
        for p, i in enumerate(tight):
            y[i] = ys[p]
        return x, y

    def objective(self, x: list[Fraction]) -> Fraction:
        return sum((c * xj for c, xj in zip(self.c, x) if xj), ZERO)


def check_snapped(lp: LinearProgram, x: list[Fraction], y_guess: list[Fraction],
                  ) -> Solution | None:
    """Accept a guessed primal/dual pair only if it is exactly optimal."""
    P = _Problem(lp)
    if len(x) != P.n or len(y_guess) != P.m:
        return None
    if any(v < 0 and not P.free[j] for j, v in enumerate(x)):
        return None
    r = P.activity(x)
    if not all(P.row_ok(i, r[i]) for i in range(P.m)):
        return None
    obj = P.objective(x)
    for sgn in (1, -1):
        y = [sgn * v for v in y_guess]
        if not all(P.dual_ok(i, y[i]) for i in range(P.m)):
            continue
        ok = True
        for j in range(P.n):
            d = P.reduced(y, j)
            if d < 0 or (P.free[j] and d != 0):
                ok = False
                break
        if ok and sum((b * yi for b, yi in zip(P.b, y) if yi), ZERO) == obj:
            return Solution(list(x), [P.sign * v for v in y], P.sign * obj)
    return None


def prove(lp: LinearProgram, basis: Basis | None, *, max_pivots: int = 100000,
          ) -> tuple[Solution, int]:
    """An exactly optimal basic solution, pivoting from ``basis`` if needed."""
    P = _Problem(lp)
    slack = Basis(cols=set(), rows=set(range(P.m)))
    if basis is None or len(basis.cols) + len(basis.rows) != P.m:
        basis = slack
    values = P.evaluate(basis)
    if values is None:
        basis, values = slack, P.evaluate(slack)
    assert values is not None
    pivots = 0
    real_c = P.c
    while True:
        x, y = values
        primal_bad = _primal_infeasible(P, basis, x)
        dual_bad = _dual_infeasible(P, basis, y)
        if primal_bad is None and dual_bad is None:
            if P.c is not real_c:  # phase 1 done: back to the real costs
                P.c = real_c
                values = P.evaluate(basis)
                assert values is not None
                continue
            obj = P.objective(x)
            return Solution(x, [P.sign * v for v in y], P.sign * obj), pivots
        if pivots >= max_pivots:
            raise LPError(f"the exact simplex did not finish within {max_pivots} pivots")
        if dual_bad is None:
            _dual_step(P, basis, x, y, primal_bad)  # type: ignore[arg-type]
        elif primal_bad is None:
            _primal_step(P, basis, x, y, dual_bad)
        else:  # neither: reach primal feasibility with zero costs first
            P.c = [ZERO] * P.n
            values = P.evaluate(basis)
            assert values is not None
            continue
        pivots += 1
        values = P.evaluate(basis)
        if values is None:  # cannot happen with exact ratio tests; be safe
            raise LPError("an exact simplex pivot produced a singular basis (a bug)")


# Variables are numbered 0..n-1 (structurals) and n..n+m-1 (logicals) for Bland's rule.

def _primal_infeasible(P: _Problem, basis: Basis, x: list[Fraction]) -> int | None:
    for j in sorted(basis.cols):
        if x[j] < 0 and not P.free[j]:
            return j
    r = P.activity(x) if basis.rows else []
    for i in sorted(basis.rows):
        if not P.row_ok(i, r[i]):
            return P.n + i
    return None


def _dual_infeasible(P: _Problem, basis: Basis, y: list[Fraction]) -> int | None:
    for j in range(P.n):
        if j not in basis.cols:
            d = P.reduced(y, j)
            if (d < 0) or (P.free[j] and d != 0):
                return j
    for i in range(P.m):
        if i not in basis.rows and not P.dual_ok(i, y[i]):
            return P.n + i
    return None


def _direction(P: _Problem, basis: Basis, var: int, s: int,
               ) -> tuple[dict[int, Fraction], dict[int, Fraction]] | None:
    """Changes of basic structurals and basic logicals when nonbasic ``var`` moves by s."""
    tight = [i for i in range(P.m) if i not in basis.rows]
    cols = sorted(basis.cols)
    cpos = {j: p for p, j in enumerate(cols)}
    rhs = [ZERO] * len(tight)
    if var < P.n:
        col = P.cols[var]
        rhs = [-s * col.get(i, ZERO) for i in tight]
    else:
        rhs = [Fraction(s) if i == var - P.n else ZERO for i in tight]
    prow = [{cpos[j]: a for j, a in P.rows[i].items() if j in cpos} for i in tight]
    dx = sparse_solve(prow, rhs, len(cols))
    if dx is None:
        return None
    dxs = {j: dx[p] for p, j in enumerate(cols) if dx[p]}
    dr: dict[int, Fraction] = {}
    for i in basis.rows:
        v = sum((a * dxs[j] for j, a in P.rows[i].items() if j in dxs), ZERO)
        if var < P.n:
            v += s * P.cols[var].get(i, ZERO)
        if v:
            dr[i] = v
    return dxs, dr


def _primal_step(P: _Problem, basis: Basis, x: list[Fraction], y: list[Fraction],
                 entering: int) -> None:
    if entering < P.n:
        d = P.reduced(y, entering)
        s = -1 if (P.free[entering] and d > 0) else 1
    else:
        s = -1 if P.sense[entering - P.n] == "<=" else 1
    step = _direction(P, basis, entering, s)
    assert step is not None
    dxs, dr = step
    r = P.activity(x)
    best: tuple[Fraction, int] | None = None
    for j, dv in dxs.items():
        if dv < 0 and not P.free[j]:
            cand = (x[j] / -dv, j)
            best = cand if best is None or cand < best else best
    for i, dv in dr.items():
        sense, b = P.sense[i], P.b[i]
        if sense == "<=" and dv > 0:
            t = (b - r[i]) / dv
        elif sense == ">=" and dv < 0:
            t = (r[i] - b) / -dv
        elif sense == "=":
            t = ZERO
        else:
            continue
        cand = (t, P.n + i)
        best = cand if best is None or cand < best else best
    if best is None:
        raise LPError("the LP is unbounded (an exact simplex ray was found)")
    _swap(P, basis, leaving=best[1], entering=entering)


def _dual_step(P: _Problem, basis: Basis, x: list[Fraction], y: list[Fraction],
               leaving: int) -> None:
    tight = [i for i in range(P.m) if i not in basis.rows]
    cols = sorted(basis.cols)
    tpos = {i: p for p, i in enumerate(tight)}
    # g: the leaving variable's row over the basic structurals
    if leaving < P.n:
        sigma = 1  # a structural below 0 must increase
        g = [Fraction(1) if j == leaving else ZERO for j in cols]
        li = None
    else:
        li = leaving - P.n
        r_l = sum((a * x[j] for j, a in P.rows[li].items() if x[j]), ZERO)
        sigma = 1 if r_l < P.b[li] else -1
        g = [P.rows[li].get(j, ZERO) for j in cols]
    drow = [{tpos[i]: a for i, a in P.cols[j].items() if i in tpos} for j in cols]
    rho = sparse_solve(drow, g, len(tight))
    assert rho is not None
    rho_full = {i: rho[p] for p, i in enumerate(tight) if rho[p]}
    best: tuple[Fraction, int] | None = None
    for j in range(P.n):
        if j in basis.cols:
            continue
        alpha = (P.cols[j].get(li, ZERO) if li is not None else ZERO) - sum(
            (a * rho_full[i] for i, a in P.cols[j].items() if i in rho_full), ZERO)
        if not alpha:
            continue
        if P.free[j] or sigma * alpha > 0:
            cand = (abs(P.reduced(y, j) / alpha), j)
            best = cand if best is None or cand < best else best
    for i in tight:
        alpha = rho_full.get(i, ZERO)
        if not alpha or P.sense[i] == "=":
            continue
        s = -1 if P.sense[i] == "<=" else 1
        if sigma * s * alpha > 0:
            cand = (abs(y[i] / alpha), P.n + i)
            best = cand if best is None or cand < best else best
    if best is None:
        raise LPError("the LP is infeasible (an exact dual simplex ray was found)")
    _swap(P, basis, leaving=leaving, entering=best[1])


def _swap(P: _Problem, basis: Basis, *, leaving: int, entering: int) -> None:
    for var, add in ((leaving, False), (entering, True)):
        target = basis.cols if var < P.n else basis.rows
        idx = var if var < P.n else var - P.n
        if add:
            target.add(idx)
        else:
            target.discard(idx)
