"""Certified throughput optima of collectives on a topology.

Zhao & Krishnamurthy 2023, (Zhao & Krishnamurthy) and Zhao et al. 2026, (ForestColl). All arithmetic is
exact: capacities are the topology's integer-scaled ``int_capacity`` and every
reported number is an ``int`` or ``Fraction`` in the topology's bandwidth unit.

Allgather / reduce-scatter (Zhao & Krishnamurthy 2023, eq. (1), Thm 1, Prop 3)
    T ≥ (M/N) · max_{S ⊂ V, S ⊉ V_c} |S ∩ V_c| / B⁺(S) =: (M/N) / x*, tight.
    We find 1/x* by a Newton/Dinkelbach iteration over max-flows in
    G⃗_x (G plus a source s with an arc s→u of capacity x for each compute
    node u): if F(s, v; G⃗_x) < N·x for some v, the source side of a minimum
    cut is a node set S with a strictly larger ratio (proof of Zhao & Krishnamurthy 2023, Thm 1), and
    x is lowered to 1/ratio(S). A test that passes at x also passes at every
    x' < x (a cut of capacity ≥ x·|S ∩ V_c| has capacity ≥ x'·|S ∩ V_c|), so
    each compute node is tested once at the x current when its turn comes
    and re-tested only after it fails: N max-flows plus one per improvement.
    The certificate is the final cut (a lower bound on the time) plus one
    flow per compute node (an upper bound on every cut ratio), or, on a
    machine of identical boxes, one flow per orbit of the box symmetry and the
    automorphism itself (:mod:`.orbits`), which certify/ verifies.

Fixed k (Zhao & Krishnamurthy 2023, §2.4 Thm 13-15, Zhao et al. 2026, Alg 5)
    U* = min U with min_v F(s, v; G⃗_k({⌊U b_e⌋})) ≥ N·k. Same scheme: a
    failing test returns a cut S with Σ_{e∈δ⁺(S)} ⌊U b_e⌋ < k |S ∩ V_c|, and U
    jumps to the least U' at which that cut is satisfied (computed exactly
    over the breakpoints m/b_e). The last such cut is the witness that no
    smaller U works.

Broadcast / reduce (Zhao & Krishnamurthy 2023, App. A, eq. (5)); allreduce (Zhao & Krishnamurthy 2023, App. B, eqs. (6),
(7), Thm 19).

Where the code is: this module holds the facade :func:`optimum`; the result
classes :class:`Optimum` and :class:`FlowWitness` are in
:mod:`.optimum_result`, the allgather and fixed-k iterations in
:mod:`.optimum_allgather`, broadcast / reduce and the allreduce bounds in
:mod:`.optimum_allreduce` (all importable from here as before).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model import Topology, TopologyError, check_solvable
from .optimum_allgather import _allgather, _fixed_k, prop3
from .optimum_allreduce import _allreduce, _single_root
from .optimum_result import FlowWitness, Node, Optimum, Progress

__all__ = ["COLLECTIVES", "FlowWitness", "Optimum", "optimum", "prop3"]

COLLECTIVES = ("allgather", "reduce-scatter", "broadcast", "reduce", "allreduce")


# --------------------------------------------------------------------------- #
# facade
# --------------------------------------------------------------------------- #
def optimum(
    topology: Topology,
    collective: str = "allgather",
    *,
    root: Node | None = None,
    fixed_k: int | None = None,
    weights: Sequence[object] | None = None,
    engine: str = "auto",
    progress: Progress | None = None,
    symmetry: bool | None = None,
) -> Optimum:
    """The certified optimum of ``collective`` on ``topology``.

    ``allgather`` / ``reduce-scatter``: algbw = N·x* (Zhao & Krishnamurthy 2023, eq. (1)),
    with the bottleneck cut, k and U (Prop 3) and one flow per compute node.
    ``fixed_k``: the best time with k trees per compute node (Zhao & Krishnamurthy 2023, §2.4).
    ``broadcast`` / ``reduce`` with ``root``: bound (5) of Zhao & Krishnamurthy 2023, App. A.
    ``allreduce``: the RS+AG time with the lower bounds (6) and (7) of
    Zhao & Krishnamurthy 2023, App. B and whether Thm 19 (or equality with a bound) proves it optimal.
    ``weights``: non-uniform allgather (Zhao et al. 2026, §5.7), the relative shard size
    of each compute node (positive integers, in compute-node order).
    ``symmetry``: for allgather, reduce-scatter, fixed k and allreduce, one
    max-flow per orbit of the topology's box symmetry when one is found and
    verified (:mod:`.orbits`; the certificate then carries the automorphism):
    None (default) tries from ``orbits.AUTO_MIN_COMPUTE`` compute nodes on,
    True always, False never. The result is the same either way.
    """
    if not isinstance(topology, Topology):
        raise TypeError("optimum() needs a collcert.Topology")
    coll = collective.lower().replace("_", "-")
    if coll not in COLLECTIVES:
        raise TopologyError(
            f"unknown collective {collective!r}: choose one of {', '.join(COLLECTIVES)}"
        )
    topology.require_forestcoll(
        "the RS+AG allreduce time and bounds (6), (7)" if coll == "allreduce"
        else f"the ForestColl {coll} optimum")
    if coll in ("broadcast", "reduce"):
        check_solvable(topology, engine)  # refuse what cannot fit in memory or time
        if fixed_k is not None:
            raise TopologyError(f"fixed_k applies to allgather and reduce-scatter, not {coll}")
        return _single_root(topology, coll, root, engine, progress)
    if root is not None:
        raise TopologyError(f"{coll} has no root; root= is for broadcast and reduce")
    if fixed_k is not None and (coll == "allreduce" or weights is not None):
        raise TopologyError("fixed_k applies to allgather and reduce-scatter, not allreduce"
                            if coll == "allreduce" else "fixed_k and weights cannot be combined")
    w = None if weights is None or coll == "allreduce" else _parse_weights(topology, weights)
    t = topology.transpose() if coll == "reduce-scatter" else topology
    sym = None
    if symmetry is not False:
        from ..symmetry import orbits

        if orbits.wanted(t, symmetry):
            sym = orbits.find(t, w)
    # refuse what cannot fit in memory or time (limits.py): flows for one sink per orbit
    # (allreduce's bound (6) still solves one max-flow per compute node)
    check_solvable(topology, engine,
                   sinks=None if sym is None or coll == "allreduce" else len(sym.reps))
    if coll == "allreduce":
        return _allreduce(topology, engine, progress, sym)
    if fixed_k is not None:
        opt = _fixed_k(t, fixed_k, engine, progress, sym)
    else:
        opt = _allgather(t, engine, progress, w, sym)
    if coll == "reduce-scatter":
        opt.collective = "reduce-scatter"
        opt.topology = topology
        opt.extra["flows_on"] = "transposed topology"
    return opt


def _parse_weights(t: Topology, weights: Sequence[object]) -> list[int]:
    from ..model import lcm_of_denominators, parse_number

    if len(weights) != t.num_compute:
        raise TopologyError(
            f"weights has {len(weights)} entries but the topology has {t.num_compute} compute "
            "nodes: give one shard size per compute node, in compute-node order"
        )
    vals = []
    for c, w in zip(t.compute_nodes, weights):
        try:
            f = parse_number(w)
        except ValueError as exc:
            raise TopologyError(f"weight of compute node {c!r}: {exc}") from None
        if f <= 0:
            raise TopologyError(f"weight of compute node {c!r} is {w!r}: weights must be positive")
        vals.append(f)
    den = lcm_of_denominators(vals, what="the weights")
    return [int(f * den) for f in vals]
