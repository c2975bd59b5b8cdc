"""What Azure/msccl-executor-nccl and ROCm/rccl's MSCCL executor read from a program.

Two readers, both in ``src/misc/msccl/msccl_parser.cc`` (line numbers below are
that file's at the commits of docs/runtimes.md; RCCL's are the same):

* the **folder scan** (``mscclGetAlgoMetaFromXmlFile``, :721-790) reads only the
  file's first element and requires, in this order, ``nchunksperloop``,
  ``nchannels``, ``ngpus``, ``coll`` (a name it knows, else it fails without a
  message, :768), ``minBytes``, ``maxBytes``, ``inplace``, ``outofplace``;
* the **loader** (``mscclGetAlgoFromXmlFile``, :304-703) reads the file again for
  each rank: ``nchunksperloop``, ``nchannels``, ``ngpus``, ``proto`` (Simple, LL128,
  LL), ``coll``, ``minBytes``, ``maxBytes``, ``inplace``, ``outofplace``; the
  rank's ``<gpu>`` (``i_chunks``, ``o_chunks``, ``s_chunks`` ≥ 0), each ``<tb>``
  (``id`` in 0..MAX_TBS-1, once; ``recv``, ``send`` ≥ -1 and not the gpu; ``chan`` in
  0..MAXCHANNELS) and each ``<step>`` (``s`` in 0..MSCCL_MAX_NUM_STEPS-1, ``srcoff``,
  ``srcbuf``, ``dstoff``, ``dstbuf`` in i/o/s, ``cnt`` in 0..71 unless ``nop``,
  ``type``, ``depid``, ``deps``, ``hasdep`` 0/1 unless ``nop``), with the
  checks of docs/auditing.md (peers per channel, offsets, the nop chain, no gap in
  thread block ids).

Integers are read with ``strtol(…, 0)`` (``0x10`` is 16, ``010`` is 8) and stored in
the executor's fields (``msccl_struct.h:39-65``): offsets in ``int16``, ``depid`` in
``int8``, ``deps`` in ``int16``. A value that does not fit is stored wrapped: the
executor then runs another program than the file says (*misreads*).

:func:`meta` and :func:`load` return a :class:`~.msccl_loader.Stop` (None: read).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .msccl_lexer import Node
from .msccl_loader import Elem, Stop, Walk, c_strtol, first_refusal

META_ATTRS = ("nchunksperloop", "nchannels", "ngpus", "coll", "minBytes", "maxBytes",
              "inplace", "outofplace")
META_LINES = {"nchunksperloop": 729, "nchannels": 733, "ngpus": 737, "coll": 741,
              "minBytes": 773, "maxBytes": 777, "inplace": 781, "outofplace": 785}
COLLS = ("reduce", "broadcast", "allreduce", "reducescatter", "allgather", "send", "recv",
         "gather", "scatter", "alltoall", "alltoallv")  # msccl_parser.cc:335-372
SIZED = ("reducescatter", "allgather", "alltoall")  # sizeMultiplier = ngpus (:348, :353, :366)
STEP_TYPES = ("s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop")
SENDS, RECVS = ("s", "rcs", "rrs", "rrcs"), ("r", "rcs", "rrs", "rrc", "rrcs")
CHECK_SRC, CHECK_DST = ("s", "rrs", "rrcs", "cpy", "re"), ("r", "rcs", "rrcs", "cpy", "re")
MAX_COUNT, MAX_TB_PER_CHANNEL, MAX_REDUCE_FUSION = 72, 32, 16


@dataclass(frozen=True)
class Limits:
    """A build's limits: thread blocks (``MSCCL_MAX_NUM_THREAD_BLOCKS``), steps
    (``MSCCL_MAX_NUM_STEPS``), channels (``MAXCHANNELS``)."""

    tbs: int
    steps: int
    channels: int
    legacy: bool = False  # microsoft/msccl (2023): the checks of its topo.cc (msccl_2023)


AZURE = Limits(1024, 64, 32)  # msccl_struct.h:18 (32 × MAXCHANNELS), common.mk:19, device.h:65
RCCL = Limits(64, 64, 128)  # msccl_struct.h:16-18, device.h:65
MSCCL_2023 = Limits(216, 256, 32, True)  # include/msccl.h:6-8, devcomm.h:51


@dataclass
class Meta:
    """What the folder scan keeps of a file (fields left at 0 where it stopped)."""

    values: dict[str, int | str] = field(default_factory=dict)
    stop: Stop | None = None


class Refuse(Exception):
    def __init__(self, stop: Stop) -> None:
        super().__init__(stop.message)
        self.stop = stop


def attr(node: Node | None, key: str, at: int | str, bits: int = 32) -> int:
    raw = text_attr(node, key, at)
    return c_strtol(raw, bits)


def text_attr(node: Node | None, key: str, at: int | str) -> str:
    value = None if node is None else node.attr(key)
    if value is None:
        name = node.name if node is not None else ""
        raise Refuse(Stop(f"attr-{key}", node.line if node is not None else 1,
                           f"Attribute {key} of node {name} not found", str(at)))
    return value


def meta(wk: Walk) -> Meta:
    """The folder scan's reading of the first element (see the module docstring)."""
    out = Meta()
    if wk.first_error is not None:
        e = wk.first_error
        out.stop = Stop(e.rule, e.line, e.message, e.at)
        return out
    node = wk.first or Node("", 1, 1)
    try:
        for key in META_ATTRS:
            if key == "coll":
                coll = text_attr(node, key, META_LINES[key])
                if coll not in COLLS:
                    raise Refuse(Stop("coll", node.line, f"coll=\"{coll}\": not a collective "
                                       "the scan knows; it stops without a message", "768"))
                out.values[key] = coll
            else:
                out.values[key] = attr(node, key, META_LINES[key],
                                        64 if key.endswith("Bytes") else 32)
    except Refuse as r:
        out.stop = r.stop
    return out


