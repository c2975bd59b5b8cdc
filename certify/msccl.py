"""MSCCL algorithm XML: read, simulate chunk by chunk, check the postcondition.

Format (microsoft/msccl, msccl-tools)::

    <algo name=".." nchunksperloop="C" ngpus="N" coll="allgather" inplace="0" ..>
      <gpu id="g" i_chunks=".." o_chunks=".." s_chunks="..">
        <tb id="t" send="peer or -1" recv="peer or -1" chan="c">
          <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1"
                depid="-1" deps="-1" hasdep="0"/>

Step types: ``s`` send, ``r`` receive, ``rcs`` receive-copy-send, ``rrc``
receive-reduce-copy, ``rrs`` receive-reduce-send, ``rrcs`` receive-reduce-
copy-send, ``cpy`` copy, ``re`` reduce, ``nop``. Buffers ``i``, ``o``, ``s``.

Model. Every chunk holds a set of contributions ``(rank, input chunk)``; a
reduce is the union of two disjoint sets (overlap would count a contribution
twice and is reported). Sends on a connection (sender, receiver, channel) are
matched to receives in order; a step waits for its dependency (``depid``,
``deps``: threadblock and step on the same GPU). The program is run to
completion (a state where nothing can move but steps remain is a deadlock).

Postconditions (C = nchunksperloop): allgather: output chunk j of every rank
is {(j // i_chunks, j mod i_chunks)}; allreduce: output chunk j of every rank
is {(q, j) : every rank q}; reduce-scatter: output chunk j of rank r is
{(q, r·o_chunks + j) : every rank q}. In-place programs alias the input
inside the output (allgather, allreduce) or the output inside the input
(reduce-scatter), as MSCCL does.

The traffic matrix counts the chunks each rank sends to each other rank; one
chunk is 1/C of the collective's data size M.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from .base import InputError, Verdict
from .xmlsafe import Element, parse

MAX_STEPS = 2_000_000
MAX_CHUNKS = 1_000_000
COLLS = {"allgather": "allgather", "allreduce": "allreduce", "reduce_scatter": "reduce-scatter",
         "reducescatter": "reduce-scatter", "reduce-scatter": "reduce-scatter"}

Content = frozenset[tuple[int, int]]


@dataclass
class Step:
    kind: str
    srcbuf: str
    srcoff: int
    dstbuf: str
    dstoff: int
    cnt: int
    depid: int
    deps: int
    where: str


@dataclass
class Threadblock:
    gpu: int
    tbid: int
    send: int
    recv: int
    chan: int
    steps: list[Step]
    pc: int = 0


@dataclass
class Program:
    name: str
    collective: str
    ngpus: int
    nchunks: int
    inplace: bool
    chunks: dict[int, dict[str, int]]  # gpu -> {"i": n, "o": n, "s": n}
    tbs: list[Threadblock]


@dataclass
class Result:
    verdict: Verdict
    traffic: dict[tuple[int, int], int] = field(default_factory=dict)  # chunks p -> q
    program: Program | None = None


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
    root = parse(text, origin, max_per_tag={"step": MAX_STEPS, "gpu": 100_000,
                                            "tb": 1_000_000})
    if root.tag != "algo":
        raise InputError(f"{origin}: the root element is <{root.tag}>, expected <algo>")
    coll_raw = root.attrs.get("coll", "")
    coll = COLLS.get(coll_raw.lower())
    if coll is None:
        raise InputError(f"{origin}: coll={coll_raw!r} is not supported; collcert audits "
                         "allgather, reduce_scatter and allreduce programs")
    ngpus = _int(root, "ngpus", low=2, high=100_000)
    nchunks = _int(root, "nchunksperloop", low=1, high=MAX_CHUNKS)
    inplace = root.attrs.get("inplace", "0").strip() == "1"
    chunks: dict[int, dict[str, int]] = {}
    tbs: list[Threadblock] = []
    total = 0
    for g in root.children:
        if g.tag != "gpu":
            raise InputError(f"{origin}: unexpected {g.where()} in <algo>; expected <gpu>")
        gid = _int(g, "id", low=0, high=ngpus - 1)
        if gid in chunks:
            raise InputError(f"{origin}: {g.where()}: gpu {gid} appears twice")
        chunks[gid] = {b: _int(g, f"{b}_chunks", 0, 0, MAX_CHUNKS) for b in "ios"}
        seen_tb: set[int] = set()
        seen_conn: dict[tuple[str, int, int], int] = {}
        for tb in g.children:
            if tb.tag != "tb":
                raise InputError(f"{origin}: unexpected {tb.where()} in <gpu>; expected <tb>")
            tid = _int(tb, "id", low=0, high=100_000)
            if tid in seen_tb:
                raise InputError(f"{origin}: {tb.where()}: threadblock {tid} of gpu {gid} "
                                 "appears twice")
            seen_tb.add(tid)
            steps: list[Step] = []
            for st in tb.children:
                if st.tag != "step":
                    raise InputError(f"{origin}: unexpected {st.where()} in <tb>")
                total += 1
                if total > MAX_STEPS:
                    raise InputError(f"{origin}: more than {MAX_STEPS} steps")
                idx = _int(st, "s", low=0, high=MAX_STEPS)
                if idx != len(steps):
                    raise InputError(f"{origin}: {st.where()}: step s={idx} where s="
                                     f"{len(steps)} was expected (steps are numbered 0, 1, …)")
                kind = st.attrs.get("type", "")
                if kind not in ("s", "r", "rcs", "rrc", "rrs", "rrcs", "cpy", "re", "nop"):
                    raise InputError(f"{origin}: {st.where()}: unknown step type {kind!r}")
                steps.append(Step(
                    kind, st.attrs.get("srcbuf", "i"), _int(st, "srcoff", 0, -1, MAX_CHUNKS),
                    st.attrs.get("dstbuf", "o"), _int(st, "dstoff", 0, -1, MAX_CHUNKS),
                    _int(st, "cnt", 1, 0, MAX_CHUNKS), _int(st, "depid", -1, -1, 100_000),
                    _int(st, "deps", -1, -1, MAX_STEPS),
                    f"gpu {gid} tb {tid} step {idx} (line {st.line})"))
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
            tbs.append(block)
    total_chunks = sum(sum(c.values()) for c in chunks.values())
    reducing = coll != "allgather"
    if total_chunks > MAX_CHUNKS * 10 or (reducing and total_chunks * ngpus > 50_000_000):
        raise InputError(f"{origin}: {total_chunks} buffer chunks on {ngpus} gpus is too large "
                         "to simulate chunk by chunk")
    missing = [g for g in range(ngpus) if g not in chunks]
    if missing:
        raise InputError(f"{origin}: ngpus={ngpus} but gpus {missing[:5]} have no <gpu> element")
    return Program(root.attrs.get("name", ""), coll, ngpus, nchunks, inplace, chunks, tbs)


def simulate(prog: Program) -> Result:
    """Run the program; check the postcondition; count traffic."""
    v = Verdict(f"MSCCL {prog.collective} program {prog.name!r}")
    res = Result(v, program=prog)
    n = prog.ngpus
    ic = {g: prog.chunks[g]["i"] for g in range(n)}
    oc = {g: prog.chunks[g]["o"] for g in range(n)}
    store: dict[tuple[int, str, int], Content] = {}

    def alias(g: int, buf: str, off: int) -> tuple[int, str, int]:
        if prog.inplace:
            if prog.collective == "allgather" and buf == "i":
                return (g, "o", g * ic[g] + off)
            if prog.collective == "allreduce" and buf == "i":
                return (g, "o", off)
            if prog.collective == "reduce-scatter" and buf == "o":
                return (g, "i", g * oc[g] + off)
        return (g, buf, off)

    def size(g: int, buf: str) -> int:
        return prog.chunks[g].get(buf, 0)

    for g in range(n):
        for j in range(ic[g]):
            store[alias(g, "i", j)] = frozenset({(g, j)})

    class Stop(Exception):
        pass

    def fail(msg: str) -> None:
        v.fail(msg)
        if len(v.reasons) >= 20:
            raise Stop

    # Races. Threadblocks run concurrently; only program order, dependencies (depid/deps)
    # and, transitively, what those waited for order their steps. clock[tb][t] = how many
    # steps of threadblock t (same gpu) tb has waited for; snaps keeps a threadblock's
    # clock after each step some dependency names. Every access to a chunk that another
    # threadblock of the gpu wrote, and every write to a chunk another one read since, must
    # come after that step. (Ordering through messages is not tracked: conservative.)
    clock: dict[tuple[int, int], dict[int, int]] = {(tb.gpu, tb.tbid): {} for tb in prog.tbs}
    named = {(tb.gpu, st.depid, st.deps) for tb in prog.tbs for st in tb.steps if st.depid >= 0}
    snaps: dict[tuple[int, int, int], dict[int, int]] = {}
    writer: dict[tuple[int, str, int], tuple[int, int]] = {}
    readers: dict[tuple[int, str, int], list[tuple[int, int]]] = {}

    def after(tb: Threadblock, other: tuple[int, int], where: str, what: str) -> None:
        t, i = other
        if t != tb.tbid and clock[(tb.gpu, tb.tbid)].get(t, 0) <= i:
            fail(f"{where}: {what} gpu {tb.gpu} tb {t} step {i}, but no dependency makes it "
                 "wait for that step: a race between concurrent threadblocks")

    def read_chunks(tb: Threadblock, buf: str, off: int, cnt: int,
                    where: str) -> list[Content] | None:
        g = tb.gpu
        if buf not in ("i", "o", "s") or off < 0 or off + cnt > size(g, buf):
            fail(f"{where}: reads {buf}[{off}:{off + cnt}] outside gpu {g}'s {buf} buffer "
                 f"of {size(g, buf)} chunks")
            return None
        out = []
        for j in range(off, off + cnt):
            loc = alias(g, buf, j)
            got = store.get(loc)
            if got is None:
                fail(f"{where}: reads {buf}[{j}] on gpu {g} before it holds any data")
                return None
            if loc in writer:
                after(tb, writer[loc], where, f"reads {buf}[{j}], written by")
            readers.setdefault(loc, []).append((tb.tbid, tb.pc))
            out.append(got)
        return out

    def write_chunks(tb: Threadblock, buf: str, off: int, data: list[Content],
                     where: str) -> None:
        g = tb.gpu
        if buf not in ("i", "o", "s") or off < 0 or off + len(data) > size(g, buf):
            fail(f"{where}: writes {buf}[{off}:{off + len(data)}] outside gpu {g}'s {buf} "
                 f"buffer of {size(g, buf)} chunks")
            return
        for j, d in enumerate(data):
            loc = alias(g, buf, off + j)
            if loc in writer:
                after(tb, writer[loc], where, f"overwrites {buf}[{off + j}], written by")
            for r in readers.pop(loc, []):
                after(tb, r, where, f"overwrites {buf}[{off + j}], still to be read by")
            writer[loc] = (tb.tbid, tb.pc)
            store[loc] = d

    def reduce(a: list[Content], b: list[Content], where: str) -> list[Content] | None:
        out = []
        for x, y in zip(a, b):
            both = x & y
            if both:
                r, j = min(both)
                fail(f"{where}: reduces the contribution of rank {r} chunk {j} twice")
                return None
            out.append(x | y)
        return out

    queues: dict[tuple[int, int, int], deque[list[Content]]] = {}
    by_gpu: dict[tuple[int, int], Threadblock] = {(tb.gpu, tb.tbid): tb for tb in prog.tbs}
    for tb in prog.tbs:
        for st in tb.steps:
            if st.kind in ("s", "rcs", "rrs", "rrcs") and tb.send < 0:
                raise InputError(f"MSCCL XML: {st.where} sends, but its threadblock has "
                                 "send=-1")
            if st.kind in ("r", "rcs", "rrc", "rrs", "rrcs") and tb.recv < 0:
                raise InputError(f"MSCCL XML: {st.where} receives, but its threadblock has "
                                 "recv=-1")
            if st.depid >= 0 and (tb.gpu, st.depid) not in by_gpu:
                raise InputError(f"MSCCL XML: {st.where} depends on threadblock {st.depid}, "
                                 f"which gpu {tb.gpu} does not have")

    def send(tb: Threadblock, data: list[Content]) -> None:
        queues.setdefault((tb.gpu, tb.send, tb.chan), deque()).append(data)
        key = (tb.gpu, tb.send)
        res.traffic[key] = res.traffic.get(key, 0) + len(data)

    try:
        active = [tb for tb in prog.tbs if tb.steps]
        while active:
            moved = False
            still = []
            for tb in active:
                while tb.pc < len(tb.steps):
                    st = tb.steps[tb.pc]
                    mine = clock[(tb.gpu, tb.tbid)]
                    if st.depid >= 0:
                        dep = by_gpu[(tb.gpu, st.depid)]
                        if dep.pc <= st.deps:
                            break
                        for t, done in snaps.get((tb.gpu, st.depid, st.deps), {}).items():
                            mine[t] = max(mine.get(t, 0), done)
                    data: list[Content] | None = None
                    if st.kind in ("r", "rcs", "rrc", "rrs", "rrcs"):
                        q = queues.get((tb.recv, tb.gpu, tb.chan))
                        if not q:
                            break
                        data = q.popleft()
                        if len(data) != st.cnt:
                            fail(f"{st.where}: receives {st.cnt} chunks but the matching send "
                                 f"from gpu {tb.recv} carried {len(data)}")
                            data = None
                        elif st.kind in ("rrc", "rrs", "rrcs"):
                            own = read_chunks(tb, st.srcbuf, st.srcoff, st.cnt, st.where)
                            data = None if own is None else reduce(own, data, st.where)
                        if data is not None:
                            if st.kind in ("r", "rcs", "rrc", "rrcs"):
                                write_chunks(tb, st.dstbuf, st.dstoff, data, st.where)
                            if st.kind in ("rcs", "rrs", "rrcs"):
                                send(tb, data)
                    elif st.kind == "s":
                        data = read_chunks(tb, st.srcbuf, st.srcoff, st.cnt, st.where)
                        if data is not None:
                            send(tb, data)
                    elif st.kind == "cpy":
                        data = read_chunks(tb, st.srcbuf, st.srcoff, st.cnt, st.where)
                        if data is not None:
                            write_chunks(tb, st.dstbuf, st.dstoff, data, st.where)
                    elif st.kind == "re":
                        a = read_chunks(tb, st.srcbuf, st.srcoff, st.cnt, st.where)
                        b = read_chunks(tb, st.dstbuf, st.dstoff, st.cnt, st.where)
                        if a is not None and b is not None:
                            red = reduce(b, a, st.where)
                            if red is not None:
                                write_chunks(tb, st.dstbuf, st.dstoff, red, st.where)
                    tb.pc += 1
                    mine[tb.tbid] = tb.pc
                    if (tb.gpu, tb.tbid, tb.pc - 1) in named:
                        snaps[(tb.gpu, tb.tbid, tb.pc - 1)] = dict(mine)
                    moved = True
                if tb.pc < len(tb.steps):
                    still.append(tb)
            active = still
            if not moved and active:
                stuck = ", ".join(tb.steps[tb.pc].where for tb in active[:3])
                fail(f"deadlock: no step can run; waiting: {stuck}"
                     + (f" and {len(active) - 3} more" if len(active) > 3 else ""))
                break
        left = sum(len(q) for q in queues.values())
        if left:
            fail(f"{left} sent message(s) are never received")
        _postcondition(prog, store, alias, fail)
    except Stop:
        pass
    return res


def _postcondition(prog: Program, store: dict[tuple[int, str, int], Content],
                   al: Callable[[int, str, int], tuple[int, str, int]],
                   report: Callable[[str], None]) -> None:
    n = prog.ngpus
    everyone = range(n)
    c = prog.nchunks
    for g in everyone:
        ic, oc = prog.chunks[g]["i"], prog.chunks[g]["o"]
        # traffic is counted in chunks of M / nchunksperloop: the buffers must hold all of M
        full, name = (ic, "i_chunks") if prog.collective == "reduce-scatter" else (oc, "o_chunks")
        if full != c:
            report(f"gpu {g}: {name} = {full}, but nchunksperloop = {c}: the "
                   f"{prog.collective} data M must be exactly {c} chunks (one chunk = M/{c})")
            continue
        if prog.collective == "allreduce" and ic != oc:
            report(f"gpu {g}: i_chunks = {ic} but o_chunks = {oc}; an allreduce needs them equal")
            continue
        if prog.collective == "reduce-scatter" and oc * n != ic:
            report(f"gpu {g}: o_chunks = {oc}, but a reduce-scatter of {ic} input chunks on "
                   f"{n} ranks needs {ic}/{n} output chunks per rank")
            continue
        if prog.collective == "allgather":
            if oc != ic * n:
                report(f"gpu {g}: o_chunks = {oc}, but an allgather of {ic} input chunks per "
                       f"rank needs {ic * n}")
                continue
            for j in range(oc):
                want = frozenset({(j // ic, j % ic)})
                got = store.get(al(g, "o", j))
                if got != want:
                    report(f"gpu {g} output chunk {j} should hold rank {j // ic}'s input chunk "
                           f"{j % ic}; it holds {_show(got)}")
        elif prog.collective == "allreduce":
            for j in range(oc):
                want = frozenset((q, j) for q in everyone)
                got = store.get(al(g, "o", j))
                if got != want:
                    report(f"gpu {g} output chunk {j} should be the sum of chunk {j} of all "
                           f"{n} ranks; {_missing(got, want)}")
        else:
            for j in range(oc):
                want = frozenset((q, g * oc + j) for q in everyone)
                got = store.get(al(g, "o", j))
                if got != want:
                    report(f"gpu {g} output chunk {j} should be the sum of chunk {g * oc + j} of "
                           f"all {n} ranks; {_missing(got, want)}")


def _show(got: Content | None) -> str:
    if not got:
        return "nothing"
    items = sorted(got)[:3]
    text = ", ".join(f"rank {r} chunk {j}" for r, j in items)
    return text + (" …" if len(got) > 3 else "")


def _missing(got: Content | None, want: Content) -> str:
    if not got:
        return "it holds nothing"
    lack = sorted(want - got)
    extra = sorted(got - want)
    parts = []
    if lack:
        parts.append(f"it lacks rank {lack[0][0]}'s contribution" +
                     (f" and {len(lack) - 1} more" if len(lack) > 1 else ""))
    if extra:
        parts.append(f"it wrongly holds rank {extra[0][0]} chunk {extra[0][1]}")
    return "; ".join(parts)
