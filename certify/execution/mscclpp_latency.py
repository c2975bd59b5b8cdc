"""The latency term of an MSCCL++ plan: the longest chain of remote hops it waits on.

:mod:`.mscclpp_sim` runs the plan's first call once more, carrying a time beside each
threadblock: a threadblock's time rises only where it waits on another rank, by the
α-latency ``cost(p, q)`` of the hop (the caller's: the least α of a route from rank p's
node to rank q's):

* a signal (``signal``, ``rlxsignal``, ``pws``, ``pwsf``) reaches the wait on the other
  end of its channel at the signaller's time + cost(signaller, peer);
* an LL packet written into rank q is read (the reader waits for its flag) at the
  writer's time + cost(writer, q);
* a remote read (``get``, ``rre``, ``rres``) costs cost(owner, reader) to the reader;
* barriers and device semaphores pass the latest time of the threadblocks they join,
  at no cost (they are local to a rank);
* data put into another rank lands at the putter's time + cost; the plan ends when its
  last threadblock or its last put does.

The latency is that end: the α-β model's L, with the number of hops on the chain. A
plan is only timed once :func:`.mscclpp_sim.run` finds it valid.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from fractions import Fraction

from ..model import Verdict
from .mscclpp import Op, Plan, Ref
from .mscclpp_cells import Content, Key, Loc
from .mscclpp_ops import Actor
from .mscclpp_sim import _Run
from .mscclpp_threads import Know

Stamp = tuple[Fraction, int]  # (α-latency, remote hops)
ZERO: Stamp = (Fraction(0), 0)


def _after(s: Stamp, cost: Fraction) -> Stamp:
    return (s[0] + cost, s[1] + 1)


class _Timed(_Run):
    def __init__(self, plan: Plan, v: Verdict, cost: Callable[[int, int], Fraction]) -> None:
        super().__init__(plan, v)
        self.cost = cost
        self.t: dict[Key, Stamp] = {k: ZERO for k in plan.tbs}
        self.inbox_t: dict[tuple[int, str, int], deque[Stamp]] = {}
        self.sem_t: dict[tuple[int, int], deque[Stamp]] = {
            (r, s): deque(ZERO for _ in range(init)) for r, inits in plan.semaphores.items()
            for s, init in enumerate(inits)}
        self.arrived_t: dict[tuple[int, int], dict[Key, Stamp]] = {}
        self.released_t: dict[Key, Stamp] = {}
        self.ptime: dict[Loc, Stamp] = {}
        self.end: Stamp = ZERO

    def send(self, op: Op, k: int, msg: Know, strong: bool, thread: int) -> None:
        other = self.plan.pair.get((op.rank, op.chan_type, k))
        if other is not None:
            peer = self.plan.peers[(op.rank, op.chan_type)][k]
            self.inbox_t.setdefault(other, deque()).append(
                _after(self.t[(op.rank, op.tb)], self.cost(op.rank, peer)))
        super().send(op, k, msg, strong, thread)

    def blocked(self, op: Op) -> str | None:
        key = (op.rank, op.tb)
        fresh = op.name == "barrier" and key not in self.released
        if fresh:
            self.arrived_t.setdefault((op.rank, op.barrier), {})[key] = self.t[key]
        why = super().blocked(op)
        if fresh and why is None:  # this arrival released the group
            group = self.arrived_t.pop((op.rank, op.barrier))
            latest = max(group.values())
            for member in group:
                self.released_t[member] = latest
        return why

    def execute(self, op: Op) -> None:
        key = (op.rank, op.tb)
        if op.name in ("wait", "rlxwait"):
            for k in op.channels:
                self.t[key] = max(self.t[key], self.inbox_t[(op.rank, op.chan_type, k)].popleft())
        elif op.name == "sem_acquire":
            for s in op.sems:
                self.t[key] = max(self.t[key], self.sem_t[(op.rank, s)].popleft())
        elif op.name == "barrier":
            self.t[key] = max(self.t[key], self.released_t.pop(key))
        super().execute(op)
        if op.name == "sem_release":
            for s in op.sems:
                if (op.rank, s) in self.sem_t:
                    self.sem_t[(op.rank, s)].append(self.t[key])

    def read(self, op: Op, ref: Ref, wait: bool = False,
             actor: Actor | None = None) -> list[Content] | None:
        key = (op.rank, op.tb)
        if wait:
            for j in self.cells(op, ref) or ():
                self.t[key] = max(self.t[key], self.ptime.get(self.loc(ref.rank, ref.buf, j), ZERO))
        return super().read(op, ref, wait, actor)

    def fetch(self, op: Op, ref: Ref) -> list[Content] | None:
        data = super().fetch(op, ref)
        if ref.rank != op.rank:
            key = (op.rank, op.tb)
            self.t[key] = _after(self.t[key], self.cost(ref.rank, op.rank))
        return data

    def write(self, op: Op, ref: Ref, data: list[Content], actor: Actor | None = None,
              count: bool = True) -> None:
        super().write(op, ref, data, actor, count)
        me = self.t[(op.rank, op.tb)]
        lands = me if ref.rank == op.rank else _after(me, self.cost(op.rank, ref.rank))
        self.end = max(self.end, lands)
        if ref.buf.startswith("P"):
            for j in self.cells(op, ref) or ():
                self.ptime[self.loc(ref.rank, ref.buf, j)] = lands


def latency(plan: Plan, cost: Callable[[int, int], Fraction]) -> Stamp | None:
    """(α-latency, hops) of the plan's first call, or None where its run fails (check it
    with :func:`.mscclpp_sim.run` first)."""
    v = Verdict("MSCCL++ plan latency")
    sim = _Timed(plan, v, cost)
    sim.run(final=False)
    if not v.ok:
        return None
    return max([sim.end, *sim.t.values()])
