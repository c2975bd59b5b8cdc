"""The graph edge splitting works on, and the repair of the flows it keeps.

Switch removal (Zhao & Krishnamurthy 2023, §2.2, Thm 8, Alg 1; the method is in the
docstring of :mod:`.splitting`) keeps one s→v flow per compute sink v and tests
every split against them. Here:

- :class:`SplitGraph`: the shrinking graph, an :class:`~.walks.ArcTable` (tails,
  heads, capacities, the walks in G of every capacity unit) with one s→v flow per
  compute sink v (a numpy row each); :func:`hop_distances`, hop distances in it.
- :class:`FlowRepair`: the methods of the splitter that make a kept flow, broken
  by a split, feasible again in place (routes of one or two arcs, then
  breadth-first augmenting paths), check the result exactly, or undo it; a
  repaired flow proves F(s, v) ≥ D as a re-solved one does, so γ stays that of
  Thm 8.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from .walks import ArcTable

Node = Hashable
Path = tuple[Node, ...]


class SplitGraph(ArcTable):
    """The shrinking graph with a global arc registry and one flow per sink."""

    def __init__(
        self,
        compute: Sequence[Node],
        switches: Sequence[Node],
        caps: Mapping[tuple[Node, Node], int],
        supply: Mapping[Node, int],
    ) -> None:
        self.nodes: list[Node] = list(compute) + list(switches)
        self.idx = {v: i for i, v in enumerate(self.nodes)}
        self.nc = len(compute)
        self.n = len(self.nodes)
        self.s = self.n  # super source
        super().__init__(self.n)
        for (a, b), c in caps.items():
            if c > 0:
                i = self.arc_between(self.idx[a], self.idx[b])
                self.cap[i] += c
                self.paths[i][(a, b)] = self.paths[i].get((a, b), 0) + c
        self.src_arc: list[int] = []
        for j, node in enumerate(compute):
            i = self.arc_between(self.s, j)
            self.cap[i] = int(supply.get(node, 0))
            self.src_arc.append(i)
        # int64 unless the capacities could overflow it (then exact Python ints)
        big = sum(self.cap) >= 2**62
        self.dtype: Any = object if big else np.int64
        self.flow = np.zeros((self.nc, max(16, 2 * len(self.tails))), dtype=self.dtype)

    def arc_between(self, a: int, b: int) -> int:
        """The arc a → b, added with capacity 0 if there is none."""
        i = self.arc.get((a, b))
        if i is None:
            i = self.add_arc(a, b)
            # the last column of ``flow`` is never an arc (a zero "no such arc" slot)
            if hasattr(self, "flow") and i >= self.flow.shape[1] - 1:
                grown = np.zeros((self.nc, 2 * self.flow.shape[1]), dtype=self.dtype)
                grown[:, : self.flow.shape[1]] = self.flow
                self.flow = grown
        return i

    def live_in(self, w: int) -> list[int]:
        return [i for i in self.inn[w] if self.cap[i] > 0]

    def live_out(self, w: int) -> list[int]:
        return [i for i in self.out[w] if self.cap[i] > 0]


def hop_distances(g: SplitGraph, sources: list[int], banned: int) -> dict[int, list[int]]:
    """Hop distances from each source in the live graph without ``banned``."""
    adj: dict[int, list[int]] = {}
    for i, (a, b) in enumerate(zip(g.tails, g.heads)):
        if g.cap[i] > 0 and a != g.s and a != banned and b != banned:
            adj.setdefault(a, []).append(b)
    out = {}
    for src in sources:
        dist = [-1] * g.n
        dist[src] = 0
        q = deque([src])
        while q:
            x = q.popleft()
            for y in adj.get(x, ()):
                if dist[y] < 0:
                    dist[y] = dist[x] + 1
                    q.append(y)
        out[src] = dist
    return out


class FlowRepair:
    """Flow repair, a base of ``splitting._Splitter`` (which sets the attributes below)."""

    g: SplitGraph
    w: int
    pos: dict[int, int]
    stats: dict[str, int]
    tails_arr: np.ndarray
    heads_arr: np.ndarray
    _csr: tuple[np.ndarray, Any] | None
    _route_cache: dict[tuple[int, int], tuple[Any, ...]]

    # ------------------------------------------------------------- repair
    # A kept flow broken by a split is first repaired locally, and re-solved
    # only when that fails. Repair: re-pair δ at w as in the survival test, cut
    # each overloaded arc (a, b) down to its new capacity, which leaves an excess
    # at a and a deficit at b, and send that excess a → b along residual paths:
    # first routes of one or two arcs (a→b, a→x→b), then shortest augmenting
    # paths (BFS). The row of g.flow is edited in place with an undo log. Every
    # repaired flow is checked exactly (capacities, conservation, value ≥ D) on
    # the arcs it changed before it is kept, so a repair is a witness that
    # F(s, v) ≥ D: γ is still exactly the γ of Zhao & Krishnamurthy 2023, Thm 8, and the flows remain
    # the certificates of G*.

    def cap_row(self) -> np.ndarray:
        """Current capacities as an int64 row like ``g.flow``'s; its last column
        (never an arc, see :meth:`SplitGraph.arc_between`) is the "no such arc" slot."""
        g = self.g
        row = np.zeros(g.flow.shape[1], dtype=np.int64)
        row[: len(g.cap)] = g.cap
        return row

    def _routes(self, a: int, b: int) -> tuple[Any, ...]:
        """Arc indices of the residual routes a → b of length ≤ 2: the direct arc
        (a, b) and the reverse arc (b, a), then per neighbour x of a the arcs (a, x),
        (x, a), (x, b), (b, x); ``dummy`` (a zero column) where an arc is missing."""
        g = self.g
        dummy = g.flow.shape[1] - 1
        xs = sorted({g.heads[i] for i in g.out[a] if g.cap[i] > 0 or i in self.pos}
                    | {g.tails[i] for i in g.inn[a] if g.cap[i] > 0 or i in self.pos}
                    - {a, b, g.s})

        def arc(p: int, q: int) -> int:
            i = g.arc.get((p, q))
            return dummy if i is None else i

        return (arc(a, b), arc(b, a),
                np.array([arc(a, x) for x in xs], dtype=np.int64),
                np.array([arc(x, a) for x in xs], dtype=np.int64),
                np.array([arc(x, b) for x in xs], dtype=np.int64),
                np.array([arc(b, x) for x in xs], dtype=np.int64))

    @staticmethod
    def _add(f: np.ndarray, log: dict[int, int], arc: int, amount: int) -> None:
        """f[arc] += amount, remembering the first value of every arc touched."""
        if arc not in log:
            log[arc] = int(f[arc])
        f[arc] += amount

    def _use(self, f: np.ndarray, log: dict[int, int], capw: np.ndarray, fwd: int, rev: int,
             amount: int) -> None:
        """Move ``amount`` units one hop: spare capacity of ``fwd`` first, then
        cancel flow on ``rev`` (the caller checked that both suffice)."""
        x = min(amount, int(capw[fwd] - f[fwd]))
        if x:
            self._add(f, log, fwd, x)
        if amount - x:
            self._add(f, log, rev, x - amount)

    def _push(self, f: np.ndarray, log: dict[int, int], capw: np.ndarray, a: int, b: int,
              excess: int) -> int:
        """Send up to ``excess`` units a → b in the residual network of ``f`` along
        routes of one or two arcs (edits ``f``); returns what is left to send."""
        key = (a, b)
        routes = self._route_cache.get(key)
        if routes is None:
            routes = self._route_cache[key] = self._routes(a, b)
        d_f, d_r, f1, r1, f2, r2 = routes
        direct = min(excess, int(capw[d_f] - f[d_f] + f[d_r]))
        if direct:
            self._use(f, log, capw, d_f, d_r, direct)
            excess -= direct
        if excess == 0 or not len(f1):
            return excess
        room = np.minimum(capw[f1] - f[f1] + f[r1], capw[f2] - f[f2] + f[r2])
        for j in np.nonzero(room > 0)[0]:
            x = min(excess, int(room[j]))
            self._use(f, log, capw, int(f1[j]), int(r1[j]), x)
            self._use(f, log, capw, int(f2[j]), int(r2[j]), x)
            excess -= x
            if excess == 0:
                break
        return excess

    def _residual_adjacency(self, capw: np.ndarray) -> tuple[list[list[tuple[int, int, bool]]],
                                                            list[int]]:
        """Per node, the residual entries leaving it over every arc of positive
        capacity in ``capw`` (an arc of capacity 0 carries no flow either):
        ``(other end, arc, forward)``, forward with residual c − f, backward with
        residual f; and ``capw`` as a list. Cached per ``capw``."""
        if self._csr is not None and self._csr[0] is capw:
            return self._csr[1]  # type: ignore[no-any-return]
        g = self.g
        adj: list[list[tuple[int, int, bool]]] = [[] for _ in range(g.n + 2)]
        tails, heads = g.tails, g.heads
        for arc in np.nonzero(capw[: len(tails)] > 0)[0].tolist():
            t, h = tails[arc], heads[arc]
            adj[t].append((h, arc, True))
            adj[h].append((t, arc, False))
        found = (adj, capw.tolist())
        self._csr = (capw, found)
        return found

    def _bfs_push(self, f: np.ndarray, log: dict[int, int], capw: np.ndarray, a: int, b: int,
                  excess: int) -> bool:
        """Send ``excess`` units a → b along shortest augmenting paths of the
        residual network of ``f`` (edits ``f``); False if the residual network
        cannot carry them all. Breadth-first from a, node by node, stopping at b:
        only the entries of the nodes it reaches are read."""
        adj, cap = self._residual_adjacency(capw)
        flow = f.item
        while excess > 0:
            link: dict[int, tuple[int, int, bool]] = {a: (a, -1, True)}
            queue = deque([a])
            while queue and b not in link:
                x = queue.popleft()
                for y, arc, fwd in adj[x]:
                    if y not in link and (cap[arc] - flow(arc) if fwd else flow(arc)) > 0:
                        link[y] = (x, arc, fwd)
                        if y == b:
                            break
                        queue.append(y)
            if b not in link:
                return False
            path = []
            y = b
            while y != a:
                y, arc, fwd = link[y]
                path.append((arc, fwd))
            amount = min(excess, min(cap[arc] - flow(arc) if fwd else flow(arc)
                                     for arc, fwd in path))
            for arc, fwd in path:
                self._add(f, log, arc, amount if fwd else -amount)
            excess -= amount
        return True

    def undo(self, v: int, log: dict[int, int]) -> None:
        """Put back v's kept flow after an in-place repair."""
        row = self.g.flow[v]
        for arc, old in log.items():
            row[arc] = old

    def repair(self, v: int, u: int, t: int, gam: int,
               capw: np.ndarray | None) -> dict[int, int] | None:
        """Make v's kept flow (row v of g.flow, edited in place) feasible for the
        split of γ = ``gam`` units of (u, w), (w, t), the capacities ``capw``
        already split. Returns the undo log, or None (flow left unchanged)."""
        g, w = self.g, self.w
        if capw is None or g.dtype is object:
            return None  # huge capacities: leave it to the exact solver
        i_uw, i_wt = g.arc[(u, w)], g.arc[(w, t)]
        i_ut = g.arc[(u, t)] if u != t else -1
        f = g.flow[v]
        log: dict[int, int] = {}
        dlt = min(int(f[i_uw]), int(f[i_wt]), gam)
        if dlt:
            self._add(f, log, i_uw, -dlt)
            self._add(f, log, i_wt, -dlt)
            if i_ut >= 0:
                self._add(f, log, i_ut, dlt)
        for p, q, i in ((w, t, i_wt), (u, w, i_uw)):
            over = int(f[i] - capw[i])
            if over > 0:
                self._add(f, log, i, -over)
                left = self._push(f, log, capw, p, q, over)
                if left and not self._bfs_push(f, log, capw, p, q, left):
                    self.undo(v, log)
                    return None
        if not self._check(f, log, capw, v):
            raise RuntimeError("internal: a repaired flow is not a flow (splitting repair)")
        self.stats["repairs"] += 1
        return log

    def _check(self, f: np.ndarray, log: dict[int, int], capw: np.ndarray, v: int) -> bool:
        """f is an s→v flow of value ≥ D within ``capw``, given that it was one
        before the edits in ``log``: only the arcs changed are read (a handful;
        plain Python ints, exact)."""
        g = self.g
        m = len(g.tails)
        bal: dict[int, int] = {}
        for arc, old in log.items():
            if arc >= m:
                return False  # the "no such arc" column was written
            new = int(f[arc])
            if new < 0 or new > int(capw[arc]):
                return False
            delta = new - old
            if delta:
                h, t = g.heads[arc], g.tails[arc]
                bal[h] = bal.get(h, 0) + delta
                bal[t] = bal.get(t, 0) - delta
        # conservation everywhere but s and v; the kept flow has value ≥ D and
        # a repair may only keep or raise it
        return bal.get(v, 0) >= 0 and all(x == 0 for node, x in bal.items()
                                          if node != v and node != g.s)
