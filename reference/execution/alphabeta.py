"""The latency-bandwidth (α-β) model: a schedule's time for a message of size M.

collcert's throughput results are exact *bandwidth* terms: a schedule moves
one unit of data in ``T`` (its ``time_per_unit``; every link busy at most T).
That is the whole story for large messages. For small ones, latency counts;
the α-β model adds it:

    time(M) = M · T + L

* ``T`` is exact and comes from the audit (a schedule) or the optimum (a bound).
* ``L`` is the schedule's **latency term**, in microseconds, the sum of the
  latencies α of the links along its *critical route*:

  - **tree schedules** (collcert JSON, ForestColl XML): the data of a tree
    reaches a compute node after the α's of every link on the route from the
    root (out-trees; in-trees: from the node to the root), following the tree
    edges' paths through switches; a path that starts at a multicast switch
    starts when the tree's data first reaches that switch. A tree's latency is
    its deepest route; a phase's is its deepest tree (all trees run at once);
    phases (allreduce: reduce-scatter, then allgather) add up.
  - **MSCCL programs**: the longest chain of dependent steps (program order in
    a threadblock, ``depid``/``deps`` waits, a receive after its matching
    send), where each transfer from rank p to rank q costs the least α-latency
    of any route from p to q in the topology (the direct link's α when they
    are linked). Steps themselves cost nothing: their data is in ``M · T``.

  - **MSCCL++ plans**: the longest chain of remote hops the plan waits on
    (``collcert.certify.execution.mscclpp_latency``: a signal to its wait, an LL
    packet to its reader, a remote read, the last put landing), each hop from
    rank p to rank q costing the same least α-latency of a route.

  With the same α on every link, L = α × the number of links on the critical
  route: the tree height in link hops, or the number of sequential transfers.

* The **latency lower bound** ``D`` of a collective is the largest α-distance
  its data must travel: max over ordered pairs of compute nodes (u, v) of the
  shortest α-route from u to v (broadcast: from the root; reduce: to the root).
  No schedule of the model above has L < D, and none has T below the certified
  optimum's, so ``M · T* + D`` bounds every modelled time from below.

The model streams data without per-chunk overheads (the limit of fine
pipelining) and ignores switch processing beyond the α's given: it is the
textbook α-β (Hockney) model on the real topology. α per link comes from the
topology's optional ``alpha`` field (``docs/topology.md``); links without one
take a default (``--alpha``, microseconds; 0 when not given).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..model import (
    Link,
    Node,
    ScheduleError,
    Topology,
    TopologyError,
    fraction_str,
    lcm_of_denominators,
)
from .tree_routes import arrival_route, route_of, tree_arrivals, tree_routes

MICROSECONDS_PER_SECOND = 10**6

# Bytes per second in one unit of a topology's bandwidth unit (decimal and
# binary prefixes, bytes and bits). Lower-case keys; see :func:`bytes_per_unit`.
_PREFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "p": 10**15,
           "ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40, "pi": 2**50}


def bytes_per_unit(unit: str) -> Fraction:
    """How many bytes per second one unit of ``unit`` is: ``"GB/s"`` → 10⁹,
    ``"GiB/s"`` → 2³⁰, ``"Gbit/s"`` / ``"Gb/s"`` / ``"Gbps"`` → 10⁹/8.

    Raises :class:`~collcert.TopologyError` for a unit that is not a data rate
    (``"NVLink"``, ``"b"``), saying how to fix it.
    """
    text = unit.strip()
    low = text.lower()
    for suffix in ("/s", "ps"):
        if low.endswith(suffix):
            body, raw = low[: -len(suffix)], text[: -len(suffix)]
            break
    else:
        body, raw = "", ""
    if body:
        for word, bits in (("bytes", False), ("byte", False), ("bits", True), ("bit", True)):
            if body.endswith(word):
                pre = body[: -len(word)]
                if pre in _PREFIX:
                    f = Fraction(_PREFIX[pre])
                    return f / 8 if bits else f
        # single letters: B = byte, b = bit (case matters here)
        if raw[-1:] in ("B", "b"):
            pre = body[:-1]
            if pre in _PREFIX:
                f = Fraction(_PREFIX[pre])
                return f if raw[-1] == "B" else f / 8
    raise TopologyError(
        f"the topology's capacities are in {unit!r}, which is not a data rate collcert can "
        "convert to bytes per second (GB/s, MB/s, GiB/s, Gbit/s, ... are); give the "
        "topology a unit such as \"GB/s\" (for the built-in platforms: e.g. dgx1:25 "
        "instead of dgx1, two_box_example:25 instead of two_box_example)"
    )


def link_alphas(topology: Topology, default: Fraction | int = 0) -> dict[Link, Fraction]:
    """α of every directed link (µs): its own ``alpha`` when the topology gives
    one, else ``default``."""
    d = Fraction(default)
    if d < 0:
        raise TopologyError(f"--alpha {fraction_str(d)}: a latency cannot be negative")
    return {e: topology.alpha.get(e, d) for e in topology.capacity}


@dataclass
class Latency:
    """A latency term or bound: ``latency`` µs over ``hops`` links, with the
    critical route as witness (a list of nodes, or of ``"rank p -> rank q"``
    steps for MSCCL programs)."""

    latency: Fraction
    hops: int
    route: list[Any] = field(default_factory=list)
    what: str = ""
    phases: list[Fraction] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"latency_us": fraction_str(self.latency), "hops": self.hops,
                "route": [str(x) for x in self.route], "what": self.what,
                "phase_latencies_us": [fraction_str(p) for p in self.phases]}


@dataclass
class AlphaBeta:
    """time(M) = M · time_per_unit + latency, M in bytes, time in µs."""

    time_per_unit: Fraction  # seconds per unit of data (unit: topology unit × 1 s)
    latency: Latency
    unit_bytes: Fraction  # bytes per unit of data

    def time_us(self, size_bytes: int | Fraction) -> Fraction:
        bw = Fraction(size_bytes) / self.unit_bytes * self.time_per_unit
        return bw * MICROSECONDS_PER_SECOND + self.latency.latency

    def algbw_gbps(self, size_bytes: int | Fraction) -> Fraction:
        """size / time in GB/s (10⁹ bytes per second), as nccl-tests prints it."""
        t = self.time_us(size_bytes)
        if t == 0:
            raise ScheduleError("the modelled time is zero: nothing to divide by")
        return Fraction(size_bytes) / t / 1000


# --------------------------------------------------------------------------- #
# tree schedules
# --------------------------------------------------------------------------- #
def tree_schedule_latency(topology: Topology, phases: Sequence[Any],
                          alpha: Mapping[Link, Fraction],
                          reorder: Callable[[Any], Any] | None = None) -> Latency:
    """Latency term of a tree schedule (see the module docstring).

    ``phases``: the schedule as read by ``collcert.certify.forestcoll.schedule.read_schedule``
    (objects with ``.trees``; a tree has ``.root``, ``.direction`` and ``.edges``,
    an edge a ``.path`` of topology nodes). The schedule should have passed the
    audit; a path hop that is not a link raises ScheduleError. A tree of paths without
    multicast takes one pass (``tree_routes.tree_arrivals``); ``reorder`` (a tree -> the
    tree with its edges reordered) is applied to the other trees before their paths are
    relaxed.
    """
    total = Fraction(0)
    total_hops = 0
    phase_lat: list[Fraction] = []
    route: list[Any] = []
    den = math.lcm(*(Fraction(x).denominator for x in alpha.values())) if alpha else 1
    scaled = {e: int(Fraction(x) * den) for e, x in alpha.items()}  # exact, in ints
    compute = frozenset(topology.compute_nodes)
    rank = {v: -i for i, v in enumerate(topology.compute_nodes)}
    costs: dict[int, tuple[Sequence[Node], int]] = {}  # a walk's α, once per walk
    for p_i, phase in enumerate(phases):
        best: tuple[Fraction, int, list[Node]] = (Fraction(-1), -1, [])  # latency, hops, route
        for tree in phase.trees:
            out = tree.direction != "in"
            raw = [e.path for e in tree.edges
                   if e.src != e.dst]  # a self-edge (own data there and back) feeds no one
            fast = tree_arrivals(tree.root, raw, scaled, out, compute, rank, costs)
            if fast is not None:
                deep, node = fast[3][:2], topology.compute_nodes[-fast[3][2]]
            else:
                if reorder is not None:
                    tree = reorder(tree)
                paths = [list(e.path) if out else list(e.path)[::-1] for e in tree.edges
                         if e.src != e.dst]
                ilat, hops, via = tree_routes(tree.root, paths, scaled, out, topology, compute)
                found = max(((ilat[v], hops[v], rank[v]) for v in ilat if v in rank),
                            default=None)  # the first of the deepest, in rank order
                if found is None:
                    continue
                deep, node = found[:2], topology.compute_nodes[-found[2]]
            if (Fraction(deep[0], den), deep[1]) > best[:2]:
                far = (arrival_route(fast[2], tree.root, node, out) if fast is not None
                       else route_of(via, tree.root, node))
                best = (Fraction(deep[0], den), deep[1], far if out else far[::-1])
        if best[1] < 0:
            raise ScheduleError(f"phase {p_i} has no trees")
        phase_lat.append(best[0])
        total += best[0]
        total_hops += best[1]
        route += (["then"] if route else []) + best[2]
    what = "the deepest route of any tree" + ("; phases added" if len(phase_lat) > 1 else "")
    return Latency(total, total_hops, route, what, phase_lat)


# --------------------------------------------------------------------------- #
# MSCCL programs
# --------------------------------------------------------------------------- #
SEND_KINDS = ("s", "rcs", "rrs", "rrcs")
RECV_KINDS = ("r", "rcs", "rrc", "rrs", "rrcs")
Preds = list[list[tuple[int, int | None]]]
"""Per step, the steps it waits for, each with the transfer between them (a key of the
transfers' (sending rank, receiving rank)) or None (program order, a ``depid``/``deps``
wait)."""


def msccl_latency(topology: Topology, program: Any, ranks: Sequence[Node],
                  alpha: Mapping[Link, Fraction]) -> Latency:
    """Latency term of an MSCCL program (``collcert.certify.execution.msccl.Program``):
    the longest chain of dependent steps, each transfer p → q costing the
    least α-latency of a route from rank p's node to rank q's node."""
    where, preds, pair = _step_graph(list(program.tbs))
    dist = {p: _dijkstra(topology, ranks[p], alpha)
            for p in sorted({p for p, _ in pair.values()})}
    cost = {i: dist[p][0].get(ranks[q]) for i, (p, q) in pair.items()}
    for i, c in cost.items():
        if c is None:
            p, q = pair[i]
            raise ScheduleError(f"rank {p} cannot reach rank {q} in the topology")
    finish, back = _longest_chains(preds, cost)
    if not where:
        return Latency(Fraction(0), 0, [], "the program has no steps")
    last = max(range(len(where)), key=lambda i: finish[i])
    lat, transfers = finish[last]
    end: int | None = last
    route: list[str] = []
    while end is not None:
        link_back = back[end]
        if link_back is None:
            break
        p, tr = link_back
        if tr is not None:
            a, b = pair[tr]
            route.append(f"rank {a} -> rank {b} ({where[end]})")
        end = p
    return Latency(lat, transfers, route[::-1],
                   "the longest chain of dependent transfers")


def mscclpp_latency(topology: Topology, plan: Any, ranks: Sequence[Node],
                    alpha: Mapping[Link, Fraction]) -> Latency:
    """Latency term of an MSCCL++ plan (``collcert.certify.execution.mscclpp.Plan``,
    already found valid): :func:`collcert.certify.execution.mscclpp_latency.latency`
    with each hop from rank p to rank q costing the least α-latency of a route."""
    from collcert.certify.execution import mscclpp_latency

    dist = {p: _dijkstra(topology, ranks[p], alpha)[0] for p in range(len(ranks))}

    def cost(p: int, q: int) -> Fraction:
        got = dist[p].get(ranks[q])
        if got is None:
            raise ScheduleError(f"rank {p} cannot reach rank {q} in the topology")
        return got[0]

    stamp = mscclpp_latency.latency(plan, cost)
    if stamp is None:
        raise ScheduleError("internal: the MSCCL++ plan audited VALID fails its timed run")
    return Latency(stamp[0], stamp[1], [], "the longest chain of remote hops (signals, "
                   "LL packets, remote reads, the last put)")


def _step_graph(tbs: list[Any]) -> tuple[list[str], Preds, dict[int, tuple[int, int]]]:
    """The steps of a program (where each one is, for messages), what each waits for,
    and the transfers: the k-th send on a connection (sender, receiver, channel)
    matched with the k-th receive, as (sending rank, receiving rank)."""
    step_id: dict[tuple[int, int, int], int] = {}
    where: list[str] = []
    for tb in tbs:
        for i, st in enumerate(tb.steps):
            step_id[(tb.gpu, tb.tbid, i)] = len(where)
            where.append(f"gpu {tb.gpu} tb {tb.tbid} step {i}"
                         + (f" (line {st.line})" if isinstance(getattr(st, "line", None), int)
                            else ""))
    preds: Preds = [[] for _ in range(len(where))]
    sends: dict[tuple[int, int, int], list[int]] = {}
    recvs: dict[tuple[int, int, int], list[int]] = {}
    for tb in tbs:
        for i, st in enumerate(tb.steps):
            me = step_id[(tb.gpu, tb.tbid, i)]
            if i:
                preds[me].append((step_id[(tb.gpu, tb.tbid, i - 1)], None))
            if st.depid >= 0:
                dep = step_id.get((tb.gpu, st.depid, st.deps))
                if dep is not None:
                    preds[me].append((dep, None))
            if st.kind in SEND_KINDS:
                sends.setdefault((tb.gpu, tb.send, tb.chan), []).append(me)
            if st.kind in RECV_KINDS:
                recvs.setdefault((tb.recv, tb.gpu, tb.chan), []).append(me)
    pair: dict[int, tuple[int, int]] = {}
    for conn, ss in sends.items():
        for s_step, r_step in zip(ss, recvs.get(conn, [])):
            preds[r_step].append((s_step, len(pair)))
            pair[len(pair)] = (conn[0], conn[1])
    return where, preds, pair


def _longest_chains(preds: Preds, cost: Mapping[int, tuple[Fraction, int] | None],
                    ) -> tuple[list[tuple[Fraction, int]], list[tuple[int, int | None] | None]]:
    """For every step, the (latency, transfers) of the longest chain that ends at it and
    the link it came by (the step before, the transfer): Kahn's order over the steps.
    ScheduleError when the steps wait on each other in a cycle."""
    n = len(preds)
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for me, ps in enumerate(preds):
        for p, _ in ps:
            succ[p].append(me)
            indeg[me] += 1
    finish: list[tuple[Fraction, int]] = [(Fraction(0), 0)] * n
    back: list[tuple[int, int | None] | None] = [None] * n
    queue = [i for i in range(n) if indeg[i] == 0]
    done = 0
    while queue:
        u = queue.pop()
        done += 1
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                queue.append(v)
        for p, tr in preds[u]:
            c = cost[tr] if tr is not None else None
            cand = (finish[p][0] + (c[0] if c else 0), finish[p][1] + (1 if tr is not None else 0))
            if cand > finish[u]:
                finish[u], back[u] = cand, (p, tr)
    if done < n:
        raise ScheduleError("the program's steps wait on each other in a cycle (a deadlock); "
                            "audit it first")
    return finish, back


def _dijkstra(topology: Topology, src: Node, alpha: Mapping[Link, Fraction],
              reverse: bool = False) -> tuple[dict[Node, tuple[Fraction, int]], dict[Node, Node]]:
    """Least (α-latency, hops) from ``src`` to every node (to ``src`` if reverse)."""
    adj: dict[Node, list[tuple[Node, Fraction]]] = {v: [] for v in topology.nodes}
    for (u, v), a in alpha.items():
        if reverse:
            adj[v].append((u, a))
        else:
            adj[u].append((v, a))
    best: dict[Node, tuple[Fraction, int]] = {src: (Fraction(0), 0)}
    prev: dict[Node, Node] = {}
    heap: list[tuple[Fraction, int, int, Node]] = [(Fraction(0), 0, topology.index[src], src)]
    while heap:
        d, h, _, u = heapq.heappop(heap)
        if (d, h) > best[u]:
            continue
        for v, a in adj[u]:
            cand = (d + a, h + 1)
            if v not in best or cand < best[v]:
                best[v] = cand
                prev[v] = u
                heapq.heappush(heap, (cand[0], cand[1], topology.index[v], v))
    return best, prev


def _pair_max(topology: Topology, alpha: Mapping[Link, Fraction], sources: Sequence[Node],
              targets: Sequence[Node], reverse: bool = False) -> Latency:
    """max over (s, t), s ≠ t, of the least α-latency from s to t (to s if reverse).

    All sources at once: Bellman-Ford rounds on an (sources × nodes) integer
    matrix (α scaled to integers, so numpy's int64 sums are exact), then the
    farthest pair is re-derived exactly by Dijkstra, which gives the route.
    """
    import numpy as np

    scale = lcm_of_denominators(list(alpha.values()))
    links = list(alpha)
    w = [int(alpha[e] * scale) for e in links]
    nodes_n = len(topology.nodes)
    if sum(w) >= 2**60:
        raise TopologyError("the link latencies alpha are too large or too finely divided "
                            "to add up exactly; round them to fewer digits")
    idx = topology.index
    tail = np.array([idx[e[1] if reverse else e[0]] for e in links], dtype=np.int64)
    head = np.array([idx[e[0] if reverse else e[1]] for e in links], dtype=np.int64)
    wt = np.array(w, dtype=np.int64)
    order = np.argsort(head, kind="stable")
    tail, head, wt = tail[order], head[order], wt[order]
    starts = np.flatnonzero(np.r_[True, head[1:] != head[:-1]])
    heads_u = head[starts]
    inf = np.int64(2**61)
    src = [idx[s] for s in sources]
    # dist[v, i]: least latency from source i to node v (rows gather fast)
    dist = np.full((nodes_n, len(src)), inf, dtype=np.int64)
    dist[src, np.arange(len(src))] = 0
    wcol = wt[:, None]
    for _ in range(nodes_n):
        cand = np.minimum.reduceat(dist[tail] + wcol, starts, axis=0)
        new = np.minimum(dist[heads_u], cand)
        if np.array_equal(new, dist[heads_u]):
            break
        dist[heads_u] = new
    tgt = np.array([idx[t] for t in targets], dtype=np.int64)
    sub = dist[tgt].T.copy()  # sources × targets
    same = np.array(src, dtype=np.int64)[:, None] == tgt[None, :]
    sub[same] = -1
    if (sub >= inf).any():
        i, j = np.argwhere(sub >= inf)[0]
        raise TopologyError(f"compute node {targets[j]!r} cannot be reached from "
                            f"{sources[i]!r}")
    i, j = np.unravel_index(int(np.argmax(sub)), sub.shape)
    s, t = sources[int(i)], targets[int(j)]
    exact, prev = _dijkstra(topology, s, alpha, reverse)
    if exact[t][0] * scale != int(sub[i, j]):  # pragma: no cover - two computations disagree
        raise RuntimeError("internal: the latency bound's two computations disagree")
    r = [t]
    while r[-1] != s:
        r.append(prev[r[-1]])
    return Latency(exact[t][0], exact[t][1], r if reverse else r[::-1])


def latency_lower_bound(topology: Topology, collective: str, alpha: Mapping[Link, Fraction],
                        root: Node | None = None) -> Latency:
    """The least latency any schedule of the model needs (module docstring):
    the largest α-distance between two compute nodes the collective joins."""
    compute = list(topology.compute_nodes)
    if not any(alpha.values()):
        return Latency(Fraction(0), 0, [], "α = 0 on every link: no latency bound")
    if collective == "broadcast":
        if root is None:
            raise ScheduleError("a broadcast bound needs its root")
        lb = _pair_max(topology, alpha, [root], compute)
        lb.what = "the largest α-distance from the root to a compute node"
    elif collective == "reduce":
        if root is None:
            raise ScheduleError("a reduce bound needs its root")
        lb = _pair_max(topology, alpha, [root], compute, reverse=True)
        lb.what = "the largest α-distance from a compute node to the root"
    else:
        lb = _pair_max(topology, alpha, compute, compute)
        lb.what = "the largest α-distance between two compute nodes"
    return lb
