"""Plain exhaustive cut enumeration: the optima of Zhao & Krishnamurthy 2023 straight from their definitions.

Nothing here uses max-flow or the reference's iteration: every function walks
all 2^|V| node subsets S (so keep |V| ≤ ~16) and evaluates the formula of the
paper directly, in exact arithmetic.

* allgather / reduce-scatter (Zhao & Krishnamurthy 2023, eq. (1)): 1/x* = max_{S ⊉ V_c} |S ∩ V_c| / B⁺(S);
* fixed k (Zhao & Krishnamurthy 2023, Thm 5 + Thm 13): U* = least U with Σ_{e ∈ δ⁺(S)} ⌊U·c_e⌋ ≥ k·|S ∩ V_c|
  for every S ⊉ V_c (the cut form of min_v F(s, v; G⃗_k) ≥ N·k);
* broadcast from r (Zhao & Krishnamurthy 2023, (5)): min over S ∋ r, S ⊉ V_c of B⁺(S);
* allreduce bounds (Zhao & Krishnamurthy 2023, (6), (7)).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator
from fractions import Fraction

from collcert.reference.model import Topology, TopologyError

MAX_NODES = 20
"""Refuse to enumerate beyond this many nodes (2^20 subsets already takes minutes)."""

Node = Hashable


def _cuts(t: Topology) -> Iterator[tuple[frozenset[Node], int, Fraction]]:
    """Every S with ∅ ≠ S ∩ V_c ≠ V_c, with |S ∩ V_c| and B⁺(S) (real units)."""
    n = len(t.nodes)
    if n > MAX_NODES:
        raise TopologyError(
            f"exhaustive cut enumeration over {n} nodes is 2^{n} subsets: use at most "
            f"{MAX_NODES} nodes (or the max-flow / Z3 checks)"
        )
    nc = t.num_compute
    links = [(t.index[u], t.index[v], c) for (u, v), c in t.capacity.items()]
    full = (1 << nc) - 1
    for mask in range(1, 1 << n):
        cmask = mask & full
        if cmask == 0 or cmask == full:
            continue
        out = sum((c for a, b, c in links if mask >> a & 1 and not mask >> b & 1), Fraction(0))
        yield (frozenset(t.nodes[i] for i in range(n) if mask >> i & 1),
               bin(cmask).count("1"), out)


def allgather_inv_x(t: Topology) -> tuple[Fraction, frozenset[Node]]:
    """(1/x*, a maximising cut) by enumeration (Zhao & Krishnamurthy 2023, eq. (1)); algbw = N / (1/x*)."""
    best: tuple[Fraction, frozenset[Node]] | None = None
    for s, inside, out in _cuts(t):
        r = Fraction(inside) / out
        if best is None or r > best[0]:
            best = (r, s)
    assert best is not None
    return best


def least_u_for_cut(caps: list[Fraction], need: int) -> Fraction:
    """Least U ≥ 0 with Σ ⌊U·c⌋ ≥ need, by scanning candidate breakpoints m/c in order.

    The left side is a step function that jumps only at U = m/c; the answer is
    the smallest breakpoint at which the sum reaches ``need``. Plain and slow.
    """
    if need <= 0:
        return Fraction(0)
    if not caps:
        raise TopologyError("internal: a cut with no outgoing links")
    total = sum(caps)
    lo = Fraction(need) / total  # Σ⌊U c⌋ ≤ U Σc, so U ≥ need/Σc
    candidates = set()
    for c in caps:
        m0 = math.floor(lo * c)
        # at the answer U*, some U*·c = m is a step; every ⌊U*·c⌋ ≤ need (just below
        # U* the sum is < need and each term steps by one), so m0 ≤ m ≤ need
        for m in range(max(m0, 1), need + 1):
            candidates.add(Fraction(m) / c)
    for u in sorted(candidates):
        if u >= lo and sum(math.floor(u * c) for c in caps) >= need:
            return u
    raise AssertionError("unreachable: the last candidate always satisfies the cut")


def fixed_k_u(t: Topology, k: int) -> tuple[Fraction, frozenset[Node]]:
    """(U*, the cut that forces it) for k trees per compute node, by enumeration."""
    best: tuple[Fraction, frozenset[Node]] | None = None
    links = list(t.capacity.items())
    for s, inside, _ in _cuts(t):
        caps = [c for (u, v), c in links if u in s and v not in s]
        u = least_u_for_cut(caps, k * inside)
        if best is None or u > best[0]:
            best = (u, s)
    assert best is not None
    return best


def broadcast_algbw(t: Topology, root: Node) -> Fraction:
    """min over S ∋ root with a compute node outside of B⁺(S) (Zhao & Krishnamurthy 2023, (5))."""
    best: Fraction | None = None
    for s, _, out in _cuts(t):
        if root in s and (best is None or out < best):
            best = out
    if best is None:  # only with N = ... never for N ≥ 2
        raise TopologyError("internal: no cut separates the root from a compute node")
    return best


def allreduce_bounds(t: Topology) -> tuple[Fraction, Fraction]:
    """(time bound (6), time bound (7)) per unit of data (Zhao & Krishnamurthy 2023, App. B)."""
    n = t.num_compute
    min6: Fraction | None = None
    single: dict[Node, Fraction] = {}
    for s, inside, out in _cuts(t):
        if min6 is None or out < min6:
            min6 = out
        if inside == 1:
            v = next(x for x in s if t.is_compute(x))
            if v not in single or out < single[v]:
                single[v] = out
    assert min6 is not None
    return 1 / min6, Fraction(2 * (n - 1), n) / max(single.values())
