"""MSCCL algorithm XML, read as the MSCCL executor reads it.

Format (written by microsoft/msccl-tools, run by Azure/msccl-executor-nccl)::

    <algo name=".." proto="Simple" nchannels="1" nchunksperloop="C" ngpus="N"
          coll="allgather" inplace="0" [outofplace="1" minBytes=".." maxBytes=".."]>
      <gpu id="g" i_chunks=".." o_chunks=".." s_chunks="..">
        <tb id="t" send="peer or -1" recv="peer or -1" chan="c">
          <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1"
                depid="-1" deps="-1" hasdep="0"/>

The executor's rules are followed as its source states them (file names in
Azure/msccl-executor-nccl; docs/auditing.md lists every rule):

* ``src/misc/msccl/msccl_parser.cc`` turns each threadblock's steps into
  *transmissions*: a ``nop`` only adds its ``depid``/``deps`` to the next
  real step, which waits for all of them (and must carry a dependency of its
  own); consecutive ``re`` steps with the same destination and source buffer
  and no dependency of their own are fused into one transmission (the fusion
  also stops after a step with ``hasdep="1"`` and when the threadblock's
  running count of reductions reaches MSCCL_MAX_REDUCE_FUSION = 16). It
  refuses thread block ids that are not 0..n-1, more than 1024 of them,
  channels above 32, ``cnt`` ≥ 72, a peer equal to the gpu, ``hasdep`` other
  than 0 or 1, an offset at or past the declared buffer size.
* ``src/device/msccl_kernel.cu`` (``mscclRunInterpreter``) runs them: before
  a transmission it spins until, for every dependency (t, s), the flag of
  threadblock t is ≥ s; after a transmission with ``hasDependence`` it sets
  its own flag to its step counter (the XML index of the transmission's last
  step, counting the folded ``nop`` and fused ``re`` steps). Flags only grow,
  so a later signalled step releases a wait on an earlier one; a wait that no
  step of t ever releases spins forever.

The program read is the data of :mod:`.program`; :func:`simulate` runs it with
:mod:`.msccl_sim`.
"""

from __future__ import annotations

from ..model import Element, InputError, parse
from .msccl_sim import Result, run
from .program import KINDS, RECVS, SENDS, Op, Program, Step, Threadblock

MAX_STEPS = 2_000_000
MAX_CHUNKS = 1_000_000
MAX_WORK = 20_000_000  # chunk reads and writes the simulation may do (Σ cnt over steps)
# the executor's limits (msccl_struct.h, device.h, msccl_parser.h)
EXEC_MAX_TBS = 1024  # MSCCL_MAX_NUM_THREAD_BLOCKS = 32 per channel × MAXCHANNELS
EXEC_MAX_TBS_PER_CHANNEL = 32
EXEC_MAX_CHANNELS = 32  # MAXCHANNELS
EXEC_MAX_COUNT = 72  # MSCCL_MAX_COUNT: cnt must be below it
EXEC_MAX_REDUCE_FUSION = 16
EXEC_DEFAULT_MAX_STEPS = 64  # MSCCL_MAX_NUM_STEPS, a build option (makefiles/common.mk)
EXEC_MAX_XML_NODES = 4096  # MAX_NODES: the 4096th element the reader keeps already fails
PROTOCOLS = ("Simple", "LL128", "LL")
COLLS = {"allgather": "allgather", "allreduce": "allreduce", "reducescatter": "reduce-scatter",
         "reduce_scatter": "reduce-scatter", "reduce-scatter": "reduce-scatter",
         "alltoall": "alltoall", "broadcast": "broadcast", "reduce": "reduce"}


def _int(el: Element, name: str, default: int | None = None, low: int = -1,
         high: int = 10**9) -> int:
    raw = el.attrs.get(name)
    if raw is None:
        if default is None:
            raise InputError(f"MSCCL XML: {el.where()} lacks the attribute {name}")
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise InputError(f"MSCCL XML: {el.where()}: {name}={raw[:30]!r} is not an integer"
                         ) from None
    if not low <= value <= high:
        raise InputError(f"MSCCL XML: {el.where()}: {name}={value} is out of range")
    return value


