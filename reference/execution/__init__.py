"""Execution: what runtimes run, and how long it takes.

Modules:

``execplan``         plans: what each rank sends, receives, copies and reduces, in a
                     valid order; their host simulation
``treeplan``         plans from tree schedules (``collcert-schedule/1``), built tree by
                     tree (the builder ``msccl_allreduce`` shares)
``msccl_export``     MSCCL algorithm programs (XML) compiled from a plan, as Zhao et al.
                     2026, §6.1 does
``msccl_analysis``   what such a program must respect in both buffer modes (dependencies,
                     fusable receives), for :mod:`.msccl_export`
``msccl_allreduce``  the LP (5) allreduce as an MSCCL program
``msccl_alltoall``   alltoall as an MSCCL program, from the maximum concurrent flow
``mscclpp_export``   MSCCL++ execution plans (JSON) compiled from a plan (docs/mscclpp.md)
``mscclpp_sync``     the fusion and ``nop`` barriers of an MSCCL++ threadblock, placed as
                     MSCCL++'s DSL places them (the executor's thread model)
``mscclpp_nvls``     the MSCCL++ allreduce plan that adds in the switch (NVLS multimem
                     load-reduce and store) where one reducing switch joins every GPU
``runtime_rate``     the rate a runtime that uses every linked pair's direct link gives
                     an exported schedule, and the refusal of a slower export
``runtime_routes``   the best allgather rate when every GPU pair uses the runtime's route
                     (an exact LP, certified), and allreduce as RS then AG
``runtime_cuts``     that optimum by cut generation (a master LP, one max-flow per sink)
``runtime_trees``   trees on those routes at that optimum (``schedule --routes runtime``)
``alphabeta``        the latency-bandwidth (α-β) model: a schedule's time for a size
"""

from .alphabeta import (
    AlphaBeta,
    Latency,
    bytes_per_unit,
    latency_lower_bound,
    link_alphas,
    msccl_latency,
    mscclpp_latency,
    tree_schedule_latency,
)
from .execplan import (
    Mismatch,
    Op,
    Plan,
    Region,
    Segment,
    Spec,
    dependencies,
    describe_cell,
    explain_value,
    first_mismatch,
    input_values,
    run_host,
)
from .msccl_allreduce import chunks, lp_msccl_xml, lp_plan
from .msccl_alltoall import alltoall_msccl_xml, alltoall_plan
from .msccl_export import msccl_xml, plan_xml
from .mscclpp_export import mscclpp_json, plan_mscclpp, plan_name
from .mscclpp_nvls import nvls_mscclpp_json, nvls_rate, nvls_switch
from .mscclpp_sync import dsl_passes
from .runtime_rate import ExportRate, SlowExportError, export_rate
from .runtime_routes import RuntimeOptimum, runtime_optimum
from .runtime_trees import runtime_schedule
from .treeplan import plan_from_schedule

__all__ = [
    "AlphaBeta",
    "ExportRate",
    "Latency",
    "Mismatch",
    "Op",
    "Plan",
    "Region",
    "RuntimeOptimum",
    "Segment",
    "SlowExportError",
    "Spec",
    "alltoall_msccl_xml",
    "alltoall_plan",
    "bytes_per_unit",
    "chunks",
    "dependencies",
    "describe_cell",
    "dsl_passes",
    "explain_value",
    "export_rate",
    "first_mismatch",
    "input_values",
    "latency_lower_bound",
    "link_alphas",
    "lp_msccl_xml",
    "lp_plan",
    "msccl_latency",
    "mscclpp_latency",
    "msccl_xml",
    "mscclpp_json",
    "nvls_mscclpp_json",
    "nvls_rate",
    "nvls_switch",
    "plan_from_schedule",
    "plan_mscclpp",
    "plan_name",
    "plan_xml",
    "run_host",
    "runtime_optimum",
    "runtime_schedule",
    "tree_schedule_latency",
]
