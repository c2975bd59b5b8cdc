"""The allgather / reduce-scatter optimum and the fixed-k optimum by max-flows.

The Dinkelbach iteration over G⃗_x (Zhao & Krishnamurthy 2023, eq. (1), Thm 1, Prop 3)
and the least U for a fixed k (Zhao & Krishnamurthy 2023, §2.4 Thm 13-15, Zhao et al.
2026, Alg 5), both described in the docstring of :mod:`.optima`, with the auxiliary
network (G plus a super source) they solve and the cut helpers that
:mod:`.optimum_allreduce` uses too. :func:`.optima.optimum` checks the request
and calls them.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from fractions import Fraction

from ..model import Topology, TopologyError
from ..solvers import FlowNetwork
from ..symmetry import NearSymmetry, Symmetry, certificate_generators, orbits
from .optimum_result import FlowWitness, Node, Optimum, Progress


# --------------------------------------------------------------------------- #
# auxiliary networks
# --------------------------------------------------------------------------- #
class _Aux:
    """G plus a super source s (index n) with one arc s→u per compute node.

    Arc order: the topology's links, then the source arcs in compute order.
    """

    def __init__(self, t: Topology, engine: str) -> None:
        self.t = t
        n = len(t.nodes)
        self.s = n
        self.links = list(t.int_capacity)
        self.base = [t.int_capacity[e] for e in self.links]
        tails = [t.index[u] for u, _ in self.links]
        heads = [t.index[v] for _, v in self.links]
        self.src_arcs_from = len(tails)
        tails += [n] * t.num_compute
        heads += list(range(t.num_compute))
        self.net = FlowNetwork(n + 1, tails, heads, [0] * len(tails), engine=engine)
        self.arc_names: list[tuple[Node | None, Node | None]] = list(self.links) + [
            (None, c) for c in t.compute_nodes
        ]

    def set_caps(self, link_caps: Sequence[int], src_caps: Sequence[int]) -> None:
        self.net.set_all_capacities([*link_caps, *src_caps])

    def cut_of(self, side: frozenset[int]) -> frozenset[Node]:
        nodes = self.t.nodes
        return frozenset(nodes[i] for i in side if i != self.s)


def out_capacity(t: Topology, s: frozenset[Node]) -> int:
    return sum(c for (u, v), c in t.int_capacity.items() if u in s and v not in s)


def _ratio(t: Topology, s: frozenset[Node]) -> Fraction:
    """|S ∩ V_c| / B⁺(S) in integer units (B⁺ > 0 for any proper S: G is connected)."""
    inside = sum(1 for v in s if t.is_compute(v))
    out = out_capacity(t, s)
    if out == 0:
        raise TopologyError("internal: a cut with no outgoing capacity (topology not connected)")
    return Fraction(inside, out)


def check_engine_cut(value: int, cut_value: int) -> None:
    if value != cut_value:
        raise RuntimeError(
            f"max-flow engine returned flow value {value} but a cut of capacity {cut_value}; "
            "the engine is wrong (report this)"
        )


# --------------------------------------------------------------------------- #
# allgather
# --------------------------------------------------------------------------- #
def solve_allgather(
    t: Topology, engine: str, progress: Progress | None, weights: Sequence[int] | None = None,
    sym: Symmetry | NearSymmetry | None = None,
) -> Optimum:
    """1/x* by the Dinkelbach iteration described in the docstring of :mod:`.optima`; with ``sym``
    (a verified automorphism group keeping the weights) one sink per orbit."""
    n_c = t.num_compute
    w = [1] * n_c if weights is None else list(weights)
    total_w = sum(w)
    aux = _Aux(t, engine)
    in_int = {v: 0 for v in t.nodes}
    for (_, v), c in t.int_capacity.items():
        in_int[v] += c
    # start: the best single-node cut V − {v}: ratio (W − w_v) / B⁻(v)
    best_cut: frozenset[Node] | None = None
    ratio = Fraction(-1)
    for j, v in enumerate(t.compute_nodes):
        r = Fraction(total_w - w[j], in_int[v])
        if r > ratio:
            ratio, best_cut = r, frozenset(set(t.nodes) - {v})
    assert best_cut is not None
    flows: list[FlowWitness] = []
    solves = 0
    caps_at: Fraction | None = None
    sinks = range(n_c) if sym is None else sym.reps  # compute nodes come first: j = index
    order = sorted(sinks, key=lambda j: in_int[t.compute_nodes[j]])
    for done, j in enumerate(order):
        v = t.compute_nodes[j]
        while True:
            # x = 1/ratio = q/p: scale every capacity by p so all are integers
            p, q = ratio.numerator, ratio.denominator
            if caps_at != ratio:  # capacities change only when the ratio moves
                aux.set_caps([p * b for b in aux.base], [q * wj for wj in w])
                caps_at = ratio
            res = aux.net.solve(aux.s, t.index[v])
            solves += 1
            need = q * total_w
            if res.value >= need:
                flows.append(FlowWitness(None, v, p * t.scale, aux.arc_names, res.flow,
                                         res.value, {"x": Fraction(q, p * t.scale)}))
                break
            s_nodes = aux.cut_of(res.source_side)
            out = out_capacity(t, s_nodes)
            inside = sum(w[i] for i, c in enumerate(t.compute_nodes) if c in s_nodes)
            check_engine_cut(res.value, p * out + q * (total_w - inside))
            new = Fraction(inside, out)
            if new <= ratio:
                raise RuntimeError("internal: a violated test did not improve the cut ratio")
            ratio, best_cut = new, s_nodes
        if progress:
            progress(done + 1, len(order))
    inv_x_real = ratio * t.scale  # 1/x* in real units (per unit of weight)
    opt = Optimum("allgather", t, algbw=Fraction(total_w) / inv_x_real, cut=best_cut,
                  inv_x=inv_x_real, maxflows=solves, flows=flows)
    _mark_orbits(opt, sym)
    if weights is None:
        opt.k, opt.U = prop3(inv_x_real, list(t.capacity.values()))
    else:
        opt.extra["weights"] = {c: wj for c, wj in zip(t.compute_nodes, w)}
    return opt


def _mark_orbits(opt: Optimum, sym: Symmetry | NearSymmetry | None) -> None:
    """Record the generators that extend the representatives' flows to every sink."""
    if sym is not None:
        opt.automorphisms = (orbits.generator_pairs(sym, opt.topology.nodes)
                             if isinstance(sym, Symmetry)
                             else certificate_generators(sym, opt.topology.nodes))
        opt.extra["symmetry"] = (sym.describe() if isinstance(sym, NearSymmetry)
                                 else orbits.describe(sym))


