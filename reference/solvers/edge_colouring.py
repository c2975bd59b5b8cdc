"""Weighted bipartite edge colouring: the Edge Coloring Lemma (Legrand et al. 2003, Lemma 1, Thm 6).

Each node P_j is split into a send copy P_j^out and a receive copy P_j^in; a
communication (j, k) of integer duration w_{j,k} is the bipartite edge
(P_j^out, P_k^in) with weight w. The weighted graph is decomposed into
matchings M_1, ..., M_K with positive integer durations μ_i such that every
edge is covered exactly (Σ_{i: e ∈ M_i} μ_i = w_e) and Σ_i μ_i = Δ, the largest
weighted degree of any send or receive copy. Running the matchings one after
the other is then a valid one-port schedule of length Δ: within a matching no
node sends twice or receives twice.

Construction (the classical one, e.g. Schrijver, *Combinatorial Optimization*,
ch. 20): pad the graph with idle ("dummy") edges between copies whose degree
is below Δ until every copy has weighted degree exactly Δ. A Δ-regular
weighted bipartite graph has a perfect matching in its support (Hall: a set A
of copies sends |A|·Δ, which its neighbours can only absorb if they are at
least |A|); take one, give it μ = its smallest weight, subtract, repeat. Each
round empties at least one edge, so there are at most |E| + 2|V| rounds (the
paper's bound |E| counts real edges only; rounds whose real edges coincide are
merged). The perfect matching is repaired between rounds with augmenting
paths from the copies whose matched edge ran out.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

Node = Hashable
Edge = tuple[Node, Node]


def colour(weights: Mapping[Edge, int]) -> list[tuple[int, list[Edge]]]:
    """``[(μ_i, edges of M_i), ...]`` with Σ μ_i = max weighted degree (see module doc).

    ``weights`` maps an edge (sender, receiver) to a positive integer duration;
    zero-weight edges are ignored. Every returned matching has at least one edge.
    """
    items = [(e, int(w)) for e, w in weights.items() if int(w) > 0]
    for e, w in weights.items():
        if int(w) != w or w < 0:
            raise ValueError(f"edge {e!r}: weight {w!r} is not a non-negative integer")
    if not items:
        return []
    return _RegularGraph(items).peel()


class _RegularGraph:
    """The weighted bipartite graph of send copies (left) and receive copies (right),
    padded with idle edges to be Δ-regular, and a perfect matching of its support.

    Edge records are parallel lists: tail (left index), head (right index),
    remaining weight, and the real edge (None for an idle one)."""

    def __init__(self, items: list[tuple[Edge, int]]) -> None:
        left_ids: dict[Node, int] = {}
        right_ids: dict[Node, int] = {}
        for (u, v), _ in items:
            left_ids.setdefault(u, len(left_ids))
            right_ids.setdefault(v, len(right_ids))
        self.n = n = max(len(left_ids), len(right_ids))
        self.tail: list[int] = []
        self.head: list[int] = []
        self.rest: list[int] = []
        self.real: list[Edge | None] = []
        deg_l = [0] * n
        deg_r = [0] * n
        for (u, v), w in items:
            a, b = left_ids[u], right_ids[v]
            self._add(a, b, w, (u, v))
            deg_l[a] += w
            deg_r[b] += w
        self.delta = max(max(deg_l), max(deg_r))
        self._pad(deg_l, deg_r)
        self.adj: list[list[int]] = [[] for _ in range(n)]  # left index -> edge ids
        for eid, a in enumerate(self.tail):
            self.adj[a].append(eid)
        self.match_l: list[int | None] = [None] * n  # left -> edge id
        self.match_r: list[int | None] = [None] * n  # right -> edge id

    def _add(self, a: int, b: int, w: int, real: Edge | None) -> None:
        self.tail.append(a)
        self.head.append(b)
        self.rest.append(w)
        self.real.append(real)

    def _pad(self, deg_l: list[int], deg_r: list[int]) -> None:
        """Idle edges pairing left and right deficits (both sides total n·Δ − Σ w)."""
        n = self.n
        i = j = 0
        def_l = [self.delta - d for d in deg_l]
        def_r = [self.delta - d for d in deg_r]
        while True:
            while i < n and def_l[i] == 0:
                i += 1
            while j < n and def_r[j] == 0:
                j += 1
            if i == n or j == n:
                break
            w = min(def_l[i], def_r[j])
            self._add(i, j, w, None)
            def_l[i] -= w
            def_r[j] -= w
        assert sum(def_l) == 0 and sum(def_r) == 0

    def augment(self, root: int) -> bool:
        """Kuhn's augmenting path from a free left vertex (iterative DFS) over the edges
        with weight left; False when there is none."""
        seen_r = [False] * self.n
        stack: list[tuple[int, int]] = [(root, 0)]
        via: list[int] = []  # edge ids along the path
        rest, head = self.rest, self.head
        while stack:
            a, pos = stack[-1]
            edges = self.adj[a]
            while pos < len(edges) and (rest[edges[pos]] == 0 or seen_r[head[edges[pos]]]):
                pos += 1
            if pos == len(edges):
                stack.pop()
                if via:
                    via.pop()
                continue
            stack[-1] = (a, pos + 1)
            eid = edges[pos]
            b = head[eid]
            seen_r[b] = True
            via.append(eid)
            other = self.match_r[b]
            if other is None:
                for e2 in via:  # flip the path
                    self.match_l[self.tail[e2]] = e2
                    self.match_r[head[e2]] = e2
                return True
            stack.append((self.tail[other], 0))
        return False

    def peel(self) -> list[tuple[int, list[Edge]]]:
        """Take a perfect matching with μ = its smallest weight, subtract, repair the
        matching, repeat until Δ is used up; consecutive rounds with the same real
        edges are merged."""
        out: list[tuple[int, list[Edge]]] = []
        remaining = self.delta
        while remaining:
            for a in range(self.n):
                if self.match_l[a] is None and not self.augment(a):
                    raise RuntimeError("internal: a regular bipartite graph lost its perfect "
                                       "matching (Hall's theorem says it has one)")
            chosen = [eid for eid in self.match_l if eid is not None]
            mu = min(self.rest[eid] for eid in chosen)
            edges_real = [r for eid in chosen if (r := self.real[eid]) is not None]
            for eid in chosen:
                self.rest[eid] -= mu
                if self.rest[eid] == 0:
                    self.match_l[self.tail[eid]] = None
                    self.match_r[self.head[eid]] = None
            remaining -= mu
            key = sorted(edges_real, key=repr)
            if out and sorted(out[-1][1], key=repr) == key:
                out[-1] = (out[-1][0] + mu, out[-1][1])
            else:
                out.append((mu, edges_real))
        return out
