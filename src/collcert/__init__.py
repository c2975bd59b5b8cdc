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

# Imported eagerly, not lazily: ``collcert.audit`` is also the name of a
# submodule, and importing a submodule sets the package attribute to the
# module; binding the function here, after that import, keeps
# ``collcert.audit`` the function however the submodule was imported.
from .audit import AuditReport, audit, audit_file

__version__ = "0.1.0"

# Names provided by modules that are imported on first use (keeps `import
# collcert` fast: the schedule builder pulls in numpy).
_LAZY = {
    "schedule": "collcert.reference.schedule",
    "Schedule": "collcert.reference.schedule",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'collcert' has no attribute {name!r}")


__all__ = [
    "AuditReport",
    "COLLECTIVES",
    "CollcertError",
    "FlowNetwork",
    "Optimum",
    "ScheduleError",
    "Topology",
    "TopologyError",
    "__version__",
    "audit",
    "audit_file",
    "fraction_str",
    "max_flow",
    "optimum",
    "parse_number",
    "platforms",
]
