"""Execution plans from MSCCL algorithm programs.

The program is read by the project's safe reader (:func:`collcert.certify.execution.msccl.read`)
and run step by step on the host, as the MSCCL runtime would run it: every
threadblock executes its steps in order, a step waits for its dependency
(``depid``/``deps``) and, if it receives, for the next message on its
connection (sender, receiver, channel). The order in which the steps ran is
the plan's global order; step semantics:

``s`` send ``srcbuf[srcoff:+cnt]``; ``r`` receive into ``dstbuf``; ``rcs``
receive, copy to ``dstbuf`` and send it on; ``rrc`` receive, add ``srcbuf`` and
write ``dstbuf``; ``rrs`` receive, add ``srcbuf`` and send the sum (nothing is
written); ``rrcs`` both; ``cpy`` copy; ``re`` ``dstbuf += srcbuf``; ``nop`` waits
only. In-place programs alias the input inside the output (allgather,
allreduce) or the output inside the input (reduce-scatter), as MSCCL does.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from collcert.certify.execution import Program, Threadblock
from collcert.reference.execution import Op, Plan, Region, Spec
from collcert.reference.model import ScheduleError


def plan_from_program(prog: Program, inplace: bool | None = None) -> Plan:
    """The plan of ``prog`` run in place (``inplace=True``) or out of place; by default
    in the first mode it is marked for (in place when ``inplace="1"``)."""
    n = prog.ngpus
    coll = prog.collective
    if coll not in ("allgather", "reduce-scatter", "allreduce", "alltoall", "broadcast",
                    "reduce"):
        raise ScheduleError(f"collcert smoke runs allgather, reduce-scatter, allreduce, "
                            f"alltoall, broadcast and reduce MSCCL programs, not {coll}")
    c, per = prog.nchunks, prog.per_rank()
    real_i, real_o = prog.sizes()
    if inplace is None:
        inplace = (prog.modes() or [False])[0]
    whole = ("allreduce", "alltoall", "broadcast", "reduce")  # in place: output = input

    def alias(g: int, buf: str, off: int) -> tuple[str, int]:
        if inplace:
            if coll == "allgather" and buf == "i":
                return "o", g * per + off
            if coll == "reduce-scatter" and buf == "o":
                return "i", g * per + off
            if coll in whole and buf == "o":
                return "i", off
        return buf, off

    spec = _spec(prog, coll, n, c, per, real_i, real_o, alias)
    buffers = [{"i": real_i, "o": real_o, "s": prog.chunks[g]["s"], "t": 0} for g in range(n)]
    plan = Plan(spec, buffers, [], name=prog.name or "MSCCL program")
    if inplace:
        plan.notes.append("run in place, as the program declares (inplace=\"1\")"
                          if prog.inplace else "run in place")
    _run(prog, plan, alias)
    return finish(plan, prog.refusals, "MSCCL")


def finish(plan: Plan, refusals: list[str], runtime: str) -> Plan:
    """A plan built from a runtime's program: not runnable when building it found
    problems, else validated; the runtime's own refusals come first among its problems."""
    if plan.problems:
        plan.runnable = False
    else:
        plan.validate()
    plan.problems = [f"the {runtime} executor would refuse to load it: {r}"
                     for r in refusals] + plan.problems
    return plan


def _spec(prog: Program, coll: str, n: int, c: int, per: int, real_i: int, real_o: int,
          alias: Callable[[int, str, int], tuple[str, int]]) -> Spec:
    """Where the collective's data lives (execplan.Spec): alltoall's rank q holds the
    global cells q·C…, its block for rank g at q·C + g·per; broadcast / reduce: the root's
    data (reduce: every rank's input, the root's output)."""
    root = prog.root
    if coll in ("broadcast", "reduce"):
        shards = [(0, c) if q == root else (0, 0) for q in range(n)]
    elif coll == "alltoall":
        shards = [(q * c, c) for q in range(n)]
    else:
        shards = [(q * per, per) if coll != "allreduce" else (0, c) for q in range(n)]
    spec = Spec(coll, n, c * n if coll == "alltoall" else c, root, shards)
    for q in range(n):
        b, off = alias(q, "i", 0)
        goff = {"allgather": q * per, "alltoall": q * c}.get(coll, 0)
        size = 0 if coll == "broadcast" and q != root else real_i
        spec.inputs.append((b, off, goff, size))
        b, off = alias(q, "o", 0)
        size = 0 if coll == "reduce" and q != root else real_o
        spec.outputs.append((b, off, q * per if coll == "reduce-scatter" else 0, size))
    return spec


RECEIVES = ("r", "rcs", "rrc", "rrs", "rrcs")  # steps that take the next message
REDUCES = ("rrc", "rrs", "rrcs")  # receives that add srcbuf
FORWARDS = ("rcs", "rrs", "rrcs")  # receives that send on what they got


def _run(prog: Program, plan: Plan, al: Callable[[int, str, int], tuple[str, int]]) -> None:
    """Run ``prog`` on the host, appending its steps to ``plan.ops`` in the order they ran
    and what stops it to ``plan.problems``."""
    problem = _unreleased_wait(prog)
    if problem is not None:
        plan.problems.append(problem)
        return
    executor = _Executor(prog, plan, al)
    executor.run()
    left = sum(len(q) for q in executor.queues.values())
    if left and not plan.problems:
        plan.problems.append(f"{left} sent message(s) are never received")


