"""Allreduce: its computation rate, ForestColl's LP (5), and schedules that reach it.

Modules:

``report``        :func:`allreduce_rate`: every bound below, as one chain
``rate``          the cut-set upper bound and the MAC-BC LP lower bound (Zhou & Sun
                  2025, Thm 1-2)
``closed_forms``  Zhou & Sun 2026's closed forms (complete, cyclic, ring, hypercube
                  networks, bi-directed trees) and their networks
``lp5``           ForestColl's allreduce LP (Zhao et al. 2026, App. G, LP (5)), solved
                  exactly
``lp5_schedule``  reduce and broadcast trees that reach LP (5) exactly
"""

from . import closed_forms
from .lp5 import ForestCollLP, forestcoll_lp
from .lp5_schedule import LPSchedule, LPTree, lp_schedule
from .rate import CutSetBound, MacBcLP, cut_set_bound, mac_bc_lp
from .report import AllreduceRate, allreduce_rate

__all__ = [
    "AllreduceRate",
    "CutSetBound",
    "ForestCollLP",
    "LPSchedule",
    "LPTree",
    "MacBcLP",
    "allreduce_rate",
    "closed_forms",
    "cut_set_bound",
    "forestcoll_lp",
    "lp_schedule",
    "mac_bc_lp",
]
