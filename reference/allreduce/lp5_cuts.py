"""ForestColl's allreduce LP (5) at scale: cuts generated lazily, by orbits (Zhao et al. 2026, App. G).

The LP is the cut form of :mod:`.lp5_model` (variables per link, not per
logical arc; one x and one c^RE, c^BC per orbit of the verified automorphism
group). It is solved by cut generation:

1. **Float rounds.** The restricted LP with the cuts found so far is solved in
   floats (OR-Tools GLOP, warm-started as rows arrive). For every sink
   representative r (one per orbit of compute nodes) one max-flow from s to r
   in c^BC plus s→v of capacity x_v (OR-Tools, on the float values scaled to
   integers) finds the most violated broadcast cut, and one on the reversed
   graph with c^RE the most violated reduce cut. Violated cuts become rows.
2. **Exact step.** When the floats find nothing more, the restricted LP is
   solved exactly (:func:`collcert.reference.solvers.solve_lp`: float basis,
   exact proof). Its exact primal is expanded over the orbits and checked by
   exact integer max-flows (capacities times the common denominator), one per
   sink representative and side. A flow below Σx gives a violated cut and the
   rounds go on; otherwise these flows are the witnesses that the primal
   satisfies *every* cut (a sink g(r) has the flow of r mapped by g, since the
   primal is fixed by the group), and the exact dual of the last LP, whose
   value equals the primal's, bounds the optimum over all cuts.

Nothing a float computes is reported: the value is the exact primal's, proven
by the flows and the dual (:meth:`ForestCollCutLP.certificate`, checked by
:mod:`collcert.certify.allreduce.lp5_cuts`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from ..model import Topology, TopologyError, check_budget, fraction_str
from ..solvers import (
    FlowNetwork,
    LinearProgram,
    LPResult,
    float_solver,
    floats_can_solve,
    lp_exact,
    solve_lp,
)
from ..symmetry import find_generators, find_symmetry
from .lp5_flows import ForestCollLP, name
from .lp5_model import CutModel, group_generators

Progress = Callable[[int, int], None]

FLOAT_TOL = 1e-9
MAX_ROUNDS = 2000
BYTES_PER_WITNESS_ARC = 400
"""Memory per arc entry of a flow witness (exact value, JSON text, certificate copy)."""
BASE_BYTES = 80 * 2**20
BYTES_PER_LINK = 2000
"""The interpreter and OR-Tools, and per link the topology, the model's arrays and the
orbit bookkeeping."""
SECONDS_PER_ARC_FLOW = 2e-6
"""Time per arc of one max-flow with its bookkeeping (Python), a planning figure."""
SECONDS_PER_MASTER_COLUMN = 2e-5
SECONDS_PER_EXACT_COLUMN = 2e-5
SECONDS_PER_GENERATOR_LINK = 2e-6
"""The float master per column and round, the exact step per column² (measured on
dgx_a100:4 without symmetry, 416 columns: 111 rounds, 3.3 s exact), the orbit setup per
generator and link; loaded 2-core machine."""
ROUNDS_LOW = 5
ROUNDS_ESTIMATE = 40


class _FloatMaster:
    """The restricted LP in floats (GLOP), rows added as cuts arrive. Nothing it returns
    is trusted: it only chooses cuts."""

    def __init__(self, m: CutModel) -> None:
        self.s = s = float_solver("GLOP")  # a time limit: past it, the exact step goes on
        inf = s.infinity()
        self.x = [s.NumVar(0.0, inf, "") for _ in range(m.num_classes)]
        self.cre = [s.NumVar(0.0, inf, "") for _ in range(m.num_link_orbits)]
        self.cbc = [s.NumVar(0.0, inf, "") for _ in range(m.num_link_orbits)]
        obj = s.Objective()
        for k, var in enumerate(self.x):
            obj.SetCoefficient(var, float(m.class_size[k]))
        obj.SetMaximization()
        self.rows: list[Any] = []
        for p in range(m.num_link_orbits):
            b = m.orbit_capacity(p)
            row = s.Constraint(-inf, float(b))  # type: ignore[arg-type]
            row.SetCoefficient(self.cre[p], 1.0)
            row.SetCoefficient(self.cbc[p], 1.0)
            self.rows.append(row)
        for w in m.balance_reps:
            for cs in (self.cre, self.cbc):
                row = s.Constraint(0.0, 0.0)
                for p, a in m.balance(w).items():
                    row.SetCoefficient(cs[p], float(a))
                self.rows.append(row)
        self.failed = not floats_can_solve(m.orbit_capacity(p) for p in range(m.num_link_orbits))

    def add_cut(self, side: str, xs: list[int], cs: list[int]) -> None:
        row = self.s.Constraint(-self.s.infinity(), 0.0)
        for k, a in enumerate(xs):
            if a:
                row.SetCoefficient(self.x[k], float(a))
        for p, a in enumerate(cs):
            if a:
                row.SetCoefficient((self.cbc if side == "bc" else self.cre)[p], -float(a))
        self.rows.append(row)

    def basis(self) -> tuple[lp_exact.Basis, list[Fraction], list[Fraction]]:
        """The last optimal basis and snapped values, in the order of the exact LP's
        variables (x, then c^RE, then c^BC) and rows: a guess the exact step proves."""
        basic = self.s.BASIC
        cols = self.x + self.cre + self.cbc
        return (lp_exact.Basis(cols={j for j, v in enumerate(cols) if v.basis_status() == basic},
                               rows={i for i, r in enumerate(self.rows)
                                     if r.basis_status() == basic}),
                lp_exact.snap_all([v.solution_value() for v in cols]),
                lp_exact.snap_all([r.dual_value() for r in self.rows]))

    def solve(self) -> tuple[list[float], list[float], list[float]] | None:
        # once failed (or capacities too far apart for floats), the exact step alone
        self.failed = self.failed or self.s.Solve() != self.s.OPTIMAL
        if self.failed:
            return None
        return ([v.solution_value() for v in self.x], [v.solution_value() for v in self.cre],
                [v.solution_value() for v in self.cbc])


class _Separator:
    """Max-flows from s to every sink representative: broadcast side in c^BC, reduce side
    on the reversed links in c^RE; s→v of capacity x_v in both (s is node n)."""

    def __init__(self, m: CutModel) -> None:
        self.m = m
        comp = np.arange(m.nc, dtype=np.int64)
        src = np.full(m.nc, m.n, dtype=np.int64)
        zeros = np.zeros(len(m.links) + m.nc, dtype=np.int64)
        self.nets = {
            "bc": (np.concatenate([m.tails, src]), np.concatenate([m.heads, comp])),
            "re": (np.concatenate([m.heads, src]), np.concatenate([m.tails, comp])),
        }
        self.zeros = zeros

    def flows(self, side: str, caps: list[int], sinks: list[int],
              ) -> list[tuple[int, list[int], np.ndarray]]:
        """(value, flow per arc, source side of a minimum cut as a node mask) per sink."""
        tails, heads = self.nets[side]
        net = FlowNetwork(self.m.n + 1, tails.tolist(), heads.tolist(), caps)
        out = []
        for sink in sinks:
            res = net.solve(self.m.n, sink)
            inside = np.zeros(self.m.n, dtype=bool)
            inside[[v for v in res.source_side if v < self.m.n]] = True
            out.append((int(res.value), [int(f) for f in res.flow], inside))
        return out


@dataclass
class _Cut:
    side: str
    inside: np.ndarray
    xs: list[int]
    cs: list[int]


class _Rounds:
    """The cut pool, the float master and the separator of one solve."""

    def __init__(self, m: CutModel, progress: Progress | None) -> None:
        self.m, self.progress = m, progress
        self.cuts: list[_Cut] = []
        self.keys: set[tuple[str, tuple[int, ...], tuple[int, ...]]] = set()
        self.master = _FloatMaster(m)
        self.sep = _Separator(m)
        self.rounds = 0
        self.max_flows = 0
        for side, inside in m.first_cuts():
            self.add(side, inside)

    def key(self, side: str, inside: np.ndarray) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
        """The cut's restricted row, as the pool knows it."""
        xs, cs = self.m.cut_row(side, inside)
        return side, tuple(xs), tuple(cs)

    def add(self, side: str, inside: np.ndarray) -> bool:
        xs, cs = self.m.cut_row(side, inside)
        key = (side, tuple(xs), tuple(cs))
        if key in self.keys or not any(xs):
            return False
        self.keys.add(key)
        self.cuts.append(_Cut(side, inside.copy(), xs, cs))
        self.master.add_cut(side, xs, cs)
        return True

    def float_rounds(self) -> None:
        """Solve in floats and add violated cuts until none is found."""
        m = self.m
        while self.rounds < MAX_ROUNDS:
            got = self.master.solve()
            if got is None:
                return  # GLOP gave up: the exact step decides
            self.rounds += 1
            xk, cre, cbc = got
            x = m.expand_x([max(0.0, v) for v in xk])
            total = sum(x)
            big = max([1e-12, *map(abs, xk), *map(abs, cre), *map(abs, cbc)])
            scale = float(2 ** 40) / big
            added = 0
            for side, cv in (("bc", cbc), ("re", cre)):
                per_link = m.expand_links([max(0.0, v) for v in cv])
                caps = [math.floor(v * scale) for v in per_link + x]
                for value, _, inside in self.sep.flows(side, caps, m.sink_reps):
                    self.max_flows += 1
                    if value / scale >= total * (1 - FLOAT_TOL) - FLOAT_TOL:
                        continue
                    xs, cs = m.cut_row(side, inside)
                    lhs = sum(a * v for a, v in zip(xs, xk))
                    rhs = sum(a * v for a, v in zip(cs, cbc if side == "bc" else cre))
                    if lhs - rhs > FLOAT_TOL * max(1.0, total) and self.add(side, inside):
                        added += 1
            if self.progress:
                self.progress(self.rounds, len(self.cuts))
            if not added:
                return

    def exact_lp(self) -> LinearProgram:
        """The restricted LP with every cut so far, exact (names: docs/allreduce.md)."""
        m, t = self.m, self.m.t
        lp = LinearProgram(sense="max")
        for k in range(m.num_classes):
            lp.add_variable(self.xvar(k), cost=int(m.class_size[k]))
        for side in ("re", "bc"):
            for p in range(m.num_link_orbits):
                lp.add_variable(self.cvar(side, p))
        for p, i in enumerate(m.link_reps):
            u, v = m.links[i]
            lp.add_row(name("link", u, v), {name("cre", u, v): 1, name("cbc", u, v): 1}, "<=",
                       m.orbit_capacity(p))
        for w in m.balance_reps:
            for side in ("re", "bc"):
                lp.add_row(name("balance", side, t.nodes[w]),
                           {self.cvar(side, p): a for p, a in m.balance(w).items()}, "=", 0)
        for j, cut in enumerate(self.cuts):
            coefs: dict[Any, int] = {self.xvar(k): a for k, a in enumerate(cut.xs) if a}
            coefs.update({self.cvar(cut.side, p): -a for p, a in enumerate(cut.cs) if a})
            lp.add_row(name("cut", cut.side, j), coefs, "<=", 0)
        return lp

    def xvar(self, k: int) -> str:
        return name("x", self.m.t.nodes[self.m.class_reps[k]])

    def cvar(self, side: str, p: int) -> str:
        u, v = self.m.links[self.m.link_reps[p]]
        return name("c" + side, u, v)


