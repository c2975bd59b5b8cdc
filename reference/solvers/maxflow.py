"""Exact integer maximum flow: one facade, pluggable engines.

Every max-flow in collcert goes through :class:`FlowNetwork` (or the
:func:`max_flow` convenience wrapper). Two engines compute the same thing:

``"ortools"``
    Google OR-Tools' C++ push-relabel ``SimpleMaxFlow``: fast, int64 only.
``"exact"``
    Dinic's algorithm in pure Python on Python integers: arbitrary precision
    (capacities like 2**100), slower.

``engine="auto"`` (the default) picks OR-Tools whenever every capacity, and the
sum of them all, fits comfortably in int64, and the exact engine otherwise.
Neither engine is trusted by the rest of collcert: the flows they return are
emitted as certificates and checked edge by edge by ``collcert.certify``.

Infinite capacities are written ``None`` (or :data:`INF`); they are replaced
by one more than the sum of all finite capacities, which no finite cut can
reach, so a minimum cut never crosses an infinite arc when a finite one exists.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

INF = None
_INT64_SAFE = 2**62


@dataclass
class FlowResult:
    """The outcome of one max-flow computation on node indices."""

    value: int
    flow: Sequence[int]
    """Flow on every arc, in the order the arcs were added."""
    _cut: frozenset[int] | None = field(default=None, repr=False)
    _cut_fn: Any = field(default=None, repr=False)

    @property
    def source_side(self) -> frozenset[int]:
        """The source side of a minimum cut (nodes reachable in the residual network)."""
        if self._cut is None:
            self._cut = frozenset(self._cut_fn())
        return self._cut


class FlowNetwork:
    """A directed network on nodes ``0 .. num_nodes-1`` with integer capacities.

    Build it once, then call :meth:`solve` for as many (source, sink) pairs
    and capacity updates (:meth:`set_capacity`) as needed: the auxiliary
    networks of Zhao & Krishnamurthy 2023 differ from each other in a few arcs only.
    """

    def __init__(
        self,
        num_nodes: int,
        tails: Sequence[int],
        heads: Sequence[int],
        capacities: Sequence[int | None],
        engine: str = "auto",
    ) -> None:
        if engine not in ("auto", "ortools", "exact"):
            raise ValueError(f"unknown max-flow engine {engine!r}: use auto, ortools or exact")
        if not (len(tails) == len(heads) == len(capacities)):
            raise ValueError("tails, heads and capacities must have the same length")
        self.num_nodes = num_nodes
        self.tails = [int(t) for t in tails]
        self.heads = [int(h) for h in heads]
        self.caps: list[int | None] = [None if c is None else int(c) for c in capacities]
        for c in self.caps:
            if c is not None and c < 0:
                raise ValueError(f"negative capacity {c}")
        self.engine = engine
        self.solves = 0
        self._ortools: Any = None
        self._ortools_arcs: Any = None
        self._eff: list[int] | None = None
        self._eff_total = 0
        self._dirty = True
        self._arrays: Any = None  # (tails, heads, caps) numpy arrays from from_arrays
        self._pending: dict[int, int] = {}  # update_capacities not yet given to OR-Tools
        self._has_inf = any(c is None for c in self.caps)  # an infinite arc was ever set

    @property
    def num_arcs(self) -> int:
        return len(self.tails)

    def add_arc(self, tail: int, head: int, capacity: int | None) -> int:
        """Add an arc and return its index."""
        self.tails.append(int(tail))
        self.heads.append(int(head))
        self.caps.append(None if capacity is None else int(capacity))
        self._has_inf = self._has_inf or capacity is None
        self._ortools = None
        self._dirty = True
        self._arrays = None
        return len(self.tails) - 1

    def set_all_capacities(self, capacities: Sequence[int | None]) -> None:
        """Replace every arc's capacity at once (``None`` = infinite)."""
        if len(capacities) != len(self.caps):
            raise ValueError(f"{len(capacities)} capacities for {len(self.caps)} arcs")
        self.caps = [None if c is None else int(c) for c in capacities]
        self._has_inf = self._has_inf or any(c is None for c in self.caps)
        self._dirty = True

    def set_capacity(self, arc: int, capacity: int | None) -> None:
        self.caps[arc] = None if capacity is None else int(capacity)
        self._has_inf = self._has_inf or capacity is None
        self._dirty = True
        self._arrays = None

    def _effective_caps(self) -> list[int]:
        """Capacities with every infinite arc replaced by (sum of finite ones) + 1.

        Cached until a capacity changes (``_dirty``), since many solves in a row
        often run on the same capacities with different (source, sink) pairs.
        """
        if self._dirty or self._eff is None:
            big = sum(c for c in self.caps if c is not None) + 1
            self._eff = [big if c is None else c for c in self.caps]
            self._eff_total = sum(self._eff)
        return self._eff

    def _pick_engine(self, total: int) -> str:
        if self.engine != "auto":
            return self.engine
        return "ortools" if total < _INT64_SAFE else "exact"

    def solve(self, source: int, sink: int) -> FlowResult:
        """Maximum flow from ``source`` to ``sink`` with the current capacities."""
        engine, caps, changed = self._prepare(source, sink)
        if engine == "ortools":
            result = self._solve_ortools(source, sink, caps, changed)
        else:
            result = _dinic(self.num_nodes, self.tails, self.heads, caps, source, sink)
        self._dirty = False
        return result

    def _ortools_solved(self, source: int, sink: int, caps: list[int], changed: bool) -> Any:
        """Run OR-Tools on the current capacities; the solver, or None when the
        source or sink has no arc at all (then nothing can flow)."""
        import numpy as np
        from ortools.graph.python import max_flow as ormf

        if self._ortools is None:
            mf = ormf.SimpleMaxFlow()
            if self.tails:
                arrs = self._arrays if self._arrays is not None else (
                    self.tails, self.heads, caps)
                self._ortools_arcs = mf.add_arcs_with_capacity(
                    np.asarray(arrs[0], dtype=np.int32),
                    np.asarray(arrs[1], dtype=np.int32),
                    np.asarray(arrs[2], dtype=np.int64),
                )
            else:
                self._ortools_arcs = np.zeros(0, dtype=np.int32)
            self._ortools = mf
        elif changed:
            self._ortools.set_arcs_capacity(self._ortools_arcs, np.asarray(caps, dtype=np.int64))
        elif self._pending:
            arcs = list(self._pending)
            self._ortools.set_arcs_capacity(
                self._ortools_arcs[np.asarray(arcs, dtype=np.int64)],
                np.asarray([caps[a] for a in arcs], dtype=np.int64))
        self._pending = {}
        mf = self._ortools
        if max(source, sink) >= mf.num_nodes():
            return None
        status = mf.solve(source, sink)
        if status != mf.OPTIMAL:
            raise RuntimeError(f"ortools max-flow failed with status {status}")
        return mf

    def _solve_ortools(
        self, source: int, sink: int, caps: list[int], changed: bool
    ) -> FlowResult:
        mf = self._ortools_solved(source, sink, caps, changed)
        if mf is None:  # the source or the sink has no arc: nothing can flow
            # The source side of the minimum cut is still every node the source
            # reaches (the residual network is the network itself), not {source}.
            return FlowResult(0, [0] * len(caps), _cut=self._reachable(source, caps))
        # Python ints, never numpy scalars: callers do exact arithmetic with them
        flows = mf.flows(self._ortools_arcs).tolist() if len(caps) else []
        # the cut is read now: the solver's state belongs to the next solve
        cut = frozenset(mf.get_source_side_min_cut())
        return FlowResult(int(mf.optimal_flow()), flows, _cut=cut)

    def _reachable(self, source: int, caps: list[int]) -> frozenset[int]:
        """Nodes reachable from ``source`` over arcs of positive capacity."""
        out: dict[int, list[int]] = {}
        for t, h, c in zip(self.tails, self.heads, caps):
            if c > 0:
                out.setdefault(t, []).append(h)
        seen, stack = {source}, [source]
        while stack:
            for h in out.get(stack.pop(), ()):
                if h not in seen:
                    seen.add(h)
                    stack.append(h)
        return frozenset(seen)

    # ------------------------------------------------------------------ fast paths
    # Leaner variants of :meth:`solve` for hot loops (switch removal and tree
    # packing run thousands of max-flows). They compute the same maximum flow with
    # the same engine choice; they only skip what the caller does not need (the
    # value is always a Python int), or build and update networks without per-arc
    # Python work.

    def _prepare(self, source: int, sink: int) -> tuple[str, list[int], bool]:
        """(engine, effective capacities, changed since the last solve) for one solve;
        shared by :meth:`solve` and the fast paths."""
        if source == sink:
            raise ValueError("source and sink must differ")
        self.solves += 1
        changed = self._dirty or self._eff is None
        caps = self._effective_caps()
        engine = self._pick_engine(self._eff_total)
        if engine == "ortools" and self._eff_total >= _INT64_SAFE:
            raise OverflowError("capacities too large for the ortools engine; use 'exact'")
        return engine, caps, changed

    def solve_value(self, source: int, sink: int) -> int:
        """The maximum flow value only (no flow vector, no cut): :meth:`solve`'s ``value``."""
        engine, caps, changed = self._prepare(source, sink)
        self._dirty = False
        if engine == "ortools":
            mf = self._ortools_solved(source, sink, caps, changed)
            return 0 if mf is None else int(mf.optimal_flow())
        return int(_dinic(self.num_nodes, self.tails, self.heads, caps, source, sink).value)

    def solve_array(self, source: int, sink: int) -> tuple[int, Any]:
        """Maximum flow as ``(value, flow)`` with ``flow`` a numpy array, one entry per arc.

        For callers that only compare, copy or store the flow vector (switch
        removal keeps one flow per sink in a numpy matrix): it avoids building
        a Python list of the flow. With OR-Tools the array is ``int64`` (every
        capacity fits, see ``_INT64_SAFE``); with the exact engine it holds
        Python ints (``dtype=object``). Never mix its entries into exact
        arithmetic with Python big ints: convert with ``int()`` first. No cut
        is computed. ``value`` is a Python int.
        """
        import numpy as np

        engine, caps, changed = self._prepare(source, sink)
        self._dirty = False
        if engine == "ortools":
            mf = self._ortools_solved(source, sink, caps, changed)
            if mf is None:
                return 0, np.zeros(len(caps), dtype=np.int64)
            flow = mf.flows(self._ortools_arcs) if len(caps) else np.zeros(0, dtype=np.int64)
            return int(mf.optimal_flow()), np.asarray(flow, dtype=np.int64)
        res = _dinic(self.num_nodes, self.tails, self.heads, caps, source, sink)
        out = np.empty(len(caps), dtype=object)
        out[:] = list(res.flow)
        return int(res.value), out

    @classmethod
    def from_arrays(
        cls, num_nodes: int, tails: Any, heads: Any, capacities: Any, engine: str = "auto"
    ) -> FlowNetwork:
        """Build from integer numpy arrays of *finite* capacities (no ``None``).

        The same network as ``FlowNetwork(num_nodes, tails.tolist(), heads.tolist(),
        capacities.tolist(), engine)``, but the conversion is done by numpy
        (``tolist`` yields Python ints), not one ``int()`` per arc: tree packing
        builds thousands of small networks.
        """
        import numpy as np

        if engine not in ("auto", "ortools", "exact"):
            raise ValueError(f"unknown max-flow engine {engine!r}: use auto, ortools or exact")
        t = np.asarray(tails)
        h = np.asarray(heads)
        c = np.asarray(capacities)
        if not (t.shape == h.shape == c.shape) or t.ndim != 1:
            raise ValueError("tails, heads and capacities must be 1-d arrays of the same length")
        for arr in (t, h, c):
            if arr.size and not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == object):
                raise ValueError("from_arrays needs integer arrays")
        if c.size and c.min() < 0:
            raise ValueError(f"negative capacity {c.min()}")
        net = cls.__new__(cls)
        net.num_nodes = num_nodes
        # tolist() of an integer array gives Python ints; object arrays are converted
        net.tails = [int(x) for x in t.tolist()] if t.dtype == object else t.tolist()
        net.heads = [int(x) for x in h.tolist()] if h.dtype == object else h.tolist()
        caps: list[int] = [int(x) for x in c.tolist()] if c.dtype == object else c.tolist()
        net.caps = list(caps)
        net.engine = engine
        net.solves = 0
        net._ortools = None
        net._ortools_arcs = None
        # every capacity is finite: the effective capacities are the capacities
        net._eff = caps
        net._eff_total = sum(caps)
        net._dirty = False
        net._arrays = (t, h, c) if c.dtype != object else None
        net._pending = {}
        net._has_inf = False
        return net

    def update_capacities(self, arcs: Sequence[int], capacities: Sequence[int]) -> None:
        """Set finite capacities of a few arcs, at a cost of O(len(arcs)).

        The same as ``set_capacity(a, c)`` for each pair, but when no arc of
        the network is infinite (so the effective capacities are the
        capacities) the cached effective capacities and their total are
        updated in place instead of being recomputed over every arc at the
        next solve, and OR-Tools is given only the changed arcs. Tree packing
        re-solves one network thousands of times with a few capacities
        changed in between.
        """
        if self._dirty or self._eff is None or self._has_inf:
            for a, c in zip(arcs, capacities):
                self.set_capacity(int(a), int(c))
            return
        eff = self._eff
        for a, c in zip(arcs, capacities):
            a, c = int(a), int(c)
            if c < 0:
                raise ValueError(f"negative capacity {c}")
            self._eff_total += c - eff[a]
            self.caps[a] = c
            eff[a] = c
            self._pending[a] = c
        self._arrays = None