def prop3(inv_x: Fraction, caps: list[Fraction]) -> tuple[int, Fraction]:
    """Zhao & Krishnamurthy 2023, Prop 3: the least k with U = k/x* and U·c_e integral for every capacity.

    With rational capacities c_e: U·c_e ∈ Z for all e ⇔ U ∈ (1/g)·Z where g is
    the gcd of the c_e as rationals; U = k·inv_x must be a multiple of 1/g, so
    k = denominator of (inv_x·g).
    """
    g = Fraction(0)
    for c in caps:
        g = Fraction(math.gcd(g.numerator * c.denominator, c.numerator * g.denominator),
                     g.denominator * c.denominator)
    k = (inv_x * g).denominator
    return k, k * inv_x


# --------------------------------------------------------------------------- #
# fixed k
# --------------------------------------------------------------------------- #
def _least_u(caps: list[int], need: int) -> Fraction:
    """Least U with Σ ⌊U·b⌋ ≥ need, exactly, by walking the breakpoints m/b."""
    total = sum(caps)
    if need <= 0:
        return Fraction(0)
    u = Fraction(need, total)
    g = sum((u * b).__floor__() for b in caps)
    heap = [(Fraction((u * b).__floor__() + 1, b), i) for i, b in enumerate(caps)]
    heapq.heapify(heap)
    while g < need:
        u, i = heapq.heappop(heap)
        g += 1
        nxt = Fraction(round(u * caps[i]) + 1, caps[i])
        heapq.heappush(heap, (nxt, i))
        while heap and heap[0][0] == u:
            _, i2 = heapq.heappop(heap)
            g += 1
            heapq.heappush(heap, (Fraction(round(u * caps[i2]) + 1, caps[i2]), i2))
    return u


def solve_fixed_k(t: Topology, k: int, engine: str, progress: Progress | None,
             sym: Symmetry | NearSymmetry | None = None) -> Optimum:
    base = solve_allgather(t, engine, None, sym=sym)
    n_c = t.num_compute
    aux = _Aux(t, engine)

    def cut_need(s_nodes: frozenset[Node]) -> tuple[list[int], int]:
        caps = [c for (u, v), c in t.int_capacity.items() if u in s_nodes and v not in s_nodes]
        return caps, k * sum(1 for v in s_nodes if t.is_compute(v))

    assert base.cut is not None
    witness = base.cut
    u_int = _least_u(*cut_need(witness))  # U in integer units
    flows: list[FlowWitness] = []
    solves = 0
    caps_at: Fraction | None = None
    sinks = t.compute_nodes if sym is None else [t.compute_nodes[j] for j in sym.reps]
    for done, v in enumerate(sinks):
        while True:
            if caps_at != u_int:  # ⌊U·b⌋ in integers, only when U moved
                num, den = u_int.numerator, u_int.denominator
                aux.set_caps([num * b // den for b in aux.base], [k] * n_c)
                caps_at = u_int
            res = aux.net.solve(aux.s, t.index[v])
            solves += 1
            if res.value >= n_c * k:
                flows.append(FlowWitness(None, v, 1, aux.arc_names, res.flow, res.value,
                                         {"U": u_int * t.scale, "k": k}))
                break
            s_nodes = aux.cut_of(res.source_side)
            new = _least_u(*cut_need(s_nodes))
            if new <= u_int:
                raise RuntimeError("internal: a violated fixed-k test did not raise U")
            u_int, witness = new, s_nodes
        if progress:
            progress(done + 1, len(sinks))
    u_real = u_int * t.scale
    # A flow that passed at an earlier, smaller U is still valid at the final U
    # (capacities ⌊U·b⌋ only grow with U): label every flow with the final U.
    for f in flows:
        f.params["U"] = u_real
    assert base.inv_x is not None
    min_cap = min(t.capacity.values())
    thm15_bound = base.inv_x + 1 / (k * min_cap)
    floored = {e: (u_int * b).__floor__() for e, b in t.int_capacity.items()}
    bal = {v: 0 for v in t.nodes}
    for (a, b), c in floored.items():
        bal[a] += c
        bal[b] -= c
    opt = Optimum(
        "allgather", t, algbw=Fraction(n_c * k) / u_real, cut=witness, inv_x=base.inv_x,
        k=k, U=u_real, fixed_k=k, maxflows=solves + base.maxflows, flows=flows,
    )
    _mark_orbits(opt, sym)
    opt.extra.update({
        "optimal_algbw": base.algbw,
        "thm15_bound_U_over_k": thm15_bound,
        "thm15_holds": u_real / k <= thm15_bound,
        "floored_eulerian": all(x == 0 for x in bal.values()),
    })
    return opt
