"""Single-root collectives and the allreduce bounds by max-flows.

Broadcast / reduce: bound (5) of Zhao & Krishnamurthy 2023, App. A, the least F(root, v) (F(v, root)
for reduce) over the compute nodes v. Allreduce: the RS+AG time (from the
allgather optimum of :mod:`.optimum_allgather`), the lower bounds (6) (the
same least flow from one compute node) and (7) of Zhao & Krishnamurthy 2023, App. B, and Thm 19.
:func:`.optima.optimum` checks the request (the root among them) and calls them.
"""

from __future__ import annotations

from fractions import Fraction

from ..model import Topology
from ..solvers import FlowNetwork
from ..symmetry import Symmetry
from .optimum_allgather import check_engine_cut, out_capacity, solve_allgather
from .optimum_result import FlowWitness, Node, Optimum, Progress


# --------------------------------------------------------------------------- #
# single-root collectives and allreduce bounds
# --------------------------------------------------------------------------- #
def _plain_network(
    t: Topology, engine: str, extra_sink: bool = False
) -> tuple[FlowNetwork, list[tuple[Node | None, Node | None]]]:
    links = list(t.int_capacity)
    n = len(t.nodes)
    tails = [t.index[u] for u, _ in links]
    heads = [t.index[v] for _, v in links]
    caps: list[int | None] = [t.int_capacity[e] for e in links]
    names: list[tuple[Node | None, Node | None]] = list(links)
    if extra_sink:  # super sink t = n with infinite arcs from every compute node
        for c in t.compute_nodes:
            tails.append(t.index[c])
            heads.append(n)
            caps.append(0)
            names.append((c, None))
    return FlowNetwork(n + (1 if extra_sink else 0), tails, heads, caps, engine=engine), names


def _min_over_sinks(
    t: Topology, root: Node, reverse: bool, engine: str, progress: Progress | None,
    keep_flows: bool = True,
) -> tuple[int, frozenset[Node], list[FlowWitness], int]:
    """min over v ≠ root of F(root, v) (or F(v, root) when reverse), with witnesses
    (none kept with ``keep_flows=False``)."""
    net, names = _plain_network(t, engine)
    best: tuple[int, frozenset[Node]] | None = None
    flows = []
    others = [v for v in t.compute_nodes if v != root]
    for i, v in enumerate(others):
        src, dst = (v, root) if reverse else (root, v)
        res = net.solve(t.index[src], t.index[dst])
        if keep_flows:
            flows.append(FlowWitness(src, dst, t.scale, names, res.flow, res.value))
        if best is None or res.value < best[0]:
            side = frozenset(t.nodes[j] for j in res.source_side)
            check_engine_cut(res.value, out_capacity(t, side))
            best = (res.value, side)
        if progress:
            progress(i + 1, len(others))
    assert best is not None
    return best[0], best[1], flows, len(others)


def solve_single_root(
    t: Topology, collective: str, root: Node, engine: str, progress: Progress | None
) -> Optimum:
    """Bound (5) of Zhao & Krishnamurthy 2023, App. A from / to ``root`` (a compute node)."""
    lam, cut, flows, solves = _min_over_sinks(t, root, collective == "reduce", engine, progress)
    return Optimum(collective, t, algbw=Fraction(lam, t.scale), cut=cut, root=root,
                   maxflows=solves, flows=flows,
                   extra={"cut_capacity": Fraction(lam, t.scale)})


def solve_allreduce(t: Topology, engine: str, progress: Progress | None,
               sym: Symmetry | None = None) -> Optimum:
    n_c = t.num_compute
    ag = solve_allgather(t, engine, None, sym=sym)
    assert ag.inv_x is not None and ag.cut is not None
    # bound (6): T ≥ M / min_{S ∩ V_c ∉ {∅, V_c}} B⁺(S), via min_v F(v0, v)
    lam, cut6, _, s6 = _min_over_sinks(t, t.compute_nodes[0], False, engine, None,
                                       keep_flows=False)
    time6 = Fraction(t.scale, lam)
    # bound (7): T ≥ (2(N−1)/N) / max_v min_{S ∩ V_c = {v}} B⁺(S)
    net, _ = _plain_network(t, engine, extra_sink=True)
    n = len(t.nodes)
    first_sink_arc = len(t.int_capacity)
    per_node: dict[Node, frozenset[Node]] = {}
    per_value: dict[Node, int] = {}
    sinks7 = list(range(n_c)) if sym is None else sym.reps
    for step, j in enumerate(sinks7):
        v = t.compute_nodes[j]
        for i in range(n_c):
            net.set_capacity(first_sink_arc + i, 0 if i == j else None)
        res = net.solve(t.index[v], n)
        side = frozenset(t.nodes[i] for i in res.source_side if i < n)
        check_engine_cut(res.value, out_capacity(t, side))
        per_node[v], per_value[v] = side, res.value
        if progress:
            progress(step + 1, len(sinks7))
    if sym is not None:  # the cut of σ^g(r) is σ^g(cut of r); certify checks each cut
        for r in sym.reps:
            side_idx = [t.index[u] for u in per_node[t.nodes[r]]]
            cols = [sym.images(i).tolist() for i in [r] + side_idx]  # each node's images
            for g in range(1, sym.order):
                image = t.nodes[cols[0][g]]
                per_node[image] = frozenset(t.nodes[c[g]] for c in cols[1:])
                per_value[image] = per_value[t.nodes[r]]
    v7 = max(t.compute_nodes, key=lambda v: per_value[v])
    time7 = Fraction(2 * (n_c - 1) * t.scale, n_c * per_value[v7])
    rsag_time = 2 * ag.inv_x / n_c
    lower = max(time6, time7)
    # Thm 19. The extracted text of (b) reads "S* ∩ V_c = {v'}", but the theorem's
    # own remark gives |S* ∩ V_c| ≥ N/2, so (b) is V_c − S* = {v'}: then
    # B⁺(S*) = B⁺(V − S*) (Eulerian) is the cut of bound (7) for v'.
    inside = sum(1 for v in ag.cut if t.is_compute(v))
    outside = [v for v in t.compute_nodes if v not in ag.cut]
    thm19 = None
    if 2 * inside == n_c:
        thm19 = "a"
    elif len(outside) == 1 and per_value[outside[0]] == per_value[v7]:
        thm19 = "b"
    opt = Optimum("allreduce", t, algbw=1 / rsag_time, cut=ag.cut, inv_x=ag.inv_x, k=ag.k,
                  U=ag.U, maxflows=ag.maxflows + s6 + len(sinks7), flows=ag.flows,
                  automorphisms=ag.automorphisms)
    if "symmetry" in ag.extra:
        opt.extra["symmetry"] = ag.extra["symmetry"]
    opt.extra.update({
        "rsag_time_per_unit": rsag_time,
        "bound6_time_per_unit": time6,
        "bound6_cut": cut6,
        "bound7_time_per_unit": time7,
        "bound7_node": v7,
        "bound7_cuts": {v: per_node[v] for v in t.compute_nodes},
        "lower_bound_time_per_unit": lower,
        "thm19_condition": thm19,
        "rsag_proven_optimal": rsag_time == lower,
    })
    return opt
