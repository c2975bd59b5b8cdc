"""Checkers of what solvers return: an LP certificate, one flow, a routing.

Modules:

``lp``       checker 6: an exact primal and dual solution of a linear program
``flows``    one flow, checked arc by arc in integers (part of checker 2)
``routing``  a routing of a traffic matrix, and a lower bound on any routing's time
"""

from .flows import check_flow, flow_fields
from .lp import check_lp
from .routing import check_routing

__all__ = ["check_flow", "check_lp", "check_routing", "flow_fields"]
