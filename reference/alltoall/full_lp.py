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

A cut S bounds λ by B⁺(S) / (|S ∩ V_c| · |V_c ∖ S|) (every pair from inside to
outside crosses it); when the best single-node or complement cut meets λ, the
certificate carries it as a witness that needs no LP at all.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..model import Node, Topology, TopologyError, check_budget, fraction_str
from ..solvers import LinearProgram, LPResult, solve_lp

if TYPE_CHECKING:
    from .orbit_lp import SymmetricAlltoall

MAX_LP_COLUMNS = 400_000  # N·|E|: beyond this the exact solve is not attempted
BYTES_PER_COLUMN = 4000
"""Memory per flow variable (``/usr/bin/time -v``: dgx_a100:16, 98,304 columns, 378 MB;
torus:12x12, 82,944 columns, 297 MB)."""


def solve_seconds(columns: int) -> float:
    """Predicted CPU time of the solve, fitted on the hardest family measured (tori:
    torus:8x8, 16,384 columns, 4.4 s; torus:12x12, 82,944 columns, 200 s); DGX boxes
    and rings solve much faster (dgx_a100:16, 98,304 columns, 22 s)."""
    return float(4.4 * (columns / 16384) ** 2.35)


def alltoall_lp(topology: Topology) -> LinearProgram:
    """The maximum concurrent flow LP of alltoall on ``topology`` (see the module doc)."""
    n = topology.num_compute
    links = list(topology.capacity)
    cols = n * len(links)
    if cols > MAX_LP_COLUMNS:
        raise TopologyError(f"the alltoall LP would have {cols} flow variables "
                            f"({n} compute nodes × {len(links)} links); collcert solves it "
                            f"exactly up to {MAX_LP_COLUMNS}")
    check_budget(topology.name or "the topology", BYTES_PER_COLUMN * cols,
                 f"the alltoall LP with {cols} flow variables ({n} compute nodes × "
                 f"{len(links)} links)", seconds=solve_seconds(cols),
                 action="try a smaller topology")
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


def cut_bound(topology: Topology, cut: Iterable[Node]) -> Fraction | None:
    """B⁺(S) / (|S ∩ V_c| · |V_c ∖ S|), or None when S does not split the compute nodes."""
    s = set(cut)
    inside = sum(1 for v in topology.compute_nodes if v in s)
    outside = topology.num_compute - inside
    if not inside or not outside:
        return None
    return topology.out_capacity(s) / (inside * outside)


@dataclass
class AlltoallOptimum:
    topology: Topology
    lam: Fraction  # the maximum concurrent flow: rate of every ordered pair at once
    result: LPResult
    cut: frozenset[Node] | None  # a cut whose bound equals lam, when a simple one does
    sym: SymmetricAlltoall | None = None  # solved by orbits (:mod:`.alltoall_sym`)

    @property
    def algbw(self) -> Fraction:
        return self.topology.num_compute * self.lam

    @property
    def time_per_unit(self) -> Fraction:
        return 1 / self.algbw

    def witness(self) -> str:
        """What proves the optimum, in words."""
        if self.cut is not None:
            t = self.topology
            inside = [v for v in t.compute_nodes if v in self.cut]
            names = ", ".join(str(v) for v in inside[:6]) + (", …" if len(inside) > 6 else "")
            a, b = len(inside), t.num_compute - len(inside)
            return (f"the cut S with compute nodes {{{names}}} has egress B⁺(S) = "
                    f"{fraction_str(t.out_capacity(self.cut))}, and the {a}·{b} ordered pairs "
                    "from inside to outside must all cross it")
        if self.sym is not None:
            return ("a length ℓ for every link (in the certificate, the same on links the "
                    "automorphisms exchange) bounds λ ≤ Σ c·ℓ / Σ over pairs of dist_ℓ "
                    "(max concurrent flow duality), and it meets λ")
        return ("the exact dual of the maximum concurrent flow LP (a length for every link, "
                "in the certificate) proves it by LP duality")

    def certificate(self) -> dict[str, Any]:
        if self.sym is not None:
            cert = self.sym.certificate_parts()
        else:
            cert = self.result.certificate()
            cert.pop("format", None)
        out: dict[str, Any] = {
            "format": "collcert-certificate/1", "kind": "alltoall-optimum",
            "collective": "alltoall", "topology": self.topology.content_hash(),
            "unit": self.topology.unit, "num_compute": self.topology.num_compute,
            "lambda": fraction_str(self.lam), "algbw": fraction_str(self.algbw),
            "time_per_unit": fraction_str(self.time_per_unit),
        }
        if self.cut is not None:
            out["cut"] = [v for v in self.topology.nodes if v in self.cut]
        out.update(cert)
        return out

    def summary(self) -> str:
        return (f"alltoall: algbw = {fraction_str(self.algbw)} {self.topology.unit} "
                f"(every ordered pair at rate {fraction_str(self.lam)} at once); "
                f"{self.witness()}")


def alltoall_optimum(topology: Topology, symmetry: bool | None = None) -> AlltoallOptimum:
    """The exact optimal alltoall on ``topology``, with its certificate.

    ``symmetry``: solve one commodity per orbit of compute nodes under automorphisms
    found and verified by :mod:`.automorphism_search` (:mod:`.alltoall_sym`; the
    certificate then carries flows, lengths and the automorphisms): always when some
    are found (True), never (False), or, for None (default), from
    ``orbits.AUTO_MIN_COMPUTE`` compute nodes on. Without symmetry, the full LP and its
    exact primal and dual are the certificate."""
    if topology.num_compute < 2:
        raise TopologyError("alltoall needs at least two compute nodes")
    from ..symmetry import orbits
    from . import orbit_lp as alltoall_sym

    if len(topology.capacity) > MAX_LP_COLUMNS:  # not even one commodity fits
        raise TopologyError(f"the alltoall LP would have at least {len(topology.capacity)} "
                            f"flow variables (one commodity on {len(topology.capacity)} links); "
                            f"collcert solves it exactly up to {MAX_LP_COLUMNS}")
    if orbits.wanted(topology, symmetry):
        gens = alltoall_sym.find_symmetry(topology)
        if gens is not None:
            sym = alltoall_sym.SymmetricAlltoall(topology, gens)
            cut = next((c for c in sym.cut_candidates() if cut_bound(topology, c) == sym.lam),
                       None)
            return AlltoallOptimum(topology, sym.lam, sym.result, cut, sym)
    res = solve_lp(alltoall_lp(topology))
    lam = res.objective
    cut = None
    candidates: list[frozenset[Node]] = []
    for v in topology.compute_nodes:
        candidates.append(frozenset({v}))
        candidates.append(frozenset(topology.nodes) - {v})
    # threshold cuts of the dual potentials of each source (nodes "near" s by the dual's
    # link lengths): they find the box-to-box bottleneck of multi-box machines
    idx = topology.index
    for s in topology.compute_nodes:
        pot = sorted(topology.nodes, key=lambda v: res.y.get(f"cons{idx[s]}:{idx[v]}", 0))
        candidates += [frozenset(pot[:k]) for k in range(1, len(pot))]
    for c in candidates:
        if cut_bound(topology, c) == lam:
            cut = c
            break
    return AlltoallOptimum(topology, lam, res, cut)
