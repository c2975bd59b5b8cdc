"""Exact linear programming: a floating-point solve, then an exact proof.

The design card's rule for fast engines: *use the fastest sound tool for the
heavy work, then prove the result exactly*. An LP is solved here in three
steps:

1. **Float solve** by OR-Tools' simplex codes (CLP, else GLOP), which
   return an optimal *basis* as well as float values; skipped when the LP's
   magnitudes span more than :data:`FLOAT_RANGE` (doubles cannot hold them side
   by side: a wrong basis, or a solve that never ends).
2. **Exact proof.** The values a basis determines are computed in rationals
   (:mod:`collcert.reference.solvers.lp_exact`: the triangular parts of the basis
   matrix are peeled off by singletons, the remaining core goes to
   python-flint's rational solver). Cheaper still, the float values are
   first snapped to nearby fractions; either way the candidate pair is
   accepted only if it is primal feasible, dual feasible and has equal
   objectives, checked in Fractions. A float never reaches a result.
3. **Repair.** If the float basis is not exactly optimal (tolerances hide a
   tiny infeasibility, or the basis is singular in exact arithmetic), exact
   simplex pivots (dual simplex, then primal simplex, Bland's rule) continue
   from it until the basis is proven optimal.

The proof travels with the result: :meth:`LPResult.certificate` gives the LP,
the primal and the dual as plain data that :func:`collcert.certify.solvers.lp.check_lp`
verifies by weak duality, sharing no code with this module.

Model: ``min`` or ``max`` of c·x over rows ``a·x (<= | >= | =) b``; every
variable is ``>= 0`` unless declared free. Dual sign convention of the LP as
stated: for ``min``, y ≥ 0 on ``>=`` rows, y ≤ 0 on ``<=`` rows and
Σ_i a_ij y_i ≤ c_j (= for free j); for ``max`` all three inequalities flip.
In both, b·y equals the optimum.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..model import fraction_str
from . import lp_exact
from .linear_program import LinearProgram, LPError


@dataclass
class LPResult:
    """An exactly proven optimal solution (see :func:`solve_lp`)."""

    lp: LinearProgram
    objective: Fraction
    x: dict[Hashable, Fraction]
    y: dict[Hashable, Fraction]
    stats: dict[str, Any] = field(default_factory=dict)

    def certificate(self) -> dict[str, Any]:
        """``{"lp", "primal", "dual"}`` for :func:`collcert.certify.solvers.lp.check_lp`."""
        return {
            "format": "collcert-lp-certificate/1",
            "lp": self.lp.to_data(),
            "primal": {str(k): fraction_str(v) for k, v in self.x.items() if v},
            "dual": {str(k): fraction_str(v) for k, v in self.y.items() if v},
            "objective": fraction_str(self.objective),
        }


def solve_lp(lp: LinearProgram, *, engine: str = "auto", max_repair_pivots: int = 100000,
             ) -> LPResult:
    """Solve ``lp`` and prove the optimum exactly (see the module docstring).

    ``engine="auto"`` (default) starts from the float basis of OR-Tools' CLP,
    or GLOP where CLP fails (``"clp"`` or ``"glop"`` ask for one of them);
    ``engine="exact"`` skips the float solve and runs the exact simplex from the
    all-slack basis (slow; for tests and tiny LPs). Raises :class:`LPError` for
    an infeasible or unbounded LP.
    """
    t0 = time.perf_counter()
    stats: dict[str, Any] = {"rows": lp.num_rows, "columns": lp.num_variables,
                             "repair_pivots": 0, "proof": ""}
    basis: lp_exact.Basis | None = None
    guess: tuple[list[Fraction], list[Fraction]] | None = None
    engines = {"auto": FLOAT_ENGINES, "clp": ("CLP",), "glop": ("GLOP",), "exact": ()}
    if engine not in engines:
        raise LPError(f"LP engine {engine!r}: use one of {', '.join(engines)}")
    if engines[engine] and lp.num_variables and lp.num_rows:
        basis, guess = _float_solve(lp, engines[engine])
    t1 = time.perf_counter()
    stats["float_seconds"] = t1 - t0
    sol: lp_exact.Solution | None = None
    if guess is not None:
        sol = lp_exact.check_snapped(lp, *guess)
        if sol is not None:
            stats["proof"] = "snapped float values"
    if sol is None:
        sol, pivots = lp_exact.prove(lp, basis, max_pivots=max_repair_pivots)
        stats["repair_pivots"] = pivots
        stats["proof"] = "exact basis" if pivots == 0 else f"exact basis after {pivots} pivots"
    stats["exact_seconds"] = time.perf_counter() - t1
    x = {lp.var_names[j]: v for j, v in enumerate(sol.x)}
    y = {lp.row_names[i]: v for i, v in enumerate(sol.y)}
    return LPResult(lp, sol.objective, x, y, stats)


FLOAT_ENGINES = ("CLP", "GLOP")
FLOAT_RANGE = 2.0 ** 48
"""Widest ratio of nonzero magnitudes (coefficients, right-hand sides, costs) handed to a
float solver: beyond it double precision (53 bits) cannot keep the small ones next to
the large, and GLOP was seen to return a wrong basis (capacities 38309034514815479 beside
1) or to run for hours (7.5·10^20 beside 2; issue 33 row 1). The exact simplex then
works alone."""
FLOAT_SECONDS = 60.0
"""Time limit of one float solve of a column- or cut-generation master (re-solved every
round; milliseconds normally): past it the master gives up and the exact layer goes on."""


def floats_can_solve(numbers: Iterable[Any]) -> bool:
    """Whether the nonzero magnitudes of ``numbers`` lie within :data:`FLOAT_RANGE` of each
    other (and fit a double), so that a float solve of an LP made of them is worth trying."""
    low = high = None
    for v in numbers:
        a = abs(v)
        if a:
            low = a if low is None or a < low else low
            high = a if high is None or a > high else high
    if low is None or high is None:
        return True
    return bool(high <= 2.0 ** 1000 and high <= FLOAT_RANGE * low)


def float_solver(engine: str, seconds: float | None = FLOAT_SECONDS) -> Any:
    """An OR-Tools ``pywraplp`` solver (``"CLP"``, ``"GLOP"``) with a time limit of
    ``seconds`` (None: none), or None where the engine is missing."""
    from ortools.linear_solver import pywraplp

    s = pywraplp.Solver.CreateSolver(engine)
    if s is not None and seconds is not None:
        s.SetTimeLimit(int(seconds * 1000))
    return s


def _lp_numbers(lp: LinearProgram) -> Iterator[Fraction]:
    yield from lp.cost
    yield from lp.rhs
    for col in lp.cols:
        yield from col.values()


def _float_solve(lp: LinearProgram, engines: tuple[str, ...] = FLOAT_ENGINES,
                 ) -> tuple[Any, tuple[list[Fraction], list[Fraction]] | None]:
    """Solve in floating point with OR-Tools' simplex codes, the first that
    reaches an optimum: COIN-OR CLP (about 5× faster than GLOP on ForestColl's
    LP (5)), then GLOP. Return the optimal basis and float values; they only
    choose a basis and a guess, and nothing here is trusted.

    OR-Tools, not the highspy wheel: the two ship different ``libhighs``
    builds, and whichever is imported second in a process fails with an
    undefined symbol, so an LP layer on highspy would break every process that
    also computes max-flows (OR-Tools is the max-flow engine).
    """
    if not floats_can_solve(_lp_numbers(lp)):  # floats would be wrong, or never finish
        return None, None
    for engine in engines:
        s = float_solver(engine, None)  # one solve, however large: no time limit
        if s is None:
            continue
        inf = s.infinity()
        variables = [s.NumVar(-inf if free else 0.0, inf, "") for free in lp.free]
        rows = []
        for sense, b in zip(lp.row_sense, lp.rhs):
            v = b.numerator / b.denominator
            rows.append(s.Constraint(-inf if sense == "<=" else v, inf if sense == ">=" else v))
        for j, col in enumerate(lp.cols):
            var = variables[j]
            for i, a in col.items():
                rows[i].SetCoefficient(var, a.numerator / a.denominator)
        obj = s.Objective()
        for var, c in zip(variables, lp.cost):
            if c:
                obj.SetCoefficient(var, c.numerator / c.denominator)
        if lp.sense == "max":
            obj.SetMaximization()
        else:
            obj.SetMinimization()
        if s.Solve() != s.OPTIMAL:
            # Infeasible, unbounded or failed (huge capacity ranges fool float
            # solvers): not taken on its word; the next engine, and in the end
            # the exact simplex from scratch, decides (and finds the ray).
            continue
        basic = s.BASIC
        basis = lp_exact.Basis(
            cols={j for j, var in enumerate(variables) if var.basis_status() == basic},
            rows={i for i, row in enumerate(rows) if row.basis_status() == basic},
        )
        guess = (lp_exact.snap_all([var.solution_value() for var in variables]),
                 lp_exact.snap_all([row.dual_value() for row in rows]))
        return basis, guess
    return None, None
