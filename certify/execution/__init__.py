"""MSCCL programs, read and run as the MSCCL executor reads and runs them.

Modules:

``program``    the program as the executor holds it: threadblocks, steps, transmissions
``msccl``      the algorithm XML, read with the executor's rules (and ``simulate``)
``msccl_sim``  the program run chunk by chunk, its postcondition checked
``mscclpp``    MSCCL++ execution plans (JSON), read as its executor reads them
``mscclpp_sim`` an MSCCL++ plan run op by op as its executor runs it, its postcondition checked,
                with ``mscclpp_ops`` (its data ops) and ``mscclpp_threads`` (the executor's
                threads: what each knows, the rule a race breaks)
``mscclpp_runtime`` the MSCCL++ executor's runtime profile (``--runtime mscclpp``)
``mscclpp_cells`` what that simulation tracks per cell (contents, clocks) and how it names cells
``mscclpp_switch`` switch (NVLS) channels: ``mscclpp_switch_read`` reads them, ``mscclpp_switch``
                runs their ops (multimem load-reduce and store), ``mscclpp_switch_links`` maps
                each rank group to the topology's switch, checks it can add or copy, and
                gives the traffic on the GPU↔switch links
``mscclpp_latency`` a valid plan's α-β latency term: its longest chain of remote hops
``runtimes``   runtime profiles by name (MSCCL executors, MSCCL++): how each judges a file
``msccl_runtimes`` the MSCCL XML profiles (msccl-executor-nccl, rccl, microsoft-msccl), with
                ``msccl_lexer`` (their hand-written XML reader), ``msccl_loader`` (its walk),
                ``msccl_executor`` and ``msccl_2023`` (what each loader reads)
``runtime_routes`` the best allgather/reduce-scatter rate when every GPU pair uses the
                runtime's route (an LP, or a master LP with cut rows and sink flows), and
                allreduce as the two phases
"""

from . import (
           msccl,
           msccl_runtimes,
           msccl_sim,
           mscclpp,
           mscclpp_latency,
           mscclpp_runtime,  # registers the MSCCL++ executor's profile
           mscclpp_sim,
           mscclpp_switch_links,
           runtimes,
)
from .program import Program, Threadblock
from .runtime_routes import check_runtime_routes

__all__ = ["Program", "Threadblock", "check_runtime_routes", "msccl", "msccl_runtimes",
           "msccl_sim", "mscclpp",
           "mscclpp_latency", "mscclpp_runtime", "mscclpp_sim", "mscclpp_switch_links",
           "runtimes"]
