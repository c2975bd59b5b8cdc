"""collcert: certified bandwidth-optimal collective communication schedules.

The reference implementation (``collcert.reference``) computes optima and
schedules following ForestColl (seeds 000 and 003); every result carries a
certificate that ``collcert.certify`` checks with independent, plain code.
"""

from typing import TYPE_CHECKING

# Imported eagerly, not lazily: ``collcert.audit`` is also the name of a
# submodule, and importing a submodule sets the package attribute to the
# module; binding the function here, after that import, keeps
# ``collcert.audit`` the function however the submodule was imported.
# (collcert.audit imports collcert.reference only inside its functions.)
from .audit import AuditReport, audit, audit_file

if TYPE_CHECKING:  # for type checkers; at run time these come from __getattr__
    from collcert.reference.allreduce import allreduce_rate
    from collcert.reference.errors import CollcertError, ScheduleError, TopologyError
    from collcert.reference.exact import fraction_str, parse_number
    from collcert.reference.maxflow import FlowNetwork, max_flow
    from collcert.reference.optimum import COLLECTIVES, Optimum
    from collcert.reference.schedule import Schedule
    from collcert.reference.topology import Topology

    from . import platforms
    from .graphs import as_topology, optimum, schedule
    from .importers import import_topology

__version__ = "0.1.0"

# Names provided by modules that are imported on first use: `import collcert`
# stays fast (the schedule builder pulls in numpy), and it imports no
# collcert.reference at all, so `collcert check` can show that only the
# independent checkers ran.
_LAZY = {
    "CollcertError": "collcert.reference.errors",
    "ScheduleError": "collcert.reference.errors",
    "TopologyError": "collcert.reference.errors",
    "fraction_str": "collcert.reference.exact",
    "parse_number": "collcert.reference.exact",
    "FlowNetwork": "collcert.reference.maxflow",
    "max_flow": "collcert.reference.maxflow",
    "COLLECTIVES": "collcert.reference.optimum",
    "Optimum": "collcert.reference.optimum",
    "optimum": "collcert.graphs",  # also reads networkx graphs (collcert.graphs)
    "Topology": "collcert.reference.topology",
    "allreduce_rate": "collcert.reference.allreduce",
    "schedule": "collcert.graphs",
    "as_topology": "collcert.graphs",
    "import_topology": "collcert.importers",
    "Schedule": "collcert.reference.schedule",
}


def __getattr__(name: str) -> object:
    import importlib

    if name == "platforms":
        return importlib.import_module("collcert.platforms")
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'collcert' has no attribute {name!r}")


__all__ = [
    "AuditReport",
    "COLLECTIVES",
    "CollcertError",
    "FlowNetwork",
    "Optimum",
    "Schedule",
    "ScheduleError",
    "Topology",
    "TopologyError",
    "__version__",
    "allreduce_rate",
    "as_topology",
    "audit",
    "audit_file",
    "fraction_str",
    "import_topology",
    "max_flow",
    "optimum",
    "parse_number",
    "platforms",
    "schedule",
]
