"""Checkers of steady-state broadcast under the one-port model (Legrand et al. 2003).

Modules:

``oneport``         the platform, the LP certificate and the weighted trees
``oneport_events``  a periodic schedule replayed event by event (§5.4)
``stated``          the figures a file states beside its schedule, compared
``pipe``            a finite series (§5.5) and PIPE (§6): the finite schedule replayed,
                    makespan, lower bound L·T* and ratio recomputed
"""

from .oneport_events import check_steady_broadcast
from .pipe import check_pipe, check_series, check_series_doc

__all__ = ["check_pipe", "check_series", "check_series_doc", "check_steady_broadcast"]