@dataclass
class ForestCollCutLP(ForestCollLP):
    """LP (5)'s exact optimum from cut generation: ``x`` per compute node, ``c_re`` and
    ``c_bc`` per *link* (the cut form of :mod:`.lp5_model`; without switches the links
    are LP (5)'s arcs), ``primal``/``dual`` of the last restricted LP, and the parts of
    the certificate (generators, cuts with multipliers, flow witnesses)."""

    parts: dict[str, Any] = field(default_factory=dict, repr=False)

    def certificate(self) -> dict[str, Any]:
        return {"kind": "allreduce-forestcoll-lp", "method": "cuts",
                "value": fraction_str(self.value), **self.parts}


def _solve_exactly(rd: _Rounds) -> LPResult:
    """The restricted LP exactly: the float master's last basis proven (snapped values
    checked, else exact pivots from that basis), so the exact vertex is the one the
    float rounds separated; from scratch when GLOP gave up."""
    lp = rd.exact_lp()
    if rd.master.failed:
        return solve_lp(lp)
    basis, xs, ys = rd.master.basis()
    sol = lp_exact.check_snapped(lp, xs, ys)
    pivots = 0
    if sol is None:
        sol, pivots = lp_exact.prove(lp, basis)
    return LPResult(lp, sol.objective, {lp.var_names[j]: v for j, v in enumerate(sol.x)},
                    {lp.row_names[i]: v for i, v in enumerate(sol.y)},
                    {"rows": lp.num_rows, "columns": lp.num_variables,
                     "repair_pivots": pivots})


