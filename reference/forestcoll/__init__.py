"""ForestColl: the optimum of every collective and the tree schedules that reach it.

Zhao & Krishnamurthy 2023 (*Bandwidth Optimal Pipeline Schedule for Collective
Communication*) and Zhao et al. 2026 (*ForestColl*, NSDI). The data path::

    Topology → optimum (max-flows, Thm 1, Prop 3) → G({U·c_e})
             → switch removal by edge splitting (Thm 8, Alg 1)
             → spanning out-tree packing (Thm 12, Alg 2)
             → trees with their paths in G → Schedule

Modules:

``optima``             :func:`optimum`: the request checked, the symmetry settled, the
                       max-flow iteration run
``request``            the arguments of :func:`optimum` and :func:`schedule`, checked once
                       for both (``COLLECTIVES``)
``optimum_allgather``  allgather / reduce-scatter and fixed k by max-flows (Thm 1, Prop 3,
                       Thm 13-15)
``optimum_allreduce``  single-root collectives (App. A) and allreduce bounds (Thm 16-19)
``optimum_result``     :class:`Optimum`: the optimum, its summary, JSON and certificate
``splitting``          switch removal by edge splitting (``splitting_repair``: its graph and
                       the repair of its kept flows)
``symsplit``           switch removal by orbits of a box symmetry
``walks``              the walks in G of G* arc units: taken, joined, handed out to trees
``packing``            spanning out-tree packing in batches
``sympack``            tree packing by orbits
``nearpack``           degraded machines with faults at different positions: the faults
                       grouped one class per box orbit, a free symmetry again
``nearpack_repair``    unsticking the orbit packing by re-routing another tree's arc
``general_estimate``   what switch removal and packing on the whole graph will cost,
                       predicted (and refused beyond the limits) before they start
``pipeline``           :func:`schedule`: the symmetry searched once, the optimum, the phases
``schedule_build``     one phase: switch removal, packing, walks in G, multicast; its time
``schedule_result``    :class:`Schedule`, :class:`Phase`, :class:`Tree`, :class:`TreeEdge`,
                       their JSON and ForestColl XML
``schedule_sym``       a phase built by orbits kept as orbits: representative trees, lazy
                       mapping to every root, the time by link orbits (symmetric files)
``schedule_io``        schedule files: JSON, gzip, the ForestColl tree XML (Zhao et al.
                       2026, §6.1)
"""

from .general_estimate import estimate_general
from .optima import optimum
from .optimum_result import FlowWitness, Optimum
from .packing import Packing, pack_trees
from .pipeline import ORBIT_COLLECTIVES, schedule
from .request import COLLECTIVES
from .schedule_build import Stages, build_phase, peak_memory_mb
from .schedule_io import dump_json, expand, forestcoll_xml, read_text, render, write_schedule
from .schedule_result import Phase, Schedule, Tree, TreeEdge
from .splitting import SplitResult, remove_switches
from .symsplit import SymmetryFailed

__all__ = [
    "COLLECTIVES",
    "ORBIT_COLLECTIVES",
    "FlowWitness",
    "Optimum",
    "Packing",
    "Phase",
    "Schedule",
    "SplitResult",
    "Stages",
    "SymmetryFailed",
    "Tree",
    "TreeEdge",
    "build_phase",
    "dump_json",
    "estimate_general",
    "expand",
    "forestcoll_xml",
    "optimum",
    "pack_trees",
    "peak_memory_mb",
    "read_text",
    "remove_switches",
    "render",
    "schedule",
    "write_schedule",
]
