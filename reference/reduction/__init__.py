"""Associative reductions when transfers and reductions both cost time (Canon & Antoniu 2012).

Modules:

``trees``          the optimal algorithms (Alg 1-3), the binomial and Fibonacci
                   strategies, and the evaluator of a tree
``length_bounds``  lower and upper bounds on the length of a reduction (§5-6)
``ratios``         approximation ratios of the binomial and Fibonacci strategies
                   (§7.3, Figure 2)
``document``       the ``collcert-reduction/1`` document of a schedule
"""

from . import trees
from .document import schedule_document
from .length_bounds import Bound, best, bounds
from .ratios import figure2, ratio_grid, ratios_against_costs, theorem_bound
from .trees import STRATEGIES, ReductionError, ReductionSchedule, solve

__all__ = [
    "STRATEGIES",
    "Bound",
    "ReductionError",
    "ReductionSchedule",
    "best",
    "bounds",
    "figure2",
    "ratio_grid",
    "ratios_against_costs",
    "schedule_document",
    "solve",
    "theorem_bound",
    "trees",
]