def _dinic(
    n: int, tails: list[int], heads: list[int], caps: list[int], s: int, t: int
) -> FlowResult:
    """Dinic's blocking-flow algorithm on exact Python integers."""
    m = len(tails)
    # residual arcs: 2*i is arc i, 2*i+1 its reverse
    to = [0] * (2 * m)
    res = [0] * (2 * m)
    adj: list[list[int]] = [[] for _ in range(n)]
    for i in range(m):
        u, v = tails[i], heads[i]
        to[2 * i], res[2 * i] = v, caps[i]
        to[2 * i + 1], res[2 * i + 1] = u, 0
        adj[u].append(2 * i)
        adj[v].append(2 * i + 1)
    total = 0
    while True:
        level = [-1] * n
        level[s] = 0
        q = deque([s])
        while q:
            u = q.popleft()
            for a in adj[u]:
                if res[a] > 0 and level[to[a]] < 0:
                    level[to[a]] = level[u] + 1
                    q.append(to[a])
        if level[t] < 0:
            break
        it = [0] * n
        while True:
            # iterative DFS for one augmenting path in the level graph
            path: list[int] = []
            u = s
            while u != t:
                advanced = False
                while it[u] < len(adj[u]):
                    a = adj[u][it[u]]
                    v = to[a]
                    if res[a] > 0 and level[v] == level[u] + 1:
                        path.append(a)
                        u = v
                        advanced = True
                        break
                    it[u] += 1
                if not advanced:
                    if u == s:
                        break
                    level[u] = -1  # dead end
                    a = path.pop()
                    u = to[a ^ 1]
                    it[u] += 1
            if u != t:
                break
            push = min(res[a] for a in path)
            for a in path:
                res[a] -= push
                res[a ^ 1] += push
            total += push
    flows = [caps[i] - res[2 * i] for i in range(m)]
    # source side: reachable from s in the final residual network
    seen = [False] * n
    seen[s] = True
    q = deque([s])
    while q:
        u = q.popleft()
        for a in adj[u]:
            if res[a] > 0 and not seen[to[a]]:
                seen[to[a]] = True
                q.append(to[a])
    side = frozenset(i for i in range(n) if seen[i])
    return FlowResult(total, flows, _cut=side)


