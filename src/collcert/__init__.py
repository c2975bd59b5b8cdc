"""collcert: certified bandwidth-optimal collective communication schedules.

The reference implementation (``collcert.reference``) computes optima and
schedules following ForestColl (Zhao & Krishnamurthy 2023 and Zhao et al. 2026); every result carries a
certificate that ``collcert.certify`` checks with independent, plain code.
"""

from typing import TYPE_CHECKING

# ``collcert.audit`` is the function (the auditing code lives in
# ``collcert.auditing``, which imports collcert.reference only inside its
# functions, so ``import collcert`` stays light).
from .auditing import AuditReport, audit, audit_file

if TYPE_CHECKING:  # for type checkers; at run time these come from __getattr__
    from collcert.reference.allreduce import allreduce_rate
    from collcert.reference.forestcoll import COLLECTIVES, Optimum, Schedule
    from collcert.reference.model import (
        CollcertError,
        ScheduleError,
        Topology,
        TopologyError,
        fraction_str,
        parse_number,
    )
    from collcert.reference.solvers import FlowNetwork, max_flow

    from . import platforms
    from .graphs import as_topology, optimum, schedule
    from .importers import import_topology

__version__ = "0.1.0"

# Names provided by modules that are imported on first use: `import collcert`
# stays fast (the schedule builder pulls in numpy), and it imports no
# collcert.reference at all, so `collcert check` can show that only the
# independent checkers ran.
_LAZY = {
    "CollcertError": "collcert.reference.model",
    "ScheduleError": "collcert.reference.model",
    "TopologyError": "collcert.reference.model",
    "fraction_str": "collcert.reference.model",
    "parse_number": "collcert.reference.model",
    "FlowNetwork": "collcert.reference.solvers",
    "max_flow": "collcert.reference.solvers",
    "COLLECTIVES": "collcert.reference.forestcoll",
    "Optimum": "collcert.reference.forestcoll",
    "optimum": "collcert.graphs",  # also reads networkx graphs (collcert.graphs)
    "Topology": "collcert.reference.model",
    "allreduce_rate": "collcert.reference.allreduce",
    "schedule": "collcert.graphs",
    "as_topology": "collcert.graphs",
    "import_topology": "collcert.importers",
    "Schedule": "collcert.reference.forestcoll",
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
