"""An independent event simulator of associative reduction schedules (Canon & Antoniu 2012).

Modules: ``simulate``: every transfer and reduction replayed, the makespan recomputed;
``stated``: the bounds, tree shape and the writer's verdict a file states, compared.
"""

from .simulate import check_reduction

__all__ = ["check_reduction"]