@dataclass
class MaxFlow:
    """Result of :func:`max_flow` on a graph with arbitrary node ids."""

    value: int
    flow: dict[tuple[Hashable, Hashable], int]
    source_side: frozenset[Hashable]


def max_flow(
    capacities: Mapping[tuple[Hashable, Hashable], int | None],
    source: Hashable,
    sink: Hashable,
    engine: str = "auto",
) -> MaxFlow:
    """Maximum ``source``-``sink`` flow in the graph ``{(u, v): capacity}``.

    Returns the flow value, the flow on every arc, and the source side of a
    minimum cut. Capacities are non-negative integers, ``None`` for infinite.
    """
    nodes: dict[Hashable, int] = {}
    for u, v in capacities:
        nodes.setdefault(u, len(nodes))
        nodes.setdefault(v, len(nodes))
    for x in (source, sink):
        nodes.setdefault(x, len(nodes))
    arcs = list(capacities)
    net = FlowNetwork(
        len(nodes),
        [nodes[u] for u, _ in arcs],
        [nodes[v] for _, v in arcs],
        [capacities[a] for a in arcs],
        engine=engine,
    )
    res = net.solve(nodes[source], nodes[sink])
    back = list(nodes)
    return MaxFlow(
        res.value,
        {a: int(f) for a, f in zip(arcs, res.flow)},
        frozenset(back[i] for i in res.source_side),
    )
