"""Baselines: what clusters run today, as ordinary collcert schedules.

NCCL's rings (with channels ordered as NCCL's topology search orders them),
NCCL's double binary tree, and the classic algorithms (direct, recursive
doubling / halving, Bruck, hierarchical), NCCL's newer algorithms (NVLS and
NVLS-tree, which add in the NVSwitch; CollNet direct and chain, which add in the
InfiniBand switch; PAT), each written as a
``collcert-schedule/1`` document, so ``collcert audit`` gives its exact algbw
and smoke, draw, the α-β model and the MSCCL exporter apply unchanged. The
model of NCCL and its simplifications: docs/baselines.md; NCCL's source read
for it (NVIDIA/nccl): ``src/graph/search.cc``, ``rings.cc``, ``trees.cc``,
``connect.cc``, ``tuning.cc``, ``src/device/all_reduce.h``, ``all_gather.h``,
``reduce_scatter.h``, ``src/include/collectives.h``, ``src/enqueue.cc`` (at 5067397c).

Modules:

``fabric``          boxes (NCCL's nodes) and least-used routes through switches
``rings``           NCCL's ring channels (Hamiltonian cycles), :class:`BaselineError`
``ring_schedules``  the ring allgather, reduce-scatter, allreduce, broadcast, reduce
``trees``           NCCL's double binary tree: allreduce, broadcast, reduce
``classic``         direct, recursive doubling / halving, Bruck, hierarchical
``switch_paths``    boxes, their NVSwitch, NVLS heads, the SHARP switch; tree paths that add
                    or copy in a switch, and a GPU's own data through it and back
``nvls``            NCCL's NVLS (one box) and NVLS-tree: the NVSwitch adds and multicasts
``collnet``         NCCL's CollNet direct and chain: the InfiniBand switch adds (SHARP)
``pat``             NCCL's PAT allgather / reduce-scatter (one GPU per node)
``document``        the schedule documents and :class:`Baseline`
``registry``        every baseline by name: :func:`baseline`, :func:`all_baselines`, :func:`default_baselines`;
                    :func:`msccl_program` (MSCCL XML)
``comparison``      optimum, LP (5) and baselines side by side (``collcert compare``)
``checks``          the comparison's figures, each checked; the refusal
``results``         :class:`Comparison`, :class:`Row`, :class:`ComparisonRefused`
"""

from .comparison import compare
from .document import Baseline
from .fabric import find_boxes
from .registry import BASELINES, all_baselines, baseline, default_baselines, msccl_program
from .results import Comparison, ComparisonRefused, Row
from .rings import BaselineError, Rings, ring_channels, ring_summary
from .trees import btree, dtree

__all__ = [
    "BASELINES",
    "Baseline",
    "BaselineError",
    "Comparison",
    "ComparisonRefused",
    "Rings",
    "Row",
    "all_baselines",
    "default_baselines",
    "baseline",
    "btree",
    "compare",
    "dtree",
    "find_boxes",
    "msccl_program",
    "ring_channels",
    "ring_summary",
]
