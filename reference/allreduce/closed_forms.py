"""The closed forms of Zhou & Sun 2026 (Thm 3-7), and the networks they are about.

*On the Computation Rate of All-Reduce* determines or bounds the rate R* of
uniform complete, cyclic, ring and hypercube networks, 3-cycles, and
combinations of MAC-BC networks (bi-directed trees among them).

Every function returns exact values; the network builders return
``Topology(..., strict=False)`` (the paper's model allows any directed graph)
with compute nodes ``0 .. K-1`` and, where the paper numbers nodes from 1,
the same links shifted down by one. ``cut`` is the cut-set bound C of
Theorem 1 (an upper bound on R*, network coding allowed) and ``r_lp`` the
MAC-BC LP value R_LP of Theorem 2 (a lower bound on R*, achieved by
reduce-then-broadcast trees). The paper's equations are missing from its
text; the formulas here are rebuilt from its prose and proofs and are tested
against the LP (tests/test_allreduce_golden.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ..model import Topology, parse_number
from .tree_rate import TreeRate, bidirected_tree_rate

__all__ = ["RateBounds", "TreeRate", "bidirected_tree", "bidirected_tree_network",
           "bidirected_tree_rate", "complete_network", "cycle_network", "hypercube",
           "hypercube_network", "mac_bc_sum", "network", "ring_network", "single_mac_bc",
           "three_cycle", "three_cycle_network", "uniform_complete", "uniform_cycle",
           "uniform_ring"]


@dataclass(frozen=True)
class RateBounds:
    """R_LP ≤ R* ≤ C, with R* itself when the paper determines it."""

    r_lp: Fraction
    cut: Fraction
    r_star: Fraction | None = None
    where: str = ""


# --------------------------------------------------------------------------- #
# networks
# --------------------------------------------------------------------------- #
def network(k: int, beta: Mapping[tuple[int, int], object], name: str = "") -> Topology:
    """Nodes 0..k-1 with β_ij = ``beta[(i, j)]`` (missing pairs: no link)."""
    return Topology(range(k), [(i, j, c) for (i, j), c in beta.items()], name=name,
                    unit="symbols/use", strict=False)


def complete_network(k: int, beta: object = 1) -> Topology:
    """Uniform complete network: β_ij = β for every i ≠ j (eq. (21))."""
    return network(k, {(i, j): beta for i in range(k) for j in range(k) if i != j},
                   f"uniform complete K={k}")


def cycle_network(k: int, beta: object = 1) -> Topology:
    """Uniform directed cycle: β_{i,i+1} = β (eqs. (23)-(24))."""
    return network(k, {(i, (i + 1) % k): beta for i in range(k)}, f"uniform cycle K={k}")


def ring_network(k: int, beta: object = 1) -> Topology:
    """Uniform ring: the cycle in both directions (eqs. (25)-(27)); k ≥ 3."""
    links = {(i, (i + 1) % k): beta for i in range(k)}
    links.update({((i + 1) % k, i): beta for i in range(k)})
    return network(k, links, f"uniform ring K={k}")


def three_cycle_network(a: object, b: object, c: object) -> Topology:
    """3-node cycle β_12 = a, β_23 = b, β_31 = c (eq. (30); nodes 1, 2, 3 → 0, 1, 2)."""
    return network(3, {(0, 1): a, (1, 2): b, (2, 0): c}, f"3-cycle ({a}, {b}, {c})")


def hypercube_network(u: int, beta: object = 1) -> Topology:
    """Uniform hypercube: K = 2^U nodes, β_ij = β when i, j differ in one bit (eq. (42))."""
    k = 1 << u
    return network(k, {(i, i ^ (1 << d)): beta for i in range(k) for d in range(u)},
                   f"uniform hypercube U={u}")


def bidirected_tree_network(k: int, beta: Mapping[tuple[int, int], object]) -> Topology:
    """A tree whose every edge is a link in both directions, with its own β each way."""
    return network(k, beta, f"bi-directed tree K={k}")


# --------------------------------------------------------------------------- #
# closed forms
# --------------------------------------------------------------------------- #
def uniform_complete(k: int, beta: object = 1) -> RateBounds:
    """Theorem 4: K/2 ≤ R* ≤ K−1 (times β). R_LP = Kβ/2: K stars, weight β/2 each,
    meet Corollary 2.1's Σβ/(2(K−1)); C = (K−1)β (a single node)."""
    b = parse_number(beta)
    return RateBounds(Fraction(k, 2) * b, (k - 1) * b, None, "Thm 4")


def uniform_cycle(k: int, beta: object = 1) -> RateBounds:
    """Theorem 5 (cycle): K/(2(K−1)) ≤ R* ≤ 1 (times β); the K MAC-BC networks of the
    cycle, weight β/(2(K−1)) each, meet Corollary 2.1."""
    b = parse_number(beta)
    return RateBounds(Fraction(k, 2 * (k - 1)) * b, b, None, "Thm 5")


def uniform_ring(k: int, beta: object = 1) -> RateBounds:
    """Theorem 5 (ring): K/(K−1) ≤ R* ≤ 2 (times β): two cycles; the rate of
    Ring-All-Reduce."""
    b = parse_number(beta)
    return RateBounds(Fraction(k, k - 1) * b, 2 * b, None, "Thm 5")


def three_cycle(a: object, b: object, c: object) -> RateBounds:
    """Theorem 6: R_LP = min(a, b, c, (a+b+c)/4) ≤ R* ≤ min(a, b, c).

    R* is determined when a + b + c ≥ 4·min(a, b, c) (then both bounds equal min)."""
    x, y, z = parse_number(a), parse_number(b), parse_number(c)
    low = min(x, y, z, (x + y + z) / 4)
    high = min(x, y, z)
    return RateBounds(low, high, high if low == high else None, "Thm 6")


def hypercube(u: int, beta: object = 1) -> RateBounds:
    """Theorem 7: 2^(U−1)·U/(2^U − 1) ≤ R* ≤ U (times β), by one binomial MAC-BC network
    per (root, order of the dimensions), weight 1/(2·(U−1)!·(2^U − 1)) each."""
    b = parse_number(beta)
    k = 1 << u
    return RateBounds(Fraction(k // 2 * u, k - 1) * b, u * b, None, "Thm 7")


def mac_bc_sum(weights: Sequence[object]) -> Fraction:
    """Theorem 3: a positive combination Σ λ_t β^t of 1-MAC-BC networks sharing one cut
    edge has R* = R_LP = C = Σ λ_t."""
    return sum((parse_number(w) for w in weights), Fraction(0))


def bidirected_tree(beta: Mapping[tuple[int, int], object]) -> RateBounds:
    """A bi-directed tree on nodes 0..K-1 given by its β (both directions of every edge):
    R* = R_LP = C = min β (Theorem 3; see :func:`bidirected_tree_rate`, which checks the
    shape and builds the certificates)."""
    k = 1 + max((max(e) for e in beta), default=0)
    r = bidirected_tree_rate(bidirected_tree_network(k, beta))
    return RateBounds(r.value, r.value, r.value, "Thm 3 (bi-directed trees)")


def single_mac_bc() -> RateBounds:
    """Any single MAC-BC network (unit entries): R* = 1, since it has a cut edge."""
    return RateBounds(Fraction(1), Fraction(1), Fraction(1), "§3.3")
