"""The size of an MSCCL program from a schedule's counts alone, before any plan is built.

The MSCCL runtime (Azure/msccl-executor-nccl) addresses chunks by offsets below
32768 in every buffer (:data:`.msccl_export.MAX_OFFSET`). A tree schedule's
program cuts every shard into lcm(k) chunks (Zhao et al. 2026, §6.1: one chunk
per cell of the execution plan), so the largest buffer holds N·lcm(k) chunks
(the root's lcm(k) for broadcast and reduce), whatever the channels. Counting
them takes the phases' k and the number of ranks; building the plan for
``--fixed-k 10^5`` on 4 ranks took 14.7 s and 550 MB before the runtime's
limits refused it (issue 24 row 2).
"""

from __future__ import annotations

import math
from typing import Any

from ..model import ScheduleError

ROOTED = ("broadcast", "reduce")


def msccl_chunks(doc: dict[str, Any]) -> int:
    """Chunks in the largest buffer of the MSCCL program of the ``collcert-schedule/1``
    dict ``doc`` with equal shards: N·lcm(k), or lcm(k) for broadcast and reduce. 0 when
    the counts cannot be read (the plan's reader then says why)."""
    raw = doc.get("phases")
    got = [p.get("k") for p in raw if isinstance(p, dict)] if isinstance(raw, list) else []
    ks = [k for k in got if type(k) is int and k >= 1]
    nodes = doc.get("compute_nodes")
    if not ks or len(ks) != len(got) or not isinstance(nodes, list):
        return 0
    lcm = math.lcm(*ks)
    return lcm if doc.get("collective") in ROOTED else len(nodes) * lcm


def check_chunks(doc: dict[str, Any], limit: int) -> None:
    """Refuse (ScheduleError, exit 2) a program of more than ``limit`` chunks per buffer,
    naming the estimate, the limit and the largest k that could fit."""
    chunks = msccl_chunks(doc)
    if chunks <= limit:
        return
    ks = sorted({p["k"] for p in doc["phases"]})
    per = 1 if doc.get("collective") in ROOTED else len(doc["compute_nodes"])
    lcm = math.lcm(*ks)
    k_is = f"k = {_n(lcm)}" if len(ks) == 1 else f"lcm(k) = {_n(lcm)} for k = " + ", ".join(
        _n(k) for k in ks)
    who = "the root's shard" if per == 1 else f"{per} ranks' shards"
    raise ScheduleError(
        f"the MSCCL program would hold {_n(chunks)} chunks in one buffer ({who}, {k_is} "
        f"chunks each), beyond the {limit:,} chunk offsets the MSCCL runtime addresses; "
        f"nothing was compiled. Here k can be at most {limit // per:,} (less where a "
        "threadblock would need more than the runtime's 64 steps); or use --format json "
        "or forestcoll-xml (docs/limits.md)")


def _n(n: int) -> str:
    """``"400,000"``, or ``"about 10^400"`` for counts of more than 24 digits."""
    return f"{n:,}" if len(str(n)) <= 24 else f"about 10^{len(str(n)) - 1}"
