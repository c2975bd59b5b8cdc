"""Execution plans from MSCCL++ execution plans (JSON), for ``collcert smoke``: the plan
run as the MSCCL++ executor's threads would run it.

The plan is read by the project's reader (:func:`collcert.certify.execution.mscclpp.read`,
which resolves channels, remote buffers, thread block groups and chunk units as the
MSCCL++ executor does). Then every threadblock is a block of threads (microsoft/mscclpp
``execution_kernel.hpp``; docs/mscclpp.md, "The executor's threads"): a block whose ops
act on at most k channels (semaphores, port outputs) runs k + 1 threads here (k of them
the threads that synchronise, one more that only moves data), at most
``num_threads_per_block``. Each thread walks the block's ops:

* ``signal``/``wait`` (and relaxed), ``sem_*``, ``flush``: thread i < n does the i-th
  channel or semaphore, the others go on at once; a ``wait`` blocks its thread until
  one more signal than consumed came on its channel;
* a data op: each thread moves its own part of every range (:mod:`.mscclppdata`), free
  to run ahead of the others; LL reads wait for the flags of their own packets; a port
  put is pushed by thread i for output i and lands when a signal or flush on its
  channel goes through;
* ``nop``: the block's threads wait for each other; ``barrier``: the threads of the
  ``num_threadblocks`` blocks at barrier ``barrier_id``.

The threads run in an **adversarial order**: each runs as far as it can in a priority
order (the threads that only move data first; the synchronising ones first; both with
the blocks reversed; then random orders from ``seed``), and the first order whose
result is wrong on the host (numpy, :func:`~collcert.reference.execution.run_host`) is
the execution plan run on the devices. A plan whose synchronisation is right gives the
collective's result in every order; a missing ``nop`` lets a thread read before the data
came or a signal go out before the stores, and one of the orders shows it. The order in
which the threads' parts ran is the execution plan's global order
(:mod:`collcert.reference.execution.execplan`).

In-place plans alias the buffers as the executor's in-place call does (the allgather
input is the output's own block, the reduce-scatter output the input's own block, the
allreduce output the input, and the root's output its input for broadcast and reduce).
What stops the run (a deadlock, a range outside its buffer, a port channel to another
rank) is a problem of the plan: it is not run, and the simulator's reasons are shown.
Switch (NVLS) ops are :mod:`.mscclppswitch`'s; ``pipeline`` ops are refused by the reader.
"""

from __future__ import annotations

import heapq
import random
import re
from collections.abc import Iterator

from collcert.certify.execution import mscclpp, mscclpp_sim
from collcert.reference.execution import Op, Plan, Region, Spec, first_mismatch, run_host

from .mscclplan import finish
from .mscclppdata import PACKET_WAITS, Memory, Stop, items, scratch
from .mscclppswitch import packets_missing

Key = tuple[int, int]
Thread = tuple[Key, int]
RETURNS = "the user reads its output"  # the note of the copy made when a rank's call returns
STEPS_BUDGET = 100_000  # thread steps over all generic orders (at least 2 orders): ~3 s each


