"""The optimal alltoall: a maximum concurrent multicommodity flow, solved exactly.

Alltoall on N compute nodes: every node i holds M (its whole send buffer, the
size nccl-tests and MSCCL count) cut into N blocks of M/N, and sends block j
to node j. Any routing may be used (switches and GPUs forward), so the best
time is a multicommodity flow problem: with λ the largest rate that every
ordered pair (i, j), i ≠ j, can be sent *at the same time* within the link
capacities (the maximum concurrent flow), the N(N-1) blocks of M/N take

    T = (M/N) / λ,    algbw = M / T = N·λ,    time per unit of M = 1 / (N·λ).

The LP (one commodity per source s; a flow from s that delivers λ to every
other compute node decomposes into paths s → j of λ each, so this is the
pairwise problem)::

    max λ   s.t.   out_s(v) − in_s(v) = (N−1)·λ  if v = s,  −λ  if v ≠ s is a
                   compute node,  0  at a switch          (for every s, v)
                   Σ_s f_s(e) ≤ c_e                        (for every link e)
                   f ≥ 0, λ ≥ 0

Variables are named by node index (the topology's compute nodes, then its
switches): ``lambda``, ``f{s}:{u}>{v}``; rows ``cons{s}:{v}`` and
``cap{u}>{v}``. :mod:`collcert.certify.alltoall.full_lp` rebuilds the same LP from the
topology and checks the exact primal and dual, found from a float simplex basis
and proven in rationals by the exact LP layer (:func:`collcert.reference.solvers.lp.solve_lp`).

The dual's potentials of each source order the nodes by their distance from it;
the threshold cuts of these orders (:func:`potential_cuts`), with the single
nodes and their complements, are the cuts :mod:`.optimum` tries as a simpler
witness of λ.
"""

from __future__ import annotations

from collections.abc import Hashable

from ..model import Node, Topology
from ..solvers import LinearProgram, LPResult
from .lp_size import Notice, check_columns


def alltoall_lp(topology: Topology, notice: Notice | None = None) -> LinearProgram:
    """The maximum concurrent flow LP of alltoall on ``topology`` (see the module doc);
    ``notice`` as in :func:`.lp_size.check_columns`."""
    n = topology.num_compute
    links = list(topology.capacity)
    check_columns(topology, n, len(links), notice=notice)
    idx = topology.index
    lp = LinearProgram("max")
    lp.add_variable("lambda", 1)
    outs: dict[Node, list[tuple[Node, Node]]] = {v: [] for v in topology.nodes}
    ins: dict[Node, list[tuple[Node, Node]]] = {v: [] for v in topology.nodes}
    for e in links:
        outs[e[0]].append(e)
        ins[e[1]].append(e)

    def var(s: Node, e: tuple[Node, Node]) -> str:
        return f"f{idx[s]}:{idx[e[0]]}>{idx[e[1]]}"

    for s in topology.compute_nodes:
        for v in topology.nodes:
            coefs: dict[Hashable, object] = {}
            for e in outs[v]:
                coefs[var(s, e)] = 1
            for e in ins[v]:
                coefs[var(s, e)] = -1
            if v == s:
                coefs["lambda"] = -(n - 1)
            elif topology.is_compute(v):
                coefs["lambda"] = 1
            lp.add_row(f"cons{idx[s]}:{idx[v]}", coefs, "=", 0)
    for e in links:
        lp.add_row(f"cap{idx[e[0]]}>{idx[e[1]]}",
                   {var(s, e): 1 for s in topology.compute_nodes}, "<=", topology.capacity[e])
    return lp


def potential_cuts(topology: Topology, result: LPResult) -> list[frozenset[Node]]:
    """Cuts to try as a witness of the optimum ``result`` of :func:`alltoall_lp`: every
    compute node alone and its complement, then the threshold cuts of the dual
    potentials of each source (nodes "near" s by the dual's link lengths), which find
    the box-to-box bottleneck of multi-box machines."""
    candidates: list[frozenset[Node]] = []
    for v in topology.compute_nodes:
        candidates.append(frozenset({v}))
        candidates.append(frozenset(topology.nodes) - {v})
    idx = topology.index
    for s in topology.compute_nodes:
        pot = sorted(topology.nodes, key=lambda v: result.y.get(f"cons{idx[s]}:{idx[v]}", 0))
        candidates += [frozenset(pot[:k]) for k in range(1, len(pot))]
    return candidates
