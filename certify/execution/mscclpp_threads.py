"""The threads of an MSCCL++ threadblock and what each knows: the executor's thread model
for :mod:`.mscclpp_sim` (docs/mscclpp.md, "The executor's threads").

microsoft/mscclpp ``src/core/include/execution_kernel.hpp`` runs every op of a
threadblock on all ``num_threads_per_block`` threads of its block, with nothing between
two ops that waits for the other threads (``executionKernel``, :867-877). Inside the ops:

* ``signal``/``wait`` (and relaxed), ``sem_*``, a port channel's ``put``/``pws``/``pwsf``/
  ``ppkt`` pushes: thread i < n handles the op's i-th channel, semaphore or output; the
  other threads return at once (:82-127, :168-186, :275-289, :671-685);
* every other data op is spread over all the threads (``idx = threadIdx.x; idx +=
  blockDim.x``); ``nop`` is ``__syncthreads()`` (:75); ``barrier`` a ``DeviceSyncer``
  (``__syncthreads``, a release/acquire counter across blocks, ``__syncthreads``).

Knowledge is a pair of vector clocks (:class:`Know`): ``data``, what is visible
(happens-before: release ``signal`` → acquire ``wait``, semaphores, barriers, ``nop``),
and ``exe`` ⊇ ``data``, what has happened (relaxed signals and LL packet flags order
execution only). A clock maps an actor to a stamp: a threadblock ``(rank, tb)`` to the
ops *all* its threads have finished (``base + pos + 1``), the user ``(rank, -1)`` to
its writes between two calls, a port channel's proxy to its transfers
(:func:`proxy_done`) and to the requests pushed into it (:func:`proxy_push`), one lane
per pushing thread: the proxy takes a channel's requests in the order they were pushed,
which orders two threads' requests only when their pushes are ordered.

A data op runs on every thread, so it acts with what *every* thread of its block knows:
:attr:`Threads.common`, joined at each ``nop``/``barrier`` (and at the kernel's
start). A synchronising op acts on its threads 0..n−1 (:meth:`Threads.thread`), which
may know more than the others until the next ``nop``. A block of one thread
(``num_threads_per_block`` 1) runs everything in order on that thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .mscclpp import Op, Plan
from .mscclpp_cells import Clock, Key, join

USER = -1  # the tb slot of the user: (rank, USER) stamps its writes between two calls
SYNC_OPS = ("signal", "rlxsignal", "wait", "rlxwait", "flush", "sem_acquire", "sem_release")
PUBLISHING = ("signal", "rlxsignal", "sem_release", "pws", "pwsf")
WAITING = ("wait", "rlxwait", "sem_acquire")
WEAK = ("rppkt", "upkt", "repkt", "respkt", "recpkt", "recspkt")  # LL reads: flags only


def _lane(ch: int, lane: tuple[int, int]) -> int:
    return (ch * 100_001 + lane[0]) * 1024 + lane[1]


def proxy_done(rank: int, ch: int, lane: tuple[int, int]) -> Key:
    """The proxy of rank ``rank``'s port channel ``ch``: the transfers it has done of the
    requests one thread pushed (``lane`` = (threadblock, thread); stamp = their count)."""
    return (rank, -2 - 2 * _lane(ch, lane))


def proxy_push(rank: int, ch: int, lane: tuple[int, int]) -> Key:
    """The requests that thread pushed into that channel's FIFO (stamp = their count)."""
    return (rank, -3 - 2 * _lane(ch, lane))


def is_proxy(key: Key) -> bool:
    return key[1] <= -2


@dataclass
class Know:
    """What an actor knows: ``data`` (visible) and ``exe`` (happened; ⊇ data). In a plan
    with no relaxed synchronisation (no ``rlx*`` on memory channels, no LL packets) the
    two are one dict (:func:`fresh`)."""

    data: Clock = field(default_factory=dict)
    exe: Clock = field(default_factory=dict)

    def copy(self) -> Know:
        data = dict(self.data)
        return Know(data, data if self.exe is self.data else dict(self.exe))

    def join(self, other: Know, strong: bool = True) -> None:
        """Learn ``other``: all of it through a release/acquire pair (``strong``), its
        execution only through a relaxed one."""
        if strong:
            join(self.data, other.data)
        if self.exe is not self.data or other.exe is not other.data:
            join(self.exe, other.exe)  # exe ⊇ data, in every Know

    def stamp(self, key: Key, at: int) -> None:
        for c in (self.data, self.exe):
            if c.get(key, 0) < at:
                c[key] = at


