"""MSCCL++ execution plans (JSON), read as the MSCCL++ executor reads them.

Format (written by microsoft/mscclpp's DSL, ``python/mscclpp/language/program.py``
``CollectiveProgram.to_json``; read by ``src/core/executor/execution_plan.cc``)::

    {"name", "collective", "protocol": "Simple"|"LL", "inplace": bool,
     "gpus": [{"id": r, "input_chunks", "output_chunks", "scratch_chunks",
               "channels": [{"channel_type": "memory"|"port", "connected_to": [peer…]}],
               "remote_buffers": [{"rank": q, "type": "i"|"o"|"s",
                                   "access_channel_types": ["memory"|"port"…]}],
               "semaphores": [{"init_value": n}],
               "threadblocks": [{"id": t, "ops": [...],
                                 "channels": [{"channel_type", "channel_ids": [k…]}],
                                 "remote_buffer_refs": [{"access_channel_type",
                                                         "remote_buffer_ids": [b…]}]}]}]}

Resolution, as ``execution_plan.cc`` and ``executor.cc`` do it:

* a rank's channels of one type are numbered in the order ``channels`` lists
  their peers (``setupChannels``); a threadblock's ``channels`` picks some of
  them, and an op's ``channel_ids`` index the threadblock's list of the op's
  ``channel_type``;
* a threadblock's ``remote_buffer_refs`` pick entries of the rank's
  ``remote_buffers`` (``setupRemoteBuffers``); an op's ``buffer_id`` indexes the
  threadblock's list for the op's channel type. A remote buffer names the rank
  that owns it;
* connections (``executor.cc`` ``setupConnections``): between ranks r and p
  the memory channels come first, then as many unpaired memory connections as
  p has more memory channels to r than r to p, then port channels, then the
  unpaired port ones, numbered by a per-peer tag; the n-th of r pairs with the
  n-th of p, and they share a semaphore (``buildSemaphore``): a signal on one
  end is counted by a wait on the other;
* a chunk index of any buffer is in units of input size / ``input_chunks``
  (output / ``output_chunks`` when the input has none; ``getOffset``); a
  thread-block-group op (``tbg_info``) handles part ``tb_id`` of
  ``tbg_size`` equal parts of each range (``calcOffset``);
* the kernel is launched with ``num_threads_per_block`` threads per block (default
  1024, at most 1024 in CUDA); ``min_message_size``/``max_message_size`` are
  unsigned 64-bit;
* the executor refuses more than 64 ops in a threadblock (MAX_OPERATION), and a
  threadblock holds at most 16 channels and remote buffers of a type
  (MAX_CHANNEL, ``execution_common.hpp``);
* switch (NVLS) channels: one multicast object per rank group of a ``"switch"``
  channel entry, each member binding its buffer of the entry's ``buffer_type``
  (:mod:`.mscclpp_switch_read`); an op's ``{"switch_channel_id": k}`` buffer names the
  threadblock's k-th switch channel (``Ref.switch``: the rank's channel number).

:mod:`.mscclpp_sim` runs the plan read here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import lcm
from typing import Any

from ..model import InputError, load_json
from .mscclpp_switch_read import Info, Member, match, read_channel

MAX_OPERATION = 64
MAX_THREADS_PER_BLOCK = 1024  # CUDA's limit on a block (the executor's kernel launch)
MAX_CHANNEL = 16
MAX_CHANNEL_PER_OPERATION = 8
MAX_RANKS = 4096
MAX_OPS = 500_000  # in all: real plans have at most 64 per threadblock
MAX_THREADBLOCKS = 100_000  # in all
MAX_CELLS = 2_000_000  # buffer cells in all (a cell: a chunk, or a part of one)
MAX_WORK = 8_000_000  # cells the simulation may touch (Σ over ops of their ranges)
TYPES = ("memory", "port")
BUFS = {"i": "input", "o": "output", "s": "scratch"}
COLLS = {"allgather": "allgather", "reducescatter": "reduce-scatter",
         "reduce_scatter": "reduce-scatter", "allreduce": "allreduce",
         "broadcast": "broadcast", "reduce": "reduce"}
ROOTED = ("broadcast", "reduce")
SIMULATED = ("nop", "barrier", "put", "pws", "pwsf", "get", "copy", "signal", "wait",
             "rlxsignal", "rlxwait", "flush", "re", "res", "rre", "rres",
             "sem_acquire", "sem_release",
             "ppkt", "rppkt", "respkt", "cpkt", "upkt", "repkt", "recpkt", "recspkt")
SWITCH = ("glres", "gstore", "gstorepkt")


@dataclass
class Ref:
    """One buffer range of an op: rank ``rank``'s buffer ``buf``, chunks [index, index+size);
    ``remote`` when reached through a channel."""

    rank: int
    buf: str
    index: int
    size: int
    remote: bool
    switch: int = -1  # a switch channel's buffer: the rank's switch channel number


@dataclass
class Op:
    name: str
    rank: int
    tb: int
    pos: int  # index in the threadblock's "ops"
    chan_type: str = ""
    channels: list[int] = field(default_factory=list)  # rank-level channel numbers
    src: list[Ref] = field(default_factory=list)
    dst: list[Ref] = field(default_factory=list)
    barrier: int = -1
    nblocks: int = 0
    sems: list[int] = field(default_factory=list)
    part: tuple[int, int] = (0, 1)  # tbg_info (tb_id, tbg_size)

    def where(self) -> str:
        return f"rank {self.rank} tb {self.tb} op {self.pos} ({self.name})"


@dataclass
class Plan:
    name: str
    collective: str
    protocol: str
    inplace: bool
    ngpus: int
    chunks: list[dict[str, int]]  # rank -> {"i", "o", "s"}
    tbs: dict[tuple[int, int], list[Op]]
    peers: dict[tuple[int, str], list[int]]  # (rank, type) -> peer of each channel
    pair: dict[tuple[int, str, int], tuple[int, str, int] | None]  # channel -> its other end
    semaphores: dict[int, list[int]]  # rank -> init values
    grain: int = 1  # cells per chunk (lcm of tbg sizes)
    root: int | None = None  # broadcast, reduce: the rank whose input (output) is whole
    double_scratch: bool = False  # use_double_scratch_buffer: calls alternate halves
    threads: int = MAX_THREADS_PER_BLOCK  # num_threads_per_block: the block size launched
    refusals: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    nvls: dict[int, list[Info]] = field(default_factory=dict)  # rank -> its switch channels
    groups: dict[tuple[int, int], tuple[Member, ...]] = field(default_factory=dict)

    def unit(self) -> int:
        """Chunks in the collective's size M (allgather output; reduce-scatter, allreduce,
        broadcast and reduce input)."""
        c = self.chunks[0]
        return max(c["i"], c["o"])


def _int(obj: Any, key: str, where: str, low: int = 0, high: int = 10**9) -> int:
    v = obj.get(key) if isinstance(obj, dict) else None
    if type(v) is not int or not low <= v <= high:
        raise InputError(f"MSCCL++ plan: {where}: {key} = {str(v)[:30]!r}, expected an "
                         f"integer in {low}..{high}")
    return v


def _list(obj: Any, key: str, where: str, default: Any = None) -> list[Any]:
    v = obj.get(key, default) if isinstance(obj, dict) else None
    if not isinstance(v, list):
        raise InputError(f"MSCCL++ plan: {where}: {key} is missing or not a list")
    return v


def _type(v: Any, where: str, allowed: tuple[str, ...] = TYPES) -> str:
    if v not in allowed:
        raise InputError(f"MSCCL++ plan: {where}: channel type {str(v)[:20]!r} is not one "
                         f"of {', '.join(allowed)}")
    return str(v)


def read(text: str | bytes, origin: str = "MSCCL++ plan") -> Plan:
    """Read a plan. InputError for what cannot be read or what collcert does not simulate;
    what the executor would refuse goes to ``Plan.refusals``."""
    doc = load_json(text, origin)
    if not isinstance(doc, dict) or not isinstance(doc.get("gpus"), list):
        raise InputError(f"{origin}: not an MSCCL++ execution plan (a JSON object with "
                         "\"gpus\")")
    coll = COLLS.get(str(doc.get("collective", "")).lower())
    if coll is None:
        raise InputError(f"{origin}: collective {str(doc.get('collective'))[:30]!r}: collcert "
                         "audits allgather, reducescatter, allreduce, broadcast and reduce plans")
    proto = doc.get("protocol", "Simple")
    if proto not in ("Simple", "LL"):
        raise InputError(f"{origin}: protocol {str(proto)[:10]!r}: the executor runs Simple "
                         "and LL plans")
    if not isinstance(doc.get("inplace"), bool):
        raise InputError(f"{origin}: \"inplace\" must be true or false (the executor reads it)")
    gpus = doc["gpus"]
    n = len(gpus)
    if not 2 <= n <= MAX_RANKS:
        raise InputError(f"{origin}: {n} gpus; collcert audits plans of 2..{MAX_RANKS} ranks")
    plan = Plan(str(doc.get("name", ""))[:200], coll, proto, doc["inplace"], n, [], {}, {},
                {}, {}, root=_root(doc, coll, n, origin),
                double_scratch=doc.get("use_double_scratch_buffer") is True)
    _launch_fields(plan, doc)
    for r, g in enumerate(gpus):
        where = f"gpus[{r}]"
        if _int(g, "id", where, 0, n - 1) != r:
            raise InputError(f"{origin}: {where} has id {g['id']}; the executor reads gpus[r] "
                             "for rank r (\"GPU rank does not match\")")
        plan.chunks.append({b: _int(g, f"{BUFS[b]}_chunks", where, 0, MAX_CELLS)
                            for b in "ios"})
        for c in _list(g, "channels", where):
            t = _type(c.get("channel_type") if isinstance(c, dict) else None,
                      f"{where} channels", (*TYPES, "switch"))
            if t == "switch":
                plan.nvls.setdefault(r, []).extend(read_channel(c, r, n, f"{where} channels",
                                                                origin))
                continue
            for p in _list(c, "connected_to", f"{where} channels"):
                if type(p) is not int or not 0 <= p < n or p == r:
                    raise InputError(f"{origin}: {where}: a channel connects to {p!r}")
                plan.peers.setdefault((r, t), []).append(p)
        plan.semaphores[r] = [_int(s, "init_value", f"{where} semaphores")
                              for s in _list(g, "semaphores", where, [])]
    _pair(plan)
    plan.groups, refusals = match(plan.nvls)
    plan.refusals += refusals
    sizes: set[int] = set()
    for r, g in enumerate(gpus):
        remote = _remote_buffers(g, r, n, origin)
        for t in _list(g, "threadblocks", f"gpus[{r}]"):
            if not _threadblock(plan, t, r, remote, sizes, origin):
                return plan  # refused at its first threadblock over MAX_OPERATION
    plan.grain = lcm(*sizes) if sizes else 1
    _check_sizes(plan)
    return plan


def _launch_fields(plan: Plan, doc: dict[str, Any]) -> None:
    """The executor's launch settings (``execution_plan.cc``: ``num_threads_per_block``,
    default 1024, the block size of its kernel launch; ``min_message_size`` and
    ``max_message_size``, unsigned 64-bit): a value it cannot use is a refusal."""
    v = doc.get("num_threads_per_block", MAX_THREADS_PER_BLOCK)
    if type(v) is int and 1 <= v <= MAX_THREADS_PER_BLOCK:
        plan.threads = v
    else:
        plan.refusals.append(f"num_threads_per_block = {_short(v)}: the executor launches "
                             f"its kernel with that many threads per block, and a CUDA "
                             f"block has 1 to {MAX_THREADS_PER_BLOCK}")
    for key in ("min_message_size", "max_message_size"):
        v = doc.get(key, 0)
        if type(v) is not int or not 0 <= v < 1 << 64:
            plan.refusals.append(f"{key} = {_short(v)}: the executor reads an unsigned 64-bit "
                                 "integer")


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 30 else f"{text[:12]}… ({len(text)} characters)"


def _pair(plan: Plan) -> None:
    """The other end of every channel (executor.cc setupConnections: per-peer tags)."""
    ends: dict[tuple[int, int], list[tuple[str, int | None]]] = {}
    for r in range(plan.ngpus):
        for p in range(plan.ngpus):
            if p == r:
                continue
            tags: list[tuple[str, int | None]] = []
            for t in TYPES:
                mine = [k for k, q in enumerate(plan.peers.get((r, t), [])) if q == p]
                theirs = sum(1 for q in plan.peers.get((p, t), []) if q == r)
                tags += [(t, k) for k in mine] + [(t, None)] * max(0, theirs - len(mine))
            ends[(r, p)] = tags
    for (r, p), tags in ends.items():
        other = ends[(p, r)]
        for n, (t, k) in enumerate(tags):
            if k is None:
                continue
            o = other[n] if n < len(other) else None
            if o is None or o[1] is None or o[0] != t:
                plan.pair[(r, t, k)] = None
            else:
                plan.pair[(r, t, k)] = (p, t, o[1])


def _remote_buffers(g: Any, r: int, n: int, origin: str) -> list[tuple[int, str]]:
    """The rank's remote buffers (owner, buffer), as ``remote_buffer_ids`` name them."""
    flat: list[tuple[int, str]] = []
    for b in _list(g, "remote_buffers", f"gpus[{r}]", []):
        where = f"gpus[{r}] remote_buffers"
        owner = _int(b, "rank", where, 0, n - 1)
        buf = b.get("type")
        if not isinstance(buf, str) or buf not in BUFS:
            raise InputError(f"{origin}: {where}: buffer type {str(buf)[:10]!r}")
        for t in _list(b, "access_channel_types", where):
            _type(t, where)
        flat.append((owner, str(buf)))
    return flat


