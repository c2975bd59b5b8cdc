"""Switch (NVLS) ops of an MSCCL++ plan as the executor's threads do them, for
``collcert smoke`` (:mod:`.mscclppdata`; the executor's semantics:
:mod:`collcert.certify.execution.mscclpp_switch`, docs/mscclpp.md "Switch channels").

Each thread takes its part of the op's range, as for any data op:

* ``glres``: ``multimem.ld_reduce`` is the sum of that part over every member's bound
  buffer, computed for the issuing rank (each other member's part a message to it that
  is added), then ``multimem.st`` writes the sum into every member of the destination
  channel (a copy on the issuer, a message to each other member);
* ``gstore``: the issuer's local part written into every member;
* ``gstorepkt``: LL; the part's packets, read once their flags came, written into
  every member's packet area.

On the devices the switch does the adding and the copying; here the ranks exchange the
same data as messages, so every element of every member is checked against the
collective's definition as for any other op.
"""

from __future__ import annotations

from typing import Any, Protocol

from collcert.certify.execution import mscclpp

OPS = ("glres", "gstore", "gstorepkt")
Piece = tuple[int, int, int]  # (thread, threads in the block, rotation), as mscclppdata's


class Mem(Protocol):
    """What a switch op uses of :class:`.mscclppdata.Memory`."""

    pp: mscclpp.Plan
    written: set[tuple[int, str, int]]

    def at(self, op: mscclpp.Op, ref: mscclpp.Ref, piece: Piece | None, buf: str | None = ...,
           index: int | None = ..., size: int | None = ...) -> Any: ...

    def move(self, op: mscclpp.Op, src: Any, dst: Any) -> None: ...

    def reduce(self, op: mscclpp.Op, first: Any, others: list[Any], outs: list[Any]) -> None: ...


def switch_op(mem: Mem, op: mscclpp.Op, piece: Piece) -> str | None:
    """Thread ``piece``'s part of a switch op (module docstring); what stops the run, or
    None."""
    glres = op.name == "glres"
    if len(op.src) != 1 or len(op.dst) != 1 or (op.src[0].switch >= 0) != glres or \
            op.dst[0].switch < 0:
        return (f"{op.where()}: {op.name} with {len(op.src)} source(s) and {len(op.dst)} "
                "destination(s) is not what the executor runs (see the audit's reasons)")
    r, src, dst = op.rank, op.src[0], op.dst[0]
    outs_of = mem.pp.groups.get((r, dst.switch))
    ins_of = mem.pp.groups.get((r, src.switch)) if glres else ()
    if outs_of is None or ins_of is None:
        return f"{op.where()}: its switch channel cannot be set up (see the audit's reasons)"
    size = src.size
    packets = op.name == "gstorepkt"

    def at(q: int, buf: str, index: int) -> Any:
        ref = mscclpp.Ref(q, buf, index, size, q != r)
        return mem.at(op, ref, piece, buf="P" + buf if packets else buf)

    outs = [at(q, b, dst.index) for q, b in outs_of]
    if glres:
        ins = {q: at(q, b, src.index) for q, b in ins_of}
        mine = ins.pop(r)
        mem.reduce(op, mine, list(ins.values()), outs)
        return None
    data = at(r, src.buf, src.index)
    for out in outs:
        if out != data:  # a store of the very cells it read changes nothing
            mem.move(op, data, out)
    return None


def packets_missing(mem: Mem, op: mscclpp.Op, piece: Piece) -> str | None:
    """``gstorepkt`` waits for the flags of the packets it reads (its part of them)."""
    if op.name != "gstorepkt" or not op.src:
        return None
    src = op.src[0]
    part = mem.at(op, src, piece, buf="P" + src.buf)
    for j in part.region.cells() if part else ():
        if (op.rank, part.region.buf, j) not in mem.written:
            return f"waits for the packets of {src.buf} sub-cell {j} (LL: their flag)"
    return None