def meet(knows: list[Know]) -> Know:
    """What every one of ``knows`` knows (a wait may receive any of them first)."""
    first = knows[0]
    data = {k: v for k in first.data if (v := min(x.data.get(k, 0) for x in knows))}
    if first.exe is first.data:
        return Know(data, data)
    return Know(data, {k: v for k in first.exe if (v := min(x.exe.get(k, 0) for x in knows))})


def fresh(plan: Plan) -> Know:
    """An empty :class:`Know` for ``plan``: one dict for both clocks when nothing in the
    plan orders execution without data."""
    weak = any(op.name in WEAK or (op.name in ("rlxsignal", "rlxwait")
                                   and op.chan_type != "port")
               for ops in plan.tbs.values() for op in ops)
    if weak:
        return Know()
    shared: Clock = {}
    return Know(shared, shared)


def items(op: Op) -> int:
    """How many threads an op puts to work on its channels, semaphores or outputs."""
    if op.name in ("sem_acquire", "sem_release"):
        return len(op.sems)
    if op.name == "flush":  # handleFlush counts op.nOutputs: the op's dst_buff entries
        return min(len(op.dst), len(op.channels))
    if op.name in SYNC_OPS:
        return len(op.channels)
    if op.chan_type == "port" and op.name in ("put", "pws", "pwsf", "ppkt", "rppkt"):
        return len(op.dst)
    return 0


class _Either:
    """A clock read as the larger of two (a thread's block's and its own since)."""

    __slots__ = ("a", "b")

    def __init__(self, a: Clock, b: Clock) -> None:
        self.a, self.b = a, b

    def get(self, key: Key, default: int = 0) -> int:
        return max(self.a.get(key, default), self.b.get(key, default))


class ThreadKnow:
    """Thread i's knowledge: its block's ``common`` (fixed until the next ``nop``) and
    ``delta``, what it learnt since; read, joined and stamped as a :class:`Know`."""

    def __init__(self, common: Know, blank: Know) -> None:
        self.common, self.delta = common, blank.copy()

    @property
    def data(self) -> _Either:
        return _Either(self.common.data, self.delta.data)

    @property
    def exe(self) -> _Either:
        return _Either(self.common.exe, self.delta.exe)

    def join(self, other: Know, strong: bool = True) -> None:
        if strong:
            _over(self.delta.data, other.data, self.common.data)
        if self.delta.exe is not self.delta.data or other.exe is not other.data:
            _over(self.delta.exe, other.exe, self.common.exe)

    def stamp(self, key: Key, at: int) -> None:
        self.delta.stamp(key, at)

    def copy(self) -> Know:
        out = self.common.copy()
        out.join(self.delta)
        return out


def _over(into: Clock, other: Clock, base: Clock) -> None:
    """``into`` learns from ``other`` what neither it nor ``base`` knows."""
    got, known = into.get, base.get
    into.update({k: t for k, t in other.items() if t > known(k, 0) and t > got(k, 0)})


class Threads:
    """Per threadblock: ``common`` (what all its threads know) and ``extra[key][i]``,
    thread i's knowledge where it has learnt more since the last ``nop``."""

    def __init__(self, plan: Plan) -> None:
        self.width = plan.threads
        self.blank = fresh(plan)
        self.common: dict[Key, Know] = {k: self.blank.copy() for k in plan.tbs}
        self.extra: dict[Key, dict[int, ThreadKnow]] = {}
        self.epoch: dict[Key, int] = {k: 0 for k in plan.tbs}  # nops and barriers passed

    def thread(self, key: Key, i: int) -> ThreadKnow:
        """Thread i's knowledge, to read or to add to."""
        mine = self.extra.setdefault(key, {})
        if i not in mine:
            mine[i] = ThreadKnow(self.common[key], self.blank)
        return mine[i]

    def threads(self, key: Key) -> list[ThreadKnow]:
        """The knowledge of the threads that learnt more than ``common``."""
        return list(self.extra.get(key, {}).values())

    def all(self, key: Key) -> Know:
        """What the block's threads know together (a ``__syncthreads`` joins it)."""
        out = self.common[key].copy()
        for know in self.threads(key):
            out.join(know.delta)
        return out

    def sync(self, key: Key, at: int) -> None:
        """A ``nop`` (``__syncthreads``): every thread learns what the others know, and that
        all of them finished the ops stamped below ``at``."""
        joined = self.common[key]
        for know in self.extra.pop(key, {}).values():
            joined.join(know.delta)
        joined.stamp(key, at)
        self.epoch[key] += 1

    def reset(self, key: Key, know: Know) -> None:
        self.common[key] = know
        self.extra.pop(key, None)
        self.epoch[key] += 1


