"""Run an MSCCL++ execution plan as its executor would, and check its postcondition.

The executor's kernel (microsoft/mscclpp ``src/core/include/execution_kernel.hpp``,
``executionKernel``) runs every threadblock of a rank through its ops in order;
the ops, as its ``handle*`` functions do them:

* ``put`` / ``pws`` / ``pwsf``: copy each local source range into the remote
  buffer of the matching destination (memory channels: direct stores; port
  channels: the proxy's transfer on the op's channel, then for ``pws``/``pwsf``
  a signal on it); ``get``: copy a remote range into a local one (as
  ``handleGet`` indexes them: the local write at the source's index, the
  remote read at the destination's);
* ``copy``; ``re`` / ``res``: the first source plus the other (local) sources
  into the first destination, ``res`` also storing the result into remote
  destinations; ``rre`` / ``rres``: the same with remote sources;
* ``signal`` / ``rlxsignal`` on a channel add one to the semaphore its other end
  waits on; ``wait`` / ``rlxwait`` wait for one more signal than already
  consumed (``MemoryDevice2DeviceSemaphore``; a port channel's through the proxy);
* ``barrier``: the ``num_threadblocks`` threadblocks of the rank that reach
  barrier ``barrier_id`` wait for each other (``DeviceSyncer``);
  ``sem_release`` / ``sem_acquire``: a device semaphore of the rank
  (``semaphores``' ``init_value``), acquire waiting while it is zero;
* ``nop`` (``__syncthreads``) and ``flush`` move no data.

Model. Every cell (a chunk, or a part of one for thread block groups) holds the
contributions ``(rank, input cell)`` it contains; a reduction is a union of
disjoint sets. One interleaving is run (threadblocks in order, each as far as it
can go); ordering is checked apart with vector clocks: an access to a cell
another threadblock wrote (or a write to one it read) must be ordered after it by
program order, signal→wait, barriers, device semaphores or an LL packet's flag,
else it is a race. A port put lands when issued; a relaxed signal orders data
like a signal (docs/mscclpp.md). Stuck ops: a deadlock, named. Then a second
call runs on the state the first left (semaphores, channels, scratch; each
rank's kernel after its previous one, the user's new inputs between them), so
leftover signals and a rank running ahead into a peer's buffers show up.
Buffers and postconditions are the user's (docs/mscclpp.md), as in
:mod:`.msccl_sim`, plus broadcast and reduce.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from ..model import Verdict
from . import mscclpp_cells as mc
from .mscclpp import Op, Plan, Ref
from .mscclpp_cells import Clock, Content, Key, Loc


@dataclass
class Result:
    verdict: Verdict
    traffic: dict[tuple[int, int], int] = field(default_factory=dict)  # cells p -> q
    plan: Plan | None = None


class _Run:
    def __init__(self, plan: Plan, v: Verdict) -> None:
        self.plan, self.v = plan, v
        g = plan.grain
        # "Pi", "Po", "Ps": the LL packet areas of the buffers (data and flag, at twice the
        # offset), apart from their plain use
        self.size = [{p + b: c[b] * g for b in "ios" for p in ("", "P")} for c in plan.chunks]
        self.pclock: dict[Loc, Clock] = {}  # a packet's writer's clock, joined by its reader
        self.per = plan.chunks[0]["i" if plan.collective == "allgather" else "o"] * g
        self.store: dict[Loc, Content] = {}
        self.writer: dict[Loc, tuple[Key, int, str]] = {}
        self.readers: dict[Loc, dict[Key, int]] = {}
        self.clock: dict[Key, Clock] = {k: {} for k in plan.tbs}
        self.pc: dict[Key, int] = {k: 0 for k in plan.tbs}
        self.inbox: dict[tuple[int, str, int], deque[Clock]] = {}
        self.sem: dict[tuple[int, int], deque[Clock]] = {
            (r, s): deque({} for _ in range(init)) for r, inits in plan.semaphores.items()
            for s, init in enumerate(inits)}
        self.arrived: dict[tuple[int, int], dict[Key, Clock]] = {}
        self.released: dict[Key, Clock] = {}
        self.traffic: dict[tuple[int, int], int] = {}
        self.lost: set[tuple[int, str, int]] = set()
        for r in range(plan.ngpus):
            for j in range(self.size[r]["i"]):
                self.store[self.loc(r, "i", j)] = frozenset({(r, j)})
        # the next call: its inputs are the cells shift.., its op stamps base + pos + 1
        self.call, self.base, self.shift = 1, 0, 0
        self.stuck = False
        self.span = max((len(ops) for ops in plan.tbs.values()), default=0) + 2

    def loc(self, r: int, buf: str, j: int) -> Loc:
        if buf in ("s", "Ps") and self.call == 2 and self.plan.double_scratch:
            return (r, buf + "'", j)  # the other half (executor.cc: scratchOffset by flag)
        if buf.startswith("P"):
            q, b, k = self.loc(r, buf[1:], j)
            return (q, "P" + b, k)
        if self.plan.inplace:
            coll = self.plan.collective
            if coll == "allgather" and buf == "i":
                return (r, "o", r * self.per + j)
            if coll == "reduce-scatter" and buf == "o":
                return (r, "i", r * self.per + j)
            if coll == "allreduce" and buf == "o":
                return (r, "i", j)
            if r == self.plan.root and buf == "o":
                return (r, "i", j)
        return (r, buf, j)

    def cells(self, op: Op, ref: Ref) -> range | None:
        g = self.plan.grain
        t, parts = op.part
        n = ref.size * g // parts
        lo = ref.index * g + t * n
        if (ref.index + ref.size) * g > self.size[ref.rank][ref.buf]:
            have = self.plan.chunks[ref.rank][ref.buf[-1]]
            self.v.fail(f"{op.where()}: {ref.buf}[{ref.index}:{ref.index + ref.size}] of rank "
                        f"{ref.rank} is outside that buffer, which holds {have} chunks")
            return None
        return range(lo, lo + n)

    # -- data ----------------------------------------------------------------------
    def ordered(self, op: Op, who: Key, at: int, what: str) -> None:
        me = (op.rank, op.tb)
        if who != me and self.clock[me].get(who, 0) < at:
            self.v.fail(f"{op.where()}: {what} rank {who[0]} tb {who[1]} op {at - 1}, and "
                        "nothing orders the two (no signal/wait, barrier or semaphore "
                        "between them): a race")

    def read(self, op: Op, ref: Ref, wait: bool = False) -> list[Content] | None:
        """The cells of ``ref``; ``wait``: packets read as LL does, waiting for their flag
        (which orders the read after the packet's write)."""
        span = self.cells(op, ref)
        if span is None:
            return None
        out: list[Content] = []
        for j in span:
            loc = self.loc(ref.rank, ref.buf, j)
            got = self.store.get(loc)
            where = f"{mc.buf_name(ref.buf)}[{mc.at(self.plan, j)}] of rank {ref.rank}"
            if got is None:
                self.v.fail(f"{op.where()}: reads {where} before it holds any data")
                return None
            if wait:
                mc.join(self.clock[(op.rank, op.tb)], self.pclock[loc])
            if loc in self.writer:
                who, at, _ = self.writer[loc]
                self.ordered(op, who, at, f"reads {where}, written by")
            self.readers.setdefault(loc, {})[(op.rank, op.tb)] = self.base + op.pos + 1
            out.append(got)
        return out

    def write(self, op: Op, ref: Ref, data: list[Content]) -> None:
        span = self.cells(op, ref)
        if span is None:
            return
        if len(span) != len(data):
            self.v.fail(f"{op.where()}: writes {len(data)} chunk cells into a range of "
                        f"{len(span)}")
            return
        for j, d in zip(span, data):
            loc = self.loc(ref.rank, ref.buf, j)
            where = f"{mc.buf_name(ref.buf)}[{mc.at(self.plan, j)}] of rank {ref.rank}"
            if loc in self.writer:
                who, at, _ = self.writer[loc]
                self.ordered(op, who, at, f"overwrites {where}, written by")
            for who, at in self.readers.pop(loc, {}).items():
                self.ordered(op, who, at, f"overwrites {where}, still to be read by")
            self.writer[loc] = ((op.rank, op.tb), self.base + op.pos + 1, op.where())
            self.store[loc] = d
            if ref.buf.startswith("P"):
                self.pclock[loc] = dict(self.clock[(op.rank, op.tb)])
        if ref.rank != op.rank:
            self.move(op.rank, ref.rank, len(data))

    def move(self, p: int, q: int, n: int) -> None:
        if self.call == 1:
            self.traffic[(p, q)] = self.traffic.get((p, q), 0) + n

    def reduce(self, op: Op, a: list[Content], b: list[Content]) -> list[Content] | None:
        out = []
        for x, y in zip(a, b):
            if not x.isdisjoint(y):
                r, j = min(x & y)
                self.v.fail(f"{op.where()}: adds the contribution of rank {r} input "
                            f"{mc.at(self.plan, j)} twice")
                return None
            out.append(x | y)
        return out

    def fetch(self, op: Op, ref: Ref) -> list[Content] | None:
        data = self.read(op, ref)
        if data is not None and ref.rank != op.rank:
            self.move(ref.rank, op.rank, len(data))
        return data

    def data_op(self, op: Op) -> None:
        name = op.name
        if name in mc.PACKET_OPS:
            self.packet_op(op)
        elif name in ("put", "pws", "pwsf"):
            if len(op.src) != len(op.dst):
                self.v.fail(f"{op.where()}: {len(op.src)} sources for {len(op.dst)} "
                            "destinations")
                return
            for i, (s, d) in enumerate(zip(op.src, op.dst)):
                if op.chan_type == "port" and not self.port_ok(op, i, d):
                    continue
                data = self.read(op, Ref(s.rank, s.buf, s.index, d.size, s.remote))
                if data is not None:
                    self.write(op, d, data)
            if name != "put":
                self.signal(op)
        elif name == "get":
            for s, d in zip(op.src, op.dst):  # handleGet: offsets as the kernel takes them
                data = self.fetch(op, Ref(s.rank, s.buf, d.index, s.size, s.remote))
                if data is not None:
                    self.write(op, Ref(d.rank, d.buf, s.index, s.size, d.remote), data)
        elif name == "copy" and op.src and op.dst:
            data = self.read(op, op.src[0])
            if data is not None:
                self.write(op, op.dst[0], data)
        elif name in ("re", "res", "rre", "rres") and op.src and op.dst:
            acc = self.read(op, op.src[0])
            for s in op.src[1:]:
                more = self.fetch(op, Ref(s.rank, s.buf, s.index, op.src[0].size, s.remote))
                acc = None if acc is None or more is None else self.reduce(op, acc, more)
            if acc is None:
                return
            self.write(op, Ref(op.dst[0].rank, op.dst[0].buf, op.dst[0].index,
                               op.src[0].size, op.dst[0].remote), acc)
            if name in ("res", "rres"):
                for d in op.dst[1:]:
                    self.write(op, Ref(d.rank, d.buf, d.index, op.src[0].size, d.remote), acc)
        elif name in ("copy", "re", "res", "rre", "rres"):
            self.v.fail(f"{op.where()}: has no source or no destination buffer")

    def packet_op(self, op: Op) -> None:
        """LL ops (execution_kernel.hpp handle*Packets): packets carry a flag with the data,
        so a read from the scratch's packets waits for them; where they go is a packet
        area of the destination buffer."""
        name, src, dst = op.name, op.src, op.dst
        if not src or not dst:
            self.v.fail(f"{op.where()}: has no source or no destination buffer")
            return
        if name == "ppkt":
            for i, (s, d) in enumerate(zip(src, dst)):
                if op.chan_type == "port" and not self.port_ok(op, i, d):
                    continue
                kind = mc.pk(s.buf) if op.chan_type == "port" else src[0].buf
                data = self.read(op, Ref(s.rank, kind, s.index, s.size, False))
                if data is not None:
                    self.write(op, mc.packets(d), data)
        elif name in ("rppkt", "upkt"):
            data = self.read(op, mc.scratch_packets(src[0]), wait=True)
            if data is None:
                return
            for i, d in enumerate(dst):
                if name == "upkt":
                    self.write(op, Ref(d.rank, d.buf, d.index, src[0].size, d.remote), data)
                elif op.chan_type != "port" or self.port_ok(op, i, d):
                    self.write(op, mc.packets(Ref(d.rank, d.buf, d.index, src[0].size, True)),
                               data)
        elif name == "cpkt":
            data = self.read(op, src[0])
            if data is not None:
                self.write(op, mc.packets(dst[0]), data)
        else:  # repkt, respkt, recpkt, recspkt
            acc = self.read(op, src[0])
            for s in src[1:]:
                more = self.read(op, mc.scratch_packets(Ref(s.rank, s.buf, s.index, src[0].size,
                                                          False)), wait=True)
                acc = None if acc is None or more is None else self.reduce(op, acc, more)
            if acc is None:
                return
            size = src[0].size
            self.write(op, Ref(dst[0].rank, dst[0].buf, dst[0].index, size, False), acc)
            local = 2 if name in ("recpkt", "recspkt") else 1
            if local == 2 and len(dst) > 1:
                self.write(op, mc.packets(Ref(dst[1].rank, dst[1].buf, dst[1].index, size,
                                            False)), acc)
            if name in ("respkt", "recspkt"):
                for d in dst[local:]:
                    self.write(op, mc.packets(Ref(d.rank, d.buf, d.index, size, True)), acc)

    def port_ok(self, op: Op, i: int, d: Ref) -> bool:
        if i >= len(op.channels):
            self.v.fail(f"{op.where()}: port put {i} has no channel (channel_ids lists "
                        f"{len(op.channels)})")
            return False
        peer = self.plan.peers[(op.rank, "port")][op.channels[i]]
        if peer != d.rank:
            self.v.fail(f"{op.where()}: puts into rank {d.rank}'s buffer over a port channel "
                        f"to rank {peer}")
            return False
        return True

    # -- synchronisation -----------------------------------------------------------
    def signal(self, op: Op) -> None:
        ty = op.chan_type
        for k in op.channels:
            other = self.plan.pair.get((op.rank, ty, k))
            if other is None:
                if (op.rank, ty, k) not in self.lost:
                    self.lost.add((op.rank, ty, k))
                    peer = self.plan.peers[(op.rank, ty)][k]
                    self.v.fail(f"{op.where()}: signals on its {ty} channel {k} to rank "
                                f"{peer}, which has no matching {ty} channel back: no wait "
                                "can ever see the signal")
                continue
            self.inbox.setdefault(other, deque()).append(dict(self.clock[(op.rank, op.tb)]))

    def blocked(self, op: Op) -> str | None:
        """None when ``op`` can run now; else what it waits for."""
        key = (op.rank, op.tb)
        if op.name in ("wait", "rlxwait"):
            for k in op.channels:
                if not self.inbox.get((op.rank, op.chan_type, k)):
                    peer = self.plan.peers[(op.rank, op.chan_type)][k]
                    return f"waits for a signal from rank {peer} on {op.chan_type} channel {k}"
        elif op.name == "sem_acquire":
            for s in set(op.sems):  # an id listed twice is acquired twice
                if (op.rank, s) not in self.sem:
                    return (f"waits to acquire device semaphore {s}, which rank {op.rank} does "
                            "not declare")
                if len(self.sem[(op.rank, s)]) < op.sems.count(s):
                    return f"waits to acquire device semaphore {s}"
        elif op.name in mc.WAITING_PACKET_OPS:
            refs = op.src[:1] if op.name in ("rppkt", "upkt") else op.src[1:]
            for ref in refs:
                span = self.cells(op, mc.scratch_packets(ref))
                for j in span or ():
                    if self.loc(op.rank, "Ps", j) not in self.store:
                        return (f"waits for the packets of s[{mc.at(self.plan, j)}] (LL: their "
                                "flag), which no op has written yet")
        elif op.name == "barrier" and key not in self.released:
            group = self.arrived.setdefault((op.rank, op.barrier), {})
            group[key] = dict(self.clock[key])
            if len(group) < max(op.nblocks, 1):
                return (f"waits at barrier {op.barrier} for {op.nblocks} threadblocks "
                        f"({len(group)} arrived)")
            joined: Clock = {}
            for c in group.values():
                mc.join(joined, c)
            for member in group:
                self.released[member] = joined
            del self.arrived[(op.rank, op.barrier)]
        return None

    def execute(self, op: Op) -> None:
        key = (op.rank, op.tb)
        mine = self.clock[key]
        if op.name in ("wait", "rlxwait"):
            for k in op.channels:
                mc.join(mine, self.inbox[(op.rank, op.chan_type, k)].popleft())
        elif op.name == "sem_acquire":
            for s in op.sems:
                mc.join(mine, self.sem[(op.rank, s)].popleft())
        elif op.name == "barrier":
            mc.join(mine, self.released.pop(key))
        mine[key] = self.base + op.pos + 1  # this op's accesses and signals are at pos + 1
        if op.name in ("signal", "rlxsignal"):
            self.signal(op)
        elif op.name == "sem_release":
            for s in op.sems:
                if (op.rank, s) not in self.sem:
                    self.v.fail(f"{op.where()}: device semaphore {s} is not declared")
                    continue
                self.sem[(op.rank, s)].append(dict(mine))
        else:
            self.data_op(op)

    def next_call(self) -> None:
        """The state the next call starts from: semaphores, channels and scratch as this
        call left them, LL packets stale (their flag is this call's), and each rank's
        threadblocks after all of this call's on that rank (one kernel after the other on
        its stream); the user writes new inputs between the two, after the rank's kernel."""
        self.call, self.base = 2, self.span
        self.shift = max(sz["i"] for sz in self.size) + 1
        for q in range(self.plan.ngpus):
            end: Clock = {(q, -1): self.base}
            for key, seen in self.clock.items():
                if key[0] == q:
                    mc.join(end, seen)
            for j in range(self.size[q]["i"]):
                self.host_write(q, j, end)
            for key in self.clock:
                if key[0] == q:
                    self.clock[key], self.pc[key] = dict(end), 0
        for loc in [loc for loc in self.store if loc[1].startswith("P")]:
            del self.store[loc]

    def host_write(self, q: int, j: int, end: Clock) -> None:
        loc = self.loc(q, "i", j)
        where = f"rank {q}'s input {mc.at(self.plan, j)}"
        if loc in self.writer:
            who, at, what = self.writer[loc]
            if end.get(who, 0) < at:
                self.v.fail(f"{what} writes {where}, and rank {q}'s call may end before it "
                            "does: the user's next input can be overwritten")
        for who, at in self.readers.pop(loc, {}).items():
            if end.get(who, 0) < at:
                self.v.fail(f"rank {who[0]} tb {who[1]} op {at - 1} reads {where}, and rank {q}'s "
                            "call may end before it does: it can read the user's next input")
        self.store[loc] = frozenset({(q, j + self.shift)})
        self.writer[loc] = ((q, -1), self.base, f"the user (rank {q}'s next input)")

    def run(self, backwards: bool = False, final: bool = True) -> None:
        """Run one call to its end or a deadlock; ``final``: then report what it leaves
        behind (:meth:`leftovers`)."""
        keys = sorted(self.plan.tbs, reverse=backwards)
        moved = True
        while moved:
            moved = False
            for key in keys:
                ops = self.plan.tbs[key]
                while self.pc[key] < len(ops):
                    op = ops[self.pc[key]]
                    if self.blocked(op) is not None:
                        break
                    self.execute(op)
                    self.pc[key] += 1
                    moved = True
        stuck = [(k, self.plan.tbs[k][self.pc[k]]) for k in keys
                 if self.pc[k] < len(self.plan.tbs[k])]
        if stuck:
            shown = "; ".join(f"{op.where()} {self.blocked(op)}" for _, op in stuck[:3])
            more = f"; and {len(stuck) - 3} more" if len(stuck) > 3 else ""
            self.v.fail(f"deadlock: no op can run; {shown}{more}")
            self.stuck = True
            return
        if final:
            self.leftovers()

    def leftovers(self) -> None:
        """What the call leaves behind for the next one."""
        for (r, ty, k), left in sorted(self.inbox.items()):
            if left:
                peer = self.plan.peers[(r, ty)][k]
                self.v.fail(f"rank {r}'s {ty} channel {k} (to rank {peer}) receives {len(left)} "
                            "signal(s) never waited for: the next call would start with them")
        for (r, s), tokens in sorted(self.sem.items()):
            if len(tokens) != self.plan.semaphores[r][s]:
                self.v.fail(f"rank {r} device semaphore {s} ends at {len(tokens)}, not its "
                            f"initial {self.plan.semaphores[r][s]}")

    def postcondition(self) -> None:
        plan, per, n = self.plan, self.per, self.plan.ngpus
        for g in range(n):
            end: Clock = {}  # the kernel on rank g ends when all its threadblocks do
            for key, seen in self.clock.items():
                if key[0] == g:
                    mc.join(end, seen)
            if plan.collective == "reduce" and g != plan.root:
                continue  # only the root's output is defined
            for j in range(self.size[g]["o"]):
                loc = self.loc(g, "o", j)
                got = self.store.get(loc)
                k = self.shift
                want = mc.expected(plan, g, j, per, k)
                by = self.writer.get(loc)
                if got == want and by is not None and end.get(by[0], 0) < by[1]:
                    self.v.fail(f"rank {g} output {mc.at(plan, j)} is written by {by[2]}, which no op "
                                f"of rank {g} waits for: its call may return before the data "
                                "lands")
                if got != want:
                    if len(self.v.reasons) >= 20:
                        self.v.fail("… and more output cells are wrong")
                        return
                    written = f", written by {by[2]}" if by else ""
                    self.v.fail(f"rank {g} output {mc.at(plan, j)} should hold "
                                f"{mc.show(want, plan, k)}; it holds {mc.show(got, plan, k)}{written}")


def run(plan: Plan, backwards: bool = False) -> Result:
    """Check ``plan``: what the executor refuses to load, deadlocks, races, and outputs that
    break the collective's postcondition; ``traffic`` counts the cells each rank moves to
    each other rank (a cell is 1/``grain`` of a chunk). ``backwards``: visit the
    threadblocks in the reverse order (another interleaving: the verdict must not change)."""
    mode = "in-place" if plan.inplace else "out-of-place"
    v = Verdict(f"MSCCL++ {plan.collective} plan {plan.name!r} ({mode})")
    res = Result(v, plan=plan)
    for r in plan.refusals:
        v.fail(f"the MSCCL++ executor refuses the plan: {r}")
    v.facts["notes"] = list(plan.notes)
    if not v.ok:
        return res
    sim = _Run(plan, v)
    sim.run(backwards, final=False)
    if v.ok:
        sim.postcondition()
    if v.ok:  # a second call, after this one: what the first left behind must not harm it
        again = Verdict(v.check)
        sim.v = again
        sim.next_call()
        sim.run(backwards)
        if again.ok:
            sim.postcondition()
        v.absorb(again, "in the next call: ")
    elif not sim.stuck:
        sim.leftovers()
    res.traffic = sim.traffic
    return res
