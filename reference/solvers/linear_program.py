"""A linear program with exact coefficients, as the exact LP layer states and solves it.

Model: ``min`` or ``max`` of c·x over rows ``a·x (<= | >= | =) b``; every
variable is ``>= 0`` unless declared free. A :class:`LinearProgram` is built row
by row or column by column (column generation adds a variable with its
coefficients in existing rows) and written as plain data for certificates
(:meth:`LinearProgram.to_data`). :func:`.lp.solve_lp` solves it, with the
rational algebra of :mod:`.lp_exact`; both raise :class:`LPError`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from fractions import Fraction
from typing import Any

from ..model import CollcertError, fraction_str, parse_number

SENSES = ("<=", ">=", "=")


class LPError(CollcertError):
    """The LP is infeasible or unbounded, or could not be proven optimal."""


def _num(value: object, what: str) -> Fraction:
    try:
        return parse_number(value)
    except ValueError as exc:
        raise LPError(f"{what}: {exc}") from None


class LinearProgram:
    """A linear program with exact coefficients, built row by row or column by column.

    >>> lp = LinearProgram("max")
    >>> lp.add_variable("x", 1); lp.add_variable("y", 1)
    'x'
    'y'
    >>> lp.add_row("c", {"x": 1, "y": 2}, "<=", 4); lp.add_row("d", {"x": 3, "y": 1}, "<=", 6)
    'c'
    'd'
    >>> from collcert.reference.solvers import solve_lp
    >>> solve_lp(lp).objective
    Fraction(14, 5)
    """

    def __init__(self, sense: str = "min") -> None:
        if sense not in ("min", "max"):
            raise LPError(f"LP sense {sense!r}: use 'min' or 'max'")
        self.sense = sense
        self.var_names: list[Hashable] = []
        self.var_index: dict[Hashable, int] = {}
        self.cost: list[Fraction] = []
        self.free: list[bool] = []
        self.cols: list[dict[int, Fraction]] = []  # column j: row index -> coefficient
        self.row_names: list[Hashable] = []
        self.row_index: dict[Hashable, int] = {}
        self.row_sense: list[str] = []
        self.rhs: list[Fraction] = []
        self._str_names: set[str] = set()

    @property
    def num_variables(self) -> int:
        return len(self.var_names)

    @property
    def num_rows(self) -> int:
        return len(self.row_names)

    def _claim(self, name: Hashable, kind: str) -> None:
        text = f"{kind}:{name}"
        if text in self._str_names:
            raise LPError(f"LP {kind} name {name!r} is used twice (names must differ as text)")
        self._str_names.add(text)

    def add_variable(self, name: Hashable, cost: object = 0, *, free: bool = False,
                     column: Mapping[Hashable, object] | None = None) -> Hashable:
        """Add a variable (≥ 0 unless ``free``); ``column`` gives its coefficients in
        existing rows by row name (for column generation)."""
        self._claim(name, "variable")
        j = len(self.var_names)
        self.var_names.append(name)
        self.var_index[name] = j
        self.cost.append(_num(cost, f"cost of {name!r}"))
        self.free.append(bool(free))
        col: dict[int, Fraction] = {}
        for row, coef in (column or {}).items():
            if row not in self.row_index:
                raise LPError(f"variable {name!r}: no row named {row!r}")
            a = _num(coef, f"coefficient of {name!r} in row {row!r}")
            if a:
                col[self.row_index[row]] = a
        self.cols.append(col)
        return name

    def add_row(self, name: Hashable, coefs: Mapping[Hashable, object], sense: str,
                rhs: object = 0) -> Hashable:
        """Add the row ``Σ coefs[v]·v  sense  rhs``; unknown variables are added with cost 0."""
        if sense not in SENSES:
            raise LPError(f"row {name!r}: sense {sense!r} is not one of <=, >=, =")
        self._claim(name, "row")
        i = len(self.row_names)
        self.row_names.append(name)
        self.row_index[name] = i
        self.row_sense.append(sense)
        self.rhs.append(_num(rhs, f"right-hand side of row {name!r}"))
        for var, coef in coefs.items():
            if var not in self.var_index:
                self.add_variable(var)
            a = _num(coef, f"coefficient of {var!r} in row {name!r}")
            if a:
                col = self.cols[self.var_index[var]]
                col[i] = col.get(i, Fraction(0)) + a
                if not col[i]:
                    del col[i]
        return name

    def to_data(self) -> dict[str, Any]:
        """The LP as plain JSON-ready data (the ``lp`` part of a certificate)."""
        rows: list[dict[str, Any]] = [
            {"name": str(n), "coefs": {}, "sense": s, "rhs": fraction_str(b)}
            for n, s, b in zip(self.row_names, self.row_sense, self.rhs)
        ]
        for j, col in enumerate(self.cols):
            vname = str(self.var_names[j])
            for i, a in col.items():
                rows[i]["coefs"][vname] = fraction_str(a)
        return {
            "sense": self.sense,
            "objective": {str(n): fraction_str(c) for n, c in zip(self.var_names, self.cost) if c},
            "rows": rows,
            "free": [str(n) for n, f in zip(self.var_names, self.free) if f],
        }
