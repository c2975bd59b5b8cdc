"""The data of an MSCCL++ plan as the executor's threads move it, for ``collcert smoke``.

:class:`Memory` turns one thread's part of one op into execution-plan operations
(:mod:`collcert.reference.execution.execplan`): a local range copied (``copy``), a
range written into or read from another rank's buffer (``put``/``pws``/``pwsf``,
``get``, remote sources and destinations of reductions, LL packets) a ``send`` on the
rank that holds the data and a ``recv`` on the rank that gets it, and a reduction
(``re``, ``res``, ``rre``, ``rres``, ``repkt`` …) its first source copied into an
accumulator (a fresh temporary, or the destination when it is the first source
itself), the other sources added (a local ``reduce``, or a ``recv`` that adds), the
sum stored into each destination. ``get`` takes its offsets as ``handleGet`` does.
LL packet areas are buffers of their own (``Pi``, ``Po``, ``Ps``), apart from the
plain use of the same buffer, as in the audit's simulator.

Threads (microsoft/mscclpp ``execution_kernel.hpp``): a data op on a memory channel
(and every local one) is spread over all the threads of its block; here each chunk cell
is cut into ``sub`` sub-cells and thread t of a block of w threads takes the
((t + pos) mod w)-th of w contiguous parts of the op's range (a different part in each
op, as different threads handle an element in two ops of different ranges). A port
channel's put is pushed by thread i for output i and done by the proxy later
(:meth:`Memory.land`: at the next signal or flush on that channel, or at the end).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from collcert.certify.execution import mscclpp
from collcert.reference.execution import Op, Region

from . import mscclppswitch as switch

REDUCTIONS = ("re", "res", "rre", "rres")
PACKET_WAITS = ("rppkt", "upkt", "repkt", "respkt", "recpkt", "recspkt")
SYNC_OPS = ("signal", "rlxsignal", "wait", "rlxwait", "sem_acquire", "sem_release")
Piece = tuple[int, int, int]  # (thread, threads in the block, rotation)


@dataclass(frozen=True)
class At:
    """A resolved range: rank ``rank``'s ``region`` (aliased, in sub-cells)."""

    rank: int
    region: Region


class Stop(Exception):
    """A problem that stops the run (recorded in ``plan.problems``)."""