def _exact_step(rd: _Rounds) -> tuple[Any, dict[str, Any]] | None:
    """Solve the restricted LP exactly and check its primal with exact max-flows: the
    LP result and the witnesses, or None after adding the violated cuts found."""
    m = rd.m
    res = _solve_exactly(rd)
    xk = [res.x.get(rd.xvar(k), Fraction(0)) for k in range(m.num_classes)]
    x = m.expand_x(xk)
    total = sum(x, Fraction(0))
    per_side = {s: m.expand_links([res.x.get(rd.cvar(s, p), Fraction(0))
                                   for p in range(m.num_link_orbits)]) for s in ("bc", "re")}
    den = 1
    for v in [*x, *per_side["bc"], *per_side["re"]]:
        den = math.lcm(den, v.denominator)
    flows: dict[str, list[list[Fraction]]] = {}
    added = 0
    solved_with = set(rd.keys)  # the rows the exact LP had: its solution meets all of them
    for side in ("bc", "re"):
        caps = [int(v * den) for v in per_side[side] + x]
        flows[side] = []
        for value, flow, inside in rd.sep.flows(side, caps, m.sink_reps):
            rd.max_flows += 1
            if value < total * den:
                if rd.add(side, inside):
                    added += 1
                elif rd.key(side, inside) in solved_with:  # an exact solution meets its rows
                    raise RuntimeError("internal: LP (5) cut generation found a violated cut "
                                       "it already has")
                # else: another sink of this step found the same new cut
            flows[side].append([Fraction(f, den) for f in flow])
    if added:
        return None
    return res, {"x": x, "total": total, "c": per_side, "flows": flows}


