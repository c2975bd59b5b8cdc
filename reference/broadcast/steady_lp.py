"""The steady-state broadcast linear programs of Legrand et al. 2003, solved exactly.

**SSB(G)** (§5.2) on any graph: one unit message reaches every destination
every T* time units; minimise T*. Variables x_i^{j,k} (the share of the
messages for destination i that cross (j, k)), n_{j,k} (messages crossing
(j, k) per period) and T*:

- (7)-(9): for every destination i, x_i is a unit flow from the source s to i;
- (10) n_{j,k} = max_i x_i^{j,k}, linearised as n_{j,k} ≥ x_i^{j,k} (exact at the
  optimum; n is recomputed as the maximum afterwards);
- (11)-(16): T* ≥ Σ_k c_{j,k} n_{j,k} (send port of j) and
  T* ≥ Σ_k c_{k,j} n_{k,j} (receive port of j); (14) is implied.

Erratum. Read literally, (7) and (8) count only the flow leaving s and the flow
entering i, and (9) skips s and i; a "flow" may then enter s and leave i, and
the LP accepts circulations s→a→s and i→b→i that deliver nothing (platform
s→i of cost 10, s↔a and i↔b of cost 1: the literal LP says T* = 1, the truth
is 11, s sending every message to i and to a). Here x_i has no variable on an
arc into s or out of i, which makes (7)-(9) say exactly "x_i is a unit s–i
flow" (tests/test_steady_broadcast.py solves both LPs on that platform).

**Cut form (how it is solved).** By max-flow/min-cut, n carries a unit
s–i flow for every i iff n(δ⁻(X)) ≥ 1 for every node set X ∌ s (X ≠ ∅). So
SSB = min T s.t. the two port rows per node and one row per cut. The cuts are
generated lazily: start with the singletons {i}, solve exactly
(:mod:`collcert.reference.solvers.lp`), find for every i a minimum s–i cut under the
exact n by max-flow, add the violated ones, repeat. The final LP is small
(|E| + 1 columns) whatever |V|; the flows x_i are then read off a max-flow.

**Certificate.** Primal: T*, n, and the flows x_i (checked constraint by
constraint). Dual: port prices α_j (send), β_j (receive) ≥ 0 with
Σα + Σβ ≤ 1 and cut weights y_X ≥ 0 with Σ_{X: e enters X} y_X ≤ c_e(α_j + β_k)
for every link e = (j, k). Then any schedule of throughput r with n_e/r
messages per period on e satisfies Σ_X y_X ≤ Σ_e (n_e/r)·c_e(α_j + β_k)
≤ 1/r: the throughput of **every** schedule, periodic or not, is at most
1/Σ_X y_X (Lemma 7). Σ_X y_X = T* proves the optimum.

**SSBPDAG** (§4.1) on a DAG: max TP s.t. the port rows (4), (5) on rates and
Σ_k n_{k,j} = TP for every destination (6). The bound (3) t ≤ 1 is implied by
(4) and left out. On a DAG it is the cut LP with singleton cuts only (the
first node of any X in a topological order has all its in-links entering X),
so its certificate is the same kind: T* = 1/TP, singleton cuts.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..model import TopologyError, check_budget, fraction_str, lcm_of_denominators
from ..solvers import FlowNetwork, LinearProgram, max_flow, solve_lp
from .oneport import OnePortPlatform

Node = Hashable
Link = tuple[Node, Node]
Progress = Callable[[int, int, str], None]

# max-flow engine: OR-Tools when the integers fit, else exact (reference/solvers/maxflow.py)
ENGINE = "auto"

BYTES_PER_NODE_LINK = 250
SECONDS_PER_NODE2_LINK = 5e-8
"""Cost of SSB by cut generation, from ``/usr/bin/time -v collcert broadcast-steady
random:P`` (3 links per node): 300 nodes 2.9 s and 82 MB, 1,000 nodes 148 s CPU and
760 MB; memory grows as nodes × links (cuts × links), time as nodes² × links."""


def check_ssb_size(p: OnePortPlatform) -> None:
    """Refuse (exit 2) a platform whose SSB would not fit the memory or time budget."""
    check_ssb_counts(len(p.nodes), len(p.cost), p.name or "the platform")


def ssb_seconds(v: int, e: int) -> float:
    """Predicted time of SSB by cut generation on ``v`` nodes and ``e`` links (a planning
    figure from :data:`SECONDS_PER_NODE2_LINK`; it varies several-fold between platforms
    of one size with the number of rounds the cuts need)."""
    return SECONDS_PER_NODE2_LINK * v * v * e


def check_ssb_counts(v: int, e: int, name: str) -> None:
    """:func:`check_ssb_size` from the counts alone (before building a platform)."""
    check_budget(name, BYTES_PER_NODE_LINK * v * e,
                 f"SSB by cut generation on {v} nodes and {e} links",
                 seconds=ssb_seconds(v, e),
                 action="try a smaller platform (or --dag on a DAG: one LP, no cuts)")


@dataclass
class SSBSolution:
    """An exactly proven optimum of SSB(G) for one source (see the module doc)."""

    platform: OnePortPlatform
    source: Node
    T: Fraction
    n: dict[Link, Fraction]
    x: dict[Node, dict[Link, Fraction]]
    send_price: dict[Node, Fraction]
    recv_price: dict[Node, Fraction]
    cuts: list[tuple[frozenset[Node], Fraction]]
    lp: str  # "ssb" or "ssbpdag"
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def throughput(self) -> Fraction:
        """TP = 1/T*: messages broadcast per time unit."""
        return 1 / self.T

    @property
    def N(self) -> int:
        """The least common multiple of the denominators of every n and x (§5.3.1)."""
        values = list(self.n.values())
        for flow in self.x.values():
            values += flow.values()
        return lcm_of_denominators(values)

    def certificate(self) -> dict[str, Any]:
        """The JSON-ready certificate (docs/steady-broadcast.md, "lp")."""
        return {
            "problem": self.lp,
            "T_star": fraction_str(self.T),
            "n": [[u, v, fraction_str(c)] for (u, v), c in self.n.items() if c],
            "x": [{"dest": i, "flow": [[u, v, fraction_str(c)] for (u, v), c in f.items() if c]}
                  for i, f in self.x.items()],
            "dual": {
                "send": {str(v): fraction_str(p) for v, p in self.send_price.items() if p},
                "recv": {str(v): fraction_str(p) for v, p in self.recv_price.items() if p},
                "cuts": [{"nodes": sorted(X, key=self.platform.index.__getitem__),
                          "weight": fraction_str(w)} for X, w in self.cuts if w],
            },
        }


def _cut_lp(p: OnePortPlatform, cuts: list[frozenset[Node]], T: Fraction | None = None,
            ) -> LinearProgram:
    """The cut form of SSB: min T (``T`` None), or, with T* given, min Σ c_e·n_e."""
    if T is None:
        lp = _rate_lp(p, "min", "T")
    else:
        lp = LinearProgram("min")
        for e in p.cost:
            lp.add_variable(("n", e), p.cost[e])
    for v in p.nodes:
        _port_rows(lp, p, v, T)
    for k, X in enumerate(cuts):
        _add_cut(lp, p, k, X)
    return lp


def _rate_lp(p: OnePortPlatform, sense: str, var: str) -> LinearProgram:
    """An LP whose objective is the variable ``var`` (T or TP), with a rate n_e per link."""
    lp = LinearProgram(sense)
    lp.add_variable(var, 1)
    for e in p.cost:
        lp.add_variable(("n", e))
    return lp


def _port_rows(lp: LinearProgram, p: OnePortPlatform, v: Node,
               period: Fraction | int | None) -> None:
    """The one-port rows of node v: its sends, and its receives, take at most the period,
    Σ c_e·n_e ≤ ``period`` ((4)-(5) on rates, period 1), or, with ``period`` None, at
    most the variable T ((11)-(16)). A node without such links has no row."""
    for name, arcs in (("send", [(v, w) for w in p.out_adj[v]]),
                       ("recv", [(u, v) for u in p.in_adj[v]])):
        if not arcs:
            continue
        if period is None:
            lp.add_row((name, v), {"T": 1, **{("n", e): -p.cost[e] for e in arcs}}, ">=", 0)
        else:
            lp.add_row((name, v), {("n", e): p.cost[e] for e in arcs}, "<=", period)


def _add_cut(lp: LinearProgram, p: OnePortPlatform, k: int, X: frozenset[Node]) -> None:
    lp.add_row(("cut", k), {("n", (u, v)): 1 for (u, v) in p.cost if v in X and u not in X},
               ">=", 1)


def _generate(p: OnePortPlatform, s: Node, cuts: list[frozenset[Node]], T: Fraction | None,
              progress: Progress | None, stats: dict[str, Any]) -> Any:
    """Solve the cut LP, adding violated cuts (one max-flow per destination) until none is."""
    links = list(p.cost)
    idx = p.index
    dests = [v for v in p.nodes if v != s]
    known = set(cuts)
    net = FlowNetwork(len(p.nodes), [idx[u] for u, _ in links], [idx[v] for _, v in links],
                      [0] * len(links), engine=ENGINE)
    # the same network reversed: a max-flow from i to s there gives the minimum cut whose
    # i side is smallest (the nodes that still reach i); adding it beside the cut whose i
    # side is largest converges in ~10 rounds where one cut per destination took thousands
    # on 300 random nodes (the LP is degenerate and each round moved one cut)
    rev = FlowNetwork(len(p.nodes), [idx[v] for _, v in links], [idx[u] for u, _ in links],
                      [0] * len(links), engine=ENGINE)
    lp = _cut_lp(p, cuts, T)
    while True:
        res = solve_lp(lp)
        stats["rounds"] = stats.get("rounds", 0) + 1
        stats["lp_seconds"] = (stats.get("lp_seconds", 0.0) + res.stats.get("float_seconds", 0)
                               + res.stats.get("exact_seconds", 0))
        n = {e: res.x[("n", e)] for e in links}
        scale = lcm_of_denominators(list(n.values()))
        caps = [int(n[e] * scale) for e in links]
        net.set_all_capacities(caps)
        rev.set_all_capacities(caps)
        new: list[frozenset[Node]] = []
        for i in dests:
            flow = net.solve(idx[s], idx[i])
            if flow.value < scale:
                near_i = rev.solve(idx[i], idx[s]).source_side
                for X in (frozenset(v for v in p.nodes if idx[v] not in flow.source_side),
                          frozenset(v for v in p.nodes if idx[v] in near_i)):
                    if X not in known:
                        known.add(X)
                        new.append(X)
        if progress:
            progress(stats["rounds"], stats["rounds"] + (1 if new else 0),
                     f"{len(cuts)} cuts" + (f", T* ≥ {fraction_str(res.objective)}"
                                            if T is None else ", tidying n"))
        if not new:
            return res
        for X in new:
            _add_cut(lp, p, len(cuts), X)
            cuts.append(X)


def solve_ssb(platform: OnePortPlatform, source: object, *, progress: Progress | None = None,
              tidy: bool = True) -> SSBSolution:
    """SSB(G) by cut generation, proven exactly (see the module doc).

    ``tidy``: once T* is known, a second LP picks among the optimal n one of least
    total link time Σ c_e·n_e (still with every cut ≥ 1 and ports ≤ T*). It drops
    useless traffic and usually gives much smaller denominators, hence a smaller
    N, fewer trees and a shorter period. The dual of the first LP still proves T*.
    """
    p = platform
    s = p.check_source(source)
    check_ssb_size(p)
    cuts: list[frozenset[Node]] = [frozenset({i}) for i in p.nodes if i != s]
    stats: dict[str, Any] = {}
    res = _generate(p, s, cuts, None, progress, stats)
    T = res.objective
    cut_w = [(X, res.y[("cut", k)]) for k, X in enumerate(cuts) if res.y[("cut", k)]]
    send = {v: res.y.get(("send", v), Fraction(0)) for v in p.nodes}
    recv = {v: res.y.get(("recv", v), Fraction(0)) for v in p.nodes}
    stats["cuts"] = len(cuts)
    if tidy:
        res = _generate(p, s, cuts, T, progress, stats)
    n = {e: res.x[("n", e)] for e in p.cost}
    x = unit_flows(p, s, n)
    n_max = {e: max((f.get(e, Fraction(0)) for f in x.values()), default=Fraction(0))
             for e in p.cost}
    return SSBSolution(p, s, T, n_max, x, send, recv, cut_w, "ssb", stats)


def unit_flows(p: OnePortPlatform, s: Node, n: dict[Link, Fraction]) -> dict[Node, dict[Link,
                                                                                         Fraction]]:
    """For every destination i a unit s–i flow x_i ≤ n, with no arc into s or out of i.

    Read off an integral maximum flow in D·n (D the lcm of n's denominators)
    from a super-source with one arc σ → s of capacity D, so the flow value is
    exactly D and x_i = flow / D has denominators dividing D.
    """
    scale = lcm_of_denominators(list(n.values()))
    out: dict[Node, dict[Link, Fraction]] = {}
    sigma = ("σ", object())
    for i in p.nodes:
        if i == s:
            continue
        caps: dict[tuple[Any, Any], int | None] = {
            (u, v): int(c * scale) for (u, v), c in n.items()
            if c and v != s and u != i}
        caps[(sigma, s)] = scale
        res = max_flow(caps, sigma, i, engine=ENGINE)
        if res.value != scale:
            carried = fraction_str(Fraction(res.value, scale))
            raise RuntimeError(f"internal: n carries only {carried} of a unit flow from {s!r} "
                               f"to {i!r}")
        out[i] = {e: Fraction(f, scale) for e, f in res.flow.items() if f and e[0] != sigma}
    return out


def solve_ssb_flows(platform: OnePortPlatform, source: object, *, literal: bool = False,
                    ) -> Fraction:
    """T* of SSB(G) written with the flow variables x_i as in §5.2 (for cross-checks).

    ``literal=True`` keeps the paper's text verbatim, variables on arcs into s
    and out of i included (see the erratum in the module doc): it can return a
    T* below the true optimum. Size |V|·|E| columns: small platforms only.
    """
    p = platform
    s = p.check_source(source)
    lp = _rate_lp(p, "min", "T")
    for i in p.nodes:
        if i == s:
            continue
        arcs = [(u, v) for (u, v) in p.cost if literal or (v != s and u != i)]
        for e in arcs:
            lp.add_row(("max", i, e), {("n", e): 1, ("x", i, e): -1}, ">=", 0)
        lp.add_row(("src", i), {("x", i, e): 1 for e in arcs if e[0] == s}, "=", 1)
        lp.add_row(("dst", i), {("x", i, e): 1 for e in arcs if e[1] == i}, "=", 1)
        for j in p.nodes:
            if j in (s, i):
                continue
            coefs: dict[Any, int] = {}
            for e in arcs:
                if e[1] == j:
                    coefs[("x", i, e)] = coefs.get(("x", i, e), 0) + 1
                if e[0] == j:
                    coefs[("x", i, e)] = coefs.get(("x", i, e), 0) - 1
            if coefs:
                lp.add_row(("cons", i, j), coefs, "=", 0)
    for v in p.nodes:
        _port_rows(lp, p, v, None)
    return solve_lp(lp).objective


def solve_ssbpdag(platform: OnePortPlatform, source: object) -> SSBSolution:
    """SSBPDAG(G) of §4.1 on a DAG, returned in the SSB form (T* = 1/TP, n per message).

    Refuses a platform with a directed cycle, naming it: on a cycle the LP has
    no conservation and overstates the throughput (Legrand et al. 2003 digest).
    """
    p = platform
    cycle = p.find_cycle()
    if cycle is not None:
        raise TopologyError(
            "SSBPDAG (--dag) needs a platform without directed cycles, and this one has the "
            f"cycle {' -> '.join(map(repr, cycle))}; drop --dag to solve SSB on the whole "
            "graph, or remove a link of the cycle")
    s = p.check_source(source)
    lp = _rate_lp(p, "max", "TP")
    for v in p.nodes:
        _port_rows(lp, p, v, 1)
        if v != s:
            lp.add_row(("get", v), {"TP": -1, **{("n", (u, v)): 1 for u in p.in_adj[v]}}, "=", 0)
    res = solve_lp(lp)
    tp = res.objective
    if tp <= 0:  # pragma: no cover - every node is reachable and every cost finite
        raise RuntimeError("internal: SSBPDAG found throughput 0")
    n = {e: res.x[("n", e)] / tp for e in p.cost}
    x = unit_flows(p, s, n)
    send = {v: res.y.get(("send", v), Fraction(0)) / tp for v in p.nodes}
    recv = {v: res.y.get(("recv", v), Fraction(0)) / tp for v in p.nodes}
    cuts = [(frozenset({v}), max(-res.y[("get", v)], Fraction(0)) / tp)
            for v in p.nodes if v != s]
    return SSBSolution(p, s, 1 / tp, n, x, send, recv, [c for c in cuts if c[1]], "ssbpdag",
                       {"rate_n": {e: res.x[("n", e)] for e in p.cost}})


def tree_throughput(platform: OnePortPlatform, edges: list[Link]) -> Fraction:
    """TP(T) = 1 / max_i Σ_{children j of i} c_{i,j} for a broadcast tree (eq. (1))."""
    load: dict[Node, Fraction] = {}
    for u, v in edges:
        load[u] = load.get(u, Fraction(0)) + platform.cost[(u, v)]
    return 1 / max(load.values())
