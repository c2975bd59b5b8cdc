"""R_LP of the MAC-BC LP from Zhou & Sun 2026's closed forms, with a full certificate.

*On the Computation Rate of All-Reduce* (Zhou & Sun 2026) gives R_LP in closed
form for uniform networks: complete (Thm 4, K/2·β), directed cycle and ring
(Thm 5, K/(2(K−1))·β and K/(K−1)·β) and hypercube (Thm 7,
2^(U−1)·U/(2^U−1)·β). Each proof exhibits the optimal weighting of MAC-BC
networks, and each meets Corollary 2.1's upper bound Σβ/(2(K−1)): every MAC-BC
network uses 2(K−1) link units, so the uniform price y_e = 1/(2(K−1)) makes
every network cost exactly 1 and proves optimality (Σβy = Σβ/(2(K−1))).

:func:`closed_form_mac_bc` recognises such a topology and returns the same
:class:`.rate.MacBcLP` as the column generation of :func:`.rate.mac_bc_lp`
(columns and dual), in time linear in the certificate instead of minutes of
column generation (ring:100: 118 s → well under a second). Nothing here is
trusted: ``collcert.certify.allreduce.check_mac_bc_lp`` checks the columns
(spanning arborescences, capacities) and the dual exactly, as for the LP's own
certificate. Any other topology (capacities not all equal, another shape)
gets ``None`` and the LP.
"""

from __future__ import annotations

import time
from fractions import Fraction

from ..model import Link, Node, Topology, fraction_str
from .rate import MacBcLP, MacBcNetwork


def closed_form_mac_bc(t: Topology) -> MacBcLP | None:
    """R_LP and its certificate when ``t`` is a uniform complete network, directed
    cycle, ring or (index-labelled) hypercube of compute nodes; otherwise ``None``."""
    started = time.perf_counter()
    k = t.num_compute
    caps = set(t.capacity.values())
    if t.switch_nodes or k < 2 or len(caps) != 1 or len(t.nodes) != k:
        return None
    beta = Fraction(next(iter(caps)))
    if beta <= 0:
        return None
    found = (_complete(t) or _cycle_or_ring(t) or _hypercube(t))
    if found is None:
        return None
    theorem, nets, per_link_uses = found
    weight = beta / per_link_uses
    columns = [(net, weight) for net in nets]
    value = weight * len(nets)
    cor21 = beta * len(t.capacity) / (2 * (k - 1))
    if value != cor21:  # the construction must meet Corollary 2.1, or the dual fails
        return None
    y = {e: Fraction(1, 2 * (k - 1)) for e in t.capacity}
    stats = {"corollary_2_1": fraction_str(cor21), "columns": len(nets), "rounds": 0,
             "exact_rounds": 0, "exact_seconds": 0.0,
             "seconds": time.perf_counter() - started,
             "closed_form": f"Zhou & Sun 2026, {theorem}"}
    return MacBcLP(value, columns, y, stats)


def _complete(t: Topology) -> tuple[str, list[MacBcNetwork], int] | None:
    """Thm 4: one star per root (reduce into r, broadcast from r); every link is in the
    reduce star of its head and the broadcast star of its tail: 2 uses."""
    nodes = list(t.nodes)
    k = len(nodes)
    if len(t.capacity) != k * (k - 1):
        return None
    nets = [MacBcNetwork(r, tuple((v, r) for v in nodes if v != r),
                         tuple((r, v) for v in nodes if v != r)) for r in nodes]
    return "Thm 4 (uniform complete network)", nets, 2


def _cycle_or_ring(t: Topology) -> tuple[str, list[MacBcNetwork], int] | None:
    """Thm 5: the K rooted paths around a directed cycle (each link in K−1 reduce
    paths and K−1 broadcast paths) or, on a ring, reduce one way round and broadcast
    the other (each link in K−1 paths)."""
    k = t.num_compute
    if k < 3:
        return None
    order = _cyclic_order(t)
    if order is None:
        return None
    fwd: list[Link] = [(order[i], order[(i + 1) % k]) for i in range(k)]
    back: list[Link] = [(order[(i + 1) % k], order[i]) for i in range(k)]
    if len(t.capacity) == k and all(e in t.capacity for e in fwd):
        nets = [MacBcNetwork(order[p], _without(fwd, p), _without(fwd, (p - 1) % k))
                for p in range(k)]
        return "Thm 5 (uniform directed cycle)", nets, 2 * (k - 1)
    if len(t.capacity) == 2 * k and all(e in t.capacity for e in fwd + back):
        nets = [MacBcNetwork(order[p], _without(fwd, p), _without(back, p))
                for p in range(k)]
        return "Thm 5 (uniform ring)", nets, k - 1
    return None


def _without(arcs: list[Link], skip: int) -> tuple[Link, ...]:
    return tuple(e for i, e in enumerate(arcs) if i != skip)


def _cyclic_order(t: Topology) -> list[Node] | None:
    """The nodes in the order of the Hamiltonian cycle their links form (as an
    undirected graph every node has exactly two neighbours, all in one cycle)."""
    nbrs: dict[Node, set[Node]] = {v: set() for v in t.nodes}
    for u, v in t.capacity:
        nbrs[u].add(v)
        nbrs[v].add(u)
    if any(len(s) != 2 for s in nbrs.values()):
        return None
    start = t.nodes[0]
    order = [start]
    prev, cur = start, min(nbrs[start], key=t.index.__getitem__)
    if (start, cur) not in t.capacity:  # walk along the links' direction on a cycle
        cur = next(iter(nbrs[start] - {cur}))
    while cur != start:
        order.append(cur)
        nxt = next(iter(nbrs[cur] - {prev}))
        prev, cur = cur, nxt
        if len(order) > len(t.nodes):
            return None
    return order if len(order) == len(t.nodes) else None


def _hypercube(t: Topology) -> tuple[str, list[MacBcNetwork], int] | None:
    """Thm 7 on a hypercube whose node at index i links to index i ^ 2^d: per root,
    the U binomial broadcast trees of the U rotations of the dimension order, and
    each one reversed for the reduce; every link is used 2(2^U − 1) times."""
    k = t.num_compute
    u = k.bit_length() - 1
    if u < 2 or k != 1 << u or len(t.capacity) != k * u:
        return None
    nodes = list(t.nodes)
    if any((nodes[i], nodes[i ^ (1 << d)]) not in t.capacity
           for i in range(k) for d in range(u)):
        return None
    nets = []
    for r in range(k):
        for s in range(u):
            tree = []
            for j in range(u):  # step j: every informed node sends along dimension d
                d = (j + s) % u
                low = [(j2 + s) % u for j2 in range(j)]
                for mask in range(1 << j):
                    x = r
                    for b, dim in enumerate(low):
                        if mask >> b & 1:
                            x ^= 1 << dim
                    tree.append((nodes[x], nodes[x ^ (1 << d)]))
            nets.append(MacBcNetwork(nodes[r], tuple((b, a) for a, b in tree),
                                     tuple(tree)))
    return "Thm 7 (uniform hypercube)", nets, 2 * ((1 << u) - 1)
