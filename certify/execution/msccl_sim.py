"""Run an MSCCL program chunk by chunk, as the executor would, and check its postcondition.

Model. Every chunk holds the set of contributions ``(rank, input chunk)`` it
contains; a reduce is the union of two disjoint sets (an overlap would count a
contribution twice and is reported). Sends on a connection (sender, receiver,
channel) are matched to receives in order. A transmission waits until every
dependency (t, s) is released: the flag of threadblock t, set only by its
``hasdep="1"`` transmissions to their step counter, is ≥ s (flags only grow).
A dependency that nothing ever releases is a deadlock, found before the run
and named; so is a state where nothing can move but steps remain.

A connection buffers at most :data:`SLOTS` messages (sends not yet received):
the executor's connections have NCCL_STEPS = 8 FIFO slots and every send step
takes at least one, so a sender that runs further ahead of its receiver waits.
A program that deadlocks with 8 slots deadlocks on the hardware (fewer slots,
as large messages use, only block more); one that runs with 8 may still need
care with very large chunks, which this model does not size.

Buffers are the user's (msccl_setup.cc: M = count × sizeMultiplier, one chunk
= M/nchunksperloop = C): allgather input C/N chunks and output C; reduce-
scatter input C, output C/N; allreduce, alltoall, broadcast and reduce C and C
(every rank passes count elements both ways). In-place calls
alias them as NCCL does and as msccl-tools compiles for (msccl/language/
collectives.py): allgather input = output[r·C/N …]; reduce-scatter output =
input[r·C/N …]; allreduce, alltoall, broadcast and reduce output = input. The scratch buffer
has the declared ``s_chunks``. An access must start below the declared size
(the executor's parser refuses it otherwise) and stay inside the real buffer.

Postconditions (C/N chunks per rank block, b = C/N): allgather: output chunk
j of every rank is {(j // b, j mod b)}; reduce-scatter: output chunk j of
rank r is {(q, r·b + j) : every rank q}; allreduce: output chunk j is
{(q, j) : every q}; alltoall: output chunk i·b + k of rank j is {(i, j·b + k)};
broadcast (attribute root="r"): output chunk j of every rank is {(r, j)}; reduce:
output chunk j of rank r is {(q, j) : every q} (other ranks' outputs are undefined).

The simulation runs one interleaving, so races are checked apart: an access
to a chunk another threadblock of the gpu wrote (or a write to one it read)
must be ordered after that step by program order and released dependencies,
transitively (vector clocks; ordering through messages is not counted, which
is conservative). The traffic matrix counts the chunks each rank sends to
each other rank.
"""

from __future__ import annotations

import bisect
import heapq
from collections import deque
from dataclasses import dataclass, field

from ..model import Verdict
from .program import RECVS, SENDS, Op, Program, Threadblock

Content = frozenset[tuple[int, int]]
Loc = tuple[int, str, int]

SLOTS = 8  # messages a connection holds before its sender waits (NCCL_STEPS)


@dataclass
class Result:
    verdict: Verdict
    traffic: dict[tuple[int, int], int] = field(default_factory=dict)  # chunks p -> q
    program: Program | None = None


class _Stop(Exception):
    pass