def forestcoll_lp_cuts(t: Topology, *, uniform: bool = False, symmetry: bool | None = None,
                       progress: Progress | None = None, balance_compute: bool = False,
                       notice: Callable[[str, float], None] | None = None) -> ForestCollCutLP:
    """LP (5) of ``t`` exactly, by cut generation over the orbits of its verified
    automorphisms (module docstring). ``symmetry``: look for automorphisms (None, True)
    or take the general path (False); ``uniform``: equal shares x_v (see
    :func:`.lp5_flows.build_lp5`); ``progress(rounds, cuts)`` after every float round.
    ``balance_compute``: c^RE, c^BC balanced at compute nodes too, a *restriction* of
    LP (5) whose solution ForestColl's edge splitting accepts (schedules); its
    certificate names compute nodes in ``balance`` and does not check as LP (5)'s.
    ``notice(text, seconds)``: the size and the estimated time and memory, before the
    rounds."""
    if t.num_compute < 2:
        raise TopologyError("LP (5) needs at least two compute nodes")
    started = time.perf_counter()
    gens = lp_generators(t) if symmetry is not False and t.capacity else []
    m = CutModel(t, gens, uniform=uniform, balance_compute=balance_compute)
    _check_budget(t, m)
    if notice is not None:
        notice(*describe_estimate(t, m))
    rd = _Rounds(m, progress)
    exact_seconds = 0.0
    while True:
        rd.float_rounds()
        t1 = time.perf_counter()
        got = _exact_step(rd)
        exact_seconds += time.perf_counter() - t1
        if got is not None:
            break
    res, sol = got
    stats = dict(res.stats)
    stats.update(method="cuts", rounds=rd.rounds, cuts=len(rd.cuts), max_flows=rd.max_flows,
                 generators=len(gens), node_orbits=len(m.sink_reps),
                 link_orbits=m.num_link_orbits, exact_seconds=exact_seconds,
                 seconds=time.perf_counter() - started)
    return _result(rd, res, sol, stats)