def read(text: str | bytes, origin: str = "MSCCL XML") -> Program:
    """Read a program. InputError for what cannot be read at all; what the executor
    would refuse to load goes to ``Program.refusals`` (the program is then INVALID)."""
    root = parse(text, origin, max_per_tag={"step": MAX_STEPS, "gpu": 100_000,
                                            "tb": 1_000_000})
    if root.tag != "algo":
        raise InputError(f"{origin}: the root element is <{root.tag}>, expected <algo>")
    coll_raw = root.attrs.get("coll", "")
    coll = COLLS.get(coll_raw.lower())
    if coll is None:
        raise InputError(f"{origin}: coll={coll_raw!r} is not supported; collcert audits "
                         "allgather, reducescatter, allreduce, alltoall, broadcast and reduce "
                         "programs")
    ngpus = _int(root, "ngpus", low=2, high=100_000)
    nchunks = _int(root, "nchunksperloop", low=1, high=MAX_CHUNKS)
    oop = root.attrs.get("outofplace")
    prog = Program(root.attrs.get("name", ""), coll, ngpus, nchunks,
                   root.attrs.get("inplace", "0").strip() == "1", {}, [],
                   root.attrs.get("proto", "Simple").strip(),
                   _int(root, "nchannels", 0, 0, 10**6) if "nchannels" in root.attrs else None,
                   None if oop is None else oop.strip() == "1", coll_raw)
    prog.root = _root(root, coll, ngpus, origin)
    _check_algo(prog, root)
    total = work = 0
    for g in root.children:
        if g.tag != "gpu":
            raise InputError(f"{origin}: unexpected {g.where()} in <algo>; expected <gpu>")
        gid = _int(g, "id", low=0, high=ngpus - 1)
        if gid in prog.chunks:
            raise InputError(f"{origin}: {g.where()}: gpu {gid} appears twice")
        prog.chunks[gid] = {b: _int(g, f"{b}_chunks", 0, 0, MAX_CHUNKS) for b in "ios"}
        seen_conn: dict[tuple[str, int, int], int] = {}
        blocks: list[Threadblock] = []
        nsteps = 0
        for tb in g.children:
            if tb.tag != "tb":
                raise InputError(f"{origin}: unexpected {tb.where()} in <gpu>; expected <tb>")
            tid = _int(tb, "id", low=0, high=100_000)
            if any(b.tbid == tid for b in blocks):
                raise InputError(f"{origin}: {tb.where()}: threadblock {tid} of gpu {gid} "
                                 "appears twice")
            steps = _steps(tb, gid, tid, origin)
            total += len(steps)
            nsteps += len(steps)
            work += sum(2 * st.cnt for st in steps if st.kind != "nop")
            if total > MAX_STEPS:
                raise InputError(f"{origin}: more than {MAX_STEPS} steps")
            if work > MAX_WORK:
                raise InputError(f"{origin}: its steps move more than {MAX_WORK // 2} chunks "
                                 "in all (Σ cnt): too many to simulate chunk by chunk (real "
                                 "programs of the executor's size move far fewer)")
            block = Threadblock(gid, tid, _int(tb, "send", -1, -1, ngpus - 1),
                                _int(tb, "recv", -1, -1, ngpus - 1),
                                _int(tb, "chan", 0, 0, 1024), steps)
            # one threadblock per connection and channel, as MSCCL requires: two senders (or
            # receivers) on one connection would interleave in an order no one fixes
            for way, peer in (("send", block.send), ("recv", block.recv)):
                conn = (way, peer, block.chan)
                if peer >= 0 and conn in seen_conn:
                    raise InputError(f"{origin}: {tb.where()}: threadblocks {seen_conn[conn]} "
                                     f"and {tid} of gpu {gid} both {way} "
                                     f"{'to' if way == 'send' else 'from'} gpu {peer} on "
                                     f"channel {block.chan}; the order of their messages "
                                     "would be undefined")
                seen_conn[conn] = tid
            _check_tb(prog, block)
            block.ops = _compile(prog, block)
            blocks.append(block)
        _check_gpu(prog, gid, blocks, nsteps)
        prog.tbs += blocks
    missing = [g for g in range(ngpus) if g not in prog.chunks]
    if missing:
        raise InputError(f"{origin}: ngpus={ngpus} but gpus {missing[:5]} have no <gpu> element")
    total_chunks = sum(sum(c.values()) for c in prog.chunks.values()) + 2 * nchunks * ngpus
    if total_chunks > MAX_CHUNKS * 10 or (coll != "allgather"
                                          and total_chunks * ngpus > 50_000_000):
        raise InputError(f"{origin}: {total_chunks} buffer chunks on {ngpus} gpus is too large "
                         "to simulate chunk by chunk")
    return prog


def _root(algo: Element, coll: str, ngpus: int, origin: str) -> int | None:
    """Broadcast, reduce: the rank the program serves (attribute root="r"), else None."""
    if coll not in ("broadcast", "reduce"):
        return None
    if "root" not in algo.attrs:
        raise InputError(f"{origin}: a {coll} program needs the attribute root=\"r\" (the rank "
                         "it was written for; the executor runs it for any root, so collcert "
                         "must be told which)")
    return _int(algo, "root", low=0, high=ngpus - 1)


