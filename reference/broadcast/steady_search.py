"""Exhaustive searches: the best single tree and the best DAG (Legrand et al. 2003, §3).

Legrand et al. 2003, §3.1 shows on its Fig. 1 platform that one broadcast tree (2/3),
the best DAG (4/5) and the whole graph (1) give different throughputs; §3.2
proves that finding the best tree is NP-complete (Thm 1). These searches make
the comparison on any small platform, by enumeration:

- **best tree**: every spanning arborescence rooted at the source (a parent per
  node, no cycle), scored by eq. (1), TP(T) = 1 / max_i Σ_{children j} c_{i,j},
  with branch and bound on the partial load;
- **best DAG**: SSBPDAG (§4.1) is monotone in the set of links, and every
  acyclic subgraph lies inside the *forward* links of some order of the nodes
  with the source first, so the best DAG is the best over those orders (each
  edge set once), solved exactly.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable
from fractions import Fraction

from ..model import TopologyError
from .oneport import OnePortPlatform
from .steady_lp import solve_ssbpdag, tree_throughput

Node = Hashable
Link = tuple[Node, Node]
Progress = Callable[[int, int, str], None]

MAX_TREE_CANDIDATES = 300_000
MAX_DAG_NODES = 8


def best_tree(platform: OnePortPlatform, source: object,
              limit: int = MAX_TREE_CANDIDATES) -> tuple[Fraction, list[Link]]:
    """The best single broadcast tree and its throughput (eq. (1)), by enumeration."""
    p = platform
    s = p.check_source(source)
    # parents in BFS order from s: a partial assignment then always hangs from s
    order: list[Node] = []
    seen = {s}
    frontier = [s]
    while frontier:
        nxt = []
        for u in frontier:
            for v in p.out_adj[u]:
                if v not in seen:
                    seen.add(v)
                    order.append(v)
                    nxt.append(v)
        frontier = nxt
    choices = {v: sorted(p.in_adj[v], key=lambda u: p.cost[(u, v)]) for v in order}
    load: dict[Node, Fraction] = {v: Fraction(0) for v in p.nodes}
    parent: dict[Node, Node] = {}
    best: list[object] = [None, None]  # [max load, edges]
    visited = [0]

    def reaches_source(u: Node, v: Node) -> bool:
        # walking parents up from u must not meet v (that would close a cycle)
        while u != s:
            if u == v:
                return False
            if u not in parent:
                return True
            u = parent[u]
        return True

    def go(k: int, worst: Fraction) -> None:
        visited[0] += 1
        if visited[0] > limit:
            raise TopologyError(
                f"the best single tree needs more than {limit} search steps on this platform "
                "(the problem is NP-complete, Legrand et al. 2003, Thm 1); --compare is for "
                "small platforms")
        if best[0] is not None and worst >= best[0]:  # type: ignore[operator]
            return
        if k == len(order):
            best[0] = worst
            best[1] = [(parent[v], v) for v in order]
            return
        v = order[k]
        for u in choices[v]:
            if not reaches_source(u, v):
                continue
            parent[v] = u
            load[u] += p.cost[(u, v)]
            go(k + 1, max(worst, load[u]))
            load[u] -= p.cost[(u, v)]
            del parent[v]

    go(0, Fraction(0))
    edges: list[Link] = best[1]  # type: ignore[assignment]
    return tree_throughput(p, edges), edges


def best_dag(platform: OnePortPlatform, source: object, progress: Progress | None = None,
             ) -> tuple[Fraction, list[Link]]:
    """The best DAG (SSBPDAG optimum over acyclic sub-platforms) and its links."""
    p = platform
    s = p.check_source(source)
    others = [v for v in p.nodes if v != s]
    if len(p.nodes) > MAX_DAG_NODES:
        raise TopologyError(
            f"the best-DAG search enumerates node orders and is limited to {MAX_DAG_NODES} "
            f"nodes; this platform has {len(p.nodes)}")
    tried: set[frozenset[Link]] = set()
    best: tuple[Fraction, list[Link]] = (Fraction(0), [])
    orders = list(itertools.permutations(others))
    for k, order in enumerate(orders, 1):
        rank = {s: 0, **{v: i + 1 for i, v in enumerate(order)}}
        forward = frozenset(e for e in p.cost if rank[e[0]] < rank[e[1]])
        if forward in tried:
            continue
        tried.add(forward)
        sub = p.subplatform(sorted(forward, key=lambda e: (p.index[e[0]], p.index[e[1]])))
        try:
            sub.check_source(s)
        except TopologyError:
            continue  # some node has no forward in-link in this order
        tp = solve_ssbpdag(sub, s).throughput
        if tp > best[0]:
            best = (tp, list(sub.cost))
        if progress:
            progress(k, len(orders), f"{len(tried)} DAGs")
    return best
