"""The in-network optimum of a small machine, exactly: column generation with exact pricing.

The LP of the in-network model (:mod:`.structures`):

    max Σ_T w_T   s.t.  Σ_T w_T·uses_e(T) ≤ b_e          for every link e
                        Σ_T w_T·[w adds in T] ≤ ρ_w        for every rate-limited switch w
                        w ≥ 0

and its dual min Σ b_e y_e + Σ ρ_w z_w subject to every structure costing ≥ 1. It
has a column per structure, so it is never written out: as for the MAC-BC LP of
Zhou & Sun 2026, Thm 2 (:mod:`collcert.reference.allreduce.rate`), a float master
(OR-Tools GLOP) takes the columns that the pricing (:mod:`.pricing`) finds cheaper
than 1 under its duals; when floats add nothing, the master is solved exactly
(:func:`collcert.reference.solvers.solve_lp`) and every root is priced again in
exact rationals. Only when no structure costs less than 1 under the exact dual is
the value returned: it is then the optimum of the model, proven by the weighted
structures (primal) and (y, z) (dual), which :mod:`collcert.certify.innetwork`
checks with its own Steiner pricing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..model import Node, Topology, TopologyError
from ..solvers import LinearProgram, solve_lp
from .pricing import Pricer, pricing_work
from .structures import Structure

FLOAT_TOL = 1e-9
MAX_ROUNDS = 500
MAX_PRICING_WORK = 4000
"""Most minimum arborescences per exact pricing (:func:`.pricing.pricing_work`): beyond,
:func:`in_network_lp` refuses and the caller reports a bracket."""
DEADLINE = 30.0
"""Seconds of column generation before :func:`in_network_lp` stops with the schedule it
has (``proven`` False: a lower bound, the caller brackets it). Capacities over a huge
range (7 beside 10^20) defeat the float master and make every round exact."""


@dataclass
class InNetworkLP:
    """The in-network optimum with its primal (weighted structures) and dual (y, z)."""

    value: Fraction
    structures: list[tuple[Structure, Fraction]]
    y: dict[tuple[Node, Node], Fraction]
    z: dict[Node, Fraction]
    stats: dict[str, Any] = field(default_factory=dict)
    proven: bool = True  # False: stopped at the deadline, value is a schedule's rate only


class _Master:
    """The restricted master in floats (GLOP), re-solved as columns arrive."""

    def __init__(self, rows: int, rhs: list[Fraction]) -> None:
        from ortools.linear_solver import pywraplp

        self.s = pywraplp.Solver.CreateSolver("GLOP")
        self.s.SetTimeLimit(10_000)  # ms: a solve that long has met numbers floats cannot take
        self.rows = [self.s.Constraint(-self.s.infinity(), float(c)) for c in rhs]
        self.obj = self.s.Objective()
        self.obj.SetMaximization()
        self.vars: list[Any] = []

    def add(self, col: dict[int, int]) -> None:
        var = self.s.NumVar(0.0, self.s.infinity(), "")
        self.vars.append(var)
        for i, a in col.items():
            self.rows[i].SetCoefficient(var, float(a))
        self.obj.SetCoefficient(var, 1.0)

    def solve(self) -> tuple[float, list[float]] | None:
        if self.s.Solve() != self.s.OPTIMAL:
            return None
        return self.obj.Value(), [max(0.0, r.dual_value()) for r in self.rows]


class _Columns:
    """The structures found so far and their LP columns (links, then rated switches)."""

    def __init__(self, t: Topology, pricer: Pricer) -> None:
        self.t, self.pricer = t, pricer
        self.rated = sorted(t.reduction_rates, key=str)
        self.rhs = [t.capacity[e] for e in pricer.links] + [t.reduction_rates[w]
                                                            for w in self.rated]
        self.pos = {e: i for i, e in enumerate(pricer.links)}
        self.structs: list[Structure] = []
        self.seen: set[Structure] = set()
        self.master = _Master(len(self.rhs), self.rhs)

    def column(self, s: Structure) -> dict[int, int]:
        col = {self.pos[e]: k for e, k in s.usage(self.t.nvls_switches).items()}
        for w in s.reductions(self.rated):
            col[len(self.pos) + self.rated.index(w)] = 1
        return col

    def add(self, s: Structure) -> bool:
        if s in self.seen:
            return False
        self.seen.add(s)
        self.structs.append(s)
        self.master.add(self.column(s))
        return True

    def split(self, duals: list[Any]) -> tuple[list[Any], dict[Node, Any]]:
        n = len(self.pos)
        return duals[:n], {w: duals[n + i] for i, w in enumerate(self.rated)}


def _float_rounds(cols: _Columns, deadline: float) -> int:
    """Add float-priced columns until none costs less than 1; the rounds taken."""
    for rounds in range(1, MAX_ROUNDS + 1):
        if time.perf_counter() > deadline:
            return rounds
        solved = cols.master.solve()
        if solved is None:
            return rounds
        y, z = cols.split(solved[1])
        added = sum(cols.add(s) for cost, s in cols.pricer.cheapest(y, z)
                    if cost < 1 - FLOAT_TOL)
        if not added:
            return rounds
    return MAX_ROUNDS


def _warm_start(cols: _Columns, pricer: Pricer, passes: int = 4, eps: float = 0.5) -> None:
    """First columns by multiplicative weights (Garg & Könemann), as for the MAC-BC LP:
    lengths start at 1/capacity; after each root's cheapest structure, the lengths of the
    links it uses grow, so the next ones avoid them. A heuristic: the LP decides."""
    length = [1.0 / float(c) for c in cols.rhs]
    least = float(min(cols.rhs))
    for _ in range(passes):
        y, z = cols.split(length)
        for _, s in pricer.cheapest(y, z):
            cols.add(s)
            for i, k in cols.column(s).items():
                length[i] *= 1 + eps * k * least / float(cols.rhs[i])


def _exact_master(cols: _Columns) -> tuple[Fraction, list[tuple[Structure, Fraction]],
                                           list[Fraction]]:
    lp = LinearProgram("max")
    for i, c in enumerate(cols.rhs):
        lp.add_row(f"r{i}", {}, "<=", c)
    for j, s in enumerate(cols.structs):
        lp.add_variable(f"s{j}", 1, column={f"r{i}": a for i, a in cols.column(s).items()})
    res = solve_lp(lp)
    weighted = [(s, res.x[f"s{j}"]) for j, s in enumerate(cols.structs) if res.x[f"s{j}"]]
    duals = [Fraction(res.y.get(f"r{i}", 0)) for i in range(len(cols.rhs))]
    if any(d < 0 for d in duals):
        raise RuntimeError("internal: a capacity row of the in-network LP has a negative dual")
    return res.objective, weighted, duals


MAX_RANGE = 10**9
"""Largest ratio of two capacities (or rates) the float master is given: beyond it GLOP
can stall for minutes (7 beside 10^21), and :func:`in_network_lp` refuses."""


def float_friendly(t: Topology) -> bool:
    """Whether the capacities and rates span at most :data:`MAX_RANGE`."""
    values = [*t.capacity.values(), *t.reduction_rates.values()]
    return not values or max(values) <= MAX_RANGE * min(values)


def in_network_lp(t: Topology, *, seconds: float = DEADLINE) -> InNetworkLP:
    """The exact optimum of the in-network LP of ``t`` (see the module docstring).

    Raises :class:`TopologyError` when one exact pricing would compute more than
    :data:`MAX_PRICING_WORK` minimum arborescences (too many switches that add or copy)."""
    work = pricing_work(t)
    if work > MAX_PRICING_WORK:
        raise TopologyError(
            f"the exact in-network LP prices every root over every subset of the "
            f"{len(t.reducing_switches | t.multicast_switches)} switches that add or copy: "
            f"{work:,} minimum arborescences per pricing, over the {MAX_PRICING_WORK:,} "
            "done here")
    if not float_friendly(t):
        raise TopologyError(f"the in-network LP's float master cannot take capacities that "
                            f"span more than {MAX_RANGE:.0e} (here from {min(t.capacity.values())} "
                            f"to {max(t.capacity.values())})")
    started = time.perf_counter()
    pricer = Pricer(t)
    cols = _Columns(t, pricer)
    _warm_start(cols, pricer)
    rounds = exact_rounds = 0
    deadline = started + seconds
    proven = True
    while True:
        rounds += _float_rounds(cols, deadline)
        exact_rounds += 1
        value, weighted, duals = _exact_master(cols)
        y, z = cols.split(duals)
        if time.perf_counter() > deadline:
            proven = False
            break
        cheaper = [s for cost, s in pricer.cheapest(y, z) if cost < 1]
        if not cheaper:
            break
        if not any([cols.add(s) for s in cheaper]):
            raise RuntimeError("internal: exact pricing returns columns the exact master "
                               "already holds at cost < 1")
    return InNetworkLP(value, weighted, dict(zip(pricer.links, y)), z,
                       {"columns": len(cols.structs), "rounds": rounds,
                        "exact_rounds": exact_rounds, "pricing_work": work,
                        "seconds": round(time.perf_counter() - started, 3)}, proven)
