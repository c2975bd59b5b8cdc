"""Certified throughput optima of collectives on a topology.

Seeds 000 (Zhao & Krishnamurthy) and 003 (ForestColl). All arithmetic is
exact: capacities are the topology's integer-scaled ``int_capacity`` and every
reported number is an ``int`` or ``Fraction`` in the topology's bandwidth unit.

Allgather / reduce-scatter (000 eq. (1), Thm 1, Prop 3)
    T ≥ (M/N) · max_{S ⊂ V, S ⊉ V_c} |S ∩ V_c| / B⁺(S) =: (M/N) / x*, tight.
    We find 1/x* by a Newton/Dinkelbach iteration over max-flows in
    G⃗_x (G plus a source s with an arc s→u of capacity x for each compute
    node u): if F(s, v; G⃗_x) < N·x for some v, the source side of a minimum
    cut is a node set S with a strictly larger ratio (proof of 000 Thm 1), and
    x is lowered to 1/ratio(S). A test that passes at x also passes at every
    x' < x (a cut of capacity ≥ x·|S ∩ V_c| has capacity ≥ x'·|S ∩ V_c|), so
    each compute node is tested once at the x current when its turn comes
    and re-tested only after it fails: N max-flows plus one per improvement.
    The certificate is the final cut (a lower bound on the time) plus one
    flow per compute node (an upper bound on every cut ratio), or, on a
    machine of identical boxes, one flow per orbit of the box symmetry and the
    automorphism itself (:mod:`.orbits`), which certify/ verifies.

Fixed k (000 §2.4 Thm 13-15, 003 Alg 5)
    U* = min U with min_v F(s, v; G⃗_k({⌊U b_e⌋})) ≥ N·k. Same scheme: a
    failing test returns a cut S with Σ_{e∈δ⁺(S)} ⌊U b_e⌋ < k |S ∩ V_c|, and U
    jumps to the least U' at which that cut is satisfied (computed exactly
    over the breakpoints m/b_e). The last such cut is the witness that no
    smaller U works.

Broadcast / reduce (000 App. A, eq. (5)); allreduce (000 App. B, eqs. (6),
(7), Thm 19).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .errors import TopologyError
from .exact import fraction_str
from .limits import check_solvable
from .maxflow import FlowNetwork
from .symmetry import Symmetry
from .topology import Topology

COLLECTIVES = ("allgather", "reduce-scatter", "broadcast", "reduce", "allreduce")

Node = Hashable
Progress = Callable[[int, int], None]


@dataclass
class FlowWitness:
    """One flow in an auxiliary network, in exact integer units.

    ``amounts[i]`` is the flow on ``arcs[i]``; the real flow is
    ``amounts[i] / multiplier`` in the topology's unit. Arcs whose tail is
    ``None`` leave the super source s; arcs whose head is ``None`` enter the
    super sink t.
    """

    source: Node | None
    sink: Node | None
    multiplier: int
    arcs: Sequence[tuple[Node | None, Node | None]]
    amounts: Sequence[int]
    value: int
    params: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        amounts = self.amounts
        if hasattr(amounts, "nonzero"):  # a numpy array from the ortools engine
            idx = amounts.nonzero()[0].tolist()
            vals = amounts[idx].tolist()
            flow = [[*self.arcs[i], a] for i, a in zip(idx, vals)]
        else:
            flow = [[u, v, int(a)] for (u, v), a in zip(self.arcs, amounts) if a]
        out: dict[str, Any] = {"source": self.source, "sink": self.sink,
                               "multiplier": self.multiplier, "value": int(self.value),
                               "flow": flow}
        for k, v in self.params.items():
            out[k] = fraction_str(v) if isinstance(v, Fraction | int) else v
        return out


@dataclass
class Optimum:
    """A certified optimum (or, for allreduce, certified bounds).

    ``algbw`` is data size divided by time (nccl-tests' algorithm bandwidth)
    in the topology's unit; ``time_per_unit = 1/algbw`` is the time to move
    one unit of data. Everything is exact.
    """

    collective: str
    topology: Topology
    algbw: Fraction
    cut: frozenset[Node] | None = None
    root: Node | None = None
    inv_x: Fraction | None = None
    k: int | None = None
    U: Fraction | None = None
    fixed_k: int | None = None
    maxflows: int = 0
    flows: list[FlowWitness] = field(default_factory=list, repr=False)
    extra: dict[str, Any] = field(default_factory=dict)
    automorphisms: list[list[list[Node]]] = field(default_factory=list, repr=False)
    """Generators σ as ``[[u, σ(u)], …]`` when the flows cover one compute node per
    orbit (:mod:`.orbits`); certify/ verifies them and computes the orbits itself."""

    @property
    def time_per_unit(self) -> Fraction:
        return 1 / self.algbw

    @property
    def num_compute(self) -> int:
        return self.topology.num_compute

    def summary(self) -> str:
        from .exact import show

        t = self.topology
        unit = t.unit
        head = f"{self.collective}"
        if self.root is not None:
            head += f" from/to root {self.root!r}"
        if self.fixed_k is not None:
            head += f" with fixed k = {self.fixed_k}"
        ns = len(t.switch_nodes)
        lines = [f"{head} on {t.name or 'topology'} ({t.num_compute} compute nodes, "
                 f"{ns} switch{'' if ns == 1 else 'es'}, {len(t.capacity)} links)"]
        lines.append(f"  algbw         = {show(self.algbw)} {unit}")
        lines.append(f"  time per unit = {show(self.time_per_unit)} ({unit})^-1")
        if self.inv_x is not None:
            lines.append(f"  1/x*          = {show(self.inv_x)}")
        if self.k is not None:
            lines.append(f"  k = {self.k}, U = {show(self.U or 0)}")
        if self.cut is not None:
            lines.append(f"  witness cut   = {_fmt_set(self.cut, t)}")
        for key, value in self.extra.items():
            label = _LABELS.get(key, key.replace("_", " "))  # JSON keeps the short keys
            if isinstance(value, Fraction | int) and not isinstance(value, bool):
                lines.append(f"  {label} = {show(value)}")
            elif isinstance(value, bool):
                lines.append(f"  {label}: {'yes' if value else 'no'}")
            elif isinstance(value, str):
                lines.append(f"  {label}: {value}")
            elif value is None and key == "thm19_condition":
                lines.append(f"  {label}: neither (a) nor (b) holds")
        lines.append(f"  max-flows used: {self.maxflows}")
        return "\n".join(lines)

    def to_json(self, *, flows: bool = False) -> dict[str, Any]:
        """A JSON-ready dict; exact numbers as "p/q" strings."""
        t = self.topology
        out: dict[str, Any] = {
            "collective": self.collective,
            "topology": t.content_hash(),
            "unit": t.unit,
            "num_compute": t.num_compute,
            "algbw": fraction_str(self.algbw),
            "time_per_unit": fraction_str(self.time_per_unit),
        }
        if self.root is not None:
            out["root"] = self.root
        if self.fixed_k is not None:
            out["fixed_k"] = self.fixed_k
        if self.inv_x is not None:
            out["inv_x"] = fraction_str(self.inv_x)
        if self.k is not None:
            out["k"] = self.k
        if self.U is not None:
            out["U"] = fraction_str(self.U)
        if self.cut is not None:
            out["cut"] = _ordered(self.cut, t)
        for key, value in self.extra.items():
            out[key] = _jsonable(value, t)
        out["maxflows"] = self.maxflows
        if flows:
            out["flows"] = [f.to_json() for f in self.flows]
        return out

    def certificate(self) -> dict[str, Any]:
        """The witness data for ``collcert.certify`` (JSON-ready)."""
        out = {"format": "collcert-certificate/1", "kind": "optimum",
               **self.to_json(flows=True)}
        if self.automorphisms:
            out["automorphisms"] = self.automorphisms
        return out


# human labels of Optimum.extra in summaries (to_json keeps the keys)
_LABELS = {
    "optimal_algbw": "optimum algbw over all k",
    "thm15_bound_U_over_k": "Thm 15 bound on U/k",
    "thm15_holds": "Thm 15 bound holds",
    "floored_eulerian": "floored graph G({⌊U·c_e⌋}) Eulerian",
    "flows_on": "flows computed on",
    "rsag_time_per_unit": "RS+AG time per unit",
    "bound6_time_per_unit": "bound (6) time per unit",
    "bound7_time_per_unit": "bound (7) time per unit",
    "bound7_node": "bound (7) attained at node",
    "lower_bound_time_per_unit": "proven lower bound, time per unit",
    "thm19_condition": "Thm 19 condition (RS+AG optimal)",
    "rsag_proven_optimal": "RS+AG proven optimal",
    "symmetry": "symmetry",
}


def _ordered(nodes: frozenset[Node], t: Topology) -> list[Node]:
    return sorted(nodes, key=lambda v: t.index[v])


def _fmt_set(nodes: frozenset[Node], t: Topology) -> str:
    items = _ordered(nodes, t)
    text = ", ".join(str(v) for v in items[:12])
    if len(items) > 12:
        text += f", … ({len(items)} nodes)"
    return "{" + text + "}"


def _jsonable(value: Any, t: Topology) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, Fraction | int):
        return fraction_str(value)
    if isinstance(value, frozenset):
        return _ordered(value, t)
    if isinstance(value, dict):
        return {str(k): _jsonable(v, t) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v, t) for v in value]
    return value


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


def _out_int(t: Topology, s: frozenset[Node]) -> int:
    return sum(c for (u, v), c in t.int_capacity.items() if u in s and v not in s)


def _ratio(t: Topology, s: frozenset[Node]) -> Fraction:
    """|S ∩ V_c| / B⁺(S) in integer units (B⁺ > 0 for any proper S: G is connected)."""
    inside = sum(1 for v in s if t.is_compute(v))
    out = _out_int(t, s)
    if out == 0:
        raise TopologyError("internal: a cut with no outgoing capacity (topology not connected)")
    return Fraction(inside, out)


def _check_engine_cut(value: int, cut_value: int) -> None:
    if value != cut_value:
        raise RuntimeError(
            f"max-flow engine returned flow value {value} but a cut of capacity {cut_value}; "
            "the engine is wrong (report this)"
        )


# --------------------------------------------------------------------------- #
# allgather
# --------------------------------------------------------------------------- #
def _allgather(
    t: Topology, engine: str, progress: Progress | None, weights: Sequence[int] | None = None,
    sym: Symmetry | None = None,
) -> Optimum:
    """1/x* by the Dinkelbach iteration described in the module docstring; with ``sym``
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
            out = _out_int(t, s_nodes)
            inside = sum(w[i] for i, c in enumerate(t.compute_nodes) if c in s_nodes)
            _check_engine_cut(res.value, p * out + q * (total_w - inside))
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


def _mark_orbits(opt: Optimum, sym: Symmetry | None) -> None:
    """Record the generator that extends the representatives' flows to every sink."""
    if sym is not None:
        from . import orbits

        opt.automorphisms = [orbits.generator_pairs(sym, opt.topology.nodes)]
        opt.extra["symmetry"] = orbits.describe(sym)


def prop3(inv_x: Fraction, caps: list[Fraction]) -> tuple[int, Fraction]:
    """000 Prop 3: the least k with U = k/x* and U·c_e integral for every capacity.

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


def _fixed_k(t: Topology, k: int, engine: str, progress: Progress | None,
             sym: Symmetry | None = None) -> Optimum:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise TopologyError(f"fixed k must be a positive integer, got {k!r}")
    base = _allgather(t, engine, None, sym=sym)
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
            _check_engine_cut(res.value, _out_int(t, side))
            best = (res.value, side)
        if progress:
            progress(i + 1, len(others))
    assert best is not None
    return best[0], best[1], flows, len(others)


def _single_root(
    t: Topology, collective: str, root: Node, engine: str, progress: Progress | None
) -> Optimum:
    if root is None:
        raise TopologyError(
            f"{collective} needs a root: pass --root NODE (root= in Python), "
            "one of the compute nodes"
        )
    root = t.lookup(root)  # "3" names node 3, as in schedule()
    if not t.is_compute(root):
        raise TopologyError(
            f"root {root!r} is not a compute node of the topology; compute nodes are "
            f"{', '.join(map(str, t.compute_nodes[:8]))}{'…' if t.num_compute > 8 else ''}"
        )
    lam, cut, flows, solves = _min_over_sinks(t, root, collective == "reduce", engine, progress)
    return Optimum(collective, t, algbw=Fraction(lam, t.scale), cut=cut, root=root,
                   maxflows=solves, flows=flows,
                   extra={"cut_capacity": Fraction(lam, t.scale)})


def _allreduce(t: Topology, engine: str, progress: Progress | None,
               sym: Symmetry | None = None) -> Optimum:
    n_c = t.num_compute
    ag = _allgather(t, engine, None, sym=sym)
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
        _check_engine_cut(res.value, _out_int(t, side))
        per_node[v], per_value[v] = side, res.value
        if progress:
            progress(step + 1, len(sinks7))
    if sym is not None:  # the cut of σ^g(r) is σ^g(cut of r); certify checks each cut
        for r in sym.reps:
            side_idx = [t.index[u] for u in per_node[t.nodes[r]]]
            for g in range(1, sym.order):
                perm = sym.perms[g]
                image = t.nodes[int(perm[r])]
                per_node[image] = frozenset(t.nodes[int(perm[i])] for i in side_idx)
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


# --------------------------------------------------------------------------- #
# facade
# --------------------------------------------------------------------------- #
def optimum(
    topology: Topology,
    collective: str = "allgather",
    *,
    root: Node | None = None,
    fixed_k: int | None = None,
    weights: Sequence[object] | None = None,
    engine: str = "auto",
    progress: Progress | None = None,
    symmetry: bool | None = None,
) -> Optimum:
    """The certified optimum of ``collective`` on ``topology``.

    ``allgather`` / ``reduce-scatter``: algbw = N·x* (seed 000 eq. (1)),
    with the bottleneck cut, k and U (Prop 3) and one flow per compute node.
    ``fixed_k``: the best time with k trees per compute node (000 §2.4).
    ``broadcast`` / ``reduce`` with ``root``: bound (5) of 000 App. A.
    ``allreduce``: the RS+AG time with the lower bounds (6) and (7) of
    000 App. B and whether Thm 19 (or equality with a bound) proves it optimal.
    ``weights``: non-uniform allgather (003 §5.7), the relative shard size
    of each compute node (positive integers, in compute-node order).
    ``symmetry``: for allgather, reduce-scatter, fixed k and allreduce, one
    max-flow per orbit of the topology's box symmetry when one is found and
    verified (:mod:`.orbits`; the certificate then carries the automorphism):
    None (default) tries from ``orbits.AUTO_MIN_COMPUTE`` compute nodes on,
    True always, False never. The result is the same either way.
    """
    if not isinstance(topology, Topology):
        raise TypeError("optimum() needs a collcert.Topology")
    coll = collective.lower().replace("_", "-")
    if coll not in COLLECTIVES:
        raise TopologyError(
            f"unknown collective {collective!r}: choose one of {', '.join(COLLECTIVES)}"
        )
    topology.require_forestcoll(
        "the RS+AG allreduce time and bounds (6), (7)" if coll == "allreduce"
        else f"the ForestColl {coll} optimum")
    if coll in ("broadcast", "reduce"):
        check_solvable(topology, engine)  # refuse what cannot fit in memory or time
        if fixed_k is not None:
            raise TopologyError(f"fixed_k applies to allgather and reduce-scatter, not {coll}")
        return _single_root(topology, coll, root, engine, progress)
    if root is not None:
        raise TopologyError(f"{coll} has no root; root= is for broadcast and reduce")
    if fixed_k is not None and (coll == "allreduce" or weights is not None):
        raise TopologyError("fixed_k applies to allgather and reduce-scatter, not allreduce"
                            if coll == "allreduce" else "fixed_k and weights cannot be combined")
    w = None if weights is None or coll == "allreduce" else _parse_weights(topology, weights)
    t = topology.transpose() if coll == "reduce-scatter" else topology
    sym = None
    if symmetry is not False:
        from . import orbits

        if orbits.wanted(t, symmetry):
            sym = orbits.find(t, w)
    # refuse what cannot fit in memory or time (limits.py): flows for one sink per orbit
    # (allreduce's bound (6) still solves one max-flow per compute node)
    check_solvable(topology, engine,
                   sinks=None if sym is None or coll == "allreduce" else len(sym.reps))
    if coll == "allreduce":
        return _allreduce(topology, engine, progress, sym)
    if fixed_k is not None:
        opt = _fixed_k(t, fixed_k, engine, progress, sym)
    else:
        opt = _allgather(t, engine, progress, w, sym)
    if coll == "reduce-scatter":
        opt.collective = "reduce-scatter"
        opt.topology = topology
        opt.extra["flows_on"] = "transposed topology"
    return opt


def _parse_weights(t: Topology, weights: Sequence[object]) -> list[int]:
    from .exact import lcm_of_denominators, parse_number

    if len(weights) != t.num_compute:
        raise TopologyError(
            f"weights has {len(weights)} entries but the topology has {t.num_compute} compute "
            "nodes: give one shard size per compute node, in compute-node order"
        )
    vals = []
    for c, w in zip(t.compute_nodes, weights):
        try:
            f = parse_number(w)
        except ValueError as exc:
            raise TopologyError(f"weight of compute node {c!r}: {exc}") from None
        if f <= 0:
            raise TopologyError(f"weight of compute node {c!r} is {w!r}: weights must be positive")
        vals.append(f)
    den = lcm_of_denominators(vals, what="the weights")
    return [int(f * den) for f in vals]
