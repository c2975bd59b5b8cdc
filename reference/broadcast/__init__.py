"""Steady-state broadcast under the one-port model (Legrand et al. 2003).

Modules:

``oneport``          platforms: a cost per link, one send and one receive per node at a
                     time (§2)
``steady_lp``        the linear programs SSB and SSBPDAG, solved exactly (§3-4)
``steady_schedule``  periodic schedules: weighted trees and the matchings of one period
                     (§4.3, §5.3-5.4)
``steady_search``    exhaustive searches: the best single tree, the best DAG (§3)
``steady``           :func:`steady_broadcast`: optimum, certificate and schedule
``pipe``             a finite series of broadcasts (§5.5) and PIPE, one long message in
                     packets with start-ups (§6, Thm 8): exact makespans
"""

from .oneport import OnePortPlatform
from .pipe import FiniteRun, PipeBroadcast, finite_series, pipe_broadcast
from .steady import (
    SteadyBroadcast,
    paper_fig1,
    paper_fig5,
    random_platform,
    steady_broadcast,
)
from .steady_lp import SSBSolution, check_ssb_size, solve_ssb, solve_ssbpdag, ssb_seconds
from .steady_search import MAX_DAG_NODES, best_dag, best_tree

__all__ = [
    "MAX_DAG_NODES",
    "FiniteRun",
    "OnePortPlatform",
    "PipeBroadcast",
    "SSBSolution",
    "SteadyBroadcast",
    "best_dag",
    "best_tree",
    "check_ssb_size",
    "finite_series",
    "paper_fig1",
    "paper_fig5",
    "pipe_broadcast",
    "random_platform",
    "solve_ssb",
    "solve_ssbpdag",
    "ssb_seconds",
    "steady_broadcast",
]