def _steps(tb: Element, gid: int, tid: int, origin: str) -> list[Step]:
    steps: list[Step] = []
    for st in tb.children:
        if st.tag != "step":
            raise InputError(f"{origin}: unexpected {st.where()} in <tb>")
        idx = _int(st, "s", low=0, high=MAX_STEPS)
        if idx != len(steps):
            raise InputError(f"{origin}: {st.where()}: step s={idx} where s={len(steps)} was "
                             "expected (steps are numbered 0, 1, …)")
        kind = st.attrs.get("type", "")
        if kind not in KINDS:
            raise InputError(f"{origin}: {st.where()}: unknown step type {kind!r}")
        steps.append(Step(
            kind=kind, srcbuf=st.attrs.get("srcbuf", "i"),
            srcoff=_int(st, "srcoff", 0, -1, MAX_CHUNKS), dstbuf=st.attrs.get("dstbuf", "o"),
            dstoff=_int(st, "dstoff", 0, -1, MAX_CHUNKS), cnt=_int(st, "cnt", 1, 0, MAX_CHUNKS),
            index=idx, depid=_int(st, "depid", -1, -1, 100_000),
            deps=_int(st, "deps", -1, -1, MAX_STEPS), hasdep=_int(st, "hasdep", 0, -10**9, 10**9),
            line=st.line))
    return steps


def _check_algo(prog: Program, root: Element) -> None:
    if prog.proto not in PROTOCOLS:
        prog.refusals.append(f"proto={prog.proto!r}: the executor runs only Simple, LL128 "
                             "and LL (msccl_parser.cc, mscclProtocolStrToId)")
    if prog.collective in ("allgather", "reduce-scatter", "alltoall") and (
            prog.nchunks % prog.ngpus):
        prog.refusals.append(f"nchunksperloop = {prog.nchunks} is not a multiple of ngpus = "
                             f"{prog.ngpus}: a {prog.collective} buffer of ngpus equal shares "
                             "cannot be cut into whole chunks")
    # which runtimes load the file (names, attributes, the reader's lexical rules) is the
    # runtime profiles' answer (msccl_runtimes), printed beside the verdict
    if not prog.modes():
        prog.notes.append("inplace=\"0\" and outofplace=\"0\": the executor never selects "
                          "this program; it is checked as an out-of-place program")


def _check_tb(prog: Program, tb: Threadblock) -> None:
    where = f"gpu {tb.gpu} tb {tb.tbid}"
    if tb.send == tb.gpu or tb.recv == tb.gpu:
        prog.refusals.append(f"{where}: sends to or receives from its own gpu")
    if tb.chan >= EXEC_MAX_CHANNELS:
        prog.refusals.append(f"{where}: channel {tb.chan}; the executor has channels "
                             f"0..{EXEC_MAX_CHANNELS - 1} (MAXCHANNELS)")
    elif prog.nchannels is not None and tb.chan >= prog.nchannels and (
            tb.send >= 0 or tb.recv >= 0):
        prog.refusals.append(f"{where}: uses channel {tb.chan}, but the program declares "
                             f"nchannels={prog.nchannels}; the executor connects only "
                             f"channels 0..{prog.nchannels - 1}")
    for st in tb.steps:
        sw = f"{where} step {st.index} (line {st.line})"
        if st.hasdep not in (0, 1):
            prog.refusals.append(f"{sw}: hasdep={st.hasdep}; the executor takes 0 or 1")
        if st.kind != "nop" and st.cnt >= EXEC_MAX_COUNT:
            prog.refusals.append(f"{sw}: cnt={st.cnt}; the executor takes cnt < "
                                 f"{EXEC_MAX_COUNT} (MSCCL_MAX_COUNT)")
        if st.kind in SENDS and tb.send < 0:
            prog.refusals.append(f"{sw} sends, but its threadblock has send=-1")
        if st.kind in RECVS and tb.recv < 0:
            prog.refusals.append(f"{sw} receives, but its threadblock has recv=-1")
        for buf in (st.srcbuf, st.dstbuf):
            if buf not in ("i", "o", "s"):
                prog.refusals.append(f"{sw}: buffer {buf!r} is not i, o or s")
    if len(tb.steps) > EXEC_DEFAULT_MAX_STEPS:
        prog.notes.append(f"{where} has {len(tb.steps)} steps: the executor must be built "
                          f"with MSCCL_MAX_NUM_STEPS ≥ {len(tb.steps)} (default "
                          f"{EXEC_DEFAULT_MAX_STEPS}, makefiles/common.mk)")


