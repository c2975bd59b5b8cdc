"""An MSCCL++ allreduce plan that adds in the switch (NVLS), for a machine where one
reducing switch joins every GPU (docs/mscclpp.md, "Export: adding in the switch").

The plan is the shape of MSCCL++'s own NVLS allreduce (the DSL's
``allreduce_nvls_zero_copy.py``, NCCL's NVLS algorithm): the buffer is cut into N·T
chunks (N ranks, T threadblocks a rank); threadblock t of rank r does one ``glres`` of
chunk r·T + t (``handleMultiLoadReduceStore``, ``execution_kernel.hpp``:523-584):
``multimem.ld_reduce`` sums that chunk over every GPU in the switch and returns the sum
to rank r, ``multimem.st`` writes it into every GPU's output. Around it, as the
executor's thread model needs (docs/mscclpp.md, "The executor's threads"):

* a handshake before: each threadblock ``signal``\\ s and ``wait``\\ s the peers it
  talks to (one memory channel per peer, at most 16 a threadblock, so the peers are
  spread over the threadblocks), then a ``barrier`` of the rank's threadblocks: every
  peer's kernel has started (its user's input is in place, its previous output read)
  before any ``glres`` reads or overwrites it;
* a handshake after: a ``barrier``, then ``signal``/``wait`` with the peers: a rank's
  call returns only after every peer's stores into its output, published by a
  release ``signal`` (the DSL's example closes with ``rlxsignal``/``rlxwait``, which
  order execution only: that plan is INVALID by rule 4);
* the DSL's passes (:func:`.mscclpp_sync.dsl_passes`) put the ``nop``\\ s.

**Rate.** ``multimem.ld_reduce`` brings every GPU's chunk up its link to the switch and
the sum down to the issuer; ``multimem.st`` sends the sum up from the issuer and down
to every GPU, the issuer included. Each GPU link carries M·(1 + 1/N) each way: algbw
N/(N+1) · min over GPUs of its link to and from the switch (and at most the switch's
reduction rate: it adds M). A ``multimem.ld_reduce`` returns the sum to the GPU that
issued it (the thread's register, :556-557), which must send it up again to multicast
it. On an NVLS switch (``nvls_switches``) joining N ≥ 4 GPUs with equal links that is
the in-network optimum (:mod:`collcert.reference.innetwork`: 400 on a DGX H100, 64800/73
on a GB200 NVL72 rack; docs/in-network.md proves it); N/(N+1) of a SHARP switch's,
which holds the sum and multicasts it itself.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..model import Node, ScheduleError
from .mscclpp_export import plan_name
from .mscclpp_sync import dsl_passes

if TYPE_CHECKING:
    from ..model import Topology

BLOCKS = 8  # threadblocks a rank, as the DSL's example (instances=8)
MAX_CHANNEL = 16  # memory channels a threadblock holds (execution_common.hpp:15)
MAX_OPERATION = 64


def nvls_switch(t: Topology) -> Node | None:
    """The reducing switch with a link to and from every compute node (the first in
    node order), or None."""
    for w in t.switch_nodes:
        if w in t.reducing_switches and all(
                (g, w) in t.capacity and (w, g) in t.capacity for g in t.compute_nodes):
            return w
    return None


def nvls_rate(t: Topology, w: Node) -> Fraction:
    """The plan's exact algbw on ``t`` through switch ``w`` (module docstring)."""
    n = len(t.compute_nodes)
    link = min(min(t.capacity[(g, w)], t.capacity[(w, g)]) for g in t.compute_nodes)
    rate = link * Fraction(n, n + 1)
    if w in t.reduction_rates:
        rate = min(rate, t.reduction_rates[w])
    return rate


def why_not(t: Topology) -> str:
    """Why ``t`` gets no NVLS plan (the export covers one reducing switch joining all)."""
    if not t.reducing_switches:
        return (f"no switch of {t.name or 'the topology'} adds (neither nvls_switches nor "
                "reducing_switches lists one): an NVLS plan needs an NVLink switch that does "
                "(docs/topology.md)")
    return ("no reducing switch is linked to and from every GPU: collcert writes NVLS plans "
            "for one NVLink domain (dgx_h100:1, dgx_b200:1, gb200_nvl72:1); across boxes the "
            "in-network schedule adds in each box's switch and sends its sums over the NICs, "
            "which needs port channels beside the switch channels, not exported "
            "(docs/mscclpp.md)")


def nvls_mscclpp_json(t: Topology, inplace: bool = False, name: str | None = None,
                      blocks: int = BLOCKS) -> str:
    """The NVLS allreduce plan of ``t`` (JSON text); ScheduleError where there is none."""
    import json

    w = nvls_switch(t)
    if w is None:
        raise ScheduleError(why_not(t))
    n = len(t.compute_nodes)
    blocks = max(blocks, -(-(n - 1) // MAX_CHANNEL))  # every peer on a channel
    doc: dict[str, Any] = {
        "name": "", "collective": "allreduce", "protocol": "Simple", "inplace": inplace,
        "reuse_resources": False, "num_threads_per_block": 1024,
        "use_double_scratch_buffer": False, "buffer_alignment": 16, "min_message_size": 0,
        "max_message_size": 2 ** 64 - 1,
        "gpus": [_gpu(r, n, blocks, inplace) for r in range(n)]}
    doc["name"] = name or plan_name(doc, t.content_hash())
    return json.dumps(doc, indent=1)


def _gpu(r: int, n: int, blocks: int, inplace: bool) -> dict[str, Any]:
    peers = [q for q in range(n) if q != r]
    group = [{"size": n, "ranks": list(range(n))}]
    switch = [{"channel_type": "switch", "buffer_type": b, "rank_groups": group}
              for b in (("i",) if inplace else ("i", "o"))]
    return {"id": r, "input_chunks": n * blocks, "output_chunks": n * blocks,
            "scratch_chunks": 0,
            "channels": [{"channel_type": "memory", "connected_to": peers}] + switch,
            "remote_buffers": [], "semaphores": [],
            "threadblocks": [_threadblock(r, t, blocks, len(peers), inplace)
                             for t in range(blocks)]}


def _threadblock(r: int, t: int, blocks: int, peers: int, inplace: bool) -> dict[str, Any]:
    mine = [k for k in range(peers) if k % blocks == t]  # its peers' memory channels
    local = list(range(len(mine)))
    chunk = r * blocks + t
    out = 0 if inplace else 1
    barrier: dict[str, Any] = {"name": "barrier", "barrier_id": 0, "num_threadblocks": blocks}
    glres: dict[str, Any] = {
        "name": "glres", "src_buff": [{"switch_channel_id": 0, "index": chunk, "size": 1}],
        "dst_buff": [{"switch_channel_id": out, "index": chunk, "size": 1}],
        "channel_type": "switch", "reduce_op": "sum"}
    shake: list[dict[str, Any]] = (
        [{"name": "signal", "channel_ids": [k], "channel_type": "memory"} for k in local]
        + [{"name": "wait", "channel_ids": [k], "channel_type": "memory"} for k in local])
    ops = dsl_passes(shake + [barrier, glres, dict(barrier)] + [dict(o) for o in shake])
    if len(ops) > MAX_OPERATION:
        raise ScheduleError(f"rank {r} threadblock {t}: {len(ops)} ops, more than the "
                            f"executor's {MAX_OPERATION}")
    chans = [{"channel_type": "switch", "channel_ids": [0] if inplace else [0, 1]}]
    if mine:
        chans.insert(0, {"channel_type": "memory", "channel_ids": mine})
    return {"id": t, "ops": ops, "channels": chans, "remote_buffer_refs": []}
