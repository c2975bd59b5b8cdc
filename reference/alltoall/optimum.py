"""The optimal alltoall and its certificate: by orbits where symmetry allows, else the full LP.

:func:`alltoall_optimum` solves the maximum concurrent flow λ of alltoall
exactly, either with one commodity per orbit of compute nodes under verified
automorphisms (:mod:`.orbit_lp`) or with one per compute node (:mod:`.full_lp`),
and looks for a cut S whose bound meets λ: B⁺(S) / (|S ∩ V_c| · |V_c ∖ S|)
bounds λ (every pair from inside to outside crosses S), so such a cut is a
witness that needs no LP at all. :class:`AlltoallOptimum` says what proves λ
and writes the certificate that :mod:`collcert.certify.alltoall` checks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..model import Node, Topology, TopologyError, fraction_str
from ..solvers import LPResult, solve_lp
from ..symmetry import orbits
from .full_lp import alltoall_lp, potential_cuts
from .lp_size import MAX_LP_COLUMNS, Notice
from .orbit_lp import SymmetricAlltoall, symmetry_generators


def cut_bound(topology: Topology, cut: Iterable[Node]) -> Fraction | None:
    """B⁺(S) / (|S ∩ V_c| · |V_c ∖ S|), or None when S does not split the compute nodes."""
    s = set(cut)
    inside = sum(1 for v in topology.compute_nodes if v in s)
    outside = topology.num_compute - inside
    if not inside or not outside:
        return None
    return topology.out_capacity(s) / (inside * outside)


def tight_cut(topology: Topology, candidates: Iterable[frozenset[Node]],
              lam: Fraction) -> frozenset[Node] | None:
    """The first of the ``candidates`` whose :func:`cut_bound` equals ``lam``, if any."""
    return next((c for c in candidates if cut_bound(topology, c) == lam), None)


@dataclass
class AlltoallOptimum:
    topology: Topology
    lam: Fraction  # the maximum concurrent flow: rate of every ordered pair at once
    result: LPResult
    cut: frozenset[Node] | None  # a cut whose bound equals lam, when a simple one does
    sym: SymmetricAlltoall | None = None  # solved by orbits (:mod:`.orbit_lp`)

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


def alltoall_optimum(topology: Topology, symmetry: bool | None = None,
                     notice: Notice | None = None) -> AlltoallOptimum:
    """The exact optimal alltoall on ``topology``, with its certificate.

    ``symmetry``: solve one commodity per orbit of compute nodes under automorphisms
    found and verified by :mod:`collcert.reference.symmetry` (:mod:`.orbit_lp`; the
    certificate then carries flows, lengths and the automorphisms): always when some
    are found (True), never (False), or, for None (default), from
    ``orbits.AUTO_MIN_COMPUTE`` compute nodes on. Without symmetry, the full LP and its
    exact primal and dual are the certificate. ``notice(what, seconds)`` is told the LP
    and its predicted time before the solve (:func:`.lp_size.check_columns`)."""
    if topology.num_compute < 2:
        raise TopologyError("alltoall needs at least two compute nodes")
    if len(topology.capacity) > MAX_LP_COLUMNS:  # not even one commodity fits
        raise TopologyError(f"the alltoall LP would have at least {len(topology.capacity)} "
                            f"flow variables (one commodity on {len(topology.capacity)} links); "
                            f"collcert solves it exactly up to {MAX_LP_COLUMNS}")
    if orbits.wanted(topology, symmetry):
        gens = symmetry_generators(topology)
        if gens is not None:
            sym = SymmetricAlltoall(topology, gens, notice)
            cut = tight_cut(topology, sym.cut_candidates(), sym.lam)
            return AlltoallOptimum(topology, sym.lam, sym.result, cut, sym)
    res = solve_lp(alltoall_lp(topology, notice))
    cut = tight_cut(topology, potential_cuts(topology, res), res.objective)
    return AlltoallOptimum(topology, res.objective, res, cut)
