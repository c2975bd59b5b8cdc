"""Run an MSCCL++ execution plan as its executor would, and check its postcondition.

The executor's kernel (microsoft/mscclpp ``src/core/include/execution_kernel.hpp``,
``executionKernel``) runs every threadblock of a rank through its ops in order, on
all the threads of its block; the data ops are :mod:`.mscclpp_ops`, the threads and
what each knows :mod:`.mscclpp_threads` (docs/mscclpp.md, "The executor's threads"):

* ``signal`` / ``rlxsignal`` on a channel add one to the semaphore its other end
  waits on; ``wait`` / ``rlxwait`` wait for one more signal than already consumed
  (``MemoryDevice2DeviceSemaphore``; a port channel's through the proxy); thread i
  handles the op's i-th channel;
* ``barrier``: the ``num_threadblocks`` threadblocks of the rank that reach barrier
  ``barrier_id`` wait for each other (``DeviceSyncer``); ``sem_release`` /
  ``sem_acquire``: a device semaphore of the rank (``semaphores``' ``init_value``),
  acquire waiting while it is zero;
* ``nop`` (``__syncthreads``) joins the block's threads; ``flush`` waits for the
  port channels it lists (as the DSL writes it, none: it has no ``dst_buff``).

Model. Every cell (a chunk, or a part of one for thread block groups) holds the
contributions ``(rank, input cell)`` it contains; a reduction is a union of disjoint
sets. One interleaving is run (threadblocks in order, each as far as it can go, an
op at a time); ordering is checked apart with vector clocks per thread: an access to
a cell another actor (threadblock, proxy, user) wrote, or a write to one it read, must
be ordered after it by what the executor guarantees, else it is a race, named with the
rule it breaks. Stuck ops: a deadlock, named. Then a second call runs on the state the
first left (semaphores, channels, scratch; each rank's kernel after its previous one,
the user's new inputs between them), so leftover signals and a rank running ahead into
a peer's buffers show up. Buffers and postconditions are the user's (docs/mscclpp.md),
as in :mod:`.msccl_sim`, plus broadcast and reduce.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from ..model import Verdict
from . import mscclpp_cells as mc
from . import mscclpp_switch as switch
from .mscclpp import Op, Plan, Ref
from .mscclpp_cells import Content, Key, Loc
from .mscclpp_ops import Actor, DataOps
from .mscclpp_threads import (
    USER,
    Know,
    ThreadKnow,
    Threads,
    is_proxy,
    meet,
    published_early,
    rule,
)


@dataclass
class Result:
    verdict: Verdict
    traffic: dict[tuple[int, int], int] = field(default_factory=dict)  # cells p -> q
    plan: Plan | None = None


class _Run(DataOps):
    def __init__(self, plan: Plan, v: Verdict) -> None:
        self.plan, self.v = plan, v
        g = plan.grain
        # "Pi", "Po", "Ps": the LL packet areas of the buffers (data and flag, at twice the
        # offset), apart from their plain use
        self.size = [{p + b: c[b] * g for b in "ios" for p in ("", "P")} for c in plan.chunks]
        self.pknow: dict[Loc, Know] = {}  # a packet's writer's knowledge, its flag's
        self.per = plan.chunks[0]["i" if plan.collective == "allgather" else "o"] * g
        self.store: dict[Loc, Content] = {}
        self.writer: dict[Loc, tuple[Key, int, str]] = {}
        self.readers: dict[Loc, dict[Key, int]] = {}
        self.threads = Threads(plan)
        self.pc: dict[Key, int] = {k: 0 for k in plan.tbs}
        self.inbox: dict[tuple[int, str, int], deque[tuple[Know, bool, tuple[Key, int, int]]]] = {}
        self.lanes: dict[tuple[int, int], set[tuple[int, int]]] = {}
        self.sem: dict[tuple[int, int], deque[Know]] = {
            (r, s): deque(self.threads.blank.copy() for _ in range(init))
            for r, inits in plan.semaphores.items()
            for s, init in enumerate(inits)}
        self.arrived: dict[tuple[int, int], dict[Key, Know]] = {}
        self.released: dict[Key, Know] = {}
        self.events: dict[tuple[Key, int], str] = {}  # a proxy's transfers, named
        self.pushed: dict[Key, int] = {}
        self.traffic: dict[tuple[int, int], int] = {}
        self.lost: set[tuple[int, str, int]] = set()
        self.narrow: set[tuple[int, int, int]] = set()
        for r in range(plan.ngpus):
            for j in range(self.size[r]["i"]):
                self.store[self.loc(r, "i", j)] = frozenset({(r, j)})
        # the next call: its inputs are the cells shift.., its op stamps base + pos + 1
        self.call, self.base, self.shift = 1, 0, 0
        self.stuck = False
        self.span = max((len(ops) for ops in plan.tbs.values()), default=0) + 2

    def fail(self, text: str) -> None:
        self.v.fail(text)

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

    # -- who accesses, and whether it is ordered -------------------------------------
    def name(self, who: Key, at: int) -> str:
        if is_proxy(who):
            return self.events.get((who, at), f"a transfer of rank {who[0]}'s proxy")
        if who[1] == USER:
            return f"the user of rank {who[0]} (between its calls)"
        if self.call == 2 and at <= self.base:
            return f"rank {who[0]} tb {who[1]} op {at - 1} of the previous call"
        return f"rank {who[0]} tb {who[1]} op {at - self.base - 1}"

    def boundary(self, know: Know | ThreadKnow, who: Key, at: int) -> bool:
        """Done before the kernel boundary that ``know`` is ordered after: a rank's new
        kernel starts once its previous one (and the user's writes) completed."""
        return (self.call == 2 and not is_proxy(who) and at <= self.base
                and know.exe.get((who[0], USER), 0) >= self.base)

    def check(self, op: Op, actor: Actor, who: Key, at: int, what: str,
              war: bool = False) -> None:
        """``actor``'s access after ``who``'s (stamp ``at``): a race unless ordered (data
        visible for a read or a write after a write; execution for a write after a read)."""
        if who == actor.who and at == actor.at:
            return  # the same op
        k = actor.know
        if (k.exe if war else k.data).get(who, 0) >= at or self.boundary(k, who, at):
            return
        key = (op.rank, op.tb)
        threads_know = not is_proxy(actor.who) and any(
            (t.exe if war else t.data).get(who, 0) >= at or self.boundary(t, who, at)
            for t in self.threads.threads(key))
        exe = not war and k.exe.get(who, 0) >= at
        tail = rule(self.plan, op, who, at, self.base, threads_know, exe, self.stamp(op))
        self.v.fail(f"{actor.where}: {what} {self.name(who, at)}, and {tail}: a race")

    # -- memory ----------------------------------------------------------------------
    def read(self, op: Op, ref: Ref, wait: bool = False,
             actor: Actor | None = None) -> list[Content] | None:
        """The cells of ``ref``; ``wait``: packets read as LL does, each waiting for its
        flag (which orders the read after the packet's write, and the execution after)."""
        actor = actor or self.acting(op)
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
                actor.know.join(self.pknow[loc], strong=False)
            elif loc in self.writer:
                who, at, _ = self.writer[loc]
                self.check(op, actor, who, at, f"reads {where}, written by")
            self.readers.setdefault(loc, {})[actor.who] = actor.at
            out.append(got)
        return out

    def write(self, op: Op, ref: Ref, data: list[Content], actor: Actor | None = None,
              count: bool = True) -> None:  # count=False: through a switch (its own traffic)
        actor = actor or self.acting(op)
        span = self.cells(op, ref)
        if span is None:
            return
        if len(span) != len(data):
            self.v.fail(f"{op.where()}: writes {len(data)} chunk cells into a range of "
                        f"{len(span)}")
            return
        flag = None
        if ref.buf.startswith("P"):
            flag = actor.know.copy()
            flag.stamp(actor.who, actor.at)
        for j, d in zip(span, data):
            loc = self.loc(ref.rank, ref.buf, j)
            where = f"{mc.buf_name(ref.buf)}[{mc.at(self.plan, j)}] of rank {ref.rank}"
            if loc in self.writer:
                who, at, _ = self.writer[loc]
                self.check(op, actor, who, at, f"overwrites {where}, written by")
            for who, at in self.readers.pop(loc, {}).items():
                self.check(op, actor, who, at, f"overwrites {where}, still to be read by",
                           war=True)
            self.writer[loc] = (actor.who, actor.at, actor.where)
            self.store[loc] = d
            if flag is not None:
                self.pknow[loc] = flag
        if ref.rank != op.rank and count:
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

    # -- synchronisation -----------------------------------------------------------
    def send(self, op: Op, k: int, msg: Know, strong: bool, thread: int) -> None:
        """A signal on ``op``'s channel ``k`` by its thread ``thread``, carrying ``msg``.
        Signals that other threads of the block sent on the same channel with no ``nop``
        between are concurrent: a wait may take any of them first, so each carries only
        what all of them do."""
        ty = op.chan_type
        other = self.plan.pair.get((op.rank, ty, k))
        if other is None:
            if (op.rank, ty, k) not in self.lost:
                self.lost.add((op.rank, ty, k))
                peer = self.plan.peers[(op.rank, ty)][k]
                self.v.fail(f"{op.where()}: signals on its {ty} channel {k} to rank "
                            f"{peer}, which has no matching {ty} channel back: no wait "
                            "can ever see the signal")
            return
        key = (op.rank, op.tb)
        tag = (key, self.threads.epoch[key], thread)
        box = self.inbox.setdefault(other, deque())
        both = [j for j, e in enumerate(box) if e[2][:2] == tag[:2] and e[2][2] != thread]
        if both:
            common = meet([box[j][0] for j in both] + [msg])
            for j in both:
                box[j] = (common.copy(), box[j][1], box[j][2])
            msg = common
        box.append((msg, strong, tag))

    def signal(self, op: Op) -> None:
        """``signal``/``rlxsignal``: thread i signals channel i with what it knows (a
        relaxed signal on a memory channel: its execution only)."""
        port = op.chan_type == "port"
        for i, k in enumerate(op.channels[:self.width(op)]):
            msg = self.threads.thread((op.rank, op.tb), i).copy()
            if port:  # the proxy sends it after the requests pushed before it
                self.fifo_done(op.rank, k, msg)
            self.send(op, k, msg, op.name == "signal" or port, i)

    def blocked(self, op: Op) -> str | None:
        """None when ``op`` can run now; else what it waits for."""
        key = (op.rank, op.tb)
        if op.name in ("wait", "rlxwait"):
            for k in op.channels[:self.width(op)]:
                if not self.inbox.get((op.rank, op.chan_type, k)):
                    peer = self.plan.peers[(op.rank, op.chan_type)][k]
                    return f"waits for a signal from rank {peer} on {op.chan_type} channel {k}"
        elif op.name == "sem_acquire":
            sems = op.sems[:self.width(op)]
            for s in set(sems):  # an id listed twice is acquired twice
                if (op.rank, s) not in self.sem:
                    return (f"waits to acquire device semaphore {s}, which rank {op.rank} does "
                            "not declare")
                if len(self.sem[(op.rank, s)]) < sems.count(s):
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
            return self.arrive(op)
        return switch.blocked(self, op)  # None, or what a switch op waits for

    def arrive(self, op: Op) -> str | None:
        """A block at a barrier (all its threads: ``__syncthreads``); the last to come
        releases the group with what all of them know."""
        key = (op.rank, op.tb)
        group = self.arrived.setdefault((op.rank, op.barrier), {})
        group[key] = self.threads.all(key)
        group[key].stamp(key, self.stamp(op))
        if len(group) < max(op.nblocks, 1):
            return (f"waits at barrier {op.barrier} for {op.nblocks} threadblocks "
                    f"({len(group)} arrived)")
        joined = self.threads.blank.copy()
        for know in group.values():
            joined.join(know)
        for member in group:
            self.released[member] = joined
        del self.arrived[(op.rank, op.barrier)]
        return None

    def execute(self, op: Op) -> None:
        key = (op.rank, op.tb)
        name, port = op.name, op.chan_type == "port"
        if name in ("wait", "rlxwait"):
            for i, k in enumerate(op.channels[:self.width(op)]):
                msg, strong, _ = self.inbox[(op.rank, op.chan_type, k)].popleft()
                self.threads.thread(key, i).join(msg, strong and (name == "wait" or port))
        elif name == "sem_acquire":
            for i, s in enumerate(op.sems[:self.width(op)]):
                self.threads.thread(key, i).join(self.sem[(op.rank, s)].popleft())
        elif name == "sem_release":
            for i, s in enumerate(op.sems[:self.width(op)]):
                if (op.rank, s) not in self.sem:
                    self.v.fail(f"{op.where()}: device semaphore {s} is not declared")
                    continue
                self.sem[(op.rank, s)].append(self.threads.thread(key, i).copy())
        elif name == "barrier":
            self.threads.reset(key, self.released.pop(key).copy())
        elif name == "nop":
            self.threads.sync(key, self.stamp(op))
        elif name == "flush":
            for i, k in enumerate(op.channels[:self.width(op)]):
                self.fifo_done(op.rank, k, self.threads.thread(key, i))
        elif name in ("signal", "rlxsignal"):
            self.signal(op)
        elif name in switch.OPS:
            switch.run_op(self, op)
        else:
            self.data_op(op)
        if self.threads.width == 1:  # one thread: everything in program order
            self.threads.sync(key, self.stamp(op))

    def kernel_end(self, q: int, base: int) -> Know:
        """What rank q knows when its kernel ends: every thread of every block done."""
        end = self.threads.blank.copy()
        for key, ops in self.plan.tbs.items():
            if key[0] == q:
                end.join(self.threads.all(key))
                end.stamp(key, base + len(ops) + 1)
        return end

    def next_call(self) -> None:
        """The state the next call starts from: semaphores, channels and scratch as this
        call left them, LL packets stale (their flag is this call's), and each rank's
        threadblocks after all of this call's on that rank (one kernel after the other on
        its stream); the user writes new inputs between the two, after the rank's kernel."""
        prev = self.base
        self.call, self.base = 2, self.span
        self.shift = max(sz["i"] for sz in self.size) + 1
        for q in range(self.plan.ngpus):
            end = self.kernel_end(q, prev)
            end.stamp((q, USER), self.base)
            if self.plan.collective != "reduce" or q == self.plan.root:
                for j in range(self.size[q]["o"]):  # the user reads the result
                    self.readers.setdefault(self.loc(q, "o", j), {})[(q, USER)] = self.base
            for j in range(self.size[q]["i"]):
                self.host_write(q, j, end)
            for key in self.plan.tbs:
                if key[0] == q:
                    self.threads.reset(key, end.copy())
                    self.pc[key] = 0
        for loc in [loc for loc in self.store if loc[1].startswith("P")]:
            del self.store[loc]

    def host_write(self, q: int, j: int, end: Know) -> None:
        loc = self.loc(q, "i", j)
        where = f"rank {q}'s input {mc.at(self.plan, j)}"
        if loc in self.writer:
            who, at, what = self.writer[loc]
            if end.data.get(who, 0) < at:
                self.v.fail(f"{what} writes {where}, and rank {q}'s call may end before it "
                            "does: the user's next input can be overwritten")
        for who, at in self.readers.pop(loc, {}).items():
            if end.exe.get(who, 0) < at:
                why = (f": nothing tells rank {q} the transfer is done (no pwsf, no signal back on "
                       "that channel; a flush op flushes nothing) (rule 5: port data lands late)"
                       if is_proxy(who) else "")
                self.v.fail(f"{self.name(who, at)} reads {where}, and rank {q}'s call may end "
                            f"before it does: it can read the user's next input{why}")
        self.store[loc] = frozenset({(q, j + self.shift)})
        self.writer[loc] = ((q, USER), self.base, f"the user (rank {q}'s next input)")

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
            end = self.kernel_end(g, self.base)  # the kernel on g ends when all blocks do
            if plan.collective == "reduce" and g != plan.root:
                continue  # only the root's output is defined
            for j in range(self.size[g]["o"]):
                loc = self.loc(g, "o", j)
                got = self.store.get(loc)
                k = self.shift
                want = mc.expected(plan, g, j, per, k)
                by = self.writer.get(loc)
                if got == want and by is not None and end.data.get(by[0], 0) < by[1]:
                    why = published_early(plan, by[0], by[1], self.base) or (
                        "only relaxed signals order it: execution, not data (rule 4: relaxed "
                        "is not a fence)" if end.exe.get(by[0], 0) >= by[1] else None)
                    self.v.fail(f"rank {g} output {mc.at(plan, j)} is written by {by[2]}, which no op "
                                f"of rank {g} waits for: its call may return before the data "
                                "lands" + (f" ({why})" if why else ""))
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
