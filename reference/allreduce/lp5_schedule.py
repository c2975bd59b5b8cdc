"""An allreduce schedule that reaches ForestColl's LP (5) exactly (Zhao et al. 2026, App. G).

From the exact optimum of LP (5) (:mod:`.lp5`): with D the least
common multiple of every denominator in the solution, the logical graph gets
integer capacities D·c^BC and D·c^RE and root v a supply D·x_v. LP (5)'s flow
constraints say that F(s, t) ≥ D·Σ x in both graphs, which is exactly the
condition of the batched out-tree packing of Zhao & Krishnamurthy 2023, Thm 12
(:func:`collcert.reference.forestcoll.pack_trees`): D·x_v spanning out-trees from
every v in D·c^BC, and, on the reversed graph, D·x_v spanning in-trees into v in
D·c^RE.
Every logical arc α→β is then mapped to walks in the topology: without
switches it is the link itself; with switches the LP's flow of source α is
split into walks through switches (one per unit), and a batch of trees whose
units of an arc lie on different walks is split into several trees.

App. G rounds a floating-point solution to multiples of 1/k and only
approaches the optimum as k grows; with the exact solution the trees reach
it: the schedule's time is M / Σ x_v exactly, which ``collcert audit``
recomputes from the trees alone.

The schedule (docs/schedule-format.md) is an allreduce with weights x_v (the
share of the data reduced to and broadcast from v), a reduce-scatter phase
of in-trees and an allgather phase of out-trees, and ``"overlap": true``: the
two phases run at the same time on different chunks of the data (pipelined),
so each link carries the sum of their loads, which LP (5) keeps within its
capacity (c^RE + c^BC ≤ b).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..forestcoll import estimate_general, pack_trees, remove_switches
from ..model import ScheduleError, Topology, check_budget, fraction_str, show
from ..symmetry import find_generators
from .lp5 import ForestCollCutLP, ForestCollLP, forestcoll_lp, logical_arcs, name
from .lp5_cuts import forestcoll_lp_cuts
from .lp5_flows import MAX_LP_NONZEROS, forestcoll_lp_flows, lp5_size, symmetry_ties
from .lp5_orbits import orbit_trees

Node = Hashable
Link = tuple[Node, Node]
Walk = tuple[Node, ...]
Notice = Callable[[str, float], None]
FORMAT = "collcert-schedule/1"
COMPACT_EDGES = 200_000
"""From this many tree edges on, documents list each phase's distinct edges once
(``walks``): dgx_a100:128's LP (5) schedule has 6 million tree edges over 30 thousand
walks."""


@dataclass
class LPTree:
    """``multiplicity`` units (of 1/D) of one tree: data edges with their walks in G."""

    root: Node
    multiplicity: int
    direction: str
    edges: list[tuple[Node, Node, Walk]]


@dataclass
class LPSchedule:
    """The reduce and broadcast trees realising LP (5), with the exact time they take."""

    topology: Topology
    lp: ForestCollLP
    reduce_trees: list[LPTree]
    broadcast_trees: list[LPTree]
    scale: int
    timings: dict[str, float] = field(default_factory=dict)
    proof: ForestCollLP | None = None
    """The certified LP (5) optimum the schedule states (default: ``lp`` itself; the cut
    form when ``lp`` is App. G's form held to symmetric solutions)."""
    orbits: str = ""
    """How the trees were built by orbits (:mod:`.lp5_orbits`), or "" (general path)."""

    collective = "allreduce"

    @property
    def algbw(self) -> Fraction:
        return self.lp.value

    @property
    def time_per_unit(self) -> Fraction:
        return 1 / self.lp.value

    @property
    def trees(self) -> list[LPTree]:
        return self.reduce_trees + self.broadcast_trees

    def _k(self) -> int:
        """Common k: every root's multiplicities, rescaled to sum to k, stay integers."""
        common: dict[Node, int] = {}
        for tr in self.trees:
            common[tr.root] = math.gcd(common.get(tr.root, 0), tr.multiplicity)
        k = 1
        for v, x in self.lp.x.items():
            n = int(x * self.scale)
            if n:
                g = math.gcd(n, common.get(v, 0))
                k = k * (n // g) // math.gcd(k, n // g)
        return k

    @property
    def tree_edges(self) -> int:
        """Tree edges of both phases, written out."""
        return sum(len(tr.edges) for tr in self.trees)

    def to_json(self, *, certificates: bool = True, compact: bool | None = None,
                ) -> dict[str, Any]:
        """The ``collcert-schedule/1`` document; ``compact``: each phase's distinct edges
        once in ``walks`` and the trees' edges as indices (docs/schedule-format.md),
        by default from :data:`COMPACT_EDGES` tree edges on."""
        t = self.topology
        k = self._k()
        supply = {v: int(x * self.scale) for v, x in self.lp.x.items()}
        if compact is None:
            compact = self.tree_edges >= COMPACT_EDGES

        def phase_json(collective: str, trees: list[LPTree]) -> dict[str, Any]:
            walks: dict[tuple[Node, Node, Walk], int] = {}

            def edges(tr: LPTree) -> list[Any]:
                if not compact:
                    return [{"src": u, "dst": v, "path": list(w)} for u, v, w in tr.edges]
                return [walks.setdefault(e, len(walks)) for e in tr.edges]

            out = {"collective": collective, "k": k, "trees": [
                {"root": tr.root, "multiplicity": tr.multiplicity * k // supply[tr.root],
                 "direction": tr.direction, "edges": edges(tr)} for tr in trees]}
            if compact:
                out["walks"] = [{"src": u, "dst": v, "path": list(w)} for u, v, w in walks]
            return out

        out: dict[str, Any] = {
            "format": FORMAT,
            "collective": "allreduce",
            "topology": t.content_hash(),
            "topology_name": t.name,
            "unit": t.unit,
            "compute_nodes": list(t.compute_nodes),
            "root": None,
            "weights": {str(v): fraction_str(x) for v, x in self.lp.x.items()},
            "overlap": True,
            "phases": [phase_json("reduce-scatter", self.reduce_trees),
                       phase_json("allgather", self.broadcast_trees)],
            "claimed": {"algbw": fraction_str(self.algbw),
                        "time_per_unit": fraction_str(self.time_per_unit)},
            "generator": {"tool": "collcert", "method": "lp",
                          "options": {"scale": self.scale},
                          **({"orbits": self.orbits} if self.orbits else {}),
                          "seconds": {k2: round(v, 4) for k2, v in self.timings.items()}},
        }
        if certificates:  # a solution held symmetric is proven by the cut form's certificate
            out["certificates"] = {"forestcoll_lp": (self.proof or self.lp).certificate()}
        return out

    def summary(self) -> str:
        t = self.topology
        roots = sum(1 for x in self.lp.x.values() if x)
        return (f"allreduce by ForestColl's LP (5) on {t.name or 'topology'} ({t.num_compute} "
                f"compute nodes, {len(t.switch_nodes)} switches): algbw {show(self.algbw)} "
                f"{t.unit}, time per unit {show(self.time_per_unit)}; {len(self.reduce_trees)} "
                f"reduce trees and {len(self.broadcast_trees)} broadcast trees over {roots} "
                f"roots, running at the same time (pipelined); equals the exact LP (5) optimum; "
                + (f"built by orbits ({self.orbits}); " if self.orbits else "")
                + f"took {sum(self.timings.values()):.2f} s.")


def _walks(t: Topology, lp: ForestCollLP, scale: int) -> dict[Link, list[list[Any]]]:
    """For every logical arc, [walk, units] pairs whose units sum to scale·b'."""
    arcs = logical_arcs(t)
    if not t.switch_nodes:
        return {e: [[(e[0], e[1]), int(t.capacity[e] * scale)]] for e in arcs}
    pools: dict[Link, list[list[Any]]] = {e: [] for e in arcs}
    for a in t.compute_nodes:
        flow: dict[Node, dict[Node, int]] = {}
        for (u, v) in t.capacity:
            amount = lp.primal.get(name("g", a, u, v), Fraction(0)) * scale
            if amount:
                if amount.denominator != 1:
                    raise RuntimeError("internal: the scale misses a flow denominator")
                flow.setdefault(u, {})[v] = int(amount)
        while flow.get(a):
            walk = [a]
            on = {a: 0}
            while True:
                u = walk[-1]
                v = next(iter(flow[u]))
                if v in on:  # a cycle through switches: cancel it and go on
                    cyc = walk[on[v]:] + [v]
                    least = min(flow[p][q] for p, q in zip(cyc, cyc[1:]))
                    for p, q in zip(cyc, cyc[1:]):
                        _take(flow, p, q, least)
                    for x in walk[on[v] + 1:]:
                        del on[x]
                    walk = walk[:on[v] + 1]
                    if not flow.get(v):
                        break
                    continue
                walk.append(v)
                on[v] = len(walk) - 1
                if t.is_compute(v):
                    least = min(flow[p][q] for p, q in zip(walk, walk[1:]))
                    for p, q in zip(walk, walk[1:]):
                        _take(flow, p, q, least)
                    pools[(a, v)].append([tuple(walk), least])
                    break
    return pools


def _scale(sol: ForestCollLP) -> int:
    """The least common denominator of x, c and the routing flows (max-flow integrality
    gives integral flows, so they need not be integral)."""
    scale = 1
    values = [*sol.x.values(), *sol.c_bc.values(), *sol.c_re.values()]
    values += [v for k, v in sol.primal.items() if k.startswith('["g"')]
    for val in values:
        scale = math.lcm(scale, val.denominator)
    return scale


def _balanced(t: Topology, sol: ForestCollLP) -> bool:
    """Whether c^BC and c^RE (per link) balance at every compute node."""
    net: dict[tuple[str, Node], Fraction] = {}
    for side, caps in (("bc", sol.c_bc), ("re", sol.c_re)):
        for (u, v), c in caps.items():
            net[(side, u)] = net.get((side, u), Fraction(0)) - c
            net[(side, v)] = net.get((side, v), Fraction(0)) + c
    return not any(net.get((s, v)) for s in ("bc", "re") for v in t.compute_nodes)


def _check_split_budget(t: Topology, bc: dict[Link, int], re_rev: dict[Link, int],
                        supply: dict[Node, int], notice: Notice | None) -> None:
    """The general path's estimate for both sides (``forestcoll.estimate_general``: switch
    removal keeps a flow per compute node), told to ``notice`` and refused (exit 2)
    beyond the memory budget or ``COLLCERT_MAX_SECONDS``."""
    sides = [estimate_general(t.compute_nodes, t.switch_nodes, caps, supply)
             for caps in (bc, re_rev)]
    seconds = sum(e.seconds for e in sides)
    memory = max(e.memory_bytes for e in sides) + min(e.memory_bytes for e in sides) // 2
    if notice is not None:
        notice(f"LP (5) schedule by the general algorithms (no symmetry used), broadcast "
               f"side: {sides[0].describe()}; the reduce side about as much", seconds)
    check_budget(f"the LP (5) schedule of {t.name or 'the topology'}", memory,
                 f"switch removal and tree packing by the general algorithms, both sides "
                 f"({t.num_compute} compute nodes, about {sides[0].maxflows + sides[1].maxflows}"
                 " packing max-flows)", seconds,
                 action="try a smaller or more symmetric topology, or --method forestcoll")


def _by_splitting(t: Topology, caps: dict[Link, int], supply: dict[Node, int], engine: str,
                  *, reverse: bool) -> tuple[dict[Link, int], dict[Link, list[list[Any]]]]:
    """Switches split off the per-link capacities of the cut form (balanced at switches:
    Zhao & Krishnamurthy 2023, Thm 8; ``reverse``: the reduce side, on reversed links):
    the switch-free capacities to pack trees in, and every logical arc's walks in G."""
    try:
        res = remove_switches(t.compute_nodes, t.switch_nodes, caps, supply, engine=engine)
    except ScheduleError as exc:
        raise ScheduleError(
            f"no LP (5) schedule here: App. G's flow form has about {lp5_size(t)} constraint "
            f"entries (more than {MAX_LP_NONZEROS}), and the cut form's solution cannot be "
            f"split off at the switches ({exc}); use --method forestcoll (RS+AG) or --method "
            "rsag-weighted") from None
    pools: dict[Link, list[list[Any]]] = {}
    for (a, b), paths in res.paths.items():
        key = (b, a) if reverse else (a, b)
        pools[key] = [[tuple(reversed(w)) if reverse else tuple(w), units]
                      for w, units in paths.items()]
    return dict(res.capacity), pools


def _take(flow: dict[Node, dict[Node, int]], p: Node, q: Node, amount: int) -> None:
    flow[p][q] -= amount
    if not flow[p][q]:
        del flow[p][q]
        if not flow[p]:
            del flow[p]


def _route(batches: list[tuple[Node, int, list[Link]]], direction: str,
           pools: dict[Link, list[list[Any]]]) -> list[LPTree]:
    """Give every tree edge walks from the pools, splitting batches where walks change."""
    out: list[LPTree] = []
    for root, mult, edges in batches:
        parts: list[tuple[int, list[tuple[Node, Node, Walk]]]] = [(mult, [])]
        for e in edges:
            pool = pools[e]
            split = []
            for m, done in parts:
                while m:
                    if not pool:
                        raise RuntimeError(f"internal: no walk left for logical arc {e}")
                    walk, units = pool[-1]
                    use = min(units, m)
                    split.append((use, done + [(e[0], e[1], walk)]))
                    m -= use
                    if use == units:
                        pool.pop()
                    else:
                        pool[-1][1] = units - use
            parts = split
        out.extend(LPTree(root, m, direction, done) for m, done in parts)
    return out


def _default_lp(t: Topology, notice: Notice | None = None,
                progress: Callable[[int, int], None] | None = None,
                ) -> tuple[ForestCollLP, ForestCollLP]:
    """(the LP (5) solution the trees realise, the one whose certificate they carry).

    The cut form's solution, fixed by the automorphisms (symmetric shares: few MSCCL
    chunks), without switches when the machine has symmetry, and whenever App. G's
    flow form is too large; else the flow form (its logical arcs carry the walks
    through switches), held to symmetric solutions when the machine has symmetry."""
    size = lp5_size(t)
    cut = forestcoll_lp(t, method="cuts", notice=notice, progress=progress)
    symmetric = cut.stats["node_orbits"] < t.num_compute
    if size > MAX_LP_NONZEROS or (symmetric and not t.switch_nodes):
        return cut, cut  # with switches: split off at the switches (_by_splitting)
    if symmetric:  # App. G's form held to solutions fixed by the same automorphisms
        gens = find_generators(t)
        sol = forestcoll_lp_flows(t, ties=symmetry_ties(t, gens))
        if sol.value == cut.value:  # averaging over the group keeps the optimum
            return sol, cut
    sol = forestcoll_lp(t, method="flows")
    return sol, sol


def lp_schedule(topology: Topology, *, engine: str = "auto",
                lp: ForestCollLP | None = None, notice: Notice | None = None,
                progress: Callable[[str, int, int], None] | None = None) -> LPSchedule:
    """Reduce trees into and broadcast trees out of every root, reaching LP (5) exactly.

    ``lp``: the LP (5) solution to realise (default: :func:`_default_lp`). A cut-form
    solution on a topology with switches is solved again in the flow form when that
    fits, else its per-link capacities are split off at the switches (they balance
    there), which needs them balanced at compute nodes too (symmetric machines such as
    the DGX boxes); otherwise edge splitting refuses. Split off, the trees are built
    by the orbits of the machine's box symmetry where it keeps the solution
    (:mod:`.lp5_orbits`), else by the general algorithms, whose estimate is told to
    ``notice`` first and refused beyond the limits. ``notice(text, seconds)``: what the
    next long step is and what it will cost, before it starts; ``progress(stage, done,
    total)``: the LP's rounds and the stages of the build."""
    t0 = time.perf_counter()
    lp_progress = None if progress is None else (  # total 0: rounds, their number unknown
        lambda rounds, cuts: progress(f"LP (5): cut generation, {cuts} cuts", rounds, 0))
    sol, proof = (lp, lp) if lp else _default_lp(topology, notice, lp_progress)
    split = isinstance(sol, ForestCollCutLP) and bool(topology.switch_nodes)
    if split and lp5_size(topology) <= MAX_LP_NONZEROS:
        # the cut form has c per link; the walks through switches come from App. G's form
        sol = forestcoll_lp(topology, method="flows",
                            uniform=isinstance(sol, ForestCollCutLP)
                            and sol.parts.get("shares") == "uniform")
        split = False
    if sol.value == 0:
        raise ScheduleError("the allreduce rate of this topology is 0 (some compute node cannot "
                            "reach another): there is no schedule to build")
    t1 = time.perf_counter()
    scale = _scale(sol)
    supply = {v: int(x * scale) for v, x in sol.x.items()}
    bc = {e: int(c * scale) for e, c in sol.c_bc.items() if c}
    re_rev = {(v, u): int(c * scale) for (u, v), c in sol.c_re.items() if c}
    nodes = list(topology.compute_nodes)
    if split and not _balanced(topology, sol):
        # the same optimum with c^RE, c^BC balanced at compute nodes too, if there is one
        even = forestcoll_lp_cuts(topology, balance_compute=True)
        if even.value == sol.value:
            sol, scale = even, _scale(even)
            supply = {v: int(x * scale) for v, x in sol.x.items()}
            bc = {e: int(c * scale) for e, c in sol.c_bc.items() if c}
            re_rev = {(v, u): int(c * scale) for (u, v), c in sol.c_re.items() if c}
    if split:
        built = orbit_trees(topology, bc, re_rev, supply, scale, engine, progress)
        if built is not None:
            reduce_in, bcast_out, how = built
            t2 = time.perf_counter()
            return LPSchedule(topology, sol, [LPTree(*x) for x in reduce_in],
                              [LPTree(*x) for x in bcast_out], scale,
                              {"lp": t1 - t0, "orbits": t2 - t1}, proof, how)
        _check_split_budget(topology, bc, re_rev, supply, notice)
        bc, pools_out = _by_splitting(topology, bc, supply, engine, reverse=False)
        re_rev, pools_in = _by_splitting(topology, re_rev, supply, engine, reverse=True)
    else:
        pools_out = pools_in = _walks(topology, sol, scale)
    out_pack = pack_trees(nodes, bc, supply, engine=engine)
    in_pack = pack_trees(nodes, re_rev, supply, engine=engine)
    t2 = time.perf_counter()
    bcast = _route([(b.root, b.multiplicity, list(b.edges)) for b in out_pack.batches],
                   "out", pools_out)
    reduce = _route([(b.root, b.multiplicity, [(y, x) for x, y in b.edges])
                     for b in in_pack.batches], "in", pools_in)
    t3 = time.perf_counter()
    return LPSchedule(topology, sol, reduce, bcast, scale,
                      {"lp": t1 - t0, "packing": t2 - t1, "routing": t3 - t2}, proof)
