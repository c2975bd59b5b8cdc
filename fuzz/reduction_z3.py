"""A Z3 model of reduction schedules (Canon & Antoniu, RR-7898, §3), for n ≤ 6.

Z3 chooses everything itself: the tree (each machine but the sink, machine
0, picks a receiver; levels h forbid cycles), every transfer date x_i and
every reduction date r_i (the reduction of i's element at its receiver), as
exact rationals. Constraints, for machines i ≠ j with the same receiver:

* transfers into one machine do not overlap (one port): x_i + d ≤ x_j or
  x_j + d ≤ x_i; reductions on one machine do not overlap: same with r, c;
* a reduction needs its operand: r_i ≥ x_i + d; a machine sends after all
  its reductions: x_v ≥ r_i + c when i sends to v; the makespan T ≥ r_i + c;
* ``non-overlap``: no reduction on a machine overlaps a transfer into it;
* at most K transfers in flight: at each start x_i, fewer than K other
  transfers [x_j, x_j + d) contain it; at most K reducers: at most K machines
  are somebody's receiver.

:func:`prove` asks two questions: is there a schedule with T < claim (must be
UNSAT: the claim is a lower bound) and one with T ≤ claim (must be SAT). The
model knows nothing of Algorithms 1-3, Prop 2 or eager dates.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any


@dataclass
class Answer:
    question: str
    expected: str
    result: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.result == self.expected


def _model(n: int, d: Fraction, c: Fraction, *, overlap: bool, max_transfers: int | None,
           max_reducers: int | None) -> tuple[Any, Any]:
    import z3

    def q(x: Fraction) -> Any:
        return z3.RealVal(f"{x.numerator}/{x.denominator}")

    D, C = q(Fraction(d)), q(Fraction(c))
    s = z3.Solver()
    T = z3.Real("T")
    s.add(T >= 0)
    if n == 1:
        return s, T
    others = range(1, n)
    par = {i: z3.Int(f"p{i}") for i in others}
    h = {i: z3.Int(f"h{i}") for i in range(n)}
    x = {i: z3.Real(f"x{i}") for i in others}
    r = {i: z3.Real(f"r{i}") for i in others}
    s.add(h[0] == 0)
    for i in others:
        s.add(par[i] >= 0, par[i] < n, par[i] != i, x[i] >= 0, r[i] >= x[i] + D, T >= r[i] + C)
        for v in range(n):
            if v != i:
                s.add(z3.Implies(par[i] == v, h[i] >= h[v] + 1))
                if v != 0:
                    s.add(z3.Implies(par[i] == v, x[v] >= r[i] + C))
    for i in others:
        for j in others:
            if i < j:
                same = par[i] == par[j]
                s.add(z3.Implies(same, z3.Or(x[i] + D <= x[j], x[j] + D <= x[i])))
                s.add(z3.Implies(same, z3.Or(r[i] + C <= r[j], r[j] + C <= r[i])))
            if i != j and not overlap:
                # a reduction at v (of i's operand) never overlaps a transfer into v (from j)
                s.add(z3.Implies(par[i] == par[j], z3.Or(r[i] + C <= x[j], x[j] + D <= r[i])))
    if max_transfers is not None and Fraction(d) > 0:
        for i in others:
            inside = [z3.If(z3.And(x[j] <= x[i], x[i] < x[j] + D), 1, 0)
                      for j in others if j != i]
            s.add(z3.Sum(inside) + 1 <= max_transfers)
    if max_reducers is not None:
        receives = [z3.If(z3.Or([par[i] == v for i in others if i != v]), 1, 0)
                    for v in range(n)]
        s.add(z3.Sum(receives) <= max_reducers)
    return s, T


def prove(n: int, d: Fraction, c: Fraction, claim: Fraction, *, overlap: bool = True,
          max_transfers: int | None = None, max_reducers: int | None = None,
          timeout: float = 60.0) -> list[Answer]:
    """Z3's two answers: no schedule shorter than ``claim`` (UNSAT), one that
    reaches it (SAT)."""
    import z3

    out = []
    for question, op, expected in (("a schedule shorter than the claim", "<", "unsat"),
                                   ("a schedule as short as the claim", "<=", "sat")):
        s, T = _model(n, Fraction(d), Fraction(c), overlap=overlap,
                      max_transfers=max_transfers, max_reducers=max_reducers)
        s.set("timeout", int(timeout * 1000))
        bound = z3.RealVal(f"{Fraction(claim).numerator}/{Fraction(claim).denominator}")
        s.add(T < bound if op == "<" else T <= bound)
        t0 = time.monotonic()
        result = str(s.check())
        out.append(Answer(question, expected, result, time.monotonic() - t0))
    return out
