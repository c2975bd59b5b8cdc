"""``solve_lp`` with OR-Tools' GLOP as the float engine, for processes that use OR-Tools.

:func:`collcert.reference.lp.solve_lp` takes its float basis from the highspy
wheel, which cannot be loaded in a process that has loaded OR-Tools (the
max-flow engine) or the other way round: both wheels ship a different
``libhighs.so.1`` and the second import fails with an undefined symbol. The
all-reduce rate needs max-flows and LPs side by side, so it solves LPs here:
GLOP (OR-Tools' dual simplex, through ``pywraplp``) finds an optimal basis in
floats, and the exact part is the LP layer's own (:mod:`.lp_exact`): snapped
float values accepted only if exactly optimal, else the basis solved in
rationals and repaired by exact simplex pivots. The result is an
:class:`~collcert.reference.lp.LPResult` like ``solve_lp``'s.
"""

from __future__ import annotations

import time
from typing import Any

from . import lp_exact
from .lp import LinearProgram, LPError, LPResult


def glop_basis(lp: LinearProgram) -> tuple[lp_exact.Basis | None, list[float], list[float]]:
    """GLOP's optimal basis, column values and row duals (floats; nothing trusted)."""
    from ortools.linear_solver import pywraplp

    s = pywraplp.Solver.CreateSolver("GLOP")
    inf = s.infinity()
    variables = [s.NumVar(-inf if free else 0.0, inf, "") for free in lp.free]
    rows = []
    for sense, b in zip(lp.row_sense, lp.rhs):
        v = b.numerator / b.denominator
        rows.append(s.Constraint(-inf if sense == "<=" else v, inf if sense == ">=" else v))
    for j, col in enumerate(lp.cols):
        for i, a in col.items():
            rows[i].SetCoefficient(variables[j], a.numerator / a.denominator)
    obj = s.Objective()
    for j, c in enumerate(lp.cost):
        if c:
            obj.SetCoefficient(variables[j], c.numerator / c.denominator)
    if lp.sense == "max":
        obj.SetMaximization()
    else:
        obj.SetMinimization()
    status = s.Solve()
    if status == s.INFEASIBLE:
        raise LPError("the LP is infeasible (GLOP)")
    if status == s.UNBOUNDED:
        raise LPError("the LP is unbounded (GLOP)")
    if status != s.OPTIMAL:
        return None, [], []
    basic = s.BASIC
    basis = lp_exact.Basis(cols={j for j, v in enumerate(variables) if v.basis_status() == basic},
                           rows={i for i, r in enumerate(rows) if r.basis_status() == basic})
    return basis, [v.solution_value() for v in variables], [r.dual_value() for r in rows]


def solve_lp_glop(lp: LinearProgram) -> LPResult:
    """Solve ``lp`` exactly, starting from GLOP's basis (see the module docstring)."""
    t0 = time.perf_counter()
    stats: dict[str, Any] = {"rows": lp.num_rows, "columns": lp.num_variables,
                             "repair_pivots": 0, "engine": "glop"}
    basis: lp_exact.Basis | None = None
    sol = None
    xf: list[float] = []
    yf: list[float] = []
    if lp.num_rows and lp.num_variables:
        basis, xf, yf = glop_basis(lp)
    t1 = time.perf_counter()
    stats["float_seconds"] = t1 - t0
    if basis is not None:
        sol = lp_exact.check_snapped(lp, lp_exact.snap_all(xf), lp_exact.snap_all(yf))
        stats["proof"] = "snapped float values"
    if sol is None:
        sol, pivots = lp_exact.prove(lp, basis)
        stats["repair_pivots"] = pivots
        stats["proof"] = "exact basis" if pivots == 0 else f"exact basis after {pivots} pivots"
    stats["exact_seconds"] = time.perf_counter() - t1
    x = {lp.var_names[j]: v for j, v in enumerate(sol.x)}
    y = {lp.row_names[i]: v for i, v in enumerate(sol.y)}
    return LPResult(lp, sol.objective, x, y, stats)