class Ctx:
    """One rank's reading: the build's limits and the first misreading seen (a refusal
    found later still wins: the runtime stops there)."""

    def __init__(self, lim: Limits, ngpus: int = 0, coll: str = "", nchunks: int = 0) -> None:
        self.lim, self.ngpus, self.coll, self.nchunks = lim, ngpus, coll, nchunks
        self.misread: Stop | None = None

    def note(self, stop: Stop) -> None:
        if self.misread is None:
            self.misread = stop


def load(wk: Walk, rank: int, lim: Limits) -> Stop | None:
    """The loader's reading for ``rank``: its first refusal, else its first misreading,
    else None."""
    stop, ub = first_refusal(wk, rank)
    if stop is not None:
        return stop
    if not wk.algos:
        return Stop("no-algo", 1, "no <algo> element: the loader reads the attributes of a "
                    "null node (msccl_parser.cc:312-315)", "312", "misreads")
    ctx = Ctx(lim)
    try:
        _algo(wk.algos[0].node)
        gpus(wk.algos[0], rank, ctx)
    except Refuse as r:
        return r.stop
    return ub or ctx.misread


def gpus(algo: Elem, rank: int, ctx: Ctx) -> None:
    """The loader's loop over the kept <gpu> elements: the reading rank's are read."""
    for g in algo.children:
        if attr(g.node, "id", 399) == rank:
            _gpu(g, rank, ctx)


def _algo(top: Node) -> None:
    for key, at in (("nchunksperloop", 315), ("nchannels", 319), ("ngpus", 323)):
        attr(top, key, at)
    proto = text_attr(top, "proto", 327)
    if proto not in ("Simple", "LL128", "LL"):
        raise Refuse(Stop("proto", top.line, f"MSCCL: protocol {proto} is not supported.",
                           "298"))
    coll = text_attr(top, "coll", 334)
    if coll not in COLLS:
        raise Refuse(Stop("coll", top.line, f"MSCCL: unsupported collective: {coll}", "371"))
    for key, at in (("minBytes", 376), ("maxBytes", 380)):
        attr(top, key, at, 64)
    for key, at in (("inplace", 384), ("outofplace", 388)):
        attr(top, key, at)


def _gpu(g: Elem, rank: int, ctx: Ctx) -> None:
    """One ``<gpu>`` of the reading rank: its buffers, then every tb (:400-697)."""
    sizes = {b: attr(g.node, f"{b}_chunks", at) for b, at in (("i", 401), ("o", 402),
                                                               ("s", 403))}
    if sizes["s"] < 0:
        raise Refuse(Stop("s-chunks", g.line, f"MSCCL: nScratchChunks must be not negative. "
                           f"nScratchChunks: {sizes['s']}", "405"))
    if ctx.lim.legacy:
        _consistent(g, sizes, ctx)
    exists: set[int] = set()
    peers: dict[int, list[int]] = {}  # channel -> [send tbs, recv tbs] counted so far
    for tb in g.children:
        _tb(tb, rank, ctx, sizes, exists, peers)
    gaps = [i for i in sorted(exists) if i > 0 and i - 1 not in exists]
    if gaps or (exists and 0 not in exists):
        raise Refuse(Stop("tb-gap", g.line, f"MSCCL: thread block {gaps[0]} is missing",
                           "690"))


