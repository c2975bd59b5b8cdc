"""ForestColl's allreduce LP (5) (Zhao et al. 2026, App. G), solved exactly by one of two forms.

Allreduce as reduce trees into each compute node v followed (pipelined) by
broadcast trees out of v, with a per-root amount x_v and each link's
bandwidth split between reduce (c^RE) and broadcast (c^BC) traffic:

    max Σ_v x_v
    s.t. F(s, t) ≥ Σ_v x_v  for every t ∈ V_c, in c^BC plus s→v of capacity x_v
         F(t, s) ≥ Σ_v x_v  for every t ∈ V_c, in c^RE plus v→s of capacity x_v
         c^RE_e + c^BC_e ≤ b_e,   everything ≥ 0.

``method="cuts"`` (:mod:`.lp5_cuts`, the default): the max-flow conditions as
cut rows generated lazily, one max-flow per orbit of compute nodes of the
verified automorphism group, variables per link (switches: balanced c^RE, c^BC;
docs/allreduce.md derives why this is App. G's optimum). It scales to 1024
GPUs. ``method="flows"`` (:mod:`.lp5_flows`): App. G's own form, a flow per
sink and, with switches, the logical graph of compute pairs joined through
switches with one routing flow per source; it grows as N·|E| (N³ with
switches) and is kept for cross-checks and for the schedules of
:mod:`.lp5_schedule`, which map logical arcs to walks.
"""

from __future__ import annotations

from collections.abc import Callable

from ..model import Topology, TopologyError
from .lp5_cuts import ForestCollCutLP, Progress, forestcoll_lp_cuts
from .lp5_flows import MAX_LP_NONZEROS, ForestCollLP, forestcoll_lp_flows, logical_arcs, name

METHODS = ("auto", "cuts", "flows")

__all__ = ["MAX_LP_NONZEROS", "METHODS", "ForestCollCutLP", "ForestCollLP", "forestcoll_lp",
           "logical_arcs", "name"]


def forestcoll_lp(t: Topology, *, uniform: bool = False, method: str = "auto",
                  symmetry: bool | None = None, progress: Progress | None = None,
                  notice: Callable[[str, float], None] | None = None) -> ForestCollLP:
    """LP (5) of ``t`` exactly: the cut form (``"auto"``, ``"cuts"``), or App. G's flow
    form (``"flows"``). ``uniform``: every root gets the same share x_v (App. G's
    point (i) given up, only the split of each link optimised). ``symmetry``,
    ``progress`` and ``notice``: see :func:`.lp5_cuts.forestcoll_lp_cuts` (cut form
    only)."""
    if not isinstance(t, Topology):
        raise TypeError("forestcoll_lp() needs a collcert Topology")
    if method not in METHODS:
        raise TopologyError(f"LP (5) method {method!r}: use one of {', '.join(METHODS)}")
    if method == "flows":
        return forestcoll_lp_flows(t, uniform=uniform)
    return forestcoll_lp_cuts(t, uniform=uniform, symmetry=symmetry, progress=progress,
                              notice=notice)
