"""Optima by orbits: one max-flow per orbit of the topology's box symmetry.

Machines built from identical boxes have an automorphism σ that shifts every box
to the next (:mod:`.boxes`: found by colour refinement, then verified exactly,
link by link). σ, extended to fix the super source s, is an automorphism of the
auxiliary network G⃗_x of Zhao & Krishnamurthy 2023, eq. (1) as well (every source arc s→u has the
same capacity x·w_u when σ keeps the weights w), so F(s, σ(v); G⃗_x) = F(s, v; G⃗_x):
the Dinkelbach iteration of ``forestcoll.optimum`` needs to test only one compute
node per orbit, and so does the fixed-k search (⌊U·c_e⌋ is kept by σ too).

:func:`find_symmetry` is the one search for it: ``forestcoll.schedule`` runs it
once and hands the result to ``forestcoll.optimum`` and to its own stages
(switch removal and tree packing by orbits); :func:`symmetry_problem` checks
a symmetry handed over that way against the topology it is used on.

Nothing here has to be trusted. The certificate carries the flows of the
representatives and σ itself, as an explicit list of ``[u, σ(u)]`` pairs;
``collcert.certify`` checks that σ is an automorphism of the topology it is given
(a permutation of the nodes that keeps compute nodes, the capacity of every
link and the weights) and computes the orbits itself. The argument it then
relies on is about cuts, not flows: if every S ∌ r has B⁺(S) ≥ x·w(S ∩ V_c)
(the flow to r proves it) and g is an automorphism, then every S ∌ g(r) has
B⁺(S) = B⁺(g⁻¹S) ≥ x·w(g⁻¹S ∩ V_c) = x·w(S ∩ V_c). See docs/certificates.md.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from ..model import Topology
from .boxes import box_symmetry
from .group import Symmetry
from .product import product_group
from .translations import translations

Node = Hashable

AUTO_MIN_COMPUTE = 64
"""``symmetry=None`` (auto) looks for a box symmetry from this many compute nodes on:
below, the max-flows of every compute node take milliseconds and the certificate
stays fully explicit (a flow for every compute node)."""


def _on_indices(t: Topology, weights: Sequence[int] | None,
                ) -> tuple[dict[tuple[int, int], object], frozenset[int], dict[int, int] | None]:
    """The capacities, multicast switches and weights of ``t`` on node indices (compute
    nodes first), the form :class:`Symmetry` acts on. The indices of ``t`` are those of
    its transpose too, so a symmetry of ``t`` serves reduce-scatter on the transpose."""
    idx = t.index
    arcs: dict[tuple[int, int], object] = {(idx[a], idx[b]): c for (a, b), c in t.capacity.items()}
    supply = None if weights is None else dict(enumerate(weights))
    return arcs, frozenset(idx[v] for v in t.multicast_switches), supply


def find_symmetry(t: Topology, weights: Sequence[int] | None = None) -> Symmetry | None:
    """The verified symmetry of ``t`` (keeping ``weights``, given in compute-node order,
    and the multicast switches) with the fewest orbits of compute nodes that is found:
    the product of box shifts by levels (:mod:`.product`), the translations of a
    switchless torus (:mod:`.translations`) or the box shift (:func:`box_shift`); None
    when there is none."""
    arcs, multicast, supply = _on_indices(t, weights)
    found = [box_symmetry(t.nodes, t.num_compute, arcs, multicast, supply)]
    if t.switch_nodes:
        found.append(product_group(t.nodes, t.num_compute, arcs, multicast, supply))
    else:
        found.append(translations(t.nodes, t.num_compute, arcs, multicast, supply))
    best = [s for s in found if s is not None]
    if not best:
        return None
    sym = max(best, key=lambda s: s.order)
    if sym.orders:
        sym.box_of = fast_boxes(t)
        sym.fallback = found[0]  # the box shift, for a build the larger group cannot do
    return sym


def fast_boxes(t: Topology) -> list[int]:
    """The box of every compute node, for the greedy packing by orbits: the components
    joined by links faster than the slowest link at a compute node (the NVLink domain of a
    DGX box or an NVL72 rack; one box when a compute node's links are all alike)."""
    at_compute = {c for (a, b), c in t.capacity.items() if t.is_compute(a) or t.is_compute(b)}
    slow = min(at_compute) if len(at_compute) > 1 else None
    idx = t.index
    parent = list(range(len(t.nodes)))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for (a, b), c in t.capacity.items():
        if slow is None or c > slow:
            parent[root(idx[a])] = root(idx[b])
    names: dict[int, int] = {}
    return [names.setdefault(root(v), len(names)) for v in range(t.num_compute)]


def box_shift(t: Topology, weights: Sequence[int] | None = None) -> Symmetry | None:
    """The verified box shift of ``t`` alone (one cyclic generator: :mod:`.boxes`), as
    the borrowing of degraded machines needs (``forestcoll.symmetrize``, ``nearpack``)."""
    arcs, multicast, supply = _on_indices(t, weights)
    return box_symmetry(t.nodes, t.num_compute, arcs, multicast, supply)


def symmetry_problem(sym: Symmetry, t: Topology, weights: Sequence[int] | None = None,
                     ) -> str | None:
    """None when ``sym`` acts on the nodes of ``t`` as a free automorphism that keeps
    the capacities, multicast switches and ``weights`` (:meth:`Symmetry.verify`);
    else what is wrong."""
    if tuple(sym.nodes) != tuple(t.nodes):
        return "it acts on other nodes (or another node order)"
    arcs, multicast, supply = _on_indices(t, weights)
    return sym.verify(t.num_compute, arcs, multicast, supply)


def wanted(t: Topology, symmetry: bool | None) -> bool:
    """Whether to look for a symmetry: always (True), never (False), or, for None,
    from :data:`AUTO_MIN_COMPUTE` compute nodes on."""
    if symmetry is None:
        return t.num_compute >= AUTO_MIN_COMPUTE
    return bool(symmetry)


def generator_pairs(sym: Symmetry, nodes: Sequence[Node]) -> list[list[list[Node]]]:
    """Each generator g as ``[[u, g(u)], …]`` over the nodes it moves (the certificate's
    form): one for a box shift, one per factor of a product group."""
    return [[[nodes[i], nodes[j]] for i, j in enumerate(g.tolist()) if i != j]
            for g in sym.generators()]


def describe(sym: Symmetry) -> str:
    if not sym.orders:
        return (f"{sym.order} interchangeable boxes: one max-flow per orbit "
                f"({len(sym.reps)} orbits of compute nodes)")
    shape = " × ".join(map(str, sym.factors))
    return (f"a group of {sym.order} automorphisms ({shape}): one max-flow per orbit "
            f"({len(sym.reps)} orbit{'s' if len(sym.reps) != 1 else ''} of compute nodes)")
