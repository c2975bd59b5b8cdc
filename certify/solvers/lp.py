"""Checker 6: an exact certificate of an optimal linear program.

The LP (rows are ``<=``, ``>=`` or ``=``; every variable ≥ 0 unless listed
in ``free``; ``"sense": "min"`` unless it says ``"max"``)::

    min  Σ_j c_j x_j   s.t.  Σ_j a_ij x_j  (≤ | ≥ | =)  b_i

Its dual: max Σ_i b_i y_i with y_i ≤ 0 on ``<=`` rows, y_i ≥ 0 on ``>=`` rows,
y_i free on ``=`` rows, and for every variable j: Σ_i a_ij y_i ≤ c_j
(= c_j when x_j is free). Weak duality gives bᵀy ≤ cᵀx for every feasible
pair, so a feasible pair with bᵀy = cᵀx proves both optimal.

A ``max`` LP is checked as the ``min`` LP of the negated costs, with its
duals negated: so for ``max`` the dual signs flip (y_i ≥ 0 on ``<=`` rows,
y_i ≤ 0 on ``>=`` rows, Σ_i a_ij y_i ≥ c_j) and bᵀy ≥ cᵀx for every feasible
pair; the reported objectives are those of the LP as stated. Everything is
checked in rationals; a solver's floats must first be turned into exact
values (and then either pass or be reported with the exact gap).

Data (plain dicts; numbers int, Fraction or "p/q" strings)::

    lp = {"objective": {var: c}, "rows": [{"name": r, "coefs": {var: a},
          "sense": "<=", "rhs": b}, ...], "free": [var, ...]}
    primal = {var: x}, dual = {row name: y}
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Verdict, frac_str, number


def check_lp(lp: Mapping[str, Any], primal: Mapping[str, Any], dual: Mapping[str, Any],
             ) -> Verdict:
    """Primal feasibility, dual feasibility and equal objectives, exactly.

    ``facts``: ``primal_objective``, ``dual_objective`` (the latter a proven
    lower bound whenever the dual part is feasible; the former an achieved
    value whenever the primal part is feasible).
    """
    v = Verdict("LP certificate")
    obj_raw = lp.get("objective", {})
    rows = lp.get("rows")
    if not isinstance(obj_raw, Mapping) or not isinstance(rows, list):
        raise InputError("an LP needs 'objective' {var: c} and 'rows' [...]")
    sense_raw = lp.get("sense", "min")
    if sense_raw not in ("min", "max"):
        raise InputError(f"LP sense {sense_raw!r} is not 'min' or 'max'")
    sg = -1 if sense_raw == "max" else 1  # a max LP is checked as min of -c, duals negated
    obj = {str(k): sg * number(c, f"objective[{k}]") for k, c in obj_raw.items()}
    free_raw = lp.get("free", [])
    if not isinstance(free_raw, list):
        raise InputError("LP 'free' must be a list of variable names")
    free = {str(x) for x in free_raw}
    x = {str(k): number(val, f"primal[{k}]") for k, val in primal.items()}
    y = {str(k): sg * number(val, f"dual[{k}]") for k, val in dual.items()}
    primal_ok = dual_ok = True
    for j, val in x.items():
        if val < 0 and j not in free:
            v.fail(f"primal: variable {j} = {frac_str(val)} is negative")
            primal_ok = False
    rows_pass = _Rows(set(obj) | set(x), sense_raw, sg)
    for i, row in enumerate(rows):
        rows_pass.check(i, row, x, y, v)
    primal_ok = primal_ok and rows_pass.primal_ok
    dual_ok = rows_pass.dual_ok
    for k in y:
        if k not in rows_pass.names:
            v.fail(f"dual: multiplier for unknown row {k}")
            dual_ok = False
    dual_ok = _check_columns(rows_pass.reduced, obj, free, sg, v) and dual_ok
    primal_obj = sum((c * x.get(j, Fraction(0)) for j, c in obj.items()), Fraction(0))
    dual_obj = rows_pass.dual_obj
    if primal_ok:
        v.facts["primal_objective"] = sg * primal_obj
    if dual_ok:
        v.facts["dual_objective"] = sg * dual_obj
    if primal_ok and dual_ok and primal_obj != dual_obj:
        v.fail(f"objectives differ: primal {frac_str(sg * primal_obj)}, dual "
               f"{frac_str(sg * dual_obj)}; both are feasible, so the optimum lies between them")
    return v


class _Rows:
    """The pass over the rows: each row's primal side and its multiplier's sign, and what
    the columns and the dual objective need (Σ_i a_ij y_i per variable, Σ_i b_i y_i)."""

    def __init__(self, variables: set[str], sense: str, sg: int) -> None:
        self.sense, self.sg = sense, sg
        self.reduced: dict[str, Fraction] = {j: Fraction(0) for j in variables}
        self.dual_obj = Fraction(0)
        self.names: set[str] = set()
        self.primal_ok = self.dual_ok = True

    def check(self, i: int, row: object, x: Mapping[str, Fraction],
              y: Mapping[str, Fraction], v: Verdict) -> None:
        if not isinstance(row, Mapping) or not isinstance(row.get("coefs"), Mapping):
            raise InputError(f"LP rows[{i}] needs 'coefs' {{var: a}}")
        name = str(row.get("name", i))
        if name in self.names:
            raise InputError(f"LP row name {name!r} is used twice")
        self.names.add(name)
        sense = row.get("sense")
        if sense not in ("<=", ">=", "="):
            raise InputError(f"LP row {name}: sense {sense!r} is not <=, >= or =")
        rhs = number(row.get("rhs", 0), f"row {name} rhs")
        lhs = Fraction(0)
        yi = y.get(name, Fraction(0))
        for j, a_raw in row["coefs"].items():
            a = number(a_raw, f"row {name} coefficient of {j}")
            j = str(j)
            lhs += a * x.get(j, Fraction(0))
            self.reduced[j] = self.reduced.get(j, Fraction(0)) + a * yi
        if (sense == "<=" and lhs > rhs) or (sense == ">=" and lhs < rhs) or (
                sense == "=" and lhs != rhs):
            v.fail(f"primal: row {name} has left side {frac_str(lhs)} {_neg(sense)} "
                   f"{frac_str(rhs)}")
            self.primal_ok = False
        if (sense == "<=" and yi > 0) or (sense == ">=" and yi < 0):
            v.fail(f"dual: the multiplier of {sense} row {name} is {frac_str(self.sg * yi)}, "
                   f"which has the wrong sign for a {self.sense} LP")
            self.dual_ok = False
        self.dual_obj += rhs * yi


def _check_columns(reduced: Mapping[str, Fraction], obj: Mapping[str, Fraction],
                   free: set[str], sg: int, v: Verdict) -> bool:
    """Dual feasibility by columns: Σ_i a_ij y_i ≤ c_j, and = c_j for a free variable."""
    ok = True
    for j, r in reduced.items():
        c = obj.get(j, Fraction(0))
        if (j in free and r != c) or (j not in free and r > c):
            rel = "≠" if j in free else (">" if sg == 1 else "<")
            v.fail(f"dual: the column of {j} gives Σ a·y = {frac_str(sg * r)} "
                   f"{rel} its cost {frac_str(sg * c)}")
            ok = False
    return ok


def _neg(sense: str) -> str:
    return {"<=": ">", ">=": "<", "=": "≠"}[sense]