def _threadblock(plan: Plan, t: Any, r: int, flat: list[tuple[int, str]],
                 sizes: set[int], origin: str) -> bool:
    """Read one threadblock into ``plan``; False (a refusal, nothing more read) when it
    holds more ops than the executor loads: the plan is INVALID whatever the rest says."""
    tid = _int(t, "id", f"gpus[{r}] threadblocks", 0, 100_000)
    where = f"rank {r} tb {tid}"
    if (r, tid) in plan.tbs:
        raise InputError(f"{origin}: {where} appears twice")
    count = len(_list(t, "ops", where))
    if count > MAX_OPERATION:
        plan.refusals.append(f"{where} has {count} ops; the executor loads at most "
                             f"{MAX_OPERATION} per threadblock (MAX_OPERATION); the rest of "
                             "the plan is not read")
        return False
    if len(plan.tbs) >= MAX_THREADBLOCKS:
        raise InputError(f"{origin}: more than {MAX_THREADBLOCKS} threadblocks in all: too many "
                         "to simulate")
    chans: dict[str, list[int]] = {ty: [] for ty in (*TYPES, "switch")}
    for c in _list(t, "channels", where, []):
        ty = _type(c.get("channel_type") if isinstance(c, dict) else None, where,
                   (*TYPES, "switch"))
        have = len(plan.nvls.get(r, [])) if ty == "switch" else len(plan.peers.get((r, ty), []))
        for k in _list(c, "channel_ids", where):
            if type(k) is not int or not 0 <= k < have:
                raise InputError(f"{origin}: {where}: {ty} channel id {k!r}, but rank {r} "
                                 f"has {have} {ty} channels")
            chans[ty].append(k)
    refs: dict[str, list[tuple[int, str]]] = {ty: [] for ty in TYPES}
    for c in _list(t, "remote_buffer_refs", where, []):
        ty = _type(c.get("access_channel_type") if isinstance(c, dict) else None, where)
        for b in _list(c, "remote_buffer_ids", where):
            if type(b) is not int or not 0 <= b < len(flat):
                raise InputError(f"{origin}: {where}: remote buffer id {b!r}, but rank {r} "
                                 f"lists {len(flat)} remote buffers")
            refs[ty].append(flat[b])
    for ty in (*TYPES, "switch"):
        if max(len(chans[ty]), len(refs.get(ty, []))) > MAX_CHANNEL:
            plan.refusals.append(f"{where} holds {max(len(chans[ty]), len(refs.get(ty, [])))} {ty} "
                                 f"channels or remote buffers; the executor's threadblock "
                                 f"holds {MAX_CHANNEL} (MAX_CHANNEL)")
    ops: list[Op] = []
    for pos, o in enumerate(_list(t, "ops", where)):
        ops.append(_op(plan, o, r, tid, pos, chans, refs, sizes, origin))
        if len(ops) + sum(map(len, plan.tbs.values())) > MAX_OPS:
            raise InputError(f"{origin}: more than {MAX_OPS} ops in all: too many to simulate "
                             "(the executor runs at most 64 per threadblock)")
    plan.tbs[(r, tid)] = ops
    return True