class Memory:
    """Every rank's buffers in sub-cells; the operations the threads' steps become."""

    def __init__(self, pp: mscclpp.Plan, sub: int, per: int,
                 buffers: list[dict[str, int]]) -> None:
        self.pp, self.sub, self.per, self.buffers = pp, sub, per, buffers
        self.ops: list[Op] = []
        self.msg = 0
        self.written: set[tuple[int, str, int]] = set()  # LL packet sub-cells with their flag
        self.packets: dict[int, set[str]] = {}  # rank -> buffers whose packet area is used
        self.pending: dict[tuple[int, int], list[Callable[[], None]]] = {}  # port requests

    # -- buffers ---------------------------------------------------------------------
    def alias(self, r: int, buf: str, j: int) -> tuple[str, int]:
        """Where sub-cell ``j`` of rank ``r``'s ``buf`` lives in the call's mode."""
        if buf.startswith("P"):
            b, k = self.alias(r, buf[1:], j)
            return "P" + b, k
        if self.pp.inplace:
            coll = self.pp.collective
            if coll == "allgather" and buf == "i":
                return "o", r * self.per + j
            if coll == "reduce-scatter" and buf == "o":
                return "i", r * self.per + j
            if buf == "o" and (coll == "allreduce" or r == self.pp.root):
                return "i", j
        return buf, j

    def at(self, op: mscclpp.Op, ref: mscclpp.Ref, piece: Piece | None, buf: str | None = None,
           index: int | None = None, size: int | None = None) -> At | None:
        """The sub-cells of ``ref`` (buffer, index or size replaced when given) that
        ``op`` handles (its part under a thread block group), and of them thread
        ``piece``'s part; None for an empty range."""
        buf = ref.buf if buf is None else buf
        index = ref.index if index is None else index
        size = ref.size if size is None else size
        g = self.pp.grain * self.sub
        have = self.pp.chunks[ref.rank][buf[-1]]
        if index + size > have:
            raise Stop(f"{op.where()}: {buf}[{index}:{index + size}] of rank {ref.rank} is "
                       f"outside that buffer, which holds {have} chunks")
        t, parts = op.part
        cnt = size * g // parts
        lo = index * g + t * cnt
        if piece is not None:
            me, w, rot = piece
            k = (me + rot) % w
            lo, cnt = lo + k * cnt // w, (k + 1) * cnt // w - k * cnt // w
        if cnt == 0:
            return None
        b, off = self.alias(ref.rank, buf, lo)
        if b.startswith("P"):
            self.packets.setdefault(ref.rank, set()).add(b[1:])
        return At(ref.rank, Region(b, off, cnt))

    def temp(self, r: int, cnt: int) -> Region:
        off = self.buffers[r].get("t", 0)
        self.buffers[r]["t"] = off + cnt
        return Region("t", off, cnt)

    # -- data movement ---------------------------------------------------------------
    def move(self, op: mscclpp.Op, src: At | None, dst: At | None) -> None:
        """``dst = src``: a copy on one rank, else a message from src's rank to dst's."""
        if src is None or dst is None:
            return
        if src.region.n != dst.region.n:
            raise Stop(f"{op.where()}: moves {src.region.n} cells into a range of "
                       f"{dst.region.n}")
        note = op.where()
        if src.rank == dst.rank:
            self.ops.append(Op("copy", src.rank, src=src.region, dst=dst.region, note=note))
        else:
            self.ops.append(Op("send", src.rank, dst.rank, src=src.region, msg=self.msg,
                               note=note))
            self.ops.append(Op("recv", dst.rank, src.rank, dst=dst.region, msg=self.msg,
                               note=note))
            self.msg += 1
        if dst.region.buf.startswith("P"):
            self.written.update((dst.rank, dst.region.buf, j) for j in dst.region.cells())

    def reduce(self, op: mscclpp.Op, first: At | None, others: list[At | None],
               outs: list[At | None]) -> None:
        """Every ``out`` = ``first`` + Σ ``others``, computed on ``op``'s rank."""
        if first is None:
            return
        r, cnt, note = op.rank, first.region.n, op.where()
        for x in others + outs:
            if x is not None and x.region.n != cnt:
                raise Stop(f"{note}: reduces ranges of {cnt} and {x.region.n} cells")
        head = outs[0] if outs else None
        clash = any(x is not None and x.rank == r and x.region.buf == first.region.buf
                    and _overlap(x.region, first.region) for x in others)
        if head is not None and head == first and head.rank == r and not clash:
            acc = head  # accumulate in place: the first source is the destination
        else:
            acc = At(r, self.temp(r, cnt))
            self.move(op, first, acc)
        for x in others:
            if x is None:
                continue
            if x.rank == r:
                self.ops.append(Op("reduce", r, src=x.region, dst=acc.region, note=note))
            else:
                self.ops.append(Op("send", x.rank, r, src=x.region, msg=self.msg, note=note))
                self.ops.append(Op("recv", r, x.rank, dst=acc.region, red=acc.region,
                                   msg=self.msg, note=note))
                self.msg += 1
        for out in outs:
            if out != acc:
                self.move(op, acc, out)

    # -- a thread's part of an op ----------------------------------------------------
    def data_op(self, op: mscclpp.Op, piece: Piece, pushes: int) -> None:
        """Thread ``piece``'s part of a data op; ``pushes``: how many port requests this
        thread's index handles (threads i < n push output i)."""
        name, src, dst = op.name, op.src, op.dst
        me = piece[0]
        if name in switch.OPS:  # NVLS: multimem load-reduce and store (mscclppswitch)
            why = switch.switch_op(self, op, piece)
            if why:
                raise Stop(why)
            return
        if name in ("put", "pws", "pwsf"):
            if len(src) != len(dst):
                raise Stop(f"{op.where()}: {len(src)} sources for {len(dst)} destinations")
            if op.chan_type == "port":
                if me < pushes:
                    self.push(op, me, lambda: self.move(
                        op, self.at(op, src[me], None, size=dst[me].size),
                        self.at(op, dst[me], None)), signal=name != "put")
                return
            for s, d in zip(src, dst):
                self.move(op, self.at(op, s, piece, size=d.size), self.at(op, d, piece))
            return
        if name == "get":
            for s, d in zip(src, dst):  # handleGet: offsets as the kernel takes them
                self.move(op, self.at(op, s, piece, index=d.index),
                          self.at(op, d, piece, index=s.index, size=s.size))
            return
        if not src or not dst:
            raise Stop(f"{op.where()}: has no source or no destination buffer")
        if name == "copy":
            self.move(op, self.at(op, src[0], piece), self.at(op, dst[0], piece))
        elif name in REDUCTIONS:
            size = src[0].size
            self.reduce(op, self.at(op, src[0], piece),
                        [self.at(op, s, piece, size=size) for s in src[1:]],
                        [self.at(op, d, piece, size=size)
                         for d in (dst if name in ("res", "rres") else dst[:1])])
        else:
            self.packet_op(op, piece, pushes)

    def packet_op(self, op: mscclpp.Op, piece: Piece, pushes: int) -> None:
        """LL ops (execution_kernel.hpp handle*Packets), as the simulator reads them."""
        name, src, dst = op.name, op.src, op.dst
        s0, size, me = src[0], src[0].size, piece[0]
        port = op.chan_type == "port"
        if name == "ppkt":
            for i, (s, d) in enumerate(zip(src, dst)):
                if not port:
                    self.move(op, self.at(op, s, piece, buf=s0.buf),
                              self.at(op, d, piece, buf=pk(d.buf)))
                elif i == me and me < pushes:
                    self.push(op, i, self.transfer(op, s, d), signal=False)
        elif name == "upkt":
            data = self.at(op, scratch(s0), piece)
            for d in dst:
                self.move(op, data, self.at(op, d, piece, size=size))
        elif name == "rppkt":
            self.read_put_packets(op, piece, pushes)
        elif name == "cpkt":
            self.move(op, self.at(op, s0, piece), self.at(op, dst[0], piece, buf=pk(dst[0].buf)))
        else:  # repkt, respkt, recpkt, recspkt
            local = 2 if name in ("recpkt", "recspkt") else 1
            outs = [self.at(op, dst[0], piece, size=size)]
            if local == 2 and len(dst) > 1:
                outs.append(self.at(op, dst[1], piece, buf=pk(dst[1].buf), size=size))
            if name in ("respkt", "recspkt"):
                outs += [self.at(op, d, piece, buf=pk(d.buf), size=size) for d in dst[local:]]
            others = [self.at(op, scratch(s), piece, size=size) for s in src[1:]]
            self.reduce(op, self.at(op, s0, piece), others, outs)

    def read_put_packets(self, op: mscclpp.Op, piece: Piece, pushes: int) -> None:
        """``rppkt``: memory channel, every thread forwards its packets; port channel,
        thread i pushes output i of the whole range (after every packet has come)."""
        s0, size, me = op.src[0], op.src[0].size, piece[0]
        if op.chan_type != "port":
            data = self.at(op, scratch(s0), piece)
            for d in op.dst:
                self.move(op, data, self.at(op, d, piece, buf=pk(d.buf), size=size))
        elif me < pushes:
            d = op.dst[me]
            self.push(op, me, lambda: self.move(op, self.at(op, scratch(s0), None),
                                                self.at(op, d, None, buf=pk(d.buf), size=size)),
                      signal=False)

    # -- port channels ---------------------------------------------------------------
    def transfer(self, op: mscclpp.Op, s: mscclpp.Ref, d: mscclpp.Ref) -> Callable[[], None]:
        """An LL port put: packets already made, moved as they are by the proxy."""
        return lambda: self.move(op, self.at(op, s, None, buf=pk(s.buf)),
                                 self.at(op, d, None, buf=pk(d.buf)))

    def push(self, op: mscclpp.Op, i: int, transfer: Callable[[], None], signal: bool) -> None:
        """Thread i's request on the op's i-th port channel: done by the proxy later."""
        if i >= len(op.channels):
            raise Stop(f"{op.where()}: port put {i} has no channel (channel_ids lists "
                       f"{len(op.channels)})")
        ch = op.channels[i]
        peer = self.pp.peers[(op.rank, "port")][ch]
        d = op.dst[i]
        if peer != d.rank:
            raise Stop(f"{op.where()}: puts into rank {d.rank}'s buffer over a port channel "
                       f"to rank {peer}")
        self.pending.setdefault((op.rank, ch), []).append(transfer)
        if signal or op.name == "pwsf":
            self.land(op.rank, ch)

    def land(self, rank: int, ch: int) -> None:
        """The proxy does every request pushed on the channel so far (before a signal or
        a flush on it goes through)."""
        for transfer in self.pending.pop((rank, ch), []):
            transfer()

    def land_all(self) -> None:
        for key in sorted(self.pending):
            self.land(*key)


def items(op: mscclpp.Op) -> int:
    """How many threads act on an op's channels, semaphores or port outputs (threads
    i < n, execution_kernel.hpp); 0 for a data op spread over all threads."""
    if op.name in ("sem_acquire", "sem_release"):
        return len(op.sems)
    if op.name == "flush":  # handleFlush counts op.nOutputs: its dst_buff entries
        return min(len(op.dst), len(op.channels))
    if op.name in SYNC_OPS:
        return len(op.channels)
    if op.chan_type == "port" and op.name in ("put", "pws", "pwsf", "ppkt", "rppkt"):
        return len(op.dst)
    return 0


def pk(buf: str) -> str:
    return buf if buf.startswith("P") else "P" + buf


def scratch(ref: mscclpp.Ref) -> mscclpp.Ref:
    """The kernel reads LL packets from the scratch buffer, whatever the op names."""
    return mscclpp.Ref(ref.rank, "Ps", ref.index, ref.size, False)


def _overlap(a: Region, b: Region) -> bool:
    return a.off < b.off + b.n and b.off < a.off + a.n