def last_sync(ops: list[Op], pos: int) -> int:
    """The index of the last ``nop``/``barrier`` before op ``pos`` (-1: the kernel start)."""
    return next((i for i in range(pos - 1, -1, -1) if ops[i].name in ("nop", "barrier")), -1)


def published_early(plan: Plan, who: Key, at: int, base: int) -> str | None:
    """Rule 2: a synchronising op of ``who``'s block after its op stamped ``at`` with no
    ``nop`` between: the words saying so, or None."""
    if who[1] < 0 or who not in plan.tbs or at <= base:
        return None
    ops = plan.tbs[who]
    start = at - base  # the op after the write
    for i in range(start, len(ops)):
        if ops[i].name in ("nop", "barrier"):
            return None
        if ops[i].name in PUBLISHING:
            return (f"rank {who[0]} tb {who[1]} op {i} ({ops[i].name}) publishes it with no "
                    f"nop after op {start - 1}: its thread signals while the others still "
                    "work (rule 2: stores before signal)")
    return None


def rule(plan: Plan, op: Op, who: Key, at: int, base: int, threads_know: bool,
         exe_knows: bool, op_at: int) -> str:
    """Why an access of ``op`` is not ordered after ``who``'s (stamp ``at``): the rule of
    docs/mscclpp.md it breaks, in words."""
    me = (op.rank, op.tb)
    if threads_know:
        ops = plan.tbs[me]
        low = last_sync(ops, op.pos)
        w = next((i for i in range(op.pos - 1, low, -1) if ops[i].name in WAITING), None)
        what = f"its op {w} ({ops[w].name})" if w is not None else "a synchronising op"
        return (f"only the thread(s) of {what} know it, and no nop follows that before op "
                f"{op.pos}: the other threads run ahead (rule 1: wait before data)")
    if is_proxy(who):
        return ("nothing tells it that transfer is done: a port put's data lands when the "
                "proxy gets to it, which only a later signal on that channel (pws, pwsf) "
                "tells the peer and only pwsf the pusher, and requests two threads push "
                "with no nop between may be done in either order; a flush op as the DSL "
                "writes it flushes nothing (rule 5: port data lands late)")
    if who == me and at > base:
        return (f"no nop or barrier separates op {at - base - 1} from op {op_at - base - 1} "
                "of this threadblock, whose threads handle different elements in each op "
                "(rule 3: data after data)")
    early = published_early(plan, who, at, base)
    if early:
        return early
    if exe_knows:
        return ("only relaxed signals (rlxsignal/rlxwait) or LL flags order the two: they "
                "order execution, not data (rule 4: relaxed is not a fence)")
    return ("nothing orders the two (no signal/wait, barrier or semaphore between them)")


def why_unneeded(ops: list[Op], pos: int) -> tuple[str, str]:
    """Why the ``nop``/``barrier`` at ``pos`` orders nothing the executor needs, for a plan
    the audit finds as valid without it: (kind, words); kind is ``start``, ``end``,
    ``threads`` (only ops of threads 0..n-1 around it) or ``ordered`` (otherwise)."""
    if all(op.name in ("nop", "barrier") for op in ops[:pos]):
        return "start", "kernel start: no op of its threadblock comes before it"
    if all(op.name in ("nop", "barrier") for op in ops[pos + 1:]):
        return "end", "kernel end: the call ends when every thread of every block does"
    lo = last_sync(ops, pos)
    hi = next((i for i in range(pos + 1, len(ops)) if ops[i].name in ("nop", "barrier")),
              len(ops))
    near = ops[lo + 1:pos] + ops[pos + 1:hi]
    if all(op.name in SYNC_OPS or items(op) for op in near):
        names = ", ".join(op.name for op in near)
        return "threads", (f"it separates only ops done by threads 0..n-1 ({names}): each "
                           "thread does its channels' ops in its own program order")
    return "ordered", ("every access it separated is still ordered: by a later nop and "
                       "signal, or across the kernel boundary")