def _op(plan: Plan, o: Any, r: int, tid: int, pos: int, chans: dict[str, list[int]],
        refs: dict[str, list[tuple[int, str]]], sizes: set[int], origin: str) -> Op:
    where = f"rank {r} tb {tid} op {pos}"
    name = o.get("name") if isinstance(o, dict) else None
    if name == "pipeline":
        raise InputError(f"{origin}: {where}: {name!r} is a pipeline operation, which collcert "
                         "does not simulate (docs/mscclpp.md)")
    if name not in SIMULATED and name not in SWITCH:
        raise InputError(f"{origin}: {where}: unknown operation {str(name)[:20]!r} (the "
                         "executor refuses it: \"Invalid operation type\")")
    op = Op(str(name), r, tid, pos)
    ty = o.get("channel_type", "none")
    op.chan_type = ty if ty in TYPES else ""
    ids = o.get("channel_ids", [])
    if not isinstance(ids, list) or len(ids) > MAX_CHANNEL_PER_OPERATION:
        raise InputError(f"{origin}: {where}: channel_ids must list at most "
                         f"{MAX_CHANNEL_PER_OPERATION} channels")
    for k in ids:
        mine = chans.get(op.chan_type, [])
        if type(k) is not int or not 0 <= k < len(mine):
            raise InputError(f"{origin}: {where}: channel id {k!r}, but its threadblock "
                             f"holds {len(mine)} {op.chan_type or ty} channels")
        op.channels.append(mine[k])
    info = o.get("tbg_info")
    if info is not None:
        size = _int(info, "tbg_size", where, 1, 1024)
        op.part = (_int(info, "tb_id", where, 0, size - 1), size)
        sizes.add(size)
    for key, out in (("src_buff", op.src), ("dst_buff", op.dst)):
        for b in o.get(key, []) if isinstance(o.get(key, []), list) else []:
            out.append(_switch_ref(plan, b, r, chans["switch"], f"{where} {key}", origin)
                       if isinstance(b, dict) and "switch_channel_id" in b else
                       _ref(b, r, op, refs, f"{where} {key}", origin))
    op.barrier = o.get("barrier_id", -1) if type(o.get("barrier_id", -1)) is int else -1
    op.nblocks = o.get("num_threadblocks", 0) if type(o.get("num_threadblocks", 0)) is int else 0
    sems = o.get("semaphore_ids", [])
    op.sems = [s for s in sems if type(s) is int] if isinstance(sems, list) else []
    return op


