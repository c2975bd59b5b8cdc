"""The MSCCL++ executor as a runtime profile (``--runtime mscclpp``, :mod:`.runtimes`).

microsoft/mscclpp at ``SOURCE``: ``src/core/executor/execution_plan.cc`` reads the plan,
``executor.cc`` sets it up, ``src/core/include/execution_kernel.hpp`` runs it. What it
refuses is read by :func:`.mscclpp.read` (``Plan.refusals``); how it runs what it loads
(its threads, their memory ordering: docs/mscclpp.md, "The executor's threads") is
:mod:`.mscclpp_sim` with :mod:`.mscclpp_threads`. The profile's ``export`` holds the rules
an exporter must follow for this executor.
"""

from __future__ import annotations

from ..model import InputError
from . import mscclpp
from .runtimes import LOADS, REFUSES, Loadability, RuntimeProfile, register

SOURCE = "microsoft/mscclpp@1f5f065d7b13ab02df32c22568f38785d1eeec01"
NAME = "mscclpp"

# a refusal's words -> (rule, where in the executor's source)
_RULES = (
    ("ops; the executor loads at most", "max-operations",
     "src/core/executor/executor.cc:478-481 (MAX_OPERATION, execution_common.hpp:17)"),
    ("(MAX_CHANNEL)", "max-channels", "src/core/include/execution_common.hpp:15,74-86"),
    ("num_threads_per_block", "block-size", "src/core/executor/execution_plan.cc:249"),
    ("message_size", "message-size", "src/core/executor/execution_plan.cc:250"),
    ("divides the buffer sizes", "chunk-count", "src/core/executor/execution_plan.cc "
     "(checkMessageSize)"),
    ("Size per chunks inconsistent", "chunk-size", "src/core/executor/execution_plan.cc:607"),
    ("buffers are of one size", "chunk-size", "src/core/executor/execution_plan.cc:607"),
    ("connectNvlsCollective", "switch-channel", "src/core/executor/executor.cc:319-324 "
     "(connectNvlsCollective, src/core/switch_channel.cc:284-297)"),
)

EXPORT = {
    "max_ops_per_threadblock": mscclpp.MAX_OPERATION,
    "max_channels_per_threadblock": mscclpp.MAX_CHANNEL,
    "max_channels_per_op": mscclpp.MAX_CHANNEL_PER_OPERATION,
    "threads_per_block": mscclpp.MAX_THREADS_PER_BLOCK,
    # docs/mscclpp.md "The executor's threads": what an exporter writes
    "nop_after_wait": True,  # before a data op that depends on the wait
    "nop_before_signal": True,  # after the data ops the signal publishes
    "nop_between_dependent_data_ops": True,
    "data_signal": "signal",  # rlxsignal/rlxwait order execution only
    "port_put": "pwsf",  # a flush op as the DSL writes it flushes nothing
}


def judge(text: str, origin: str = "file") -> Loadability:
    """What the MSCCL++ executor does with the plan ``text``: loads it (for the call mode
    it declares), or refuses it (the rule, and where its source says so)."""
    try:
        plan = mscclpp.read(text, origin)
    except InputError as exc:
        words = str(exc)
        if "which collcert does not simulate" in words:  # the executor runs them
            return Loadability(NAME, LOADS, message="collcert does not run it: " + words,
                               source=SOURCE,
                               calls=["the call mode it declares"])
        return Loadability(NAME, REFUSES, rule="plan", message=words,
                           source="src/core/executor/execution_plan.cc",
                           consequence="the executor throws while loading the plan")
    for refusal in plan.refusals:
        rule, where = next(((r, w) for key, r, w in _RULES if key in refusal),
                           ("plan", "src/core/executor/execution_plan.cc"))
        return Loadability(NAME, REFUSES, rule=rule, message=refusal, source=where,
                           consequence="the executor throws while loading it, or its kernel "
                                       "launch fails")
    mode = "in-place" if plan.inplace else "out-of-place"
    return Loadability(NAME, LOADS, source=SOURCE,
                       calls=[f"{mode} {plan.collective} calls of {plan.ngpus} ranks"])


PROFILE = register(RuntimeProfile(NAME, "mscclpp-json", "the MSCCL++ executor (microsoft/mscclpp)",
                                  SOURCE, judge, EXPORT))
