"""An independent event simulator of associative reduction schedules (Canon & Antoniu 2012).

Module ``simulate``: every transfer and reduction replayed, the makespan recomputed.
"""

from .simulate import check_reduction

__all__ = ["check_reduction"]
