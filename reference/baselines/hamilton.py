"""Rings on machines without boxes: Hamiltonian cycles of tori, hypercubes and other lattices.

NCCL's ring search (:mod:`.rings`) walks boxes of GPUs joined by switches; a 2D or
3D torus has neither, and its greedy walk through 256 GPUs runs out of budget
although every torus has Hamiltonian cycles. Two constructions, tried in turn:

1. **Gray code of the translations.** When the machine's verified symmetry
   (``collcert.reference.symmetry.find_symmetry``) is a group of translations
   g_1 … g_k of orders m_1 … m_k with one orbit and every g_i a step to a
   neighbour, the reflected mixed-radix Gray code lists every element so that
   consecutive ones differ by one step ±1 of one generator (a link). With an
   even m_i as the slowest digit the code ends at g_k^{m_k−1}, one step back to the
   start: a Hamiltonian cycle (every torus with an even side, every hypercube,
   every ring).
2. **A depth-first search** with Warnsdorff's rule (fewest unvisited neighbours
   first) and a budget of steps, on the links between compute nodes (odd tori,
   irregular lattices).

Every hop of the cycle found is checked to be a link both ways; nothing else is
assumed (the ring schedule built from it is checked like any schedule).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from collcert.reference.model import Topology
from collcert.reference.symmetry import find_symmetry

Node = Hashable
SEARCH_BUDGET = 200_000
"""Steps of the depth-first search at most (a 16 × 16 torus needs about 300)."""


def hamiltonian_cycle(topology: Topology) -> list[Node] | None:
    """A cycle through every compute node whose hops are direct links both ways, or
    None (module docstring)."""
    if topology.num_compute < 3:
        return None
    adj: dict[Node, set[Node]] = {v: set() for v in topology.compute_nodes}
    for a, b in topology.capacity:
        if a in adj and b in adj and (b, a) in topology.capacity:
            adj[a].add(b)
    for found in (_gray_cycle(topology), _search(topology.compute_nodes, adj)):
        if found is not None and _is_cycle(found, adj, topology.num_compute):
            return found
    return None


def _gray_cycle(topology: Topology) -> list[Node] | None:
    if topology.switch_nodes:
        return None
    sym = find_symmetry(topology)
    if sym is None or len(sym.reps) != 1:
        return None
    r = sym.reps[0]
    factors = list(sym.factors)
    even = [i for i, m in enumerate(factors) if m % 2 == 0]
    if not even:
        return None
    order = [i for i in range(len(factors)) if i != even[-1]] + [even[-1]]  # even slowest
    nodes = sym.nodes
    col = sym.images(r)  # element j's image of r
    return [nodes[int(col[j])] for j in _gray(order, factors, sym.strides)]


def _gray(axes: Sequence[int], radix: Sequence[int], strides: Sequence[int]) -> list[int]:
    """Element indices in reflected mixed-radix Gray order over ``axes`` (the first the
    fastest): consecutive ones differ by ±1 in one digit."""
    seq = [0]
    for axis in axes:
        m, s = radix[axis], strides[axis]
        out: list[int] = []
        for a in range(m):
            block = seq if a % 2 == 0 else seq[::-1]
            out += [x + a * s for x in block]
        seq = out
    return seq


def _search(compute: Sequence[Node], adj: dict[Node, set[Node]]) -> list[Node] | None:
    """Depth-first search for a Hamiltonian cycle, Warnsdorff's rule first."""
    start = compute[0]
    n = len(compute)
    path = [start]
    seen = {start}
    stack = [iter(_ranked(start, adj, seen))]
    steps = 0
    while stack and steps < SEARCH_BUDGET:
        steps += 1
        nxt = next(stack[-1], None)
        if nxt is None:
            stack.pop()
            seen.discard(path.pop())
            continue
        path.append(nxt)
        seen.add(nxt)
        if len(path) == n:
            if start in adj[nxt]:
                return path
            seen.discard(path.pop())
            continue
        stack.append(iter(_ranked(nxt, adj, seen)))
    return None


def _ranked(v: Node, adj: dict[Node, set[Node]], seen: set[Node]) -> list[Node]:
    free = [w for w in adj[v] if w not in seen]
    return sorted(free, key=lambda w: (sum(1 for x in adj[w] if x not in seen), str(w)))


def _is_cycle(order: list[Node], adj: dict[Node, set[Node]], n: int) -> bool:
    return (len(order) == n == len(set(order))
            and all(b in adj[a] for a, b in zip(order, order[1:] + order[:1])))
