"""Exact LPs from an OR-Tools float basis: CLP first, GLOP as the fallback.

Like :func:`collcert.reference.lp.solve_lp`, but the float basis comes from
COIN-OR CLP (bundled with OR-Tools, through ``pywraplp``), which is about 5×
faster than GLOP on ForestColl's LP (5) of a 32-node hypercube; GLOP is used
when CLP is missing or does not finish. Only OR-Tools engines are used: the
highspy wheel cannot share a process with OR-Tools (both ship a different
``libhighs.so.1``). The exact part is the LP layer's own
(:mod:`.lp_exact`): snapped float values accepted only if exactly optimal,
else the basis solved in rationals and repaired by exact simplex pivots. The
result is an :class:`~collcert.reference.lp.LPResult` like ``solve_lp``'s.
"""

from __future__ import annotations

import time
from typing import Any

from . import lp_exact
from .lp import LinearProgram, LPError, LPResult


def float_basis(lp: LinearProgram, solver: str = "CLP",
                ) -> tuple[lp_exact.Basis | None, list[float], list[float]]:
    """An optimal basis, column values and row duals in floats (nothing trusted)."""
    from ortools.linear_solver import pywraplp

    s = pywraplp.Solver.CreateSolver(solver)
    if s is None:
        if solver == "GLOP":
            raise LPError("OR-Tools has no GLOP solver")
        return float_basis(lp, "GLOP")
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
    if status != s.OPTIMAL:
        # not trusted either way (huge capacity ranges fool float solvers): the other
        # engine, then the exact simplex from the slack basis, which decides
        return (None, [], []) if solver == "GLOP" else float_basis(lp, "GLOP")
    basic = s.BASIC
    basis = lp_exact.Basis(cols={j for j, v in enumerate(variables) if v.basis_status() == basic},
                           rows={i for i, r in enumerate(rows) if r.basis_status() == basic})
    return basis, [v.solution_value() for v in variables], [r.dual_value() for r in rows]


def solve_lp_ortools(lp: LinearProgram) -> LPResult:
    """Solve ``lp`` exactly, starting from CLP's (or GLOP's) basis (module docstring)."""
    t0 = time.perf_counter()
    stats: dict[str, Any] = {"rows": lp.num_rows, "columns": lp.num_variables,
                             "repair_pivots": 0, "engine": "ortools"}
    basis: lp_exact.Basis | None = None
    sol = None
    xf: list[float] = []
    yf: list[float] = []
    if lp.num_rows and lp.num_variables:
        basis, xf, yf = float_basis(lp)
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


solve_lp_glop = solve_lp_ortools  # the first name of this function (used by alltoall)
