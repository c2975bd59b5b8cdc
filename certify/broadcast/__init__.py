"""Checkers of steady-state broadcast under the one-port model (Legrand et al. 2003).

Modules:

``oneport``         the platform, the LP certificate and the weighted trees
``oneport_events``  a periodic schedule replayed event by event (§5.4)
"""

from .oneport_events import check_steady_broadcast

__all__ = ["check_steady_broadcast"]