def _unreleased_wait(prog: Program) -> str | None:
    """The first wait that no step of the awaited threadblock signals: it spins forever."""
    by_id = {(tb.gpu, tb.tbid): tb for tb in prog.tbs}
    for tb in prog.tbs:
        for op in tb.ops:
            for t, s in op.waits:
                other = by_id.get((tb.gpu, t))
                if other is None or not any(o.signals and o.flag >= s for o in other.ops):
                    return (f"deadlock: {op.where(tb.gpu, tb.tbid)} waits for gpu {tb.gpu} tb "
                            f"{t} step {s}, which nothing signals")
    return None


class _Executor:
    """The MSCCL runtime on the host: each threadblock's next step and signal flag, the
    messages in flight on each connection (sender, receiver, channel); every step that
    runs becomes an operation of the plan."""

    def __init__(self, prog: Program, plan: Plan,
                 al: Callable[[int, str, int], tuple[str, int]]) -> None:
        self.prog = prog
        self.plan = plan
        self.alias = al
        self.queues: dict[tuple[int, int, int], deque[tuple[int, int]]] = {}  # -> (msg, cnt)
        keys = [(tb.gpu, tb.tbid) for tb in prog.tbs]
        self.pc = {key: 0 for key in keys}
        self.flag = {key: -1 for key in keys}
        self.msg = 0

    def run(self) -> None:
        """Sweep the threadblocks, each as far as it can go, until all are done or none
        can move (a deadlock) or a step is wrong."""
        plan = self.plan
        active = [tb for tb in self.prog.tbs if tb.ops]
        while active and not plan.problems:
            moved = False
            still = []
            for tb in active:
                key = (tb.gpu, tb.tbid)
                while self.pc[key] < len(tb.ops) and not plan.problems:
                    if not self.step(tb):
                        break
                    moved = True
                if self.pc[key] < len(tb.ops):
                    still.append(tb)
            active = still
            if not moved and active and not plan.problems:
                stuck = ", ".join(tb.ops[self.pc[(tb.gpu, tb.tbid)]].where(tb.gpu, tb.tbid)
                                  for tb in active[:3])
                plan.problems.append(f"deadlock: no step can run; waiting: {stuck}"
                                     + (f" and {len(active) - 3} more" if len(active) > 3
                                        else ""))

    def step(self, tb: Threadblock) -> bool:
        """Run the next step of ``tb`` if it can run now, and move ``tb`` past it (its
        flag set if the step signals); False when it waits (for a flag or a message) or
        is wrong (a problem is then recorded)."""
        key = (tb.gpu, tb.tbid)
        st = tb.ops[self.pc[key]]
        if any(self.flag[(tb.gpu, t)] < s for t, s in st.waits):
            return False
        g, k, where = tb.gpu, st.kind, st.where(tb.gpu, tb.tbid)
        if k in RECEIVES:
            q = self.queues.get((tb.recv, g, tb.chan))
            if not q:
                return False
            m, cnt = q.popleft()
            if cnt != st.cnt:
                self.plan.problems.append(f"{where}: receives {st.cnt} chunks but the "
                                          f"matching send from gpu {tb.recv} sends {cnt}")
                return False
            red = (self.region(g, st.srcbuf, st.srcoff, st.cnt, where) if k in REDUCES
                   else None)
            dst = (self.temp(g, st.cnt) if k == "rrs"
                   else self.region(g, st.dstbuf, st.dstoff, st.cnt, where))
            if dst is None or (red is None and k in REDUCES):
                return False
            self.plan.ops.append(Op("recv", g, tb.recv, dst=dst, red=red, msg=m, note=where))
            if k in FORWARDS:
                self.send(tb, dst, st.cnt, where)
        elif k == "s":
            src = self.region(g, st.srcbuf, st.srcoff, st.cnt, where)
            if src is None:
                return False
            self.send(tb, src, st.cnt, where)
        elif k in ("cpy", "re") and st.cnt:
            dst = self.region(g, st.dstbuf, st.dstoff, st.cnt, where)
            for off in (st.reductions if k == "re" else [st.srcoff]):
                src = self.region(g, st.srcbuf, off, st.cnt, where)
                if src is None or dst is None:
                    return False
                self.plan.ops.append(Op("copy" if k == "cpy" else "reduce", g, src=src,
                                        dst=dst, note=where))
        if self.plan.problems:
            return False
        self.pc[key] += 1
        if st.signals:
            self.flag[key] = max(self.flag[key], st.flag)
        return True

    def region(self, g: int, buf: str, off: int, cnt: int, where: str) -> Region | None:
        """``buf[off:+cnt]`` of gpu ``g`` (aliased in place), or None and a problem when it
        lies outside the buffer."""
        b, o = self.alias(g, buf, off)
        size = self.plan.buffers[g].get(b, 0)
        if b not in ("i", "o", "s") or off < 0 or o < 0 or o + cnt > size:
            self.plan.problems.append(f"{where}: {buf}[{off}:{off + cnt}] lies outside gpu "
                                      f"{g}'s {buf} buffer")
            return None
        return Region(b, o, cnt)

    def send(self, tb: Threadblock, src: Region, cnt: int, where: str) -> None:
        self.plan.ops.append(Op("send", tb.gpu, tb.send, src=src, msg=self.msg, note=where))
        self.queues.setdefault((tb.gpu, tb.send, tb.chan), deque()).append((self.msg, cnt))
        self.msg += 1

    def temp(self, g: int, cnt: int) -> Region:
        """Fresh scratch space on gpu ``g`` (what an rrs step sends on)."""
        off = self.plan.buffers[g]["t"]
        self.plan.buffers[g]["t"] = off + cnt
        return Region("t", off, cnt)