def _switch_ref(plan: Plan, b: dict[str, Any], r: int, mine: list[int], where: str,
                origin: str) -> Ref:
    """A range through a switch channel: the threadblock's ``switch_channel_id``-th, at
    ``index`` of the buffer each member binds (``execution_plan.cc``:535-540, 565-570)."""
    k = b["switch_channel_id"]
    if type(k) is not int or not 0 <= k < len(mine):
        raise InputError(f"{origin}: {where}: switch_channel_id {str(k)[:20]!r}, but its "
                         f"threadblock holds {len(mine)} switch channels")
    ch = mine[k]
    return Ref(r, plan.nvls[r][ch][0], _int(b, "index", where, 0, MAX_CELLS),
               _int(b, "size", where, 0, MAX_CELLS), False, ch)


def _ref(b: Any, r: int, op: Op, refs: dict[str, list[tuple[int, str]]], where: str,
         origin: str) -> Ref:
    index = _int(b, "index", where, 0, MAX_CELLS)
    size = _int(b, "size", where, 0, MAX_CELLS)
    if isinstance(b, dict) and "buffer_id" in b:
        mine = refs.get(op.chan_type, [])
        k = b["buffer_id"]
        if type(k) is not int or not 0 <= k < len(mine):
            raise InputError(f"{origin}: {where}: buffer_id {k!r}, but its threadblock refers "
                             f"to {len(mine)} remote buffers over {op.chan_type or 'no'} "
                             "channels")
        owner, buf = mine[k]
        return Ref(owner, buf, index, size, True)
    kind = b.get("type") if isinstance(b, dict) else None
    if not isinstance(kind, str) or kind not in BUFS:
        raise InputError(f"{origin}: {where}: buffer type {str(kind)[:10]!r}")
    return Ref(r, str(kind), index, size, False)


