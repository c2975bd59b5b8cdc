"""collcert.reference: computes optima and schedules; ``collcert.certify`` checks them.

One room per capability; each room's ``__init__`` is its public face, the only
thing other rooms import. The rooms, from the bottom up (a room imports only
rooms above it in this list):

``model``       topologies and their files, exact numbers, size limits, errors
``solvers``     max-flow engines, the exact LP layer, arborescences, edge colouring
``symmetry``    automorphisms of a topology, found and verified
``forestcoll``  optima of every collective, switch removal, tree packing, schedules
                (Zhao & Krishnamurthy 2023; Zhao et al. 2026)
``allreduce``   the all-reduce rate (Zhou & Sun 2026), ForestColl's LP (5) and its
                schedules (Zhao et al. 2026, App. G)
``broadcast``   steady-state broadcast under the one-port model (Legrand et al. 2003)
``reduction``   associative reduction trees (Canon & Antoniu 2012)
``alltoall``    the alltoall optimum as a maximum concurrent flow
``execution``   execution plans, MSCCL programs, the α-β model

The names below are importable from here too; they are loaded on first use, so
that importing one room does not load the others (docs/architecture.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for type checkers; at run time these come from __getattr__
    from .allreduce import allreduce_rate, forestcoll_lp, lp_schedule
    from .alltoall import alltoall_optimum
    from .broadcast import OnePortPlatform, steady_broadcast
    from .execution import msccl_xml, plan_from_schedule
    from .forestcoll import COLLECTIVES, Optimum, Schedule, optimum, schedule
    from .model import CollcertError, ScheduleError, Topology, TopologyError
    from .reduction import solve as reduction_tree

_LAZY = {
    "COLLECTIVES": ("forestcoll", "COLLECTIVES"),
    "CollcertError": ("model", "CollcertError"),
    "OnePortPlatform": ("broadcast", "OnePortPlatform"),
    "Optimum": ("forestcoll", "Optimum"),
    "Schedule": ("forestcoll", "Schedule"),
    "ScheduleError": ("model", "ScheduleError"),
    "Topology": ("model", "Topology"),
    "TopologyError": ("model", "TopologyError"),
    "allreduce_rate": ("allreduce", "allreduce_rate"),
    "alltoall_optimum": ("alltoall", "alltoall_optimum"),
    "forestcoll_lp": ("allreduce", "forestcoll_lp"),
    "lp_schedule": ("allreduce", "lp_schedule"),
    "msccl_xml": ("execution", "msccl_xml"),
    "optimum": ("forestcoll", "optimum"),
    "plan_from_schedule": ("execution", "plan_from_schedule"),
    "reduction_tree": ("reduction", "solve"),
    "schedule": ("forestcoll", "schedule"),
    "steady_broadcast": ("broadcast", "steady_broadcast"),
}


def __getattr__(name: str) -> object:
    import importlib

    if name in _LAZY:
        room, attr = _LAZY[name]
        value = getattr(importlib.import_module(f"{__name__}.{room}"), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "COLLECTIVES",
    "CollcertError",
    "OnePortPlatform",
    "Optimum",
    "Schedule",
    "ScheduleError",
    "Topology",
    "TopologyError",
    "allreduce_rate",
    "alltoall_optimum",
    "forestcoll_lp",
    "lp_schedule",
    "msccl_xml",
    "optimum",
    "plan_from_schedule",
    "reduction_tree",
    "schedule",
    "steady_broadcast",
]