def plan_from_mscclpp(pp: mscclpp.Plan, tries: int = 8, seed: int = 0,
                      reasons: list[str] | None = None) -> Plan:
    """The execution plan of the MSCCL++ plan ``pp``, run in the mode it declares
    (``inplace``) by its threads in the first of the adversarial orders whose result is
    wrong (the first order when none is); ``plan.problems`` says why it cannot run. The
    orders: for each threadblock the audit's ``reasons`` name (computed when not given),
    its threads that only move data last, then first; then ``tries`` generic ones (fewer
    on a large plan: :data:`STEPS_BUDGET` thread steps, and at least 2)."""
    if reasons is None:
        reasons = mscclpp_sim.run(pp).verdict.reasons
    first: tuple[str, Plan] | None = None
    tried = 0
    steps = sum(len(ops) * _width(pp, ops) for ops in pp.tbs.values())
    tries = max(min(tries, 2), min(tries, STEPS_BUDGET // max(steps, 1)))
    for name, order in _targeted(pp, reasons) + list(_orders(pp, tries, seed)):
        plan = _build(pp, order)
        tried += 1
        if not plan.runnable:
            return plan  # a deadlock or a broken range: the plan's, in every order
        if _wrong(plan):
            plan.notes.append(f"run as the executor's threads would, in the order: {name} "
                              f"(order {tried} tried; it gives a wrong result on the host)")
            return plan
        first = first or (name, plan)
    assert first is not None
    name, plan = first
    randoms = max(0, tries - 4)
    plan.notes.append(f"run as the executor's threads would, in the order: {name}; "
                      f"{tried} adversarial order(s) of the threads tried on the host give the "
                      "collective's result" + (f" ({randoms} of them random, seed {seed})"
                                               if randoms else ""))
    return plan


def subcells(pp: mscclpp.Plan) -> int:
    """Sub-cells per chunk cell: one per thread of the widest block."""
    return max([_width(pp, ops) for ops in pp.tbs.values()] + [1])


def _width(pp: mscclpp.Plan, ops: list[mscclpp.Op]) -> int:
    """Threads of a block here: one per channel (semaphore, output) its ops act on, and
    one that only moves data, at most ``num_threads_per_block``."""
    return min(pp.threads, max([items(op) for op in ops] + [0]) + 1)


def _orders(pp: mscclpp.Plan, tries: int, seed: int) -> Iterator[tuple[str, list[Thread]]]:
    threads = [(key, t) for key in sorted(pp.tbs) for t in range(_width(pp, pp.tbs[key]))]
    sync_first = sorted(threads, key=lambda x: (x[1] == _width(pp, pp.tbs[x[0]]) - 1, x))
    data_first = sorted(threads, key=lambda x: (x[1] != _width(pp, pp.tbs[x[0]]) - 1, x))
    fixed = [("the threads that only move data first", data_first),
             ("the synchronising threads first", sync_first),
             ("the threads that only move data first, blocks reversed",
              sorted(data_first, key=lambda x: (x[1] != _width(pp, pp.tbs[x[0]]) - 1,
                                                (-x[0][0], -x[0][1]), x[1]))),
             ("the synchronising threads first, blocks reversed",
              sorted(sync_first, key=lambda x: (x[1] == _width(pp, pp.tbs[x[0]]) - 1,
                                                (-x[0][0], -x[0][1]), x[1])))]
    yield from fixed[:tries]
    rng = random.Random(seed)
    for i in range(len(fixed), tries):
        order = list(threads)
        rng.shuffle(order)
        yield f"random order {i - len(fixed) + 1} (seed {seed})", order


def _targeted(pp: mscclpp.Plan, reasons: list[str]) -> list[tuple[str, list[Thread]]]:
    """Orders aimed at the races the audit found: each threadblock its first reasons
    name slowed down (its threads that only move data after every other thread), then
    rushed (all its threads first)."""
    named: list[Key] = []
    for reason in reasons[:3]:
        for r, tb in re.findall(r"rank (\d+) tb (\d+)", reason):
            if (int(r), int(tb)) in pp.tbs and (int(r), int(tb)) not in named:
                named.append((int(r), int(tb)))
    threads = [(key, t) for key in sorted(pp.tbs) for t in range(_width(pp, pp.tbs[key]))]
    out = []
    for b in named[:3]:
        last = _width(pp, pp.tbs[b]) - 1
        out.append((f"rank {b[0]} tb {b[1]}'s thread that only moves data last",
                    sorted(threads, key=lambda x: (x == (b, last), x[1] == last, x))))
        out.append((f"rank {b[0]} tb {b[1]}'s threads first",
                    sorted(threads, key=lambda x: (x[0] != b, x[1] == last, x))))
    return out


def _wrong(plan: Plan) -> bool:
    outs = run_host(plan, 1)
    return any(o is not None and first_mismatch(plan.spec, r, o, 1) is not None
               for r, o in enumerate(outs))


def _build(pp: mscclpp.Plan, order: list[Thread]) -> Plan:
    g, n, coll = pp.grain * subcells(pp), pp.ngpus, pp.collective
    per = pp.chunks[0]["i" if coll == "allgather" else "o"] * g
    buffers = [{b: c[b] * g for b in "ios"} for c in pp.chunks]
    mem = Memory(pp, subcells(pp), per, buffers)
    plan = Plan(_spec(pp, mem, per, g), buffers, mem.ops, name=pp.name or "MSCCL++ plan")
    plan.notes.append(f"an MSCCL++ plan for {'in-place' if pp.inplace else 'out-of-place'} "
                      f"calls (\"inplace\": {str(pp.inplace).lower()}), executed in that mode; "
                      f"protocol {pp.protocol}, {len(pp.tbs)} threadblocks on {n} ranks")
    plan.notes.append(f"threads: up to {subcells(pp)} per block (one per channel an op acts "
                      "on, and one that only moves data); each chunk is cut into "
                      f"{subcells(pp)} parts" + (f", and thread block groups cut it into "
                                                 f"{pp.grain}" if pp.grain > 1 else ""))
    try:
        _check_shape(pp)
        _Threads(pp, mem, order).run()
    except Stop as exc:
        plan.problems.append(str(exc))
    if pp.inplace:  # the aliased buffer is never named: nothing to allocate for it
        for r in range(n):
            for b in "io":
                if mem.alias(r, b, 0)[0] != b:
                    buffers[r][b] = 0
    for r, bufs in mem.packets.items():
        for b in bufs:  # an LL packet area: as large as its (aliased) buffer
            buffers[r]["P" + b] = pp.chunks[r][b] * g
    for r in range(n):  # what the user reads when rank r's call returns
        buffers[r]["R"] = pp.chunks[r]["o"] * g
    return finish(plan, pp.refusals, "MSCCL++")


def _check_shape(pp: mscclpp.Plan) -> None:
    """Buffers the collective's data fits: the same input and output chunks on every rank,
    none empty, in the proportion of the collective (else nothing can be checked)."""
    n, coll = pp.ngpus, pp.collective
    i, o = pp.chunks[0]["i"], pp.chunks[0]["o"]
    want = {"allgather": (i * n, o), "reduce-scatter": (i, o * n)}.get(coll, (i, o))
    same = all((c["i"], c["o"]) == (i, o) for c in pp.chunks)
    if not same or not i or not o or want[0] != want[1]:
        raise Stop(f"its buffers do not hold a {coll} of {n} ranks ({i} input and {o} output "
                   "chunks on rank 0; every rank must declare the same, in that proportion)")


def _spec(pp: mscclpp.Plan, mem: Memory, per: int, g: int) -> Spec:
    """Where the collective's data lives: allgather's rank q holds global cells q·per…;
    reduce-scatter's output is block q of the sum; broadcast: the root's input; reduce:
    every rank's input summed into the root's output."""
    n, coll, root = pp.ngpus, pp.collective, pp.root
    size_i, size_o = pp.chunks[0]["i"] * g, pp.chunks[0]["o"] * g
    if coll in ("allgather", "reduce-scatter"):
        shards = [(q * per, per) for q in range(n)]
        cells = n * per
    else:
        cells = size_i
        shards = [(0, cells) if coll == "allreduce" or q == root else (0, 0) for q in range(n)]
    spec = Spec(coll, n, cells, root, shards)
    for q in range(n):
        b, off = mem.alias(q, "i", 0)
        size = 0 if coll == "broadcast" and q != root else size_i
        spec.inputs.append((b, off, q * per if coll == "allgather" else 0, size))
        size = 0 if coll == "reduce" and q != root else size_o
        spec.outputs.append(("R", 0, q * per if coll == "reduce-scatter" else 0, size))
    return spec


class _Threads:
    """The executor's threads on the host: each thread's next op, the signals pending on
    each channel end, the device semaphores, the threads at each ``nop`` and the blocks
    at each barrier; a thread's step appends its data movement to the memory's ops."""

    def __init__(self, pp: mscclpp.Plan, mem: Memory, order: list[Thread]) -> None:
        self.pp, self.mem, self.order = pp, mem, order
        self.width = {key: _width(pp, ops) for key, ops in pp.tbs.items()}
        self.pc = {th: 0 for th in order}
        self.inbox: dict[tuple[int, str, int], int] = {}
        self.sem = {(r, s): v for r, inits in pp.semaphores.items() for s, v in enumerate(inits)}
        self.met: dict[tuple[Key, int], set[int]] = {}  # threads of a block at its op pos
        self.arrived: dict[tuple[int, int], dict[Key, int]] = {}  # blocks at a barrier
        self.released: set[tuple[Key, int]] = set()
        self.ready = list(range(len(order)))  # a heap of thread indices: the first goes
        self.waiting: dict[tuple[object, ...], list[int]] = {}
        self.acting: dict[tuple[Key, int], int] = {}
        self.left = [sum(1 for th in order if th[0][0] == r and pp.tbs[th[0]])
                     for r in range(pp.ngpus)]
        for r in range(pp.ngpus):
            if not self.left[r]:
                self.left[r] = 1
                self.finished(r)

    def acts(self, key: Key, op: mscclpp.Op) -> int:
        """How many of the block's threads act on the op's channels (threads i < n)."""
        n = self.acting.get((key, op.pos))
        if n is None:
            n = self.acting[(key, op.pos)] = min(items(op), self.width[key], self.pp.threads)
        return n

    def blocked(self, th: Thread, op: mscclpp.Op) -> tuple[str, tuple[object, ...]] | None:
        """None when thread ``th`` can do its part of ``op`` now; else what it waits for,
        and the event that wakes it."""
        key, t = th
        name = op.name
        if name in ("nop", "barrier"):
            met = self.met.setdefault((key, op.pos), set())
            met.add(t)
            if len(met) < self.width[key]:
                return (f"waits at op {op.pos} ({name}) for the other threads of its block",
                        ("met", key, op.pos))
            if name == "barrier" and (key, op.pos) not in self.released:
                why = self.barrier(key, op)
                if why is not None:
                    return why, ("met", key, op.pos)
            self.wake(("met", key, op.pos))
            return None
        if t >= self.acts(key, op) and name in ("wait", "rlxwait", "sem_acquire"):
            return None
        if name in ("wait", "rlxwait"):
            k = op.channels[t]
            if not self.inbox.get((op.rank, op.chan_type, k)):
                peer = self.pp.peers[(op.rank, op.chan_type)][k]
                return (f"waits for a signal from rank {peer} on {op.chan_type} channel {k}",
                        ("inbox", op.rank, op.chan_type, k))
        elif name == "sem_acquire":
            if self.sem.get((op.rank, op.sems[t]), 0) < 1:
                return (f"waits to acquire device semaphore {op.sems[t]}",
                        ("sem", op.rank, op.sems[t]))
        elif name in PACKET_WAITS or name == "gstorepkt":
            why = (self.packets_missing(th, op) if name in PACKET_WAITS else
                   packets_missing(self.mem, op, (t, self.width[key], op.pos)))
            if why is not None:
                return why, ("packets", op.rank)
        return None

    def barrier(self, key: Key, op: mscclpp.Op) -> str | None:
        group = self.arrived.setdefault((op.rank, op.barrier), {})
        group[key] = op.pos
        if len(group) < max(op.nblocks, 1):
            return (f"waits at barrier {op.barrier} for {op.nblocks} threadblocks "
                    f"({len(group)} arrived)")
        self.released.update(group.items())
        for member, pos in group.items():
            self.wake(("met", member, pos))
        del self.arrived[(op.rank, op.barrier)]
        return None

    def packets_missing(self, th: Thread, op: mscclpp.Op) -> str | None:
        key, t = th
        port = op.name == "rppkt" and op.chan_type == "port"
        piece = None if port else (t, self.width[key], op.pos)
        for ref in op.src[:1] if op.name in ("rppkt", "upkt") else op.src[1:]:
            span = self.mem.at(op, scratch(ref), piece)
            for j in span.region.cells() if span else ():
                if (op.rank, "Ps", j) not in self.mem.written:
                    return f"waits for the packets of scratch sub-cell {j} (LL: their flag)"
        return None

    def wake(self, event: tuple[object, ...]) -> None:
        for i in self.waiting.pop(event, []):
            heapq.heappush(self.ready, i)

    def step(self, th: Thread, op: mscclpp.Op) -> None:
        key, t = th
        name, n = op.name, self.acts(key, op)
        if name in ("nop", "barrier"):
            return
        if name in ("wait", "rlxwait", "signal", "rlxsignal", "sem_acquire", "sem_release",
                    "flush"):
            if t < n:
                self.sync(op, t)
            return
        self.mem.data_op(op, (t, self.width[key], op.pos), n)
        if name in ("pws", "pwsf") and op.chan_type == "port" and t < n:
            self.signal(op, op.channels[t])

    def sync(self, op: mscclpp.Op, t: int) -> None:
        name = op.name
        if name in ("wait", "rlxwait"):
            self.inbox[(op.rank, op.chan_type, op.channels[t])] -= 1
        elif name == "sem_acquire":
            self.sem[(op.rank, op.sems[t])] -= 1
        elif name == "sem_release":
            self.sem[(op.rank, op.sems[t])] = self.sem.get((op.rank, op.sems[t]), 0) + 1
            self.wake(("sem", op.rank, op.sems[t]))
        elif name == "flush":
            self.mem.land(op.rank, op.channels[t])
        else:
            self.signal(op, op.channels[t])

    def signal(self, op: mscclpp.Op, k: int) -> None:
        if op.chan_type == "port":
            self.mem.land(op.rank, k)  # the proxy sends it after the requests before it
        other = self.pp.pair.get((op.rank, op.chan_type, k))
        if other is not None:  # else no wait can see it (the audit says so)
            self.inbox[other] = self.inbox.get(other, 0) + 1
            self.wake(("inbox", *other))

    def finished(self, r: int) -> None:
        """A thread of rank r is done; when it is the last, the rank's call returns and the
        user reads its output (later writes into it come too late)."""
        self.left[r] -= 1
        if self.left[r] == 0:
            n = self.pp.chunks[r]["o"] * self.pp.grain * self.mem.sub
            b, off = self.mem.alias(r, "o", 0)
            self.mem.ops.append(Op("copy", r, src=Region(b, off, n), dst=Region("R", 0, n),
                                   note=f"rank {r}'s call returns: {RETURNS}"))

    def run(self) -> None:
        """Always step the first thread of the order that can go (the others wait until
        it blocks), until all are done; a deadlock stops the run. Port requests still
        pending land at the end."""
        order = self.order
        while self.ready:
            i = heapq.heappop(self.ready)
            th = order[i]
            ops = self.pp.tbs[th[0]]
            if self.pc[th] >= len(ops):
                continue
            why = self.blocked(th, ops[self.pc[th]])
            if why is not None:
                self.waiting.setdefault(why[1], []).append(i)
                continue
            written = len(self.mem.written)
            self.step(th, ops[self.pc[th]])
            self.pc[th] += 1
            if self.pc[th] == len(ops):
                self.finished(th[0][0])
            if len(self.mem.written) != written:
                for r in range(self.pp.ngpus):
                    self.wake(("packets", r))
            heapq.heappush(self.ready, i)
        stuck = []
        for th in order:
            if self.pc[th] < len(self.pp.tbs[th[0]]):
                op = self.pp.tbs[th[0]][self.pc[th]]
                why = self.blocked(th, op)
                if why is not None:  # the waits first: the threads at a nop wait for them
                    stuck.append((why[1][0] == "met", f"{op.where()} thread {th[1]} {why[0]}"))
        if stuck:
            stuck.sort(key=lambda s: s[0])
            shown = "; ".join(text for _, text in stuck[:3])
            more = f"; and {len(stuck) - 3} more" if len(stuck) > 3 else ""
            raise Stop(f"deadlock: no op can run; {shown}{more}")
        self.mem.land_all()


def is_mscclpp(head: str) -> bool:
    """Whether a JSON text (its first 4096 characters) is an MSCCL++ execution plan, as
    ``collcert audit`` detects it (:func:`collcert.auditing.is_mscclpp_head`)."""
    from collcert.auditing import is_mscclpp_head

    return is_mscclpp_head(head)
