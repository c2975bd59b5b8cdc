"""Solvers: the fast engines whose answers are then proven exactly.

Modules:

``maxflow``         exact integer maximum flow: one facade, pluggable engines
                    (OR-Tools, a Dinic of our own), every result checked
``linear_program``  a linear program with exact coefficients, and the error of the LP layer
``lp``              solving it: a floating-point solve, then an exact proof
``lp_exact``        the rational algebra behind that proof (snapping, pivoting)
``arborescence``    minimum-weight spanning arborescences (Chu-Liu / Edmonds)
``edge_colouring``  weighted bipartite edge colouring (Legrand et al. 2003,
                    Lemma 1, Thm 6)
"""

from . import lp_exact
from .arborescence import min_arborescence, min_in_and_out
from .edge_colouring import colour
from .linear_program import LinearProgram, LPError
from .lp import LPResult, float_solver, floats_can_solve, solve_lp
from .maxflow import INF, FlowNetwork, FlowResult, MaxFlow, max_flow

__all__ = [
    "INF",
    "FlowNetwork",
    "FlowResult",
    "LPError",
    "LPResult",
    "LinearProgram",
    "MaxFlow",
    "colour",
    "float_solver",
    "floats_can_solve",
    "lp_exact",
    "max_flow",
    "min_arborescence",
    "min_in_and_out",
    "solve_lp",
]
