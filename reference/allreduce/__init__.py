"""Allreduce: its computation rate, ForestColl's LP (5), and schedules that reach it.

Modules:

``report``        :func:`allreduce_rate`: every bound below, as one chain
``cut_set``       the cut-set upper bound on the rate (Zhou & Sun 2026, Thm 1)
``rate``          the MAC-BC LP lower bound on the rate (Zhou & Sun 2026, Thm 2)
``rate_closed``   R_LP with its certificate from the closed forms (Thm 4, 5, 7), no LP
``closed_forms``  Zhou & Sun 2026's closed forms (Thm 3-7: complete, cyclic, ring,
                  hypercube networks, bi-directed trees) and their networks
``lp5``           ForestColl's allreduce LP (Zhao et al. 2026, App. G, LP (5)), solved
                  exactly: :func:`forestcoll_lp` picks the form
``lp5_cuts``      LP (5) by cut generation over orbits of automorphisms (scales to 1024
                  GPUs), with the model of its restricted LP in ``lp5_model``
``lp5_flows``     LP (5) as App. G writes it (a flow per sink; logical arcs with switches)
``lp5_schedule``  reduce and broadcast trees that reach LP (5) exactly
``rsag_weighted`` weighted RS+AG: reduce-scatter then allgather with the best unequal
                  shards (Zhao et al. 2026, §5.7), exact, by cut generation
``rsag_weighted_schedule``  its reduce-scatter and allgather trees
"""

from . import closed_forms
from .cut_set import CutSetBound, cut_set_bound
from .lp5 import ForestCollCutLP, ForestCollLP, forestcoll_lp
from .lp5_cuts import forestcoll_lp_cuts
from .lp5_schedule import LPSchedule, LPTree, lp_schedule
from .rate import MacBcLP, mac_bc_lp
from .rate_closed import closed_form_mac_bc
from .report import MAX_MAC_BC_NODES, MAX_WEIGHTED_NODES, AllreduceRate, allreduce_rate
from .rsag_weighted import WeightedRSAG, weighted_rsag
from .rsag_weighted_schedule import WeightedRSAGSchedule, weighted_rsag_schedule

__all__ = [
    "MAX_MAC_BC_NODES",
    "MAX_WEIGHTED_NODES",
    "AllreduceRate",
    "CutSetBound",
    "ForestCollCutLP",
    "ForestCollLP",
    "LPSchedule",
    "LPTree",
    "MacBcLP",
    "WeightedRSAG",
    "WeightedRSAGSchedule",
    "allreduce_rate",
    "closed_form_mac_bc",
    "closed_forms",
    "cut_set_bound",
    "forestcoll_lp",
    "forestcoll_lp_cuts",
    "lp_schedule",
    "mac_bc_lp",
    "weighted_rsag",
    "weighted_rsag_schedule",
]
