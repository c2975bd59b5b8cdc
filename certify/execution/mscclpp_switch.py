"""Switch (NVLS) ops of an MSCCL++ plan, run as the executor runs them, for
:mod:`.mscclpp_sim` (docs/mscclpp.md, "Switch channels").

microsoft/mscclpp at 1f5f065d, ``src/core/include/execution_kernel.hpp`` (sm 90 and
later: the three handlers are compiled for ``__CUDA_ARCH__ >= 900`` only, :522, :623, :774-781;
on an older GPU the ops do nothing):

* ``glres`` (``handleMultiLoadReduceStore``, :523-584): every thread takes 16-byte
  elements ``idx = threadIdx.x; idx += blockDim.x`` of the range and does
  ``multimem.ld_reduce`` on the source switch channel (the sum of that element over the
  buffers every member of the group bound, returned to the thread) then
  ``multimem.st`` on the destination switch channel (the sum written into every
  member's bound buffer, the issuer's own included): :556-557, :568-569, :579-580.
  The range is the first source's offset and size (``op.inputOffsets[0]``,
  ``op.inputBufferSizes[0]``), at the same offset in every member's buffer
  (``mcPtr`` + offset);
* ``gstore`` (``handleMultiStore``, :586-620): every thread ``multimem.st``\\ s its
  elements of a local source range into every member's buffer;
* ``gstorepkt`` (``handleMultiStorePkt``, :624-643): LL; every thread reads its packets
  from the source buffer's packet area (waiting for their flag) and stores them, with
  this call's flag, into every member's packet area.

The multimem instructions are ``.relaxed.sys`` (``include/mscclpp/switch_channel_device.hpp``:
73-183, 191-230): they order nothing, so a switch op is a data op of all the block's
threads, ordered by ``nop``, ``barrier`` and signals as any other (:mod:`.mscclpp_threads`).

Traffic goes through the switch, never GPU to GPU: a ``multimem.ld_reduce`` brings each
member's element up its GPU→switch link and the sum down the issuer's switch→GPU link
(the switch adds: one reduction); a ``multimem.st`` sends the element up the issuer's
link and down every member's. It is recorded in the verdict's ``facts["switch"]``
(``"up|r|G"``, ``"down|r|G"``: cells on rank r's link to or from the switch of rank
group G; ``"add|G"``: cells the switch adds; ``"need|G|add"`` / ``"need|G|copy"``: the
first op that needs it to add or copy) for :mod:`.mscclpp_switch_links`, which finds the
switch of each group in a topology and times the links.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from ..model import Verdict
from .mscclpp import Op, Plan, Ref
from .mscclpp_cells import Content, Loc

OPS = ("glres", "gstore", "gstorepkt")
KERNEL = "execution_kernel.hpp"


class Sim(Protocol):
    """What a switch op uses of :class:`.mscclpp_sim._Run`."""

    plan: Plan
    v: Verdict
    call: int
    store: dict[Loc, Content]

    def read(self, op: Op, ref: Ref, wait: bool = ...) -> list[Content] | None: ...

    def write(self, op: Op, ref: Ref, data: list[Content], actor: Any = ...,
              count: bool = ...) -> None: ...

    def reduce(self, op: Op, a: list[Content], b: list[Content]) -> list[Content] | None: ...

    def cells(self, op: Op, ref: Ref) -> range | None: ...

    def loc(self, r: int, buf: str, j: int) -> Loc: ...


def group_key(ranks: Iterable[int]) -> str:
    """A rank group as the facts name it: its ranks, sorted, comma-separated."""
    return ",".join(str(q) for q in sorted(ranks))


def _shape(sim: Sim, op: Op) -> bool:
    """One source and one destination, switch ranges where the handler takes them (it
    reads the first entry's offset and size only, and the switch channel's index shares
    its bytes with the first buffer reference: ``execution_common.hpp``:94-110)."""
    want_src = op.name == "glres"
    if len(op.src) != 1 or len(op.dst) != 1 or (op.src[0].switch >= 0) != want_src or \
            op.dst[0].switch < 0:
        what = ("one source and one destination, both through switch channels"
                if want_src else "one local source and one destination through a switch "
                "channel")
        sim.v.fail(f"{op.where()}: {op.name} lists {len(op.src)} source(s) and {len(op.dst)} "
                   f"destination(s); the executor runs {what} ({KERNEL}: it reads the first "
                   "entry's offset and size only)")
        return False
    return True


def _record(sim: Sim, op: Op, key: str, cells: int) -> None:
    if sim.call == 1:
        facts = sim.v.facts.setdefault("switch", {})
        facts[key] = facts.get(key, 0) + cells


def _need(sim: Sim, op: Op, g: str, what: str) -> None:
    """The first op of the plan (by rank, threadblock, position) that needs the switch of
    group ``g`` to add or to copy: [rank, tb, pos, its name in words]."""
    facts = sim.v.facts.setdefault("switch", {})
    key, mine = f"need|{g}|{what}", [op.rank, op.tb, op.pos, op.where()]
    if key not in facts or mine[:3] < facts[key][:3]:
        facts[key] = mine


def run_op(sim: Sim, op: Op) -> None:
    """Run a switch op (module docstring): its reads, sum and stores, and its traffic."""
    if not _shape(sim, op):
        return
    r, src, dst = op.rank, op.src[0], op.dst[0]
    outs = sim.plan.groups.get((r, dst.switch))
    if outs is None:
        return  # its channel was refused when the plan was read
    if op.name == "glres":
        ins = sim.plan.groups.get((r, src.switch))
        if ins is None:
            return
        data = _load_reduce(sim, op, src, ins)
    else:
        packets = op.name == "gstorepkt"
        buf = "P" + src.buf if packets else src.buf
        data = sim.read(op, Ref(r, buf, src.index, src.size, False), wait=packets)
    if data is None:
        return
    g = group_key(q for q, _ in outs)
    _need(sim, op, g, "copy")
    _record(sim, op, f"up|{r}|{g}", len(data))
    for q, b in outs:
        buf = "P" + b if op.name == "gstorepkt" else b
        ref = Ref(q, buf, dst.index, src.size, q != r)
        if op.name == "glres" or not _same(sim, op, src, ref):
            sim.write(op, ref, data, count=False)
        _record(sim, op, f"down|{q}|{g}", len(data))


def _same(sim: Sim, op: Op, src: Ref, ref: Ref) -> bool:
    """Whether a store writes back the very cells it read (a ``gstore`` whose destination
    on its own rank is its source): the bits there do not change, so nothing is written
    that another access could race with (the read was checked)."""
    if ref.rank != op.rank:
        return False
    buf = "P" + src.buf if op.name == "gstorepkt" else src.buf
    a, b = sim.cells(op, Ref(src.rank, buf, src.index, src.size, False)), sim.cells(op, ref)
    return a is not None and b is not None and \
        [sim.loc(op.rank, buf, j) for j in a] == [sim.loc(ref.rank, ref.buf, j) for j in b]


def _load_reduce(sim: Sim, op: Op, src: Ref, ins: tuple[tuple[int, str], ...],
                 ) -> list[Content] | None:
    """``multimem.ld_reduce``: the sum over the members' bound buffers, to the issuer."""
    r = op.rank
    g = group_key(q for q, _ in ins)
    _need(sim, op, g, "add")
    acc: list[Content] | None = None
    for q, b in ins:
        data = sim.read(op, Ref(q, b, src.index, src.size, q != r))
        if data is None:
            return None
        acc = data if acc is None else sim.reduce(op, acc, data)
        if acc is None:
            return None
        _record(sim, op, f"up|{q}|{g}", len(data))
    if acc is not None:
        _record(sim, op, f"down|{r}|{g}", len(acc))
        _record(sim, op, f"add|{g}", len(acc))
    return acc


def blocked(sim: Sim, op: Op) -> str | None:
    """``gstorepkt`` waits for the flags of the packets it reads; None when they came."""
    if op.name != "gstorepkt" or not op.src:
        return None
    src = op.src[0]
    span = sim.cells(op, Ref(op.rank, "P" + src.buf, src.index, src.size, False))
    for j in span or ():
        if sim.loc(op.rank, "P" + src.buf, j) not in sim.store:
            return (f"waits for the packets of {src.buf}[{src.index}…] (LL: their flag), which "
                    "no op has written yet")
    return None