class _Run:
    def __init__(self, prog: Program, inplace: bool, verdict: Verdict) -> None:
        self.prog = prog
        self.inplace = inplace
        self.v = verdict
        self.per = prog.per_rank()
        self.real = dict(zip("io", prog.sizes()))
        self.store: dict[Loc, Content] = {}
        self.traffic: dict[tuple[int, int], int] = {}
        self.tbs = {(tb.gpu, tb.tbid): tb for tb in prog.tbs}
        self.flag = {key: -1 for key in self.tbs}
        self.clock: dict[tuple[int, int], dict[int, int]] = {key: {} for key in self.tbs}
        self.snaps: dict[tuple[int, int, int], dict[int, int]] = {}
        self.writer: dict[Loc, tuple[int, int]] = {}
        # per chunk, the latest read by each threadblock since the last write: a later read
        # by the same threadblock orders after its earlier ones, so one entry each suffices
        # (memory stays bounded by chunks × threadblocks however often a chunk is read)
        self.readers: dict[Loc, dict[int, int]] = {}
        self.queues: dict[tuple[int, int, int], deque[list[Content]]] = {}
        self.asleep: dict[tuple[str, int, int, int], list[int]] = {}  # blocked, by blocker
        self.sweep: list[int] = []  # heap: threadblocks (by index) still to visit this sweep
        self.later: set[int] = set()  # woken for the next sweep
        self.at = -1  # the threadblock running now
        # per threadblock, the flags its signalling transmissions set and their indices; the
        # flags grow along the threadblock (the kernel's step counter), so they are sorted
        self.signals: dict[tuple[int, int], tuple[list[int], list[int]]] = {}
        for key, tb in self.tbs.items():
            marks = [(op.flag, i) for i, op in enumerate(tb.ops) if op.signals]
            assert marks == sorted(marks), "the step counter only grows"
            self.signals[key] = ([f for f, _ in marks], [i for _, i in marks])
        for g in range(prog.ngpus):
            for j in range(self.real["i"]):
                self.store[self.alias(g, "i", j)] = frozenset({(g, j)})

    # -- buffers --------------------------------------------------------------------
    def alias(self, g: int, buf: str, off: int) -> Loc:
        if self.inplace:
            coll = self.prog.collective
            if coll == "allgather" and buf == "i":
                return (g, "o", g * self.per + off)
            if coll == "reduce-scatter" and buf == "o":
                return (g, "i", g * self.per + off)
            if coll in ("allreduce", "alltoall", "broadcast", "reduce") and buf == "o":
                return (g, "i", off)
        return (g, buf, off)

    def fail(self, msg: str) -> None:
        self.v.fail(msg)
        if len(self.v.reasons) >= 20:
            raise _Stop

    def bounds(self, tb: Threadblock, op: Op, buf: str, off: int, cnt: int, way: str) -> bool:
        g = tb.gpu
        declared = self.prog.chunks[g][buf]
        real = declared if buf == "s" else self.real[buf]
        if off < 0 or off >= declared and cnt > 0:
            self.fail(f"{op.where(g, tb.tbid)}: {way} {buf}[{off}], outside gpu {g}'s {buf} "
                      f"buffer as declared ({buf}_chunks={declared}); the executor refuses "
                      "such an offset")
            return False
        if off + cnt > real:
            self.fail(f"{op.where(g, tb.tbid)}: {way} {buf}[{off}:{off + cnt}], outside gpu "
                      f"{g}'s {buf} buffer, which holds {real} chunks for a "
                      f"{self.prog.collective} with nchunksperloop = {self.prog.nchunks}")
            return False
        return True

    def after(self, tb: Threadblock, op: Op, other: tuple[int, int], what: str) -> None:
        t, i = other
        if t != tb.tbid and self.clock[(tb.gpu, tb.tbid)].get(t, 0) <= i:
            step = self.tbs[(tb.gpu, t)].ops[i].step
            self.fail(f"{op.where(tb.gpu, tb.tbid)}: {what} gpu {tb.gpu} tb {t} step {step}, "
                      "but no dependency makes it wait for that step: a race between "
                      "concurrent threadblocks")

    def read(self, tb: Threadblock, op: Op, buf: str, off: int, cnt: int) -> list[Content] | None:
        if not self.bounds(tb, op, buf, off, cnt, "reads"):
            return None
        out = []
        for j in range(off, off + cnt):
            loc = self.alias(tb.gpu, buf, j)
            got = self.store.get(loc)
            if got is None:
                self.fail(f"{op.where(tb.gpu, tb.tbid)}: reads {buf}[{j}] on gpu {tb.gpu} "
                          "before it holds any data")
                return None
            if loc in self.writer:
                self.after(tb, op, self.writer[loc], f"reads {buf}[{j}], written by")
            self.readers.setdefault(loc, {})[tb.tbid] = tb.pc
            out.append(got)
        return out

    def write(self, tb: Threadblock, op: Op, buf: str, off: int, data: list[Content]) -> None:
        if not self.bounds(tb, op, buf, off, len(data), "writes"):
            return
        for j, d in enumerate(data):
            loc = self.alias(tb.gpu, buf, off + j)
            if loc in self.writer:
                self.after(tb, op, self.writer[loc], f"overwrites {buf}[{off + j}], written by")
            for r in self.readers.pop(loc, {}).items():
                self.after(tb, op, r, f"overwrites {buf}[{off + j}], still to be read by")
            self.writer[loc] = (tb.tbid, tb.pc)
            self.store[loc] = d

    def reduce(self, a: list[Content], b: list[Content], tb: Threadblock, op: Op,
               ) -> list[Content] | None:
        out = []
        for x, y in zip(a, b):
            if not x.isdisjoint(y):
                r, j = min(x & y)
                self.fail(f"{op.where(tb.gpu, tb.tbid)}: reduces the contribution of rank {r} "
                          f"chunk {j} twice")
                return None
            out.append(x | y)
        return out

    # -- one transmission -----------------------------------------------------------
    def blocker(self, tb: Threadblock, op: Op) -> tuple[str, int, int, int] | None:
        """None when ``op`` can run now; else the first thing it waits for: a flag
        ("flag", gpu, tb, 0), a free slot ("send", connection) or a message ("recv", …)."""
        for t, s in op.waits:
            if self.flag.get((tb.gpu, t), -1) < s:
                return ("flag", tb.gpu, t, 0)
        if op.kind in SENDS and self.full(tb):
            return ("send", tb.gpu, tb.send, tb.chan)
        if op.kind in RECVS and not self.queues.get(
                (tb.recv, tb.gpu, tb.chan)):
            return ("recv", tb.recv, tb.gpu, tb.chan)
        return None

    def wake(self, key: tuple[str, int, int, int]) -> None:
        """What ``key`` blocked may run now: later in this sweep, or in the next."""
        for i in self.asleep.pop(key, ()):
            if i > self.at:
                heapq.heappush(self.sweep, i)
            else:
                self.later.add(i)

    def full(self, tb: Threadblock) -> bool:
        """Whether tb's send connection already holds SLOTS messages not yet received."""
        return len(self.queues.get((tb.gpu, tb.send, tb.chan), ())) >= SLOTS

    def execute(self, tb: Threadblock, op: Op) -> None:
        mine = self.clock[(tb.gpu, tb.tbid)]
        for t, s in op.waits:
            for u, done in self.released_by(tb.gpu, t, s).items():
                mine[u] = max(mine.get(u, 0), done)
        kind = op.kind
        if kind in RECVS:
            data: list[Content] | None = self.queues[(tb.recv, tb.gpu, tb.chan)].popleft()
            assert data is not None
            self.wake(("send", tb.recv, tb.gpu, tb.chan))
            if len(data) != op.cnt:
                self.fail(f"{op.where(tb.gpu, tb.tbid)}: receives {op.cnt} chunks but the "
                          f"matching send from gpu {tb.recv} carried {len(data)}")
                data = None
            elif kind in ("rrc", "rrs", "rrcs"):
                own = self.read(tb, op, op.srcbuf, op.srcoff, op.cnt)
                data = None if own is None else self.reduce(own, data, tb, op)
            if data is not None:
                if kind in ("r", "rcs", "rrc", "rrcs"):
                    self.write(tb, op, op.dstbuf, op.dstoff, data)
                if kind in ("rcs", "rrs", "rrcs"):
                    self.send(tb, data)
        elif kind == "s":
            data = self.read(tb, op, op.srcbuf, op.srcoff, op.cnt)
            if data is not None:
                self.send(tb, data)
        elif kind == "cpy":
            data = self.read(tb, op, op.srcbuf, op.srcoff, op.cnt)
            if data is not None:
                self.write(tb, op, op.dstbuf, op.dstoff, data)
        elif kind == "re":
            acc = self.read(tb, op, op.dstbuf, op.dstoff, op.cnt)
            for off in op.reductions:  # fused: dst += src[off] for each, with the last cnt
                src = self.read(tb, op, op.srcbuf, off, op.cnt) if acc is not None else None
                acc = None if src is None or acc is None else self.reduce(acc, src, tb, op)
            if acc is not None:
                self.write(tb, op, op.dstbuf, op.dstoff, acc)
        tb.pc += 1
        mine[tb.tbid] = tb.pc
        if op.signals:
            self.flag[(tb.gpu, tb.tbid)] = max(self.flag[(tb.gpu, tb.tbid)], op.flag)
            self.wake(("flag", tb.gpu, tb.tbid, 0))
            self.snaps[(tb.gpu, tb.tbid, tb.pc - 1)] = dict(mine)

    def released_by(self, g: int, t: int, s: int) -> dict[int, int]:
        """The clock of the first signalling transmission of tb t whose flag is ≥ s: all
        a released wait may assume."""
        flags, where = self.signals[(g, t)]
        k = bisect.bisect_left(flags, s)
        return self.snaps.get((g, t, where[k]), {}) if k < len(flags) else {}

    def send(self, tb: Threadblock, data: list[Content]) -> None:
        self.queues.setdefault((tb.gpu, tb.send, tb.chan), deque()).append(data)
        self.wake(("recv", tb.gpu, tb.send, tb.chan))
        key = (tb.gpu, tb.send)
        self.traffic[key] = self.traffic.get(key, 0) + len(data)

    # -- the whole program ----------------------------------------------------------
    def never_released(self) -> None:
        """Waits that no step ever releases: the GPU would spin on them forever."""
        for tb in self.prog.tbs:
            for op in tb.ops:
                for t, s in op.waits:
                    other = self.tbs.get((tb.gpu, t))
                    flags = self.signals.get((tb.gpu, t), ([], []))[0]  # sorted
                    if other is None:
                        self.fail(f"deadlock: {op.where(tb.gpu, tb.tbid)} waits for "
                                  f"threadblock {t}, which gpu {tb.gpu} does not have: it "
                                  "would spin forever")
                    elif not flags or flags[-1] < s:
                        late = [st.index for st in other.steps if st.index >= s
                                and st.hasdep == 1 and st.kind != "nop"]
                        why = (f"no step ≥ {s} of tb {t} has hasdep=\"1\"" if not late else
                               f"step {late[0]} of tb {t} signals, but the kernel's step "
                               f"counter is then only {max(o.flag for o in other.ops)}: a nop "
                               "without a dependency is not counted")
                        self.fail(f"deadlock: {op.where(tb.gpu, tb.tbid)} waits for gpu "
                                  f"{tb.gpu} tb {t} step {s}, which is never signalled "
                                  f"({why}): the executor would spin forever")

    def run(self) -> bool:
        """Run to the end or to a deadlock; False when a wait can never be released (then
        nothing is run)."""
        self.never_released()
        if not self.v.ok:
            return False
        # Sweeps over the threadblocks in program order, each running as far as it can. A
        # blocked one sleeps on what blocks it (asleep) until that changes (wake), so a sweep
        # visits only those that may move: the order is that of visiting all of them.
        tbs = self.prog.tbs
        self.sweep = [i for i, tb in enumerate(tbs) if tb.ops]
        while self.sweep:
            while self.sweep:
                self.at = heapq.heappop(self.sweep)
                tb = tbs[self.at]
                while tb.pc < len(tb.ops):
                    key = self.blocker(tb, tb.ops[tb.pc])
                    if key is not None:
                        self.asleep.setdefault(key, []).append(self.at)
                        break
                    self.execute(tb, tb.ops[tb.pc])
            self.sweep, self.later, self.at = sorted(self.later), set(), -1
        active = [tb for tb in tbs if tb.pc < len(tb.ops)]
        if active:  # nothing can move, yet steps remain
            stuck = "; ".join(self.stuck(tb) for tb in active[:3])
            self.fail(f"deadlock: no step can run; {stuck}"
                      + (f"; and {len(active) - 3} more" if len(active) > 3 else ""))
        for (p, q, ch), left in self.queues.items():
            if left:
                self.fail(f"gpu {p} sends {len(left)} message(s) to gpu {q} on channel {ch} "
                          "that are never received")
        return True

    def stuck(self, tb: Threadblock) -> str:
        op = tb.ops[tb.pc]
        waiting = [f"gpu {tb.gpu} tb {t} step {s}" for t, s in op.waits
                   if self.flag.get((tb.gpu, t), -1) < s]
        if waiting:
            what = f"waits for {', '.join(waiting)}"
        elif op.kind in SENDS and self.full(tb):
            what = (f"waits to send to gpu {tb.send} on channel {tb.chan}, whose {SLOTS} "
                    "buffer slots hold messages not yet received")
        else:
            what = f"waits to receive from gpu {tb.recv} on channel {tb.chan}"
        return f"{op.where(tb.gpu, tb.tbid)} {what}"

    def postcondition(self) -> None:
        prog, per = self.prog, self.per
        n, coll = prog.ngpus, prog.collective
        declared_name = {"i": "i_chunks", "o": "o_chunks"}
        sums: dict[int, Content] = {}
        for g in range(n):
            for buf in "io":
                d = prog.chunks[g][buf]
                if d and d != self.real[buf]:
                    self.fail(f"gpu {g}: {declared_name[buf]} = {d}, but a {coll} with "
                              f"nchunksperloop = {prog.nchunks} on {n} ranks has "
                              f"{self.real[buf]} {'input' if buf == 'i' else 'output'} "
                              f"chunks per rank (one chunk = M/{prog.nchunks})")
            for j in range(self.real["o"]):
                if coll == "reduce" and g != prog.root:
                    break  # only the root's output is defined
                got = self.store.get(self.alias(g, "o", j))
                if coll == "broadcast":
                    if got != frozenset({(prog.root, j)}):
                        self.fail(f"gpu {g} output chunk {j} should hold the root "
                                  f"{prog.root}'s input chunk {j}; it holds {_show(got)}")
                elif coll == "allgather":
                    want = frozenset({(j // per, j % per)})
                    if got != want:
                        self.fail(f"gpu {g} output chunk {j} should hold rank {j // per}'s "
                                  f"input chunk {j % per}; it holds {_show(got)}")
                elif coll == "alltoall":
                    src, k = divmod(j, per)
                    want = frozenset({(src, g * per + k)})
                    if got != want:
                        self.fail(f"gpu {g} output chunk {j} should hold rank {src}'s input "
                                  f"chunk {g * per + k} (its block for rank {g}); it holds "
                                  f"{_show(got)}")
                else:
                    c = j if coll in ("allreduce", "reduce") else g * per + j
                    if c not in sums:  # built once per chunk, not once per gpu
                        sums[c] = frozenset((q, c) for q in range(n))
                    want = sums[c]
                    if got != want:
                        self.fail(f"gpu {g} output chunk {j} should be the sum of chunk {c} "
                                  f"of all {n} ranks; {_missing(got, want)}")


def run(prog: Program, inplace: bool | None = None) -> Result:
    """Check ``prog`` in every buffer mode the executor may run it in (or only ``inplace``).

    The verdict fails for anything the executor refuses to load, deadlocks, races, and
    outputs that break the collective's postcondition; ``traffic`` is that of the first
    mode run.
    """
    v = Verdict(f"MSCCL {prog.collective} program {prog.name!r}")
    res = Result(v, program=prog)
    for r in prog.refusals:
        v.fail(f"the MSCCL executor refuses the program: {r}")
    v.facts["notes"] = list(prog.notes)
    if not v.ok:
        return res
    modes = [inplace] if inplace is not None else (prog.modes() or [False])
    for i, mode in enumerate(modes):
        for tb in prog.tbs:
            tb.pc = 0
        label = Verdict(v.check)
        sim = _Run(prog, mode, label)
        try:
            if sim.run():
                sim.postcondition()
        except _Stop:
            pass
        prefix = ("in-place: " if mode else "out-of-place: ") if len(modes) > 1 else ""
        v.absorb(label, prefix)
        if i == 0:
            res.traffic = sim.traffic
    v.facts["modes"] = ["in-place" if m else "out-of-place" for m in modes]
    return res


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