def lp_generators(t: Topology) -> list[list[int]]:
    """Verified automorphisms of ``t`` (index permutations) whose orbits index the
    restricted LP: the generators of its symmetry group (``symmetry.find_symmetry``:
    a box shift, or a product of shifts such as racks × trays), then those
    ``symmetry.find_generators`` adds (moves inside boxes); duplicates dropped."""
    sym = find_symmetry(t)
    gens = [] if sym is None else [[int(x) for x in g.tolist()] for g in group_generators(sym)]
    for g in find_generators(t):
        if g not in gens:
            gens.append(g)
    return gens


def _result(rd: _Rounds, res: Any, sol: dict[str, Any], stats: dict[str, Any],
            ) -> ForestCollCutLP:
    m, t = rd.m, rd.m.t
    nodes = t.nodes
    x = {nodes[v]: sol["x"][v] for v in range(m.nc)}
    c_re = dict(zip(m.links, sol["c"]["re"]))
    c_bc = dict(zip(m.links, sol["c"]["bc"]))
    primal = {str(k): v for k, v in res.x.items()}
    dual = {str(k): v for k, v in res.y.items()}
    parts = {
        "shares": "uniform" if m.uniform else "free",
        "automorphisms": m.generator_pairs(),
        "x": [[nodes[r], fraction_str(res.x.get(rd.xvar(k), 0))]
              for k, r in enumerate(m.class_reps)],
        "c": [[*m.links[i], fraction_str(c_re[m.links[i]]), fraction_str(c_bc[m.links[i]])]
              for i in m.link_reps],
        "balance": [[s, nodes[w], fraction_str(y)] for w in m.balance_reps for s in ("re", "bc")
                    if (y := res.y.get(name("balance", s, nodes[w]), 0))],
        "cuts": _cut_parts(rd, res),
        "flows": _flow_parts(m, sol["flows"]),
    }
    return ForestCollCutLP(res.objective, x, c_re, c_bc, primal, dual, stats, parts)


def _cut_parts(rd: _Rounds, res: Any) -> list[dict[str, Any]]:
    nodes = rd.m.t.nodes
    out = []
    for j, cut in enumerate(rd.cuts):
        mu = res.y.get(name("cut", cut.side, j), 0)
        if not mu:
            continue
        inside = np.flatnonzero(cut.inside).tolist()
        outside = np.flatnonzero(~cut.inside).tolist()
        entry: dict[str, Any] = {"side": cut.side, "multiplier": fraction_str(mu)}
        if len(outside) < len(inside):
            entry["outside"] = [nodes[v] for v in outside]
        else:
            entry["nodes"] = [nodes[v] for v in inside]
        out.append(entry)
    return out


