"""An MSCCL program as the MSCCL executor holds it: threadblocks of steps and transmissions.

The data both halves of this room share: :mod:`.msccl` reads the algorithm
XML into a :class:`Program` (each ``<step>`` a :class:`Step`, compiled into the
executor's transmissions, :class:`Op`), and :mod:`.msccl_sim` runs it. The
step types, and which of them send or receive, are those of the executor's
parser (:mod:`.msccl` names its sources).
"""

from __future__ import annotations

from dataclasses import dataclass, field

KINDS = ("s", "r", "rcs", "rrc", "rrs", "rrcs", "cpy", "re", "nop")
SENDS = ("s", "rcs", "rrs", "rrcs")
RECVS = ("r", "rcs", "rrc", "rrs", "rrcs")


@dataclass
class Move:
    """What a step does with chunks: its kind and the slices of the buffers (``i``, ``o``,
    ``s``) it reads and writes, ``cnt`` chunks from each offset."""

    kind: str
    srcbuf: str
    srcoff: int
    dstbuf: str
    dstoff: int
    cnt: int


@dataclass
class Step(Move):
    """One ``<step>`` as written."""

    index: int
    depid: int
    deps: int
    hasdep: int
    line: int


@dataclass
class Op(Move):
    """One executor transmission: a real step, with the ``nop`` dependencies before it
    folded in and, for ``re``, the steps fused with it (the source offset and count are
    then the last fused step's; ``reductions`` lists every source offset)."""

    waits: list[tuple[int, int]]  # (threadblock, step): flag of tb must be ≥ step
    signals: bool  # hasdep: sets this threadblock's flag when done
    flag: int  # the value it sets: the executor's step counter
    step: int  # XML index of its (first) real step, for messages
    line: int
    reductions: list[int] = field(default_factory=list)  # re: source offsets, fused

    def where(self, gpu: int, tb: int) -> str:
        fused = (f" (fused with the next {len(self.reductions) - 1} re step(s))"
                 if len(self.reductions) > 1 else "")
        return f"gpu {gpu} tb {tb} step {self.step} (line {self.line}){fused}"


@dataclass
class Threadblock:
    gpu: int
    tbid: int
    send: int
    recv: int
    chan: int
    steps: list[Step]
    ops: list[Op] = field(default_factory=list)
    pc: int = 0


@dataclass
class Program:
    name: str
    collective: str
    ngpus: int
    nchunks: int
    inplace: bool
    chunks: dict[int, dict[str, int]]  # gpu -> declared {"i": n, "o": n, "s": n}
    tbs: list[Threadblock]
    proto: str = "Simple"
    nchannels: int | None = None
    outofplace: bool | None = None  # None: the attribute is absent
    coll_name: str = ""
    root: int | None = None  # broadcast, reduce: the root rank (attribute root="r")
    refusals: list[str] = field(default_factory=list)  # what the executor refuses
    notes: list[str] = field(default_factory=list)

    def modes(self) -> list[bool]:
        """The buffer modes the executor may run the program in (True: in-place)."""
        out = [True] if self.inplace else []
        if self.outofplace or (self.outofplace is None and not self.inplace):
            out.append(False)
        return out

    def per_rank(self) -> int:
        """Chunks per rank of the sharded buffer (allgather input, reduce-scatter output,
        alltoall's block per peer); C for allreduce."""
        if self.collective in ("allreduce", "broadcast", "reduce"):
            return self.nchunks
        return self.nchunks // self.ngpus

    def sizes(self) -> tuple[int, int]:
        """(input, output) buffer sizes in chunks of M/C, as the user's buffers are:
        the executor takes M = count × sizeMultiplier and one chunk = M/C."""
        c, per = self.nchunks, self.per_rank()
        return {"allgather": (per, c), "reduce-scatter": (c, per), "allreduce": (c, c),
                "alltoall": (c, c), "broadcast": (c, c), "reduce": (c, c)}[self.collective]