def _check_sizes(plan: Plan) -> None:
    """Chunk counts the executor accepts for the collective's buffers: never 0
    (``checkMessageSize`` divides by them), input and output chunks of one size
    (``getSizeAndChunks``), the same on every rank (the user's buffers are)."""
    n, coll = plan.ngpus, plan.collective
    first = plan.chunks[0]
    for r, c in enumerate(plan.chunks):
        if (c["i"], c["o"]) != (first["i"], first["o"]):
            plan.refusals.append(f"rank {r} declares {c['i']} input and {c['o']} output chunks, "
                                 f"rank 0 {first['i']} and {first['o']}: the ranks' buffers "
                                 "are of one size")
            return
    i, o = first["i"], first["o"]
    want = {"allgather": (i * n, o), "reduce-scatter": (i, o * n)}.get(coll, (i, o))
    if i == 0 or o == 0:
        plan.refusals.append(f"{i} input and {o} output chunks: the executor divides the "
                             "buffer sizes by both (execution_plan.cc, checkMessageSize)")
    elif want[0] != want[1]:
        plan.refusals.append(f"{i} input and {o} output chunks per rank do not fit a {coll} of "
                             f"{n} ranks: chunks of the input and the output must be of one "
                             "size (execution_plan.cc, \"Size per chunks inconsistent\")")
    total = sum(sum(c.values()) for c in plan.chunks) * plan.grain
    if total > MAX_CELLS:
        raise InputError(f"MSCCL++ plan: {total} buffer cells are too many to simulate")
    work = sum(ref.size * plan.grain // op.part[1]
               * max(1, len(plan.groups.get((op.rank, ref.switch), ())))  # a multicast's members
               for ops in plan.tbs.values() for op in ops for ref in op.src + op.dst)
    if work > MAX_WORK:
        raise InputError(f"MSCCL++ plan: its ops touch {work} buffer cells in all: too many to "
                         "simulate cell by cell")


def _root(doc: dict[str, Any], coll: str, n: int, origin: str) -> int | None:
    """Broadcast and reduce: the root the plan names (a key the executor does not read;
    the DSL has no such collectives, collcert's export writes it)."""
    if coll not in ROOTED:
        return None
    root = doc.get("root")
    if type(root) is not int or not 0 <= root < n:
        raise InputError(f"{origin}: a {coll} plan must name its root rank (\"root\": 0..{n - 1}"
                         f"), it has {str(root)[:20]!r}")
    return root
