"""What :mod:`.mscclpp_sim` tracks, cell by cell, and how its messages name cells.

A cell holds the contributions ``(rank, input cell)`` it contains (:data:`Content`);
a vector clock (:data:`Clock`) maps each threadblock ``(rank, tb)`` to the last of its
ops known to have happened. LL packet areas are the buffers' names with a ``P`` in
front ("Ps": the scratch's packets).
"""

from __future__ import annotations

from .mscclpp import Plan, Ref

Content = frozenset[tuple[int, int]]
Loc = tuple[int, str, int]
Key = tuple[int, int]  # (rank, threadblock)
Clock = dict[Key, int]

PACKET_OPS = ("ppkt", "rppkt", "cpkt", "upkt", "repkt", "respkt", "recpkt", "recspkt")
WAITING_PACKET_OPS = ("rppkt", "upkt", "repkt", "respkt", "recpkt", "recspkt")


def pk(buf: str) -> str:
    return buf if buf.startswith("P") else "P" + buf


def packets(ref: Ref) -> Ref:
    return Ref(ref.rank, pk(ref.buf), ref.index, ref.size, ref.remote)


def scratch_packets(ref: Ref) -> Ref:
    """The kernel reads these packets from the scratch buffer, whatever the op names."""
    return Ref(ref.rank, "Ps", ref.index, ref.size, False)


def buf_name(buf: str) -> str:
    return f"the packets of {buf[1:]}" if buf.startswith("P") else buf


def at(plan: Plan, j: int) -> str:
    """Cell j as a chunk, or a part of one under thread block groups."""
    g = plan.grain
    return f"chunk {j}" if g == 1 else f"chunk {j // g} part {j % g + 1}/{g}"


def join(into: Clock, other: Clock) -> None:
    got = into.get
    for k, t in other.items():
        if got(k, 0) < t:
            into[k] = t


def show(c: Content | None, plan: Plan, shift: int = 0) -> str:
    """Contributions as the call being checked sees them: ids below ``shift`` are the
    previous call's."""
    if not c:
        return "nothing"

    def cell(j: int) -> str:
        return (at(plan, j - shift) if j >= shift else
                f"{at(plan, j)} of the previous call")

    if len(c) > 1 and len(c) == plan.ngpus and len({j for _, j in c}) == 1:
        return f"the sum of {cell(min(c)[1])} of all ranks"
    items = sorted(c)
    text = ", ".join(f"rank {r}'s input {cell(j)}" for r, j in items[:3])
    return ("the sum of " if len(c) > 1 else "") + text + (" …" if len(c) > 3 else "")


def expected(plan: Plan, g: int, j: int, per: int, shift: int) -> Content:
    """What output cell j of rank g holds after the collective (``per``: a rank's share
    in cells; ``shift``: the id of input cell 0 in the call checked)."""
    n, coll = plan.ngpus, plan.collective
    if coll == "allgather":
        return frozenset({(j // per, j % per + shift)})
    if coll == "broadcast":
        return frozenset({(plan.root or 0, j + shift)})
    c = g * per + j if coll == "reduce-scatter" else j
    return frozenset((q, c + shift) for q in range(n))
