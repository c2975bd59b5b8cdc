"""The data ops of an MSCCL++ plan, as :mod:`.mscclpp_sim` runs them (microsoft/mscclpp
``src/core/include/execution_kernel.hpp``, the ``handle*`` functions):

* ``put`` / ``pws`` / ``pwsf``: each local source range into the remote destination.
  Memory channel: stores by every thread, and no signal even for ``pws``/``pwsf``
  (``handlePut`` returns after the copy, :157-167). Port channel: thread i pushes
  output i to the channel's proxy (:168-186), which reads the source and writes the
  peer; ``pws``/``pwsf`` then signal on that channel, ``pwsf`` waits until the
  transfer is done;
* ``get``: a remote range into a local one (as ``handleGet`` indexes them: the local
  write at the source's index, the remote read at the destination's);
* ``copy``; ``re`` / ``res``: the first source plus the other (local) sources into the
  first destination, ``res`` also storing the result into remote destinations;
  ``rre`` / ``rres``: the same with remote sources;
* LL: packets carry a flag with the data, so a read from the scratch's packets waits
  for them; where they go is a packet area of the destination buffer.

Every access names who makes it (:class:`Actor`): the op's threadblock (all its
threads), or a port channel's proxy for the transfers it does.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Verdict
from . import mscclpp_cells as mc
from .mscclpp import Op, Plan, Ref
from .mscclpp_cells import Content, Key
from .mscclpp_threads import Know, ThreadKnow, Threads, items, proxy_done, proxy_push


@dataclass
class Actor:
    """Who accesses memory: ``who`` (a threadblock or a proxy) at stamp ``at``, knowing
    ``know``; ``where`` names it in messages."""

    who: Key
    at: int
    know: Know
    where: str


class DataOps:
    """The data ops over :class:`.mscclpp_sim._Run`'s memory (its methods below), and the
    threads' side of them: who acts (:meth:`acting`, :meth:`width`) and port requests."""

    plan: Plan
    v: Verdict
    base: int
    threads: Threads
    pushed: dict[Key, int]
    events: dict[tuple[Key, int], str]
    narrow: set[tuple[int, int, int]]
    lanes: dict[tuple[int, int], set[tuple[int, int]]]  # (rank, port channel) -> pushers

    def fail(self, text: str) -> None:
        raise NotImplementedError

    def read(self, op: Op, ref: Ref, wait: bool = False,
             actor: Actor | None = None) -> list[Content] | None:
        raise NotImplementedError

    def write(self, op: Op, ref: Ref, data: list[Content], actor: Actor | None = None) -> None:
        raise NotImplementedError

    def fetch(self, op: Op, ref: Ref) -> list[Content] | None:
        raise NotImplementedError

    def reduce(self, op: Op, a: list[Content], b: list[Content]) -> list[Content] | None:
        raise NotImplementedError

    def stamp(self, op: Op) -> int:
        return self.base + op.pos + 1

    def acting(self, op: Op) -> Actor:
        """A data op: every thread of its block, with what they all know."""
        key = (op.rank, op.tb)
        return Actor(key, self.stamp(op), self.threads.common[key], op.where())

    def width(self, op: Op) -> int:
        """How many of the op's channels (semaphores, outputs) get a thread: threads
        i < n act, and the block has ``num_threads_per_block``."""
        n, w = items(op), self.threads.width
        key = (op.rank, op.tb, op.pos)
        if n > w and key not in self.narrow:
            self.narrow.add(key)
            self.v.fail(f"{op.where()}: acts on {n} channels, semaphores or outputs, but its "
                        f"block has {w} thread(s) and thread i handles the i-th: the rest are "
                        "never handled (execution_kernel.hpp: tid < n)")
        return min(n, w)

    def push(self, op: Op, i: int) -> Actor | None:
        """Thread i pushes request i of a port op into its channel's FIFO: the proxy does
        it later, after every request the thread knows was pushed before (FIFO order),
        knowing what the thread knew (the push is a release)."""
        if i >= self.width(op) or i >= len(op.channels):
            return None
        ch, lane = op.channels[i], (op.tb, i)
        t = self.threads.thread((op.rank, op.tb), i)
        know = t.copy()
        self.fifo_done(op.rank, ch, know)
        self.lanes.setdefault((op.rank, ch), set()).add(lane)
        done = proxy_done(op.rank, ch, lane)
        n = self.pushed.get(done, 0) + 1
        self.pushed[done] = n
        t.stamp(proxy_push(op.rank, ch, lane), n)
        self.events[(done, n)] = (f"the proxy of rank {op.rank}'s port channel {ch} (request "
                                  f"{i} of {self.name((op.rank, op.tb), self.stamp(op))})")
        return Actor(done, n, know, f"{op.where()} (its request {i}, done by the proxy of "
                                    f"port channel {ch})")

    def fifo_done(self, rank: int, ch: int, know: Know | ThreadKnow) -> None:
        """``know`` learns that the proxy did every request on the channel it knows was
        pushed: what goes through the FIFO after them (a signal, a flush) comes after."""
        for lane in self.lanes.get((rank, ch), ()):
            know.stamp(proxy_done(rank, ch, lane),
                       know.data.get(proxy_push(rank, ch, lane), 0))

    def deliver(self, op: Op, i: int, actor: Actor, flush: bool) -> None:
        t = self.threads.thread((op.rank, op.tb), i)
        msg = t.copy()
        self.fifo_done(op.rank, op.channels[i], msg)
        msg.stamp(actor.who, actor.at)
        self.send(op, op.channels[i], msg, True, i)
        if flush:  # putWithSignalAndFlush waits until the proxy did it
            self.fifo_done(op.rank, op.channels[i], t)
            t.stamp(actor.who, actor.at)

    def packets_read(self, op: Op) -> None:
        self.threads.sync((op.rank, op.tb), self.stamp(op) - 1)

    def send(self, op: Op, k: int, msg: Know, strong: bool, thread: int) -> None:
        raise NotImplementedError

    def name(self, who: Key, at: int) -> str:
        raise NotImplementedError

    def data_op(self, op: Op) -> None:
        name = op.name
        if name in mc.PACKET_OPS:
            self.packet_op(op)
        elif name in ("put", "pws", "pwsf"):
            if len(op.src) != len(op.dst):
                self.fail(f"{op.where()}: {len(op.src)} sources for {len(op.dst)} destinations")
                return
            for i, (s, d) in enumerate(zip(op.src, op.dst)):
                src = Ref(s.rank, s.buf, s.index, d.size, s.remote)
                if op.chan_type != "port":
                    data = self.read(op, src)
                    if data is not None:
                        self.write(op, d, data)
                    continue
                actor = self.push(op, i) if self.port_ok(op, i, d) else None
                if actor is None:
                    continue
                data = self.read(op, src, actor=actor)
                if data is not None:
                    self.write(op, d, data, actor=actor)
                if name != "put":
                    self.deliver(op, i, actor, name == "pwsf")
        elif name == "get":
            for s, d in zip(op.src, op.dst):  # handleGet: offsets as the kernel takes them
                data = self.fetch(op, Ref(s.rank, s.buf, d.index, s.size, s.remote))
                if data is not None:
                    self.write(op, Ref(d.rank, d.buf, s.index, s.size, d.remote), data)
        elif name == "copy" and op.src and op.dst:
            data = self.read(op, op.src[0])
            if data is not None:
                self.write(op, op.dst[0], data)
        elif name in ("re", "res", "rre", "rres") and op.src and op.dst:
            self.reduction(op)
        elif name in ("copy", "re", "res", "rre", "rres"):
            self.fail(f"{op.where()}: has no source or no destination buffer")

    def reduction(self, op: Op) -> None:
        acc = self.read(op, op.src[0])
        for s in op.src[1:]:
            more = self.fetch(op, Ref(s.rank, s.buf, s.index, op.src[0].size, s.remote))
            acc = None if acc is None or more is None else self.reduce(op, acc, more)
        if acc is None:
            return
        size = op.src[0].size
        d0 = op.dst[0]
        self.write(op, Ref(d0.rank, d0.buf, d0.index, size, d0.remote), acc)
        if op.name in ("res", "rres"):
            for d in op.dst[1:]:
                self.write(op, Ref(d.rank, d.buf, d.index, size, d.remote), acc)

    def packet_op(self, op: Op) -> None:
        name, src, dst = op.name, op.src, op.dst
        if not src or not dst:
            self.fail(f"{op.where()}: has no source or no destination buffer")
            return
        if name == "ppkt":
            for i, (s, d) in enumerate(zip(src, dst)):
                actor = None
                if op.chan_type == "port":
                    actor = self.push(op, i) if self.port_ok(op, i, d) else None
                    if actor is None:
                        continue
                kind = mc.pk(s.buf) if op.chan_type == "port" else src[0].buf
                data = self.read(op, Ref(s.rank, kind, s.index, s.size, False), actor=actor)
                if data is not None:
                    self.write(op, mc.packets(d), data, actor=actor)
        elif name in ("rppkt", "upkt"):
            self.unpack(op)
        elif name == "cpkt":
            data = self.read(op, src[0])
            if data is not None:
                self.write(op, mc.packets(dst[0]), data)
        else:  # repkt, respkt, recpkt, recspkt
            self.reduce_packets(op)

    def unpack(self, op: Op) -> None:
        """``upkt``: packets into plain data; ``rppkt``: packets on to other packet areas
        (port channel: every thread polls, ``__syncthreads``, thread i pushes, :312-331)."""
        src, dst = op.src, op.dst
        data = self.read(op, mc.scratch_packets(src[0]), wait=True)
        if data is None:
            return
        port = op.name == "rppkt" and op.chan_type == "port"
        if port:
            self.packets_read(op)
        for i, d in enumerate(dst):
            if op.name == "upkt":
                self.write(op, Ref(d.rank, d.buf, d.index, src[0].size, d.remote), data)
                continue
            actor = self.push(op, i) if port and self.port_ok(op, i, d) else None
            if port and actor is None:
                continue
            self.write(op, mc.packets(Ref(d.rank, d.buf, d.index, src[0].size, True)), data,
                       actor=actor)

    def reduce_packets(self, op: Op) -> None:
        src, dst, name = op.src, op.dst, op.name
        acc = self.read(op, src[0])
        for s in src[1:]:
            more = self.read(op, mc.scratch_packets(Ref(s.rank, s.buf, s.index, src[0].size,
                                                        False)), wait=True)
            acc = None if acc is None or more is None else self.reduce(op, acc, more)
        if acc is None:
            return
        size = src[0].size
        self.write(op, Ref(dst[0].rank, dst[0].buf, dst[0].index, size, False), acc)
        local = 2 if name in ("recpkt", "recspkt") else 1
        if local == 2 and len(dst) > 1:
            self.write(op, mc.packets(Ref(dst[1].rank, dst[1].buf, dst[1].index, size, False)),
                       acc)
        if name in ("respkt", "recspkt"):
            for d in dst[local:]:
                self.write(op, mc.packets(Ref(d.rank, d.buf, d.index, size, True)), acc)

    def port_ok(self, op: Op, i: int, d: Ref) -> bool:
        if i >= len(op.channels):
            self.fail(f"{op.where()}: port put {i} has no channel (channel_ids lists "
                      f"{len(op.channels)})")
            return False
        peer = self.plan.peers[(op.rank, "port")][op.channels[i]]
        if peer != d.rank:
            self.fail(f"{op.where()}: puts into rank {d.rank}'s buffer over a port channel "
                      f"to rank {peer}")
            return False
        return True
