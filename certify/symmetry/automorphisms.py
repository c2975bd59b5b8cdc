"""Automorphisms a certificate may carry, verified; the orbits they generate.

An optimum certificate (docs/certificates.md) may list ``automorphisms``: each a
list of pairs ``[u, σ(u)]`` over the nodes σ moves (a node not listed is
fixed). This module checks, for every σ, that it is an automorphism of the
network the flows live in, without knowing where σ came from:

* σ is a permutation of the nodes: the listed nodes are distinct, their images
  are distinct, and the images are exactly the listed nodes;
* σ maps compute nodes to compute nodes (hence switches to switches);
* every link (a, b) of capacity c is mapped to a link (σa, σb) of capacity c
  (σ is injective on the finite set of links, so it is a bijection of the links:
  no link is created or lost);
* σ keeps the weight of every compute node (non-uniform allgather).

Then σ⁻¹ is one too, and so is every composition: the group they generate
consists of automorphisms, and its orbits are the connected components of the
graph with an edge u–σ(u) for every listed σ (σ⁻¹ = σ^(order−1) in a finite
group, so no inverse is needed). :func:`orbits` computes them by union-find.

Why this is enough for the optimum (checker 2, certify/forestcoll/optimum.py): a flow to
r proves B⁺(S) ≥ x·w(S ∩ V_c) for every S ∌ r. For v = g(r) with g in the
group and any S ∌ v: g⁻¹S ∌ r, B⁺(S) = B⁺(g⁻¹S) and w(S ∩ V_c) = w(g⁻¹S ∩ V_c),
so the same bound holds for S. Cuts, not flows, are mapped: no flow is built.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from fractions import Fraction
from typing import TypeVar

from ..model import InputError, Link, Node, Topo, Verdict, frac_str

T = TypeVar("T", bound=Hashable)

MAX_AUTOMORPHISMS = 64
"""Most permutations a certificate may list: each costs one pass over the links, and a
few generators describe every group the reference uses (one box shift)."""


def read(topo: Topo, raw: object, where: str = "certificate automorphisms") -> list[
        dict[Node, Node]]:
    """The permutations a certificate lists (unchecked), as {u: σ(u)} over moved nodes."""
    if not isinstance(raw, list):
        raise InputError(f"{where} must be an array of automorphisms, each an array of "
                         "[node, image] pairs")
    if len(raw) > MAX_AUTOMORPHISMS:
        raise InputError(f"{where} lists {len(raw)} permutations, more than the "
                         f"{MAX_AUTOMORPHISMS} a checker accepts (list generators only)")
    out: list[dict[Node, Node]] = []
    for g, perm in enumerate(raw):
        if not isinstance(perm, list) or len(perm) > len(topo.nodes):
            raise InputError(f"{where}[{g}] must be an array of at most one [node, image] "
                             "pair per node")
        sigma: dict[Node, Node] = {}
        for i, pair in enumerate(perm):
            if not isinstance(pair, list) or len(pair) != 2:
                raise InputError(f"{where}[{g}][{i}] is not a [node, image] pair")
            u = topo.node(pair[0], f"{where}[{g}][{i}] node")
            if u in sigma:
                raise InputError(f"{where}[{g}] lists node {u!r} twice")
            sigma[u] = topo.node(pair[1], f"{where}[{g}][{i}] image")
        out.append(sigma)
    return out


def verify(topo: Topo, sigma: Mapping[Node, Node], weights: Mapping[Node, int] | None,
           label: str) -> Verdict:
    """Whether ``sigma`` (moved nodes only) is an automorphism of ``topo`` keeping
    ``weights``; the first problem found is the reason."""
    v = Verdict(label)
    images = set(sigma.values())
    if len(images) != len(sigma):
        v.fail(f"{label} maps two nodes to the same image: it is not a permutation")
        return v
    if images != set(sigma):
        extra = sorted(images - set(sigma), key=str)
        if extra:  # fixed (not listed) but also the image of a listed node
            v.fail(f"{label} is not a permutation of the nodes: it maps a node to "
                   f"{extra[0]!r}, which it does not list and so also fixes")
        else:
            lost = sorted(set(sigma) - images, key=str)[0]
            v.fail(f"{label} is not a permutation of the nodes: no node is mapped to "
                   f"{lost!r}")
        return v
    for u, w in sigma.items():
        if (u in topo.compute_set) != (w in topo.compute_set):
            v.fail(f"{label} maps {u!r} to {w!r}: a compute node and a switch")
            return v
        if weights is not None and u in topo.compute_set and weights[u] != weights[w]:
            v.fail(f"{label} maps {u!r} (weight {weights[u]}) to {w!r} (weight {weights[w]})")
            return v
    cap = topo.cap
    for (a, b), c in cap.items():
        image = (sigma.get(a, a), sigma.get(b, b))
        got = cap.get(image, Fraction(0))
        if got != c:
            v.fail(f"{label} maps link {a!r} -> {b!r} (capacity {frac_str(c)}) to "
                   f"{image[0]!r} -> {image[1]!r}, "
                   + ("not a link" if not got else f"of capacity {frac_str(got)}"))
            return v
    return v


def orbits(topo: Topo, perms: list[dict[Node, Node]]) -> dict[Node, Node]:
    """Each node's orbit under the group ``perms`` generate, named by one member."""
    return classes(topo.nodes, [(u, w) for sigma in perms for u, w in sigma.items()])


def link_orbits(topo: Topo, perms: list[dict[Node, Node]]) -> dict[Link, Link]:
    """Each link's orbit under the group ``perms`` generate, named by one member."""
    return classes(list(topo.cap), [((a, b), (sigma.get(a, a), sigma.get(b, b)))
                                    for sigma in perms for (a, b) in topo.cap])


def classes(items: list[T], pairs: list[tuple[T, T]]) -> dict[T, T]:
    """The classes of the equivalence that ``pairs`` generate on ``items`` (union-find),
    each item mapped to one member of its class."""
    parent: dict[T, T] = {}

    def root(x: T) -> T:
        while parent.get(x, x) != x:
            up = parent[x]
            parent[x] = parent.get(up, up)  # path halving
            x = up
        return x

    for u, w in pairs:
        ru, rw = root(u), root(w)
        if ru != rw:
            parent[ru] = rw
    return {x: root(x) for x in items}


def uncovered(topo: Topo, perms: list[dict[Node, Node]], proven: set[Node]) -> list[Node]:
    """The compute nodes whose orbit contains no node of ``proven``."""
    orbit = orbits(topo, perms)
    good = {orbit[x] for x in proven}
    return [c for c in topo.compute if orbit[c] not in good]
