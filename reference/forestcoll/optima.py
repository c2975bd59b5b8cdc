"""Certified throughput optima of collectives on a topology.

Zhao & Krishnamurthy 2023 and Zhao et al. 2026 (ForestColl). All arithmetic is
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
    automorphism itself (``symmetry.orbits``), which certify/ verifies.

Fixed k (Zhao & Krishnamurthy 2023, §2.4 Thm 13-15, Zhao et al. 2026, Alg 5)
    U* = min U with min_v F(s, v; G⃗_k({⌊U b_e⌋})) ≥ N·k. Same scheme: a
    failing test returns a cut S with Σ_{e∈δ⁺(S)} ⌊U b_e⌋ < k |S ∩ V_c|, and U
    jumps to the least U' at which that cut is satisfied (computed exactly
    over the breakpoints m/b_e). The last such cut is the witness that no
    smaller U works.

Broadcast / reduce (Zhao & Krishnamurthy 2023, App. A, eq. (5)); allreduce (Zhao & Krishnamurthy 2023, App. B, eqs. (6),
(7), Thm 19).

This module is the entry point, :func:`optimum`: it checks the request
(:mod:`.request`), settles the symmetry and runs the iteration of
:mod:`.optimum_allgather` or :mod:`.optimum_allreduce`; what it returns is an
:class:`~.optimum_result.Optimum`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model import Topology, TopologyError, check_solvable
from ..symmetry import NearSymmetry, Symmetry, near_symmetry, orbits
from .optimum_allgather import solve_allgather, solve_fixed_k
from .optimum_allreduce import solve_allreduce, solve_single_root
from .optimum_result import Node, Optimum, Progress
from .request import ROOTED, check_request


def optimum(
    topology: Topology,
    collective: str = "allgather",
    *,
    root: Node | None = None,
    fixed_k: int | None = None,
    weights: Sequence[object] | None = None,
    engine: str = "auto",
    progress: Progress | None = None,
    symmetry: bool | Symmetry | None = None,
) -> Optimum:
    """The certified optimum of ``collective`` on ``topology``.

    ``allgather`` / ``reduce-scatter``: algbw = N·x* (Zhao & Krishnamurthy 2023, eq. (1)),
    with the bottleneck cut, k and U (Prop 3) and one flow per compute node.
    ``fixed_k``: the best time with k trees per compute node (Zhao & Krishnamurthy 2023, §2.4).
    ``broadcast`` / ``reduce`` with ``root``: bound (5) of Zhao & Krishnamurthy 2023, App. A.
    ``allreduce``: the RS+AG time with the lower bounds (6) and (7) of
    Zhao & Krishnamurthy 2023, App. B and whether Thm 19 (or equality with a bound) proves it optimal.
    ``weights``: non-uniform allgather (Zhao et al. 2026, §5.7), the relative shard size
    of each compute node (positive integers, in compute-node order); ignored by the
    other collectives.
    ``symmetry``: for allgather, reduce-scatter, fixed k and allreduce, one
    max-flow per orbit of the topology's box symmetry when one is found and
    verified (``symmetry.orbits``; the certificate then carries the automorphism):
    None (default) looks for one from ``orbits.AUTO_MIN_COMPUTE`` compute nodes on,
    True always, False never. A :class:`~collcert.reference.symmetry.Symmetry`
    found already (``symmetry.find_symmetry(topology, weights)``, as
    :func:`schedule` does) is used as it is, without a search, after checking
    that it is an automorphism of the topology keeping the weights. The result
    is the same either way.
    """
    req = check_request(topology, collective, root=root, fixed_k=fixed_k, weights=weights,
                        caller="optimum")
    coll = req.collective
    if coll in ROOTED:
        check_solvable(topology, engine)  # refuse what cannot fit in memory or time
        return solve_single_root(topology, coll, req.root, engine, progress)
    t = topology.transpose() if coll == "reduce-scatter" else topology
    sym: Symmetry | NearSymmetry | None = _orbit_symmetry(t, symmetry, req.weights)
    if (sym is None and coll != "allreduce" and req.weights is None
            and not isinstance(symmetry, Symmetry) and symmetry is not False
            and orbits.wanted(t, symmetry)):
        sym = near_symmetry(t)  # a degraded machine: box permutations, not a shift
    # refuse what cannot fit in memory or time (limits.py): flows for one sink per orbit
    # (allreduce's bound (6) still solves one max-flow per compute node)
    check_solvable(topology, engine,
                   sinks=None if sym is None or coll == "allreduce" else len(sym.reps))
    if coll == "allreduce":  # near symmetry is looked for only for the other collectives
        return solve_allreduce(topology, engine, progress,
                               None if isinstance(sym, NearSymmetry) else sym)
    if req.fixed_k is not None:
        opt = solve_fixed_k(t, req.fixed_k, engine, progress, sym)
    else:
        opt = solve_allgather(t, engine, progress, req.weights, sym)
    if coll == "reduce-scatter":
        opt.collective = "reduce-scatter"
        opt.topology = topology
        opt.extra["flows_on"] = "transposed topology"
    return opt


def _orbit_symmetry(t: Topology, symmetry: bool | Symmetry | None,
                    weights: list[int] | None) -> Symmetry | None:
    """The symmetry the max-flows go by on ``t`` (already transposed for
    reduce-scatter): the one given, checked; else searched for when
    ``orbits.wanted``; else None."""
    if isinstance(symmetry, Symmetry):
        problem = orbits.symmetry_problem(symmetry, t, weights)
        if problem:
            raise TopologyError(f"symmetry= is not an automorphism of the topology that "
                                f"keeps the weights: {problem}")
        return symmetry
    if symmetry is not False and orbits.wanted(t, symmetry):
        return orbits.find_symmetry(t, weights)
    return None
