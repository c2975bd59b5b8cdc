"""Execution plans: what each rank sends, receives, copies and reduces, in a valid order.

An execution plan is the device-independent form of a collective schedule that
``collcert smoke`` runs on real devices (and ``collcert schedule --format
msccl-xml`` compiles). It is built from a tree schedule
(:mod:`collcert.reference.execution.treeplan`) or from an MSCCL program
(:mod:`collcert.smoke.mscclplan`), needs no torch, and can be run here on the
host with :func:`run_host` (numpy), which is what the tests do without torch.

Model. Every rank holds named buffers (``"i"`` input, ``"o"`` output, ``"s"``
scratch, ``"t"`` temporaries) measured in *cells*; a cell is a fixed number of
elements chosen at run time from the data size. The plan is a list of
operations in one global order that is a valid sequential execution:

* ``send``: rank ``rank`` reads ``src`` and sends it to ``peer`` as message
  ``msg`` (the value is taken at this point: later writes to ``src`` do not
  change it);
* ``recv``: rank ``rank`` receives message ``msg`` from ``peer`` and writes it
  to ``dst``, or ``red + message`` when ``red`` is set (a reduction);
* ``copy``: ``dst = src`` on one rank; ``reduce``: ``dst = dst + src``.

Every message is sent before it is received; a message is named by its
``msg`` number, and two messages between the same ranks may be received in
either order (an MSCCL program's channels allow that). Backends that match
messages in order per pair of ranks, as NCCL does, post the receive where the
plan sends. Sends never wait; a receive waits only for its own message, which
an earlier operation sent: running the operations in the global order, or any
order that keeps the data dependencies computed by :func:`dependencies`, gives
the same result.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

BUFFERS = ("i", "o", "s", "t")


@dataclass(frozen=True)
class Region:
    """``n`` cells of buffer ``buf`` starting at cell ``off``."""

    buf: str
    off: int
    n: int

    def cells(self) -> range:
        return range(self.off, self.off + self.n)

    def __str__(self) -> str:
        return f"{self.buf}[{self.off}:{self.off + self.n}]"


@dataclass
class Op:
    kind: str  # send | recv | copy | reduce
    rank: int
    peer: int = -1
    src: Region | None = None
    dst: Region | None = None
    red: Region | None = None
    msg: int = -1
    group: tuple[Any, ...] | None = None  # (phase, tree, segment) of tree plans
    note: str = ""

    def reads(self) -> list[Region]:
        out = [r for r in (self.src, self.red) if r is not None]
        if self.kind == "reduce" and self.dst is not None:
            out.append(self.dst)
        return out

    def writes(self) -> list[Region]:
        return [self.dst] if self.dst is not None and self.kind != "send" else []


@dataclass(frozen=True)
class Segment:
    """Which tree carries which cells (for diagnostics): the data of cells
    ``[lo, hi)`` of the global data (phase ``phase``) travels on ``tree``.
    ``covered`` is the set of ranks the data reaches (out-trees) or whose
    contributions reach the root (in-trees)."""

    phase: int
    collective: str
    lo: int
    hi: int
    root: int
    tree: str
    covered: frozenset[int]


@dataclass
class Spec:
    """Where the collective's data lives, in cells (the collective's definition,
    independent of any schedule): the check compares against it.

    ``shards[r] = (offset, length)`` of rank r's part of the global data
    (allgather input, reduce-scatter output); ``inputs[r]`` / ``outputs[r]``:
    (buffer, cell offset, global offset, length) of the rank's input / output;
    a length of 0 means none (broadcast inputs off the root, reduce outputs)."""

    collective: str
    nranks: int
    cells: int
    root: int | None
    shards: list[tuple[int, int]]
    inputs: list[tuple[str, int, int, int]] = field(default_factory=list)
    outputs: list[tuple[str, int, int, int]] = field(default_factory=list)

    def reducing(self) -> bool:
        return self.collective in ("reduce-scatter", "reduce", "allreduce")


@dataclass
class Plan:
    spec: Spec
    buffers: list[dict[str, int]]  # per rank: buffer -> cells
    ops: list[Op]
    name: str = ""
    problems: list[str] = field(default_factory=list)  # static faults: the run FAILs
    notes: list[str] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # rank -> node name
    runnable: bool = True  # False when the ops stop short (an MSCCL program that deadlocks)

    @property
    def nranks(self) -> int:
        return self.spec.nranks

    def label(self, r: int) -> str:
        if r < len(self.labels) and str(self.labels[r]) != str(r):
            return f"rank {r} ({self.labels[r]})"
        return f"rank {r}"

    def messages(self) -> int:
        return sum(1 for op in self.ops if op.kind == "send")

    def validate(self) -> None:
        """Raise ValueError unless the plan is well formed (an internal check)."""
        sent: dict[int, Op] = {}
        for i, op in enumerate(self.ops):
            for reg in op.reads() + op.writes():
                size = self.buffers[op.rank].get(reg.buf, 0)
                if reg.off < 0 or reg.n <= 0 or reg.off + reg.n > size:
                    raise ValueError(f"op {i} ({op.kind} on rank {op.rank}): {reg} outside "
                                     f"a buffer of {size} cells")
            if op.kind == "send":
                if op.msg in sent:
                    raise ValueError(f"op {i}: message {op.msg} sent twice")
                sent[op.msg] = op
            elif op.kind == "recv":
                s = sent.pop(op.msg, None)
                if s is None or s.rank != op.peer or s.peer != op.rank:
                    raise ValueError(f"op {i}: receives message {op.msg} before it is sent")
                assert s.src is not None and op.dst is not None
                if s.src.n != op.dst.n or (op.red is not None and op.red.n != op.dst.n):
                    raise ValueError(f"op {i}: message {op.msg} of {s.src.n} cells lands in "
                                     f"{op.dst}")
        if sent:
            raise ValueError(f"{len(sent)} messages are never received")


def dependencies(plan: Plan) -> list[list[int]]:
    """For each operation, the earlier operations it must wait for: the send of
    its message, and every read-after-write, write-after-read and
    write-after-write on the same cells of the same rank (cell granularity).
    Any execution that keeps these and runs each op once gives the result of
    the global order."""
    last_write: dict[tuple[int, str, int], int] = {}
    readers: dict[tuple[int, str, int], list[int]] = {}
    send_of: dict[int, int] = {}
    deps: list[list[int]] = []
    for i, op in enumerate(plan.ops):
        mine: set[int] = set()
        if op.kind == "recv":
            mine.add(send_of[op.msg])
        for reg in op.reads():
            for c in reg.cells():
                w = last_write.get((op.rank, reg.buf, c))
                if w is not None:
                    mine.add(w)
        for reg in op.writes():
            for c in reg.cells():
                key = (op.rank, reg.buf, c)
                w = last_write.get(key)
                if w is not None:
                    mine.add(w)
                mine.update(readers.pop(key, ()))
        for reg in op.reads():
            for c in reg.cells():
                readers.setdefault((op.rank, reg.buf, c), []).append(i)
        for reg in op.writes():
            for c in reg.cells():
                last_write[(op.rank, reg.buf, c)] = i
        if op.kind == "send":
            send_of[op.msg] = i
        mine.discard(i)
        deps.append(sorted(mine))
    return deps


# ---------------------------------------------------------------- data and check

def reduce_values_decodable(nranks: int) -> bool:
    """Reduction data encodes each rank as a bit (decodable) up to 56 ranks."""
    return nranks <= 56


def input_values(spec: Spec, rank: int, cell_elems: int) -> np.ndarray:
    """The integer data rank ``rank`` starts with (int64), element by element.

    Gather data (allgather, broadcast): element e of the global data is e + 1, so
    a wrong value names the element it came from. Reduction data: rank q holds
    2^q·(1 + e mod 61) at global element e (sums exact in int64; the bits of
    sum / (1 + e mod 61) say whose contributions arrived), or, above 56 ranks,
    1 + (131·q + e) mod 1009."""
    _, _, goff, n = spec.inputs[rank]
    e = np.arange(goff * cell_elems, (goff + n) * cell_elems, dtype=np.int64)
    if not spec.reducing():
        return e + 1
    if reduce_values_decodable(spec.nranks):
        return (np.int64(1) << np.int64(rank)) * (1 + e % 61)
    return 1 + (131 * rank + e) % 1009


def expected_values(spec: Spec, rank: int, cell_elems: int) -> np.ndarray:
    _, _, goff, n = spec.outputs[rank]
    e = np.arange(goff * cell_elems, (goff + n) * cell_elems, dtype=np.int64)
    if spec.collective == "alltoall":  # block src of rank g's output: src's block for g
        per = n // spec.nranks
        j = np.arange(n * cell_elems, dtype=np.int64) // cell_elems
        src, k = j // per, j % per
        cells = src * n + rank * per + k
        e = cells * cell_elems + np.arange(n * cell_elems, dtype=np.int64) % cell_elems
    if not spec.reducing():
        return e + 1
    if reduce_values_decodable(spec.nranks):
        return ((np.int64(1) << np.int64(spec.nranks)) - 1) * (1 + e % 61)
    total = np.zeros_like(e)
    for q in range(spec.nranks):
        total += 1 + (131 * q + e) % 1009
    return total


@dataclass
class Mismatch:
    rank: int
    offset: int  # element offset in the rank's output
    element: int  # global element index
    expected: int
    got: int
    count: int  # wrong elements on this rank


def first_mismatch(spec: Spec, rank: int, got: np.ndarray, cell_elems: int) -> Mismatch | None:
    want = expected_values(spec, rank, cell_elems)
    if got.shape != want.shape:
        raise ValueError(f"rank {rank}: output has {got.shape[0]} elements, expected "
                         f"{want.shape[0]}")
    bad = np.flatnonzero(got != want)
    if bad.size == 0:
        return None
    j = int(bad[0])
    goff = spec.outputs[rank][2]
    return Mismatch(rank, j, goff * cell_elems + j, int(want[j]), int(got[j]), int(bad.size))


def explain_value(spec: Spec, m: Mismatch, cell_elems: int) -> str:
    """What the wrong value is, decoded from the data encoding."""
    if m.got == -1:
        return "never written"
    if not spec.reducing():
        src = m.got - 1
        if 0 <= src < spec.cells * cell_elems:
            owner = owner_of(spec, src // cell_elems)
            whose = f" of rank {owner}'s shard" if owner is not None else ""
            return f"the value of global element {src}{whose} (misplaced data)"
        return "a value that is no element of the data"
    if not reduce_values_decodable(spec.nranks):
        return f"differs from the sum by {m.got - m.expected}"
    a = 1 + m.element % 61
    if m.got % a == 0 and 0 <= m.got // a < (1 << spec.nranks):
        mask = m.got // a
        have = {q for q in range(spec.nranks) if mask >> q & 1}
        lack = sorted(set(range(spec.nranks)) - have)
        if lack:
            shown = ", ".join(str(q) for q in lack[:8]) + (" …" if len(lack) > 8 else "")
            return f"the sum lacks the contribution of rank(s) {shown}"
    return "not the sum of distinct contributions (a contribution counted twice or misplaced)"


def owner_of(spec: Spec, cell: int) -> int | None:
    for r, (off, n) in enumerate(spec.shards):
        if off <= cell < off + n:
            return r
    return None


def describe_cell(plan: Plan, rank: int, cell: int) -> list[str]:
    """Which root's shard and which tree(s) the global cell belongs to, and why
    ``rank`` may lack it (the trees that fail it; all of them when none does)."""
    out: list[str] = []
    spec = plan.spec
    hits = [s for s in plan.segments if s.lo <= cell < s.hi]
    phases = sorted({s.phase for s in plan.segments})
    bad: list[str] = []
    for ph in phases:
        mine = [s for s in hits if s.phase == ph]
        if not mine:
            root = owner_of(spec, cell)
            whose = f"{plan.label(root)}'s shard" if root is not None else "the data"
            bad.append(f"cell {cell} of {whose} is carried by no tree in phase {ph + 1} "
                       "(that root's multiplicities sum to less than k)")
            continue
        for s in mine:
            if s.collective in ("allgather", "broadcast"):
                lost = rank not in s.covered
                why = (f"which never reaches {plan.label(rank)}" if lost
                       else f"which reaches {plan.label(rank)}")
            else:
                missing = sorted(set(range(spec.nranks)) - s.covered)
                lost = bool(missing)
                why = ("in which the contributions of rank(s) "
                       f"{', '.join(map(str, missing[:8]))} never reach the root" if missing
                       else "which collects every contribution")
            line = f"{s.collective}: {plan.label(s.root)}'s data, {s.tree}, {why}"
            (bad if lost else out).append(line)
    return bad or out
    return out


# ---------------------------------------------------------------- host execution

def allocate(plan: Plan, cell_elems: int) -> list[dict[str, np.ndarray]]:
    bufs = []
    for r in range(plan.nranks):
        mine = {b: np.full(n * cell_elems, -1, dtype=np.int64)
                for b, n in plan.buffers[r].items()}
        b, off, _, n = plan.spec.inputs[r]
        if n:
            mine[b][off * cell_elems:(off + n) * cell_elems] = input_values(plan.spec, r,
                                                                           cell_elems)
        bufs.append(mine)
    return bufs


def outputs_of(plan: Plan, bufs: list[dict[str, Any]], cell_elems: int) -> list[Any]:
    res = []
    for r in range(plan.nranks):
        b, off, _, n = plan.spec.outputs[r]
        res.append(bufs[r][b][off * cell_elems:(off + n) * cell_elems] if n else None)
    return res


def run_host(plan: Plan, cell_elems: int = 1,
             order: Iterable[int] | None = None) -> list[np.ndarray | None]:
    """Run the plan with numpy on the host, in the global order (or ``order``,
    a permutation that keeps :func:`dependencies`); return each rank's output."""
    bufs = allocate(plan, cell_elems)
    msgs: dict[int, np.ndarray] = {}

    def view(r: int, reg: Region) -> np.ndarray:
        return bufs[r][reg.buf][reg.off * cell_elems:(reg.off + reg.n) * cell_elems]

    for i in (range(len(plan.ops)) if order is None else order):
        op = plan.ops[i]
        if op.kind == "send":
            assert op.src is not None
            msgs[op.msg] = view(op.rank, op.src).copy()
        elif op.kind == "recv":
            assert op.dst is not None
            data = msgs.pop(op.msg)
            if op.red is not None:
                data = view(op.rank, op.red) + data
            view(op.rank, op.dst)[:] = data
        elif op.kind == "copy":
            assert op.src is not None and op.dst is not None
            view(op.rank, op.dst)[:] = view(op.rank, op.src)
        elif op.kind == "reduce":
            assert op.src is not None and op.dst is not None
            view(op.rank, op.dst)[:] += view(op.rank, op.src)
    return [None if o is None else o.copy() for o in outputs_of(plan, bufs, cell_elems)]