def _check_gpu(prog: Program, gid: int, blocks: list[Threadblock], nsteps: int) -> None:
    ids = sorted(b.tbid for b in blocks)
    if ids != list(range(len(ids))):
        gap = next(i for i, t in enumerate(ids + [-1]) if t != i)
        prog.refusals.append(f"gpu {gid}: threadblock {gap} is missing (ids must be "
                             "0, 1, …, n-1; msccl_parser.cc)")
    if len(blocks) > EXEC_MAX_TBS:
        prog.refusals.append(f"gpu {gid}: {len(blocks)} threadblocks; the executor runs at "
                             f"most {EXEC_MAX_TBS}")
    for way in ("send", "recv"):
        per_chan: dict[int, int] = {}
        for b in blocks:
            if getattr(b, way) >= 0:
                per_chan[b.chan] = per_chan.get(b.chan, 0) + 1
        for ch, n in per_chan.items():
            if n > EXEC_MAX_TBS_PER_CHANNEL:
                prog.refusals.append(f"gpu {gid} channel {ch}: {n} threadblocks {way}; the "
                                     f"executor allows {EXEC_MAX_TBS_PER_CHANNEL} per channel")
    elements = 1 + prog.ngpus + len(blocks) + nsteps
    if elements >= EXEC_MAX_XML_NODES:
        prog.refusals.append(f"gpu {gid}: the executor's XML reader keeps at most "
                             f"{EXEC_MAX_XML_NODES - 1} elements per rank (<algo>, every <gpu>, "
                             f"this gpu's <tb> and <step>; MAX_NODES = {EXEC_MAX_XML_NODES} is "
                             f"checked before each, msccl_parser.cc:169); this rank needs "
                             f"{elements}")


def _compile(prog: Program, tb: Threadblock) -> list[Op]:
    """The transmissions the executor's parser builds from ``tb``'s steps, with the flag
    value its kernel sets after each (see the module docstring)."""
    ops: list[Op] = []
    pending: list[tuple[int, int]] = []
    fuse: tuple[str, int, str] | None = None  # (dstbuf, dstoff, srcbuf) of an open re group
    reductions = 0  # the threadblock's running count, as the parser keeps it
    for st in tb.steps:
        if st.depid >= 0:
            pending.append((st.depid, st.deps))
        if st.kind == "nop":
            continue
        if st.kind == "re" and fuse == (st.dstbuf, st.dstoff, st.srcbuf) and st.depid < 0:
            op = ops[-1]
            op.reductions.append(st.srcoff)
            op.srcoff, op.cnt = st.srcoff, st.cnt  # the parser overwrites them: last one wins
            op.signals = st.hasdep == 1
            if len(op.reductions) == EXEC_MAX_REDUCE_FUSION + 1:
                prog.refusals.append(f"{op.where(tb.gpu, tb.tbid)}: fuses more than "
                                     f"{EXEC_MAX_REDUCE_FUSION} reductions, past the end of "
                                     "the kernel's buffer (MSCCL_MAX_REDUCE_FUSION)")
        else:
            if pending and st.depid < 0:
                prog.refusals.append(
                    f"gpu {tb.gpu} tb {tb.tbid} step {st.index} (line {st.line}): follows nop "
                    "dependencies but has none of its own; the executor refuses this (\"the "
                    "last reduction must be a part of the first immediate instruction\")")
            ops.append(Op(st.kind, st.srcbuf, st.srcoff, st.dstbuf, st.dstoff, st.cnt,
                          pending, st.hasdep == 1, 0, st.index, st.line,
                          [st.srcoff] if st.kind == "re" else []))
            pending = []
        if st.kind == "re":
            reductions += 1
            fuse = (None if st.hasdep == 1 or reductions == EXEC_MAX_REDUCE_FUSION
                    else (st.dstbuf, st.dstoff, st.srcbuf))
        else:
            fuse = None
    # the kernel's step counter: +numDependencies-1 before a transmission that waits,
    # +numReductions-1 for a fused reduce (when cnt > 0), the flag, then +1
    counter = 0
    for op in ops:
        counter += max(len(op.waits) - 1, 0)
        if op.kind == "re" and op.cnt > 0:
            counter += len(op.reductions) - 1
        op.flag = counter
        counter += 1
    return ops


def simulate(prog: Program, inplace: bool | None = None) -> Result:
    """Run a program :func:`read` returned (see :mod:`.msccl_sim`); returns its ``Result``."""
    return run(prog, inplace)