def _consistent(g: Elem, sizes: dict[str, int], ctx: Ctx) -> None:
    """microsoft/msccl: a declared buffer is the collective's share (topo.cc:886-888)."""
    top = ctx.nchunks
    i_mul = ctx.ngpus if ctx.coll == "allgather" else 1
    o_mul = ctx.ngpus if ctx.coll == "reduce_scatter" else 1
    if (sizes["i"] > 0 and sizes["i"] * i_mul != top) or (
            sizes["o"] > 0 and sizes["o"] * o_mul != top):
        raise Refuse(Stop("io-chunks", g.line, f"Inconsistency between i_chunks/o_chunks "
                           f"({sizes['i']}/{sizes['o']}) and nchunksperloop ({top}) for "
                           f"collective {ctx.coll}", "887"))


def _tb(tb: Elem, gpu: int, ctx: Ctx, sizes: dict[str, int], exists: set[int],
        peers: dict[int, list[int]]) -> None:
    n, lim = tb.node, ctx.lim
    bid, recv, send, chan = (attr(n, k, at) for k, at in (("id", 413), ("recv", 414),
                                                           ("send", 415), ("chan", 416)))
    _raise_first(n, [
        (bid < 0, "tb-id", f"MSCCL: bid must be not negative. bid: {bid}", "418"),
        (bid >= lim.tbs, "tb-id", f"MSCCL: too many thread blocks are requested. Max thread "
         f"blocks: {lim.tbs}", "422"),
        (bid in exists, "tb-duplicate", f"MSCCL: duplicate thread block id {bid} for MSCCL",
         "426"),
        (gpu in (recv, send), "tb-self", f"MSCCL: peer ({recv},{send}) and gpu id ({gpu}) "
         "must be different", "432"),
        (recv < -1 or send < -1, "tb-peer", f"MSCCL: wrong recvPeer ({recv}) or sendPeer "
         f"({send}) in thread block {bid} on gpu {gpu}", "438"),
        (lim.legacy and max(recv, send) >= ctx.ngpus, "tb-peer", f"MSCCL: recvpeer ({recv}) or "
         f"sendpeer ({send}) must be -1 or between 0 and ngpus ({ctx.ngpus})", "930"),
        (chan < 0 or chan > lim.channels, "tb-channel", f"MSCCL: threadblock {bid} on GPU "
         f"{gpu} has an invalid channel {chan}", "450")])
    if chan == lim.channels:
        ctx.note(Stop("tb-channel", n.line, f"chan={chan} passes the check (> MAXCHANNELS, "
                      f":449) but indexes past mscclChannels[{lim.channels}] (:456)", "449",
                      "misreads"))
    exists.add(bid)
    if len(tb.children) > lim.steps:
        ctx.note(Stop("tb-steps", tb.children[lim.steps].line, f"thread block {bid} has "
                      f"{len(tb.children)} <step> elements; its arrays hold {lim.steps} "
                      "(msccl_struct.h:57-60) and the loader checks only each s", "485",
                      "misreads"))
    count = peers.setdefault(chan, [0, 0])
    state = _TbState(gpu, bid, recv, send, count)
    for st in tb.children:
        _step(st.node, ctx, sizes, state)
    count[0] += send >= 0
    count[1] += recv >= 0


@dataclass
class _TbState:
    gpu: int
    bid: int
    recv: int
    send: int
    count: list[int]  # this channel's [send tbs, recv tbs] before this one
    deps_open: int = 0  # dependencies since the last transmission (nops fold into it)
    fuse: tuple[str, int, str] | None = None  # an open re group: (dstbuf, dstoff, srcbuf)
    reductions: int = 0  # the thread block's running count


