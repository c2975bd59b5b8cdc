"""collcert: certified bandwidth-optimal collective communication schedules.

The reference implementation (``collcert.reference``) computes optima and
schedules following ForestColl (seeds 000 and 003); every result carries a
certificate that ``collcert.certify`` checks with independent, plain code.
"""

from collcert.reference.errors import CollcertError, ScheduleError, TopologyError
from collcert.reference.exact import fraction_str, parse_number
from collcert.reference.maxflow import FlowNetwork, max_flow
from collcert.reference.optimum import COLLECTIVES, Optimum, optimum
from collcert.reference.topology import Topology

from . import platforms

__version__ = "0.1.0"

__all__ = [
    "COLLECTIVES",
    "CollcertError",
    "FlowNetwork",
    "Optimum",
    "ScheduleError",
    "Topology",
    "TopologyError",
    "__version__",
    "fraction_str",
    "max_flow",
    "optimum",
    "parse_number",
    "platforms",
]
