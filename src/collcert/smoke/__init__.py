"""``collcert smoke``: run a schedule on real devices and check every element.

>>> from collcert.smoke import smoke
>>> report = smoke("ag.json", backend="gloo", size=1 << 20)   # doctest: +SKIP
>>> report.passed, report.measured_algbw_gbps(), report.model_algbw

The schedule (collcert JSON of any collective, ForestColl tree XML with a
topology, an MSCCL algorithm XML, or an MSCCL++ execution plan) becomes an execution plan
(:mod:`collcert.reference.execution.execplan`), which a backend runs on integer data:

* ``gloo``: one process per rank on the CPU (torch.distributed); runs in CI;
* ``nccl``: one process per GPU, when there are at least as many GPUs as
  ranks (RCCL on ROCm builds of torch);
* ``single-gpu``: all ranks' buffers on one GPU, one stream per link, events
  for the dependencies; on a machine without a GPU it runs on the CPU with
  emulated streams and says so;
* ``auto``: nccl if the GPUs suffice, else single-gpu on a GPU, else gloo.

Every element of every rank's output is compared with the collective's
definition computed on the host. torch is the optional extra
``collcert[smoke]``, imported only when a run starts.

Modules:

``harness``     :func:`smoke`, :func:`load_plan`: the schedule read, planned, run and checked;
                :data:`BACKENDS`, :data:`MAX_ITERS`
``report``      :class:`SmokeReport`: what a run found, as a summary or JSON
``runtime``     what every backend shares: torch required, buffers, the check of the
                output; :class:`SmokeError`
``dist``        the gloo and nccl backends: one process per rank (torch.distributed)
``single``      the single-gpu backend: every rank on one device, a stream per link
``mscclplan``   execution plans from MSCCL programs, run step by step as the executor would
``mscclppplan`` execution plans from MSCCL++ plans (JSON), run op by op as its executor would;
                :func:`is_mscclpp` tells such a plan from a collcert JSON schedule
"""

from .harness import BACKENDS, MAX_ITERS, load_plan, smoke
from .mscclppplan import is_mscclpp
from .report import SmokeReport
from .runtime import INSTALL_HINT, SmokeError, require_torch

__all__ = ["BACKENDS", "INSTALL_HINT", "MAX_ITERS", "SmokeError", "SmokeReport", "is_mscclpp",
           "load_plan", "require_torch", "smoke"]