def _step(n: Node, ctx: Ctx, sizes: dict[str, int], t: _TbState) -> None:
    """One step, checked in the loader's order (:472-655)."""
    s, srcoff = attr(n, "s", 472), attr(n, "srcoff", 474)
    srcbuf, dstoff, dstbuf = text_attr(n, "srcbuf", 475), attr(n, "dstoff", 476), \
        text_attr(n, "dstbuf", 477)
    cnt, kind = attr(n, "cnt", 479), text_attr(n, "type", 480)
    depid, deps, hasdep = (attr(n, k, at) for k, at in (("depid", 481), ("deps", 482),
                                                         ("hasdep", 483)))
    _raise_first(n, [
        (s >= ctx.lim.steps, "step-s", f"MSCCL: too many steps are requested. Max number of "
         f"steps: {ctx.lim.steps}, requested: {s + 1}", "486"),
        (s < 0, "step-s", f"MSCCL: step must be positive: step {s}", "490"),
        (kind not in STEP_TYPES + (("ra",) if ctx.lim.legacy else ()), "step-type", f"MSCCL: type of transfer is not supported: "
         f"{kind}", "541")])
    if depid >= 0:
        if depid > 127 or not -(2**15) <= deps < 2**15:
            ctx.note(Stop("step-depid", n.line, f"depid={depid} deps={deps}: stored in int8 / "
                          "int16 (msccl_struct.h:58-59), so the kernel waits for another "
                          "thread block or step than the file names", "546", "misreads"))
        t.deps_open += 1
    _raise_first(n, [(b not in ("i", "o", "s"), "step-buffer", f"type of buffer is not "
                      f"supported: {b}", "264") for b in (srcbuf, dstbuf)])
    if kind == "nop":
        return
    cont = kind == "re" and t.fuse == (dstbuf, dstoff, srcbuf) and depid == -1
    _transmission(n, t, cnt, kind)
    if ctx.lim.legacy and cnt == 0 and (kind in SENDS or kind in RECVS):
        ctx.note(Stop("step-count", n.line, "cnt=0 on a send or receive: microsoft/msccl "
                      "counts it at nchunksForPeer[cnt-1], index -1 (topo.cc:1082, :1095)",
                      "1082", "misreads"))
    for buf, off, wanted in ((srcbuf, srcoff, CHECK_SRC), (dstbuf, dstoff, CHECK_DST)):
        if kind in wanted:
            _bounds(n, buf, off, sizes, ctx)
    if not cont:
        if t.deps_open > 0 and depid < 0:
            raise Refuse(Stop("nop-chain", n.line, "MSCCL: when there is a chain of "
                               "dependencies, the last reduction must be a part of the first "
                               f"immediate instruction. Detected for GPU {t.gpu}, thread block "
                               f"{t.bid}, and step {s}. XML will be ignored.", "617"))
        t.deps_open = 0
    if kind == "re":
        t.reductions += 1
        t.fuse = (None if hasdep or t.reductions == MAX_REDUCE_FUSION
                  else (dstbuf, dstoff, srcbuf))
    else:
        t.fuse = None
    if hasdep not in (0, 1):
        raise Refuse(Stop("step-hasdep", n.line, f"MSCCL: hasDependence needs to be 0 or 1, "
                           f"but it was {hasdep}", "648"))


def _transmission(n: Node, t: _TbState, cnt: int, kind: str) -> None:
    """The count and the peers of a real step (:577-608)."""
    _raise_first(n, [
        (cnt < 0 or cnt >= MAX_COUNT, "step-count", f"MSCCL: count ({cnt}) must be positive "
         f"and less than {MAX_COUNT}", "578"),
        (kind in SENDS and t.send < 0, "step-send", f"MSCCL: there is a send in thread block "
         f"{t.bid} on GPU {t.gpu} without a sendPeer.", "586"),
        (kind in SENDS and t.count[0] >= MAX_TB_PER_CHANNEL, "channel-sends", "MSCCL: too many "
         f"sends per channel. Max allowed {MAX_TB_PER_CHANNEL}", "590"),
        (kind in RECVS and t.recv < 0, "step-recv", f"MSCCL: there is a recv in thread block "
         f"{t.bid} on GPU {t.gpu} without a recvPeer.", "599"),
        (kind in RECVS and t.count[1] >= MAX_TB_PER_CHANNEL, "channel-recvs", "MSCCL: too many "
         f"recvs per channel. Max allowed {MAX_TB_PER_CHANNEL}", "603")])


def _raise_first(n: Node, checks: list[tuple[bool, str, str, str]]) -> None:
    for bad, rule, msg, at in checks:
        if bad:
            raise Refuse(Stop(rule, n.line, msg, at))


def _bounds(n: Node, buf: str, off: int, sizes: dict[str, int], ctx: Ctx) -> None:
    """mscclCheckBufferBounds on the offset as stored (int16, msccl_struct.h:44-45)."""
    stored = (off + 2**15) % 2**16 - 2**15
    limit = sizes[buf]
    name = {"i": "input", "o": "output", "s": "scratch"}[buf]
    if stored < -1 or stored >= limit:
        raise Refuse(Stop("offset", n.line, f"Incorrect offset set for {name} buffer: offset: "
                           f"{stored} maximum allowed: {limit}",
                           {"i": "273", "o": "278", "s": "283"}[buf]))
    if stored != off:
        ctx.note(Stop("offset", n.line, f"offset {off} of the {name} buffer is stored as "
                      f"{stored} (int16, msccl_struct.h:44-45): the executor uses chunk "
                      f"{stored}", "571", "misreads"))
