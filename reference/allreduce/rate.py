"""The MAC-BC LP lower bound on the all-reduce computation rate (Zhou & Sun 2026, Thm 2).

*On the Computation Rate of All-Reduce*, in the model of :mod:`.cut_set` (whose
Theorem 1 is the upper bound C).

Theorem 2 (LP (16), a routing scheme)
    A MAC-BC network rooted at r is a spanning in-arborescence into r plus a
    spanning out-arborescence from r (entries summed: a link used by both
    counts 2). Reduce along the first, broadcast along the second, pipelined:
    rate 1. R_LP = max Σ_m w_m s.t. Σ_m w_m β^(m) ≤ β, w ≥ 0, and R* ≥ R_LP.
    There are K^(2K−3) columns on the complete graph, so the LP is solved by
    column generation: the restricted master is solved in floats (OR-Tools'
    GLOP, warm-started as columns arrive), and a column is priced for every
    root r as the cheapest in-arborescence into r plus the cheapest
    out-arborescence from r under the master's duals y (Chu-Liu/Edmonds,
    :func:`collcert.reference.solvers.min_arborescence`). When floats find
    nothing to add, the master is solved exactly
    (:mod:`collcert.reference.solvers.lp`) and priced again with the
    exact y in integers; only when no MAC-BC network costs less than 1 under
    the exact y is the result returned. Certificate: the weighted columns
    (primal, checked against the capacities) and y (dual: y ≥ 0, every
    MAC-BC network costs ≥ 1, Σ β y = Σ w).

Corollary 2.1: every column uses 2(K−1) link units, so
R_LP ≤ Σ β / (2(K−1)).

The model has no switches: with switches the MAC-BC LP is not defined (use
ForestColl's LP (5), :mod:`.lp5`), but the cut-set bound is.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..model import Link, Node, Topology, TopologyError, fraction_str
from ..solvers import (
    LinearProgram,
    LPResult,
    float_solver,
    floats_can_solve,
    lp_exact,
    min_arborescence,
)
from .cut_set import check_two_compute_nodes

Progress = Callable[[int, int], None]

FLOAT_TOL = 1e-9
MAX_ROUNDS = 2000


# --------------------------------------------------------------------------- #
# Theorem 2: the MAC-BC linear program
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class MacBcNetwork:
    """A rooted MAC-BC network: reduce (in-)arborescence plus broadcast (out-)arborescence."""

    root: Node
    reduce: tuple[Link, ...]
    broadcast: tuple[Link, ...]

    def usage(self) -> dict[Link, int]:
        out: dict[Link, int] = {}
        for e in self.reduce + self.broadcast:
            out[e] = out.get(e, 0) + 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {"root": self.root, "reduce": [list(e) for e in self.reduce],
                "broadcast": [list(e) for e in self.broadcast]}


@dataclass
class MacBcLP:
    """R_LP (LP (16)) with the optimal weighting and the dual y that proves it."""

    value: Fraction
    columns: list[tuple[MacBcNetwork, Fraction]]
    y: dict[Link, Fraction]
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def corollary_bound(self) -> Fraction:
        """Σ β / (2(K−1)) (Corollary 2.1), stored in ``stats``."""
        return Fraction(self.stats["corollary_2_1"])

    def certificate(self, t: Topology) -> dict[str, Any]:
        return {
            "kind": "allreduce-mac-bc-lp",
            "value": fraction_str(self.value),
            "columns": [{**m.to_json(), "weight": fraction_str(w)} for m, w in self.columns],
            "dual": [[u, v, fraction_str(y)] for (u, v), y in self.y.items() if y],
        }


class _Support:
    """The switch-free graph as dense arcs."""

    def __init__(self, t: Topology) -> None:
        if t.switch_nodes:
            raise TopologyError(
                "the MAC-BC LP (On the Computation Rate of All-Reduce, Thm 2) is defined for "
                f"networks of compute nodes only, and this topology has {len(t.switch_nodes)} "
                f"switches ({t.switch_nodes[0]!r}, …); use ForestColl's allreduce LP (5) instead"
            )
        check_two_compute_nodes(t)
        self.t = t
        self.n = t.num_compute
        self.links: list[Link] = list(t.capacity)
        self.cap = [t.capacity[e] for e in self.links]
        self.tails = [t.index[u] for u, _ in self.links]
        self.heads = [t.index[v] for _, v in self.links]

    def network(self, root: int, inn: list[int], out: list[int]) -> MacBcNetwork:
        return MacBcNetwork(self.t.nodes[root], tuple(self.links[i] for i in sorted(inn)),
                            tuple(self.links[i] for i in sorted(out)))

    def cheapest(self, y: list[Any], root: int) -> tuple[Any, list[int], list[int]] | None:
        out = min_arborescence(self.n, self.tails, self.heads, y, root)
        inn = min_arborescence(self.n, self.heads, self.tails, y, root)
        if out is None or inn is None:
            return None
        return inn[0] + out[0], inn[1], out[1]


def _column(sup: _Support, net: MacBcNetwork) -> dict[int, int]:
    pos = {e: i for i, e in enumerate(sup.links)}
    col: dict[int, int] = {}
    for e, c in net.usage().items():
        col[pos[e]] = c
    return col


def _exact_master(sup: _Support, nets: list[MacBcNetwork], master: _FloatMaster,
                  forced: frozenset[int] = frozenset(),
                  ) -> tuple[Any, list[Fraction], list[tuple[MacBcNetwork, Fraction]], set[int]]:
    """Solve the restricted master exactly: (LPResult, y per link, weighted columns,
    the pool indices it held).

    ``master`` (the float master holding ``nets`` in the same order, just
    solved) supplies its optimal basis: only the basic columns, the columns
    with a positive float value and ``forced`` (columns an earlier exact
    pricing found cheaper than 1) go into the exact LP, and that basis seeds
    the exact proof (:mod:`collcert.reference.solvers.lp_exact`), so no second
    float solve is needed. Leaving out the other columns is safe: the exact
    pricing that follows looks at every MAC-BC network again, those already in
    the pool included (a float basis can be wrong: capacities 10^16 apart).
    """
    t0 = time.perf_counter()
    cols: set[int]
    rows: set[int]
    xf: list[float]
    yf: list[float]
    if master.failed:  # no float basis: every column, exact simplex from the slack basis
        cols, rows, xf, yf = set(), set(range(len(sup.cap))), [1.0] * len(nets), []
    else:
        cols, rows, xf, yf = master.basis()
    keep = sorted(cols | forced | {j for j, v in enumerate(xf) if v > FLOAT_TOL})
    lp = LinearProgram(sense="max")
    for i, c in enumerate(sup.cap):
        lp.add_row(f"cap{i}", {}, "<=", c)
    for j in keep:
        lp.add_variable(f"m{j}", cost=1,
                        column={f"cap{i}": a for i, a in _column(sup, nets[j]).items()})
    position = {j: p for p, j in enumerate(keep)}
    sol = None if master.failed else lp_exact.check_snapped(
        lp, lp_exact.snap_all([xf[j] for j in keep]), lp_exact.snap_all(yf))
    pivots = 0
    proof = "snapped float values"
    if sol is None:
        proof = "exact basis"
        sol, pivots = lp_exact.prove(
            lp, lp_exact.Basis(cols={position[j] for j in cols}, rows=set(rows)))
    res = LPResult(lp, sol.objective, {lp.var_names[p]: v for p, v in enumerate(sol.x)},
                   {lp.row_names[i]: v for i, v in enumerate(sol.y)},
                   {"rows": lp.num_rows, "columns": lp.num_variables, "repair_pivots": pivots,
                    "proof": proof, "exact_seconds": time.perf_counter() - t0})
    y = [Fraction(res.y.get(f"cap{i}", 0)) for i in range(len(sup.cap))]
    weighted = [(nets[j], sol.x[position[j]]) for j in keep if sol.x[position[j]]]
    return res, y, weighted, set(keep)


class _FloatMaster:
    """The restricted master max Σ w, Σ w β^(m) ≤ β in floats, re-solved as columns arrive.

    OR-Tools' GLOP (dual simplex) through ``pywraplp``: it runs in the same
    process as OR-Tools' max-flow, which the highspy wheel cannot (both ship
    a ``libhighs.so.1``). Nothing it returns is trusted: its duals only choose
    columns, and the answer comes from the exact master.
    """

    def __init__(self, sup: _Support) -> None:
        self.s = float_solver("GLOP")  # a time limit: past it, the exact master goes on
        self.rows = [self.s.Constraint(-self.s.infinity(), float(c)) for c in sup.cap]
        self.obj = self.s.Objective()
        self.obj.SetMaximization()
        self.vars: list[Any] = []
        self.failed = not floats_can_solve(sup.cap)  # capacities too far apart for floats

    @property
    def size(self) -> int:
        return len(self.vars)

    def basis(self) -> tuple[set[int], set[int], list[float], list[float]]:
        """(basic columns, rows with a basic slack, column values, row duals) of the last solve."""
        basic = self.s.BASIC
        cols = {j for j, v in enumerate(self.vars) if v.basis_status() == basic}
        rows = {i for i, r in enumerate(self.rows) if r.basis_status() == basic}
        return (cols, rows, [v.solution_value() for v in self.vars],
                [r.dual_value() for r in self.rows])

    def add(self, col: dict[int, int]) -> None:
        var = self.s.NumVar(0.0, self.s.infinity(), "")
        self.vars.append(var)
        for i, a in col.items():
            self.rows[i].SetCoefficient(var, float(a))
        self.obj.SetCoefficient(var, 1.0)

    def solve(self) -> tuple[float, list[float]] | None:
        """(value, duals), or None when GLOP gives up (capacities over a huge range can
        defeat floats): from then on the exact master works alone (``failed``)."""
        if self.failed:  # once failed, never again: a hang or a wrong basis each round
            return None
        status = self.s.Solve()
        self.failed = status != self.s.OPTIMAL
        if self.failed:
            return None
        return self.obj.Value(), [max(0.0, r.dual_value()) for r in self.rows]


def _warm_start(sup: _Support, passes: int, eps: float = 0.5,
                warm: Progress | None = None) -> list[MacBcNetwork]:
    """A pool of good first columns by multiplicative weights (Garg & Könemann).

    Lengths start at 1/β_e; each step takes the cheapest MAC-BC network of one
    root (roots in turn) and multiplies the length of every link it uses by
    (1 + ε·uses/β_e · β_min), so later networks avoid crowded links. Without it
    the master starts from near-identical columns and column generation
    stalls for dozens of degenerate rounds. Only a heuristic: the LP decides.
    """
    beta_min = float(min(sup.cap))
    length = [1 / float(c) for c in sup.cap]
    pos = {e: i for i, e in enumerate(sup.links)}
    out = []
    steps = max(1, passes) * sup.n
    for step in range(steps):
        if warm:
            warm(step, steps)
        r = step % sup.n
        got = sup.cheapest(length, r)
        assert got is not None
        net = sup.network(r, got[1], got[2])
        out.append(net)
        if passes:
            for e, uses in net.usage().items():
                i = pos[e]
                length[i] *= 1 + eps * uses * beta_min / float(sup.cap[i])
    return out


def mac_bc_lp(t: Topology, *, progress: Progress | None = None, passes: int = 8,
              warm: Progress | None = None) -> MacBcLP:
    """R_LP of LP (16) by column generation, exact, with primal and dual certificates.

    ``passes``: rounds of the multiplicative-weights warm start over all roots
    (see :func:`_warm_start`); 0 starts from one column per root. Each round
    generates columns in floats (:func:`_float_rounds`), solves the master
    exactly and prices every root exactly (:func:`_price_exactly`); the result
    is returned once exact pricing finds no column to add. ``progress(‰, 1000)``: the
    share of the gap closed after each float round; ``warm(done, total)``: the warm
    start's pricings.
    """
    started = time.perf_counter()
    sup = _Support(t)
    stats: dict[str, Any] = {"corollary_2_1": fraction_str(sum(sup.cap, Fraction(0))
                                                           / (2 * (sup.n - 1)))}
    first = sup.cheapest([1 / float(c) for c in sup.cap], 0)
    if first is None:  # not strongly connected: no MAC-BC network exists, R_LP = 0
        stats.update(columns=0, rounds=0, exact_rounds=0, seconds=0.0, exact_seconds=0.0)
        return MacBcLP(Fraction(0), [], {e: Fraction(0) for e in sup.links}, stats)
    pool = _Pool(sup)
    for net in _warm_start(sup, passes, warm=warm):
        pool.add(net)
    rounds = exact_rounds = 0
    exact_seconds = 0.0
    forced: set[int] = set()
    while True:
        rounds = _float_rounds(pool, rounds, progress)
        exact_rounds += 1
        t0 = time.perf_counter()
        res, y, columns, held = _exact_master(sup, pool.nets, pool.master, frozenset(forced))
        cheaper = _price_exactly(pool, y)
        exact_seconds += time.perf_counter() - t0
        if not cheaper:
            break
        if cheaper & held:  # an exact optimum's y prices its own columns at >= 1
            raise RuntimeError("internal: the exact MAC-BC master is not dual feasible "
                               "on its own columns")
        forced |= cheaper  # new or left out of the exact master: in it next round
    value = Fraction(res.objective)
    stats.update(columns=len(pool.nets), rounds=rounds, exact_rounds=exact_rounds,
                 seconds=time.perf_counter() - started, exact_seconds=exact_seconds,
                 lp=dict(res.stats))
    return MacBcLP(value, columns, dict(zip(sup.links, y)), stats)


class _Pool:
    """The columns generated so far, each MAC-BC network once, in generation order, and
    the float master that holds them in the same order."""

    def __init__(self, sup: _Support) -> None:
        self.sup = sup
        self.nets: list[MacBcNetwork] = []
        self.seen: dict[MacBcNetwork, int] = {}  # network -> its index in nets
        self.master = _FloatMaster(sup)

    def add(self, net: MacBcNetwork) -> bool:
        """Add a network unless it is already a column; whether it was added."""
        if net in self.seen:
            return False
        self.seen[net] = len(self.nets)
        self.nets.append(net)
        self.master.add(_column(self.sup, net))
        return True


def _float_rounds(pool: _Pool, rounds: int, progress: Progress | None) -> int:
    """Float column generation until floats see nothing to add, the master's value meets
    the Lagrangian bound Σβy / min_m cost_m(y) (valid for every y ≥ 0), GLOP gives up, or
    ``MAX_ROUNDS`` rounds in all; the master is left solved. Returns the rounds so far."""
    sup, master = pool.sup, pool.master
    best_bound = float("inf")
    while rounds < MAX_ROUNDS:
        rounds += 1
        solved = master.solve()
        if solved is None:
            break
        obj, yf = solved
        priced = [sup.cheapest(yf, r) for r in range(sup.n)]
        least = min(p[0] for p in priced if p is not None)
        if least > 0:
            best_bound = min(best_bound, sum(float(c) * v for c, v in zip(sup.cap, yf))
                             / least)
        added = 0
        for r, got in enumerate(priced):
            assert got is not None
            if got[0] < 1 - FLOAT_TOL and pool.add(sup.network(r, got[1], got[2])):
                added += 1
        if progress and best_bound < float("inf"):
            progress(int(1000 * min(obj / best_bound, 1.0)), 1000)
        if not added or obj >= best_bound * (1 - FLOAT_TOL):
            if added:
                master.solve()
            break
    return rounds


def _price_exactly(pool: _Pool, y: list[Fraction]) -> set[int]:
    """For every root, its cheapest MAC-BC network under the exact duals ``y`` when it
    costs less than 1 (in integers: y scaled by the lcm of its denominators), added to
    the pool if new: the pool indices of those networks. None proves the master's
    optimum is R_LP."""
    den = math.lcm(*(v.denominator for v in y))
    yi = [int(v * den) for v in y]
    cheaper: set[int] = set()
    for r in range(pool.sup.n):
        got = pool.sup.cheapest(yi, r)
        assert got is not None
        if got[0] < den:
            net = pool.sup.network(r, got[1], got[2])
            pool.add(net)
            cheaper.add(pool.seen[net])
    return cheaper


# --------------------------------------------------------------------------- #
# full enumeration (small K): the cross-check of column generation
# --------------------------------------------------------------------------- #
def arborescences(t: Topology, root: Node, direction: str) -> list[tuple[Link, ...]]:
    """Every spanning out- (``"out"``) or in- (``"in"``) arborescence of ``root``.

    Brute force over one parent per non-root node: for K ≤ 5 only.
    """
    if t.switch_nodes:
        raise TopologyError("arborescence enumeration is for networks without switches")
    nodes = list(t.compute_nodes)
    if len(nodes) > 6:
        raise TopologyError("arborescence enumeration is exponential: at most 6 nodes")
    others = [v for v in nodes if v != root]
    choices: list[list[Link]] = []
    for v in others:
        if direction == "out":
            choices.append([(u, v) for u in nodes if (u, v) in t.capacity])
        else:
            choices.append([(v, u) for u in nodes if (v, u) in t.capacity])
    found = []
    for combo in itertools.product(*choices):
        parent = {}
        for e in combo:
            child, par = (e[1], e[0]) if direction == "out" else (e[0], e[1])
            parent[child] = par
        ok = True
        for v in others:
            x, steps = v, 0
            while x != root and steps <= len(nodes):
                x, steps = parent[x], steps + 1
            if x != root:
                ok = False
                break
        if ok:
            found.append(tuple(sorted(combo, key=lambda e: (t.index[e[0]], t.index[e[1]]))))
    return found


def all_mac_bc_networks(t: Topology) -> list[MacBcNetwork]:
    """Every rooted MAC-BC network of the topology (K^(2K−3) on the complete graph)."""
    out: list[MacBcNetwork] = []
    for r in t.compute_nodes:
        ins = arborescences(t, r, "in")
        outs = arborescences(t, r, "out")
        out.extend(MacBcNetwork(r, a, b) for a in ins for b in outs)
    return out


def mac_bc_lp_enumerated(t: Topology) -> Fraction:
    """R_LP from the LP with every MAC-BC network as a column (small K only)."""
    sup = _Support(t)
    nets = all_mac_bc_networks(t)
    if not nets:
        return Fraction(0)
    master = _FloatMaster(sup)
    for net in nets:
        master.add(_column(sup, net))
    master.solve()
    res, _, _, _ = _exact_master(sup, nets, master)
    return Fraction(res.objective)