def _flow_parts(m: CutModel, flows: dict[str, list[list[Fraction]]]) -> list[dict[str, Any]]:
    """One witness per sink representative and side: [u, v, amount] with None for s."""
    nodes = m.t.nodes
    out = []
    for side in ("bc", "re"):
        for r, flow in zip(m.sink_reps, flows[side]):
            arcs = []
            for i, f in enumerate(flow):
                if not f:
                    continue
                if i < len(m.links):
                    arcs.append([*m.links[i], fraction_str(f)])
                elif side == "bc":
                    arcs.append([None, nodes[i - len(m.links)], fraction_str(f)])
                else:
                    arcs.append([nodes[i - len(m.links)], None, fraction_str(f)])
            out.append({"side": side, "sink": nodes[r], "flow": arcs})
    return out


def estimate(t: Topology, m: CutModel) -> tuple[int, float]:
    """(bytes, seconds) the solve is expected to take, at ``ROUNDS_ESTIMATE`` rounds:
    planning figures, never results."""
    need, (_, high) = _memory(t, m), _seconds(t, m)
    return need, high


def _memory(t: Topology, m: CutModel) -> int:
    arcs = len(t.capacity) + t.num_compute
    witnesses = 2 * len(m.sink_reps) * arcs
    return BASE_BYTES + witnesses * BYTES_PER_WITNESS_ARC + BYTES_PER_LINK * len(t.capacity)


def _seconds(t: Topology, m: CutModel) -> tuple[float, float]:
    """(few rounds, many rounds): each round solves the float master (its columns: x per
    class, c^RE and c^BC per link orbit) and two max-flows per sink orbit over every
    link; the exact step proves the last master once or twice."""
    arcs = len(t.capacity) + t.num_compute
    columns = m.num_classes + 2 * m.num_link_orbits
    per_round = (2 * len(m.sink_reps) * arcs * SECONDS_PER_ARC_FLOW
                 + SECONDS_PER_MASTER_COLUMN * columns)
    exact = SECONDS_PER_EXACT_COLUMN * columns ** 2 + len(m.sink_reps) * arcs * 1e-5
    setup = SECONDS_PER_GENERATOR_LINK * max(1, len(m.gens)) * len(t.capacity)
    return (setup + exact + ROUNDS_LOW * per_round,
            setup + 3 * exact + ROUNDS_ESTIMATE * per_round)


def describe_estimate(t: Topology, m: CutModel) -> tuple[str, float]:
    """One line for ``notice`` (the sizes, the estimated time and memory) and the
    estimated seconds at many rounds."""
    low, high = _seconds(t, m)
    sinks = len(m.sink_reps)
    return (f"LP (5) of {t.name or 'the topology'} by cut generation: {t.num_compute} compute "
            f"nodes in {sinks} orbit{'s' if sinks != 1 else ''} ({len(m.gens)} verified "
            f"automorphisms), {m.num_classes + 2 * m.num_link_orbits} variables; each round "
            f"solves the master LP and {2 * sinks} max-flows over "
            f"{len(t.capacity) + t.num_compute} arcs: estimated "
            + (f"{_duration(high)}" if high < 1 else f"{_duration(low)} to {_duration(high)}")
            + f" of CPU time ({ROUNDS_LOW} to {ROUNDS_ESTIMATE} rounds; "
            f"machines without symmetry need the most) and about "
            f"{_megabytes(_memory(t, m))} of memory", high)


def _megabytes(n: int) -> str:
    return f"{n / 2**20:.0f} MB" if n < 2**30 else f"{n / 2**30:.1f} GB"


def _duration(s: float) -> str:
    if s < 1:
        return "under 1 s"
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} minutes"


def _check_budget(t: Topology, m: CutModel) -> None:
    need, seconds = estimate(t, m)
    sinks = len(m.sink_reps)
    check_budget(f"LP (5) of {t.name or 'the topology'}", need,
                 f"cut generation with {sinks} sink orbit{'s' if sinks != 1 else ''} (two "
                 f"max-flow witnesses each over {len(t.capacity) + t.num_compute} arcs)",
                 seconds, action="try a smaller or more symmetric topology")
