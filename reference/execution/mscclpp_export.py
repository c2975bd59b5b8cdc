"""Compile a tree schedule into an MSCCL++ execution plan (JSON), the runtime of
Zhao et al. 2026, §6.3 (docs/mscclpp.md).

The trees' execution plan (:mod:`collcert.reference.execution.treeplan`, one chunk
per cell) becomes, on every rank, threadblocks that run the plan's operations in
its global order:

* a send is a one-sided write into its place on the receiver when the receive
  only copies it there and no earlier op of the receiver touches that place
  (later ones wait for the receive), else into a slot of the receiver's scratch
  buffer that no other message uses: over a memory channel a ``put`` and a ``signal`` on
  the message's channel, over a port channel one ``pwsf`` (put, signal, and a
  flush, so that the source may be overwritten afterwards);
* a receive ``wait``\\ s on that channel until the sender has signalled the
  message (a channel's signals are counted: waiting for the k-th message of a
  channel covers the earlier ones), then ``copy``\\ s the slot into place, or
  ``re``\\ duces it into place (``dst = red + slot``); a plan's ``copy`` and
  ``reduce`` are ``copy`` and ``re``;
* one channel per (sending threadblock, receiving threadblock): signals on a
  channel then come in the sender's program order. The receiving threadblock
  first signals "ready" on it, and the sender waits for that before its first
  put: a rank's call starts only when its previous call is over, so no put of
  this call overwrites a slot the receiver's previous call still reads;
* the plan's other dependencies on a rank (an op reading what another
  threadblock wrote, or writing what it read) are device semaphores: the
  threadblock that ran the earlier op ``sem_release``\\ s one after it, the later
  ``sem_acquire``\\ s it first.

Every blocking op waits for something an earlier op of the global order
provides, so the plan cannot deadlock (when all threadblocks of a rank are
resident, as the executor's persistent kernel needs). Each threadblock's ops then
go through the DSL's passes (:func:`.mscclpp_sync.dsl_passes`: fusion, a ``nop``
around every synchronising op and between dependent data ops), so that the
executor's threads run them as the audit does. A threadblock takes at most
:data:`OPS_PER_TB` operations of the plan (fewer on a rank where the ``nop``\\ s
push one over the executor's 64 ops: it is compiled again) and :data:`SENDS_PER_TB`
sends and receives, within the executor's 16 channels. The plan's ``name`` is
:func:`plan_name`'s: the executor caches a plan's setup by name.

In place (``inplace=True``) the plan's buffers are aliased as the executor's
callers pass them (allgather input = output[r·b …], reduce-scatter output =
input[r·b …], allreduce output = input; broadcast and reduce: the root's output
= its input) before the dependencies are taken, as :mod:`.msccl_export` does
for MSCCL. Broadcast and reduce name their root (``root``, a key the executor
does not read; every rank declares M-sized buffers, as the executor needs).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..model import ScheduleError, check_budget, schedule_transfers
from .execplan import Op, Plan, Region, dependencies
from .mscclpp_sync import dsl_passes
from .runtime_rate import rated_document
from .treeplan import plan_from_schedule

if TYPE_CHECKING:
    from ..forestcoll import Schedule
    from ..model import Topology

MAX_OPERATION = 64  # execution_common.hpp
MAX_SEMAPHORES_PER_OP = 16  # MAX_DEVICE_SEMAPHORES
MAX_CHANNEL_PER_OPERATION = 8
OPS_PER_TB = 10
SENDS_PER_TB = 8
COLLECTIVE = {"allgather": "allgather", "reduce-scatter": "reducescatter",
              "allreduce": "allreduce", "broadcast": "broadcast", "reduce": "reduce"}
CHANNELS = ("memory", "port")


@dataclass(eq=False)
class _Tb:
    rank: int
    id: int
    sends: int = 0
    recvs: int = 0
    items: list[list[dict[str, Any]]] = field(default_factory=list)  # per plan op
    release: list[list[int]] = field(default_factory=list)  # per item: semaphores
    chans: list[tuple[int, int]] = field(default_factory=list)  # (peer, stream number)
    refs: list[int] = field(default_factory=list)  # remote buffer ids
    ready: list[int] = field(default_factory=list)  # channels it receives on: "ready" first


@dataclass
class _Stream:
    number: int  # among the streams of its pair of ranks
    send_chan: int  # index in the sender tb's channel list
    recv_chan: int
    order: list[int] = field(default_factory=list)  # messages, in the sender's order
    consumed: int = 0
    greeted: bool = False  # the sender has waited for the receiver's "ready"


BYTES_PER_TRANSFER = 400
SECONDS_PER_TRANSFER = 1e-5
"""Cost of the export per transfer of the schedule (:func:`collcert.reference.model.
schedule_transfers`, the estimate the MSCCL export uses too): dgx1 --fixed-k 2000 and
8000 (112,000 and 448,000 transfers) took 1.4 s and 3.2 s, 71 MB and 167 MB, on a loaded
2-core machine: about 5.4 µs and 290 bytes a transfer, rounded up."""
BYTES_PER_MESSAGE = 25_000
SECONDS_PER_MESSAGE = 1e-3
"""And per message (a tree edge: its cells travel as one put): the threadblocks' ops, about
13 per message with the barriers (``nop``), and the compiles again with fewer plan ops per
threadblock where barriers push one over 64 ops. dgx_a100:2's in-place allreduce (2700
messages, 5 compiles) took 2.2 s CPU and 51 MB (0.82 ms, 19 KB a message), its
out-of-place one (1 compile) 0.65 s and 39 MB, torus:4x4's in-place allreduce (900, 3
compiles) 0.44 s and 16 MB, on the 2-core machine at load 7; rounded up."""
ADVICE = "use --format json, or a smaller --fixed-k"


def mscclpp_json(schedule: Schedule | dict[str, Any], inplace: bool = False,
                 channel: str = "memory", name: str | None = None, *, strict: bool = True,
                 topology: Topology | None = None) -> str:
    """The MSCCL++ execution plan (JSON text) of an allgather, reduce-scatter,
    allreduce, broadcast or reduce tree schedule, for in-place or out-of-place
    calls; ``channel``: ``memory`` (GPUs that share memory, CUDA IPC) or ``port``
    (any, through the proxy: InfiniBand between machines). Raises ScheduleError
    when it cannot be expressed.

    A plan names ranks, not links, as an MSCCL program does: with ``strict`` (the
    default) a plan slower than its schedule is refused with
    :class:`.runtime_rate.SlowExportError` (:func:`.runtime_rate.export_rate`
    says why). A dict schedule is checked when ``topology`` is given."""
    doc = rated_document(schedule, topology, strict)
    coll = doc.get("collective")
    if coll not in COLLECTIVE:
        raise ScheduleError(f"MSCCL++ export supports allgather, reduce-scatter, allreduce, "
                            f"broadcast and reduce, not {coll}; use --format json")
    w = doc.get("weights")
    if w and len({str(x) for x in w.values()}) > 1:
        raise ScheduleError("MSCCL++ export needs equal shards (a plan's chunks are uniform); "
                            "this schedule has non-uniform weights")
    ops = schedule_transfers(doc)  # before the plan: --fixed-k 10^7 is 10^8 transfers
    msgs = _messages(doc)
    check_budget(f"MSCCL++ export of {len(doc.get('compute_nodes') or [])} ranks",
                 BYTES_PER_TRANSFER * ops + BYTES_PER_MESSAGE * msgs,
                 f"compiling about {ops} transfers in {msgs} messages",
                 seconds=SECONDS_PER_TRANSFER * ops + SECONDS_PER_MESSAGE * msgs,
                 action=ADVICE)
    plan = plan_from_schedule(doc, "schedule")
    topo = doc.get("topology")
    return json.dumps(plan_mscclpp(plan, inplace, channel, name,
                                   topology_hash=topo if isinstance(topo, str) else None),
                      indent=1)


def plan_mscclpp(plan: Plan, inplace: bool = False, channel: str = "memory",
                 name: str | None = None, *, topology_hash: str | None = None) -> dict[str, Any]:
    """The MSCCL++ plan (a JSON-ready dict) of an execution plan: see :func:`mscclpp_json`.
    Without ``name`` the plan is named by :func:`plan_name` (``topology_hash``: the
    topology's content hash, ``Topology.content_hash()``, when known)."""
    if channel not in CHANNELS:
        raise ScheduleError(f"channel {channel!r}: choose memory or port")
    if plan.spec.collective not in COLLECTIVE:
        raise ScheduleError(f"MSCCL++ export supports allgather, reduce-scatter, allreduce, "
                            f"broadcast and reduce, not {plan.spec.collective}")
    if plan.problems:
        raise ScheduleError(f"the schedule's execution plan is faulty: {plan.problems[0]}")
    msgs = plan.messages()
    check_budget(f"MSCCL++ export of {plan.nranks} ranks",
                 BYTES_PER_TRANSFER * len(plan.ops) + BYTES_PER_MESSAGE * msgs,
                 f"compiling {len(plan.ops)} transfers in {msgs} messages",
                 seconds=SECONDS_PER_TRANSFER * len(plan.ops) + SECONDS_PER_MESSAGE * msgs,
                 action=ADVICE)
    if inplace:
        plan = _aliased(plan)
    # a threadblock takes up to OPS_PER_TB of the plan's ops; a rank where the barriers push
    # one over the executor's 64 ops is compiled again with fewer per threadblock
    caps = [OPS_PER_TB] * plan.nranks
    deps = dependencies(plan)
    while True:
        compiler = _Compiler(plan, channel, caps)
        doc = compiler.build(inplace, deps)
        if not compiler.overflow:
            break
        if all(caps[r] == 1 for r in compiler.overflow):
            r, tb, count = compiler.overflow[min(compiler.overflow)]
            raise ScheduleError(f"rank {r} threadblock {tb} needs {count} ops; the MSCCL++ "
                                f"executor runs at most {MAX_OPERATION}")
        for r, (_, _, count) in compiler.overflow.items():
            caps[r] = max(1, min(caps[r] - 1, caps[r] * MAX_OPERATION // count))
    doc["name"] = name or plan_name(doc, topology_hash)
    return doc


def plan_name(doc: dict[str, Any], topology_hash: str | None = None) -> str:
    """A name no other plan shares (the executor caches a plan's connections and device
    plan by name and buffers, ``executor.cc`` ``ExecutionContextKey``): ``collcert_``,
    the collective (and root), ``inplace`` or ``outofplace``, the channel type, ``t`` and
    8 hex digits of the topology's hash, ``p`` and 8 of the plan's content (SHA-256)."""
    body = json.dumps({k: v for k, v in doc.items() if k != "name"}, sort_keys=True,
                      separators=(",", ":"))
    types = sorted({c["channel_type"] for g in doc["gpus"] for c in g["channels"]})
    parts = ["collcert", doc["collective"]]
    if doc.get("root") is not None:
        parts.append(f"root{doc['root']}")
    parts += ["inplace" if doc["inplace"] else "outofplace", "+".join(types) or "nochannel"]
    if topology_hash:
        parts.append("t" + topology_hash.split(":")[-1][:8])
    parts.append("p" + hashlib.sha256(body.encode()).hexdigest()[:8])
    return "_".join(parts)


def _messages(doc: dict[str, Any]) -> int:
    """The messages of the schedule's plan, from its counts: one per tree edge (a tree's
    cells over an edge travel together, whatever its multiplicity)."""
    phases = doc.get("phases")
    return sum(len(t["edges"]) for p in phases if isinstance(p, dict)
               for t in p.get("trees") or () if isinstance(t, dict)
               and isinstance(t.get("edges"), list)) if isinstance(phases, list) else 0


def _aliased(plan: Plan) -> Plan:
    """The plan with its buffers aliased as an in-place call passes them."""
    spec = plan.spec

    def alias(r: int, reg: Region | None) -> Region | None:
        if reg is None:
            return None
        base = spec.shards[r][0]
        if spec.collective == "allgather" and reg.buf == "i":
            return Region("o", base + reg.off, reg.n)
        if spec.collective == "reduce-scatter" and reg.buf == "o":
            return Region("i", base + reg.off, reg.n)
        if spec.collective == "allreduce" and reg.buf == "o":
            return Region("i", reg.off, reg.n)
        if spec.collective in ("broadcast", "reduce") and r == spec.root and reg.buf == "o":
            return Region("i", reg.off, reg.n)
        return reg

    ops = [replace(op, src=alias(op.rank, op.src), dst=alias(op.rank, op.dst),
                   red=alias(op.rank, op.red)) for op in plan.ops]
    return Plan(spec, plan.buffers, ops, plan.name)


class _Compiler:
    def __init__(self, plan: Plan, channel: str, caps: list[int]) -> None:
        self.plan, self.channel, self.caps = plan, channel, caps
        self.overflow: dict[int, tuple[int, int, int]] = {}  # rank -> (rank, tb, ops)
        n = plan.nranks
        self.tbs: list[list[_Tb]] = [[] for _ in range(n)]
        self.where: list[tuple[_Tb, int]] = []  # plan op -> (tb, item index)
        # scratch: the plan's "s" then "t" cells, then one slot per message received
        self.base = {"s": [0] * n, "t": [b.get("s", 0) for b in plan.buffers]}
        self.slots = [b.get("s", 0) + b.get("t", 0) for b in plan.buffers]
        self.slot: dict[int, int] = {}  # message -> slot offset on its receiver
        self.sender: dict[int, tuple[_Tb, int]] = {}  # message -> (tb, item)
        self.streams: dict[tuple[int, int, int, int], _Stream] = {}
        self.pair_streams: dict[tuple[int, int], int] = {}
        self.by_msg: dict[int, _Stream] = {}
        self.remote: list[list[tuple[int, str]]] = [[] for _ in range(n)]  # (peer, buffer)
        self.direct: dict[int, Region] = {}  # message -> where it lands, put there directly
        self.sems: list[int] = [0] * n  # device semaphores per rank
        self.sem_of: dict[tuple[int, int, int], int] = {}  # (rank, tb A, tb B) -> id
        self.released: dict[tuple[int, int, int], int] = {}  # last A item acquired by B

    # -- threadblocks ---------------------------------------------------------------
    def assign(self) -> None:
        for op in self.plan.ops:
            mine = self.tbs[op.rank]
            tb = mine[-1] if mine else None
            if tb is None or len(tb.items) >= self.caps[op.rank] or (
                    op.kind == "send" and tb.sends >= SENDS_PER_TB) or (
                    op.kind == "recv" and tb.recvs >= SENDS_PER_TB):
                tb = _Tb(op.rank, len(mine))
                mine.append(tb)
            tb.sends += op.kind == "send"
            tb.recvs += op.kind == "recv"
            self.where.append((tb, len(tb.items)))
            tb.items.append([])
            tb.release.append([])
            if op.kind == "send":
                self.sender[op.msg] = (tb, len(tb.items) - 1)

    def build(self, inplace: bool, deps: list[list[int]]) -> dict[str, Any]:
        self.assign()
        for i, op in enumerate(self.plan.ops):
            # a plain receive that no earlier op of its rank touches: the sender may put it
            # in place (later ops that touch it wait for the receive)
            if op.kind == "recv" and op.red is None and op.dst is not None and all(
                    self.plan.ops[d].rank != op.rank for d in deps[i]):
                self.direct[op.msg] = op.dst
        self.make_streams()
        for i, op in enumerate(self.plan.ops):
            tb, item = self.where[i]
            pre = self.acquire(op, tb, item, deps[i])
            tb.items[item] = pre + self.body(op, tb)
        plan = self.plan
        coll = plan.spec.collective
        gpus = [self.gpu(r) for r in range(plan.nranks)]
        doc = {"name": "", "collective": COLLECTIVE[coll], "protocol": "Simple",
               "inplace": inplace, "reuse_resources": False, "gpus": gpus,
               "num_threads_per_block": 1024, "use_double_scratch_buffer": False,
               "buffer_alignment": 16, "min_message_size": 0,
               "max_message_size": 2**64 - 1}
        if plan.spec.root is not None:
            doc["root"] = plan.spec.root  # for readers; the executor reads no root
        return doc

    def make_streams(self) -> None:
        """One channel per (sending tb, receiving tb); its messages in the sender's order."""
        recv_tb: dict[int, _Tb] = {}
        for i, op in enumerate(self.plan.ops):
            if op.kind == "recv":
                recv_tb[op.msg] = self.where[i][0]
        for op in self.plan.ops:
            if op.kind != "send":
                continue
            s, r = self.sender[op.msg][0], recv_tb[op.msg]
            key = (s.rank, s.id, r.rank, r.id)
            if key not in self.streams:
                pair = (min(s.rank, r.rank), max(s.rank, r.rank))
                number = self.pair_streams.get(pair, 0)
                self.pair_streams[pair] = number + 1
                s.chans.append((r.rank, number))
                r.chans.append((s.rank, number))
                self.streams[key] = _Stream(number, len(s.chans) - 1, len(r.chans) - 1)
                r.ready.append(len(r.chans) - 1)
            self.streams[key].order.append(op.msg)
            self.by_msg[op.msg] = self.streams[key]
            assert op.src is not None
            if op.msg not in self.direct:
                self.slot[op.msg] = self.slots[op.peer]
                self.slots[op.peer] += op.src.n

    def stream_of(self, op: Op) -> _Stream:
        return self.by_msg[op.msg]

    # -- operations -----------------------------------------------------------------
    def buff(self, r: int, reg: Region) -> dict[str, Any]:
        if reg.buf in ("s", "t"):
            return {"type": "s", "index": self.base[reg.buf][r] + reg.off, "size": reg.n}
        return {"type": reg.buf, "index": reg.off, "size": reg.n}

    def body(self, op: Op, tb: _Tb) -> list[dict[str, Any]]:
        ty = self.channel
        if op.kind == "send":
            assert op.src is not None
            stream = self.stream_of(op)
            if op.msg in self.direct:
                place = self.buff(op.peer, self.direct[op.msg])
                slot = {"buffer_id": self.ref(tb, op.peer, place["type"]),
                        "index": place["index"], "size": op.src.n}
            else:
                slot = {"buffer_id": self.ref(tb, op.peer, "s"), "index": self.slot[op.msg],
                        "size": op.src.n}
            src = [self.buff(op.rank, op.src)]
            ready = [] if stream.greeted else [
                {"name": "wait", "channel_ids": [stream.send_chan], "channel_type": ty}]
            stream.greeted = True
            if ty == "port":
                return ready + [{"name": "pwsf", "src_buff": src, "dst_buff": [slot],
                         "channel_ids": [stream.send_chan], "channel_type": "port"}]
            return ready + [{"name": "put", "src_buff": src, "dst_buff": [slot],
                     "channel_type": "memory"},
                    {"name": "signal", "channel_ids": [stream.send_chan],
                     "channel_type": "memory"}]
        assert op.dst is not None
        dst = [self.buff(op.rank, op.dst)]
        if op.kind == "recv":
            stream = self.stream_of(op)
            need = stream.order.index(op.msg) + 1
            waits = [{"name": "wait", "channel_ids": [stream.recv_chan], "channel_type": ty}
                     for _ in range(need - stream.consumed)]
            stream.consumed = max(stream.consumed, need)
            if op.msg in self.direct:
                return waits  # it is in place once signalled
            mine = {"type": "s", "index": self.slot[op.msg], "size": op.dst.n}
            if op.red is None:
                return waits + [{"name": "copy", "src_buff": [mine], "dst_buff": dst}]
            return waits + [{"name": "re", "src_buff": [self.buff(op.rank, op.red), mine],
                             "dst_buff": dst, "reduce_op": "sum"}]
        assert op.src is not None
        if op.kind == "copy":
            if op.src == op.dst:
                return []  # in place, a root's copy of its input onto itself
            return [{"name": "copy", "src_buff": [self.buff(op.rank, op.src)], "dst_buff": dst}]
        return [{"name": "re", "src_buff": [dst[0], self.buff(op.rank, op.src)],
                 "dst_buff": dst, "reduce_op": "sum"}]

    def ref(self, tb: _Tb, peer: int, buf: str) -> int:
        peers = self.remote[tb.rank]
        if (peer, buf) not in peers:
            peers.append((peer, buf))
        rid = peers.index((peer, buf))
        if rid not in tb.refs:
            tb.refs.append(rid)
        return tb.refs.index(rid)

    def acquire(self, op: Op, tb: _Tb, item: int, deps: list[int]) -> list[dict[str, Any]]:
        """Device semaphores for the dependencies on ops of other threadblocks of the rank."""
        latest: dict[int, tuple[_Tb, int]] = {}  # per other threadblock, its last op waited on
        for d in deps:
            other, at = self.where[d]
            if other.rank != tb.rank or other is tb:
                continue  # a message (signal/wait) or program order
            if latest.get(other.id, (other, -1))[1] < at:
                latest[other.id] = (other, at)
        sems: list[int] = []
        for other, at in latest.values():
            key = (tb.rank, other.id, tb.id)
            if self.released.get(key, -1) >= at:
                continue  # an earlier acquire already covers it
            if key not in self.sem_of:
                self.sem_of[key] = self.sems[tb.rank]
                self.sems[tb.rank] += 1
            sem = self.sem_of[key]
            other.release[at].append(sem)
            self.released[key] = at
            sems.append(sem)
        return [{"name": "sem_acquire", "semaphore_ids": sems[i:i + MAX_SEMAPHORES_PER_OP]}
                for i in range(0, len(sems), MAX_SEMAPHORES_PER_OP)]

    # -- the JSON of one rank -------------------------------------------------------
    def gpu(self, r: int) -> dict[str, Any]:
        plan, ty = self.plan, self.channel
        ends = sorted({end for tb in self.tbs[r] for end in tb.chans})
        number = {end: k for k, end in enumerate(ends)}
        threadblocks = []
        for tb in self.tbs[r]:
            # "ready": this call has started here, so the previous one is over on this rank
            # and its scratch slots may be written again
            ops: list[dict[str, Any]] = [
                {"name": "signal", "channel_ids": tb.ready[i:i + MAX_CHANNEL_PER_OPERATION],
                 "channel_type": ty} for i in range(0, len(tb.ready), MAX_CHANNEL_PER_OPERATION)]
            for item, release in zip(tb.items, tb.release):
                ops += item
                for i in range(0, len(release), MAX_SEMAPHORES_PER_OP):
                    ops.append({"name": "sem_release",
                                "semaphore_ids": release[i:i + MAX_SEMAPHORES_PER_OP]})
            ops = dsl_passes(ops)  # fused, and the barriers the executor's threads need
            if len(ops) > max(MAX_OPERATION, self.overflow.get(r, (0, 0, 0))[2]):
                self.overflow[r] = (r, tb.id, len(ops))  # the rank's longest threadblock
            threadblocks.append({
                "id": tb.id, "ops": ops,
                "channels": [{"channel_type": ty,
                              "channel_ids": [number[e] for e in tb.chans]}] if tb.chans else [],
                "remote_buffer_refs": [{"access_channel_type": ty,
                                        "remote_buffer_ids": tb.refs}] if tb.refs else []})
        # every rank declares the collective's buffers (the executor divides by both counts;
        # broadcast and reduce pass M-sized buffers on every rank, as NCCL's calls do)
        b = {k: max(x.get(k, 0) for x in plan.buffers) for k in "io"}
        return {"id": r, "input_chunks": b["i"], "output_chunks": b["o"],
                "scratch_chunks": self.slots[r],
                "threadblocks": threadblocks,
                "channels": [{"channel_type": ty, "connected_to": [peer]} for peer, _ in ends],
                "remote_buffers": [{"rank": p, "type": b, "access_channel_types": [ty]}
                                   for p, b in self.remote[r]],
                "semaphores": [{"init_value": 0} for _ in range(self.sems[r])]}
