"""Periodic broadcast schedules from an exact LP optimum (Legrand et al. 2003, §4.3, §5.3-5.4).

**Trees (any graph, §5.3-5.4).** With N the lcm of the denominators of n and
x, the multigraph with N·n_e parallel copies of each link has N edge-disjoint
spanning arborescences rooted at the source (Lemmas 2-3, Thm 4: every unit
flow x_i becomes N units). They are found as a *weighted* packing (Thm 5):
arborescences T_l with integer weights λ_l, Σ λ_l = N and
m_e = Σ_l λ_l χ_e(T_l) ≤ N·n_e, by the batch algorithm of
:func:`collcert.reference.forestcoll.pack_trees` (Zhao & Krishnamurthy 2023, Alg 2:
each batch is a tree with a multiplicity, a polynomial number of them). One period carries a
batch of N messages (λ_l of them down tree T_l); a node at depth d of T_l
receives the batch injected d − 1 periods before and forwards it one period
later, so a message is always forwarded in a later period than it arrived.

**DAGs (§4.3, Thm 2).** q = lcm of the denominators of n, t and TP (rates per
time unit); heights h(s) = 0 and h(j) < h(k) on every used link; a batch of
q·TP messages; node j (height h) receives the batch injected h − 1 periods
before, its parents sending consecutive slices of q·n_{k,j} messages.

**One period (Lemma 1, §5.4.2).** Link e carries m_e messages per period,
taking m_e·c_e; in ticks of 1/L (L the lcm of the costs' denominators) that is
an integer w_e. :func:`collcert.reference.solvers.colour` splits the w_e
into matchings M_i with integer durations μ_i, Σμ_i = the largest port load
(= N·T* at the LP optimum, Lemma 6 with equality). Step i lasts μ_i ticks and
link e ∈ M_i sends μ_i/u_e of its messages (u_e = L·c_e ticks per message).
That must be a whole number of messages, so the period is stretched by
σ = lcm over e, i ∈ M(e) of u_e / gcd(u_e, μ_i) (a divisor of the paper's
s = lcm_e m_e·c_e of eq. (20), usually 1): σ·N messages every σ·Σμ_i ticks,
throughput N / (N·T*) = 1/T*.

Messages are numbered per batch: batch b (injected in period b) holds
messages 0 .. M−1 (M = σN); a block {lag, first, count} sent in period r
carries messages first .. first+count−1 of batch r − lag, back to back.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..forestcoll import pack_trees
from ..model import fraction_str, lcm_of_denominators
from ..solvers import colour
from .steady_lp import ENGINE, SSBSolution

Node = Hashable
Link = tuple[Node, Node]


@dataclass
class Block:
    lag: int
    first: int
    count: int


@dataclass
class Step:
    """One matching of the period: ``transfers`` run in parallel from ``start``."""

    start: Fraction
    duration: Fraction
    transfers: list[tuple[Link, list[Block]]]


@dataclass
class PeriodicSchedule:
    """A periodic one-port broadcast schedule (see the module doc)."""

    method: str  # "trees" or "dag"
    N: int  # messages per batch before the stretch σ
    loads: dict[Link, int]  # m_e: messages per batch on each link
    tick: Fraction  # 1/L
    matchings: list[tuple[int, list[Link]]]  # (μ_i in ticks, edges), before the stretch
    sigma: int
    steps: list[Step]
    trees: list[tuple[int, list[Link]]] = field(default_factory=list)  # (λ_l, edges)
    heights: dict[Node, int] = field(default_factory=dict)  # DAG method
    q: int = 0  # DAG method

    @property
    def period(self) -> Fraction:
        return sum((st.duration for st in self.steps), Fraction(0))

    @property
    def messages_per_period(self) -> int:
        return self.sigma * self.N

    @property
    def throughput(self) -> Fraction:
        return Fraction(self.messages_per_period) / self.period

    @property
    def max_lag(self) -> int:
        return max((b.lag for st in self.steps for _, bl in st.transfers for b in bl), default=0)


def layout(sol: SSBSolution, ranges: dict[Link, list[Block]], N: int) -> tuple[
        Fraction, list[tuple[int, list[Link]]], int, list[Step], dict[Link, int]]:
    """Edge-colour one batch's transfers and lay them out in steps (module doc)."""
    cost = sol.platform.cost
    loads = {e: sum(b.count for b in bl) for e, bl in ranges.items()}
    loads = {e: m for e, m in loads.items() if m}
    L = lcm_of_denominators([cost[e] for e in loads])
    u = {e: int(cost[e] * L) for e in loads}
    matchings = colour({e: loads[e] * u[e] for e in loads})
    sigma = math.lcm(*(u[e] // math.gcd(u[e], mu) for mu, edges in matchings for e in edges))
    queues = {e: [Block(b.lag, sigma * b.first, sigma * b.count) for b in ranges[e] if b.count]
              for e in loads}
    steps: list[Step] = []
    t = Fraction(0)
    for mu, edges in matchings:
        duration = Fraction(sigma * mu, L)
        transfers = []
        for e in edges:
            room = sigma * mu // u[e]
            sent: list[Block] = []
            q = queues[e]
            while room:
                head = q[0]
                take = min(room, head.count)
                sent.append(Block(head.lag, head.first, take))
                room -= take
                if take == head.count:
                    q.pop(0)
                else:
                    q[0] = Block(head.lag, head.first + take, head.count - take)
            transfers.append((e, sent))
        steps.append(Step(t, duration, transfers))
        t += duration
    leftover = [e for e, q in queues.items() if q]
    if leftover:  # pragma: no cover - Σ_{i ∈ M(e)} μ_i = w_e by construction
        raise RuntimeError(f"internal: messages left on links {leftover[:3]} after the period")
    return Fraction(1, L), matchings, sigma, steps, loads


def tree_packing(sol: SSBSolution) -> tuple[int, list[tuple[int, list[Link], dict[Node, int]]]]:
    """N and the weighted arborescences (λ_l, edges, depth) of Thm 5."""
    N = sol.N
    caps = {e: int(c * N) for e, c in sol.n.items() if c}
    packing = pack_trees(sol.platform.nodes, caps, {sol.source: N}, engine=ENGINE)
    trees = [(b.multiplicity, list(b.edges), dict(b.depth)) for b in packing.batches]
    if sum(t[0] for t in trees) != N:  # pragma: no cover - pack_trees guarantees Σ m = N
        raise RuntimeError("internal: the tree weights do not add up to N")
    return N, trees


def tree_schedule(sol: SSBSolution) -> PeriodicSchedule:
    """The §5.4 periodic schedule over the weighted broadcast trees."""
    N, trees = tree_packing(sol)
    return schedule_trees(sol, N, trees)


def schedule_trees(sol: SSBSolution, N: int,
                   trees: list[tuple[int, list[Link], dict[Node, int]]]) -> PeriodicSchedule:
    """The §5.4 periodic schedule over weighted trees (λ_l, edges, depth) whose weights
    sum to N (:func:`tree_packing`): tree l carries messages first_l .. first_l + λ_l − 1
    of a batch, a node at depth d forwarding the batch injected d periods before."""
    ranges: dict[Link, list[Block]] = {}
    first = 0
    for lam, edges, depth in trees:
        for u, v in edges:
            ranges.setdefault((u, v), []).append(Block(depth[u], first, lam))
        first += lam
    tick, matchings, sigma, steps, loads = layout(sol, ranges, N)
    return PeriodicSchedule("trees", N, loads, tick, matchings, sigma, steps,
                            trees=[(lam, edges) for lam, edges, _ in trees])


def heights(sol: SSBSolution, links: list[Link]) -> dict[Node, int]:
    """Longest-path heights from the source along ``links`` (a DAG): h(j) < h(k) on links."""
    p = sol.platform
    indeg = {v: 0 for v in p.nodes}
    out: dict[Node, list[Node]] = {v: [] for v in p.nodes}
    for u, v in links:
        indeg[v] += 1
        out[u].append(v)
    h = {v: 0 for v in p.nodes}
    ready = [v for v in p.nodes if indeg[v] == 0]
    while ready:
        u = ready.pop()
        for v in out[u]:
            h[v] = max(h[v], h[u] + 1)
            indeg[v] -= 1
            if indeg[v] == 0:
                ready.append(v)
    return h


def dag_schedule(sol: SSBSolution) -> PeriodicSchedule:
    """The §4.3 height-based schedule from an SSBPDAG solution (``sol.lp == "ssbpdag"``)."""
    p = sol.platform
    tp = sol.throughput
    rate = {e: c * tp for e, c in sol.n.items()}  # n_{j,k} per time unit
    q = lcm_of_denominators(list(rate.values()) + [r * p.cost[e] for e, r in rate.items()]
                            + [tp])
    used = [e for e, r in rate.items() if r]
    h = heights(sol, used)
    ranges: dict[Link, list[Block]] = {}
    for j in p.nodes:
        if j == sol.source:
            continue
        first = 0
        for k in p.in_adj[j]:
            count = int(rate[(k, j)] * q)
            if count:
                ranges[(k, j)] = [Block(h[j] - 1, first, count)]
                first += count
        if first != q * tp:  # pragma: no cover - constraint (6) of SSBPDAG
            raise RuntimeError(f"internal: node {j!r} receives {first} messages, not q·TP")
    N = int(q * tp)
    tick, matchings, sigma, steps, loads = layout(sol, ranges, N)
    return PeriodicSchedule("dag", N, loads, tick, matchings, sigma, steps, heights=h, q=q)


def schedule_json(sched: PeriodicSchedule) -> dict[str, Any]:
    """The parts of the schedule file that describe the periodic schedule."""
    fs = fraction_str
    out: dict[str, Any] = {
        "period": fs(sched.period),
        "messages_per_period": sched.messages_per_period,
        "packing": {
            "N": sched.N,
            "loads": [[u, v, m] for (u, v), m in sched.loads.items()],
            "tick": fs(sched.tick),
            "matchings": [{"duration": fs(mu * sched.tick), "edges": [[u, v] for u, v in es]}
                          for mu, es in sched.matchings],
            "stretch": sched.sigma,
        },
        "steps": [{"start": fs(st.start), "duration": fs(st.duration),
                   "transfers": [{"src": u, "dst": v,
                                  "blocks": [{"lag": b.lag, "first": b.first, "count": b.count}
                                             for b in bl]}
                                 for (u, v), bl in st.transfers]}
                  for st in sched.steps],
    }
    if sched.method == "trees":
        out["packing"]["trees"] = [{"weight": lam, "edges": [[u, v] for u, v in es]}
                                   for lam, es in sched.trees]
    else:
        out["packing"]["q"] = sched.q
        out["packing"]["heights"] = {str(v): hv for v, hv in sched.heights.items()}
    return out
