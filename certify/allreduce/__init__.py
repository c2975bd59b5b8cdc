"""Checkers of the allreduce bounds.

Modules:

``rate``  checker 9: the cut-set bound and the MAC-BC LP (Zhou & Sun 2026, Thm 1-2)
``lp5``   checker 8: ForestColl's allreduce LP (Zhao et al. 2026, App. G, LP (5))
``rsag_weighted``  weighted RS+AG: shards, phase times and the dual that no shards beat
``rsag_condition``  checker 10: when RS+AG is optimal (Zhao & Krishnamurthy 2023, Thm 19)
"""

from .lp5 import check_forestcoll_lp
from .rate import Graph, check_cut_set, check_mac_bc_lp, directed_mst
from .rsag_condition import check_rsag_condition
from .rsag_weighted import check_rsag_weighted

__all__ = ["Graph", "check_cut_set", "check_forestcoll_lp", "check_mac_bc_lp",
           "check_rsag_condition", "check_rsag_weighted", "directed_mst"]
