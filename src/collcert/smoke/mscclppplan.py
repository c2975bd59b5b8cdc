"""Execution plans from MSCCL++ execution plans (JSON), for ``collcert smoke``.

The plan is read by the project's reader (:func:`collcert.certify.execution.mscclpp.read`,
which resolves channels, remote buffers, thread block groups and chunk units as the
MSCCL++ executor does) and run op by op on the host, as
:mod:`collcert.certify.execution.mscclpp_sim` models the executor (microsoft/mscclpp
``execution_kernel.hpp``): every threadblock runs its ops in order; an op runs when
what it waits for has happened:

* ``wait`` / ``rlxwait``: one more signal on each of its channels than already
  consumed (a ``signal``, ``rlxsignal``, ``pws`` or ``pwsf`` on the other end);
* ``sem_acquire``: the rank's device semaphore above zero (``sem_release`` adds one;
  ``init_value`` to start);
* ``barrier``: ``num_threadblocks`` threadblocks of the rank at barrier ``barrier_id``;
* LL reads of packets (``rppkt``, ``upkt``, ``repkt``, ``respkt``, ``recpkt``,
  ``recspkt``): every packet read already written (its flag).

The order in which the ops ran is the execution plan's global order
(:mod:`collcert.reference.execution.execplan`); each op's data movement becomes plan
operations: a local range copied (``copy``), a range written into or read from another
rank's buffer (``put``/``pws``/``pwsf``, ``get``, remote sources and destinations of
reductions, LL packets) a ``send`` on the rank that holds the data and a ``recv`` on the
rank that gets it, and a reduction (``re``, ``res``, ``rre``, ``rres``, ``repkt`` …)
its first source copied into an accumulator (a fresh temporary, or the destination
when it is the first source itself), the other sources added (a local ``reduce``, or a
``recv`` that adds), the sum stored into each destination. ``get`` takes its offsets as
``handleGet`` does, as the simulator does. LL packet areas are buffers of their own
(``Pi``, ``Po``, ``Ps``), apart from the plain use of the same buffer, as in the
simulator. A cell is a chunk, or a part of one when thread block groups split it.

In-place plans alias the buffers as the executor's in-place call does (the allgather
input is the output's own block, the reduce-scatter output the input's own block, the
allreduce output the input, and the root's output its input for broadcast and reduce).

What stops the run (a deadlock, a range outside its buffer, a port channel to another
rank) is a problem of the plan: it is not run, and the simulator's reasons are shown.
NVLS (switch) and ``pipeline`` ops are refused by the reader.
"""

from __future__ import annotations

from dataclasses import dataclass

from collcert.certify.execution import mscclpp
from collcert.reference.execution import Op, Plan, Region, Spec

from .mscclplan import finish

WAITS_FOR_PACKETS = ("rppkt", "upkt", "repkt", "respkt", "recpkt", "recspkt")
REDUCTIONS = ("re", "res", "rre", "rres")


@dataclass(frozen=True)
class _At:
    """A resolved range: rank ``rank``'s ``region`` (aliased, in cells)."""

    rank: int
    region: Region


class _Stop(Exception):
    """A problem that stops the run (recorded in ``plan.problems``)."""


def plan_from_mscclpp(pp: mscclpp.Plan) -> Plan:
    """The execution plan of the MSCCL++ plan ``pp``, run in the mode it declares
    (``inplace``); ``plan.problems`` says why it cannot run, if it cannot."""
    g, n, coll = pp.grain, pp.ngpus, pp.collective
    per = pp.chunks[0]["i" if coll == "allgather" else "o"] * g
    buffers = [{b: c[b] * g for b in "ios"} for c in pp.chunks]
    run = _Host(pp, per, buffers)
    spec = _spec(pp, run, per)
    plan = Plan(spec, buffers, run.ops, name=pp.name or "MSCCL++ plan")
    plan.notes.append(f"an MSCCL++ plan for {'in-place' if pp.inplace else 'out-of-place'} "
                      f"calls (\"inplace\": {str(pp.inplace).lower()}), executed in that mode; "
                      f"protocol {pp.protocol}, {len(pp.tbs)} threadblocks on {n} ranks")
    if g > 1:
        plan.notes.append(f"thread block groups split each chunk into {g} cells")
    try:
        _check_shape(pp)
        run.run()
    except _Stop as exc:
        plan.problems.append(str(exc))
    if pp.inplace:  # the aliased buffer is never named: nothing to allocate for it
        for r in range(n):
            for b in "io":
                if run.alias(r, b, 0)[0] != b:
                    buffers[r][b] = 0
    for r, bufs in run.packets.items():
        for b in bufs:  # an LL packet area: as large as its (aliased) buffer
            buffers[r]["P" + b] = pp.chunks[r][b] * g
    return finish(plan, pp.refusals, "MSCCL++")


def _check_shape(pp: mscclpp.Plan) -> None:
    """Buffers the collective's data fits: the same input and output chunks on every rank,
    none empty, in the proportion of the collective (else nothing can be checked)."""
    n, coll = pp.ngpus, pp.collective
    i, o = pp.chunks[0]["i"], pp.chunks[0]["o"]
    want = {"allgather": (i * n, o), "reduce-scatter": (i, o * n)}.get(coll, (i, o))
    same = all((c["i"], c["o"]) == (i, o) for c in pp.chunks)
    if not same or not i or not o or want[0] != want[1]:
        raise _Stop(f"its buffers do not hold a {coll} of {n} ranks ({i} input and {o} output "
                    "chunks on rank 0; every rank must declare the same, in that proportion)")


def _spec(pp: mscclpp.Plan, run: _Host, per: int) -> Spec:
    """Where the collective's data lives: allgather's rank q holds global cells q·per…;
    reduce-scatter's output is block q of the sum; broadcast: the root's input; reduce:
    every rank's input summed into the root's output."""
    n, coll, root, g = pp.ngpus, pp.collective, pp.root, pp.grain
    size_i, size_o = pp.chunks[0]["i"] * g, pp.chunks[0]["o"] * g
    if coll in ("allgather", "reduce-scatter"):
        shards = [(q * per, per) for q in range(n)]
        cells = n * per
    else:
        cells = size_i
        shards = [(0, cells) if coll == "allreduce" or q == root else (0, 0) for q in range(n)]
    spec = Spec(coll, n, cells, root, shards)
    for q in range(n):
        b, off = run.alias(q, "i", 0)
        size = 0 if coll == "broadcast" and q != root else size_i
        spec.inputs.append((b, off, q * per if coll == "allgather" else 0, size))
        b, off = run.alias(q, "o", 0)
        size = 0 if coll == "reduce" and q != root else size_o
        spec.outputs.append((b, off, q * per if coll == "reduce-scatter" else 0, size))
    return spec


class _Host:
    """The MSCCL++ executor on the host: each threadblock's next op, the signals pending
    on each channel end, the device semaphores, the threadblocks at each barrier and the
    LL packets written; every op that runs appends its data movement to ``ops``."""

    def __init__(self, pp: mscclpp.Plan, per: int, buffers: list[dict[str, int]]) -> None:
        self.pp, self.per, self.buffers = pp, per, buffers
        self.ops: list[Op] = []
        self.msg = 0
        self.pc = {key: 0 for key in pp.tbs}
        self.inbox: dict[tuple[int, str, int], int] = {}
        self.sem = {(r, s): v for r, inits in pp.semaphores.items() for s, v in enumerate(inits)}
        self.arrived: dict[tuple[int, int], set[tuple[int, int]]] = {}
        self.released: set[tuple[int, int]] = set()
        self.written: set[tuple[int, str, int]] = set()  # LL packet cells with their flag
        self.packets: dict[int, set[str]] = {}  # rank -> buffers whose packet area is used

    # -- buffers ---------------------------------------------------------------------
    def alias(self, r: int, buf: str, j: int) -> tuple[str, int]:
        """Where cell ``j`` of rank ``r``'s ``buf`` lives in the call's mode."""
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

    def at(self, op: mscclpp.Op, ref: mscclpp.Ref, buf: str | None = None,
           index: int | None = None, size: int | None = None) -> _At | None:
        """The cells of ``ref`` (its buffer, index or size replaced when given) that
        ``op`` handles (its part under a thread block group); None for an empty range."""
        buf = ref.buf if buf is None else buf
        index = ref.index if index is None else index
        size = ref.size if size is None else size
        g = self.pp.grain
        have = self.pp.chunks[ref.rank][buf[-1]]
        if index + size > have:
            raise _Stop(f"{op.where()}: {buf}[{index}:{index + size}] of rank {ref.rank} is "
                        f"outside that buffer, which holds {have} chunks")
        t, parts = op.part
        cnt = size * g // parts
        if cnt == 0:
            return None
        b, off = self.alias(ref.rank, buf, index * g + t * cnt)
        if b.startswith("P"):
            self.packets.setdefault(ref.rank, set()).add(b[1:])
        return _At(ref.rank, Region(b, off, cnt))

    def temp(self, r: int, cnt: int) -> Region:
        off = self.buffers[r].get("t", 0)
        self.buffers[r]["t"] = off + cnt
        return Region("t", off, cnt)

    # -- data movement ---------------------------------------------------------------
    def move(self, op: mscclpp.Op, src: _At | None, dst: _At | None) -> None:
        """``dst = src``: a copy on one rank, else a message from src's rank to dst's."""
        if src is None or dst is None:
            return
        if src.region.n != dst.region.n:
            raise _Stop(f"{op.where()}: moves {src.region.n} cells into a range of "
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

    def reduce(self, op: mscclpp.Op, first: _At | None, others: list[_At | None],
               outs: list[_At | None]) -> None:
        """Every ``out`` = ``first`` + Σ ``others``, computed on ``op``'s rank."""
        if first is None:
            return
        r, cnt, note = op.rank, first.region.n, op.where()
        for x in others + outs:
            if x is not None and x.region.n != cnt:
                raise _Stop(f"{note}: reduces ranges of {cnt} and {x.region.n} cells")
        head = outs[0] if outs else None
        clash = any(x is not None and x.rank == r and x.region.buf == first.region.buf
                    and _overlap(x.region, first.region) for x in others)
        if head is not None and head == first and head.rank == r and not clash:
            acc = head  # accumulate in place: the first source is the destination
        else:
            acc = _At(r, self.temp(r, cnt))
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

    def data_op(self, op: mscclpp.Op) -> None:
        name, src, dst = op.name, op.src, op.dst
        if name in ("put", "pws", "pwsf"):
            if len(src) != len(dst):
                raise _Stop(f"{op.where()}: {len(src)} sources for {len(dst)} destinations")
            for i, (s, d) in enumerate(zip(src, dst)):
                self.port(op, i, d)
                self.move(op, self.at(op, s, size=d.size), self.at(op, d))
            if name != "put":
                self.signal(op)
            return
        if name == "get":
            for s, d in zip(src, dst):  # handleGet: offsets as the kernel takes them
                self.move(op, self.at(op, s, index=d.index), self.at(op, d, index=s.index,
                                                                      size=s.size))
            return
        if name in ("nop", "flush"):
            return
        if not src or not dst:
            raise _Stop(f"{op.where()}: has no source or no destination buffer")
        if name == "copy":
            self.move(op, self.at(op, src[0]), self.at(op, dst[0]))
        elif name in REDUCTIONS:
            size = src[0].size
            self.reduce(op, self.at(op, src[0]), [self.at(op, s, size=size) for s in src[1:]],
                        [self.at(op, d, size=size)
                         for d in (dst if name in ("res", "rres") else dst[:1])])
        else:
            self.packet_op(op)

    def packet_op(self, op: mscclpp.Op) -> None:
        """LL ops (execution_kernel.hpp handle*Packets), as the simulator reads them."""
        name, src, dst = op.name, op.src, op.dst
        s0, size = src[0], src[0].size
        if name == "ppkt":
            for i, (s, d) in enumerate(zip(src, dst)):
                port = op.chan_type == "port"
                if port:
                    self.port(op, i, d)
                self.move(op, self.at(op, s, buf=_pk(s.buf) if port else s0.buf),
                          self.at(op, d, buf=_pk(d.buf)))
        elif name in ("rppkt", "upkt"):
            data = self.at(op, _scratch(s0))
            for i, d in enumerate(dst):
                if name == "upkt":
                    self.move(op, data, self.at(op, d, size=size))
                    continue
                if op.chan_type == "port":
                    self.port(op, i, d)
                self.move(op, data, self.at(op, d, buf=_pk(d.buf), size=size))
        elif name == "cpkt":
            self.move(op, self.at(op, s0), self.at(op, dst[0], buf=_pk(dst[0].buf)))
        else:  # repkt, respkt, recpkt, recspkt
            local = 2 if name in ("recpkt", "recspkt") else 1
            outs = [self.at(op, dst[0], size=size)]
            if local == 2 and len(dst) > 1:
                outs.append(self.at(op, dst[1], buf=_pk(dst[1].buf), size=size))
            if name in ("respkt", "recspkt"):
                outs += [self.at(op, d, buf=_pk(d.buf), size=size) for d in dst[local:]]
            others = [self.at(op, _scratch(s), size=size) for s in src[1:]]
            self.reduce(op, self.at(op, s0), others, outs)

    def port(self, op: mscclpp.Op, i: int, d: mscclpp.Ref) -> None:
        """A port channel's put reaches only the rank at its other end."""
        if op.chan_type != "port":
            return
        if i >= len(op.channels):
            raise _Stop(f"{op.where()}: port put {i} has no channel (channel_ids lists "
                        f"{len(op.channels)})")
        peer = self.pp.peers[(op.rank, "port")][op.channels[i]]
        if peer != d.rank:
            raise _Stop(f"{op.where()}: puts into rank {d.rank}'s buffer over a port channel "
                        f"to rank {peer}")

    # -- synchronisation ---------------------------------------------------------------
    def signal(self, op: mscclpp.Op) -> None:
        for k in op.channels:
            other = self.pp.pair.get((op.rank, op.chan_type, k))
            if other is not None:  # else no wait can see it (the audit says so)
                self.inbox[other] = self.inbox.get(other, 0) + 1

    def blocked(self, op: mscclpp.Op) -> str | None:
        """None when ``op`` can run now; else what it waits for."""
        key = (op.rank, op.tb)
        if op.name in ("wait", "rlxwait"):
            for k in op.channels:
                if not self.inbox.get((op.rank, op.chan_type, k)):
                    peer = self.pp.peers[(op.rank, op.chan_type)][k]
                    return f"waits for a signal from rank {peer} on {op.chan_type} channel {k}"
        elif op.name == "sem_acquire":
            for s in set(op.sems):
                if self.sem.get((op.rank, s), 0) < op.sems.count(s):
                    return f"waits to acquire device semaphore {s}"
        elif op.name in WAITS_FOR_PACKETS:
            for ref in op.src[:1] if op.name in ("rppkt", "upkt") else op.src[1:]:
                span = self.at(op, _scratch(ref))
                for j in span.region.cells() if span else ():
                    if (op.rank, "Ps", j) not in self.written:
                        return f"waits for the packets of scratch cell {j} (LL: their flag)"
        elif op.name == "barrier" and key not in self.released:
            group = self.arrived.setdefault((op.rank, op.barrier), set())
            group.add(key)
            if len(group) < max(op.nblocks, 1):
                return (f"waits at barrier {op.barrier} for {op.nblocks} threadblocks "
                        f"({len(group)} arrived)")
            self.released |= group
            del self.arrived[(op.rank, op.barrier)]
        return None

    def execute(self, op: mscclpp.Op) -> None:
        if op.name in ("wait", "rlxwait"):
            for k in op.channels:
                self.inbox[(op.rank, op.chan_type, k)] -= 1
        elif op.name == "sem_acquire":
            for s in op.sems:
                self.sem[(op.rank, s)] -= 1
        elif op.name == "sem_release":
            for s in op.sems:
                self.sem[(op.rank, s)] = self.sem.get((op.rank, s), 0) + 1
        elif op.name == "barrier":
            self.released.discard((op.rank, op.tb))
        elif op.name in ("signal", "rlxsignal"):
            self.signal(op)
        else:
            self.data_op(op)

    def run(self) -> None:
        """Sweep the threadblocks, each as far as it can go, until all are done; a
        deadlock stops the run."""
        keys = sorted(self.pp.tbs)
        moved = True
        while moved:
            moved = False
            for key in keys:
                ops = self.pp.tbs[key]
                while self.pc[key] < len(ops) and self.blocked(ops[self.pc[key]]) is None:
                    self.execute(ops[self.pc[key]])
                    self.pc[key] += 1
                    moved = True
        stuck = [self.pp.tbs[k][self.pc[k]] for k in keys if self.pc[k] < len(self.pp.tbs[k])]
        if stuck:
            shown = "; ".join(f"{op.where()} {self.blocked(op)}" for op in stuck[:3])
            more = f"; and {len(stuck) - 3} more" if len(stuck) > 3 else ""
            raise _Stop(f"deadlock: no op can run; {shown}{more}")


def _pk(buf: str) -> str:
    return buf if buf.startswith("P") else "P" + buf


def _scratch(ref: mscclpp.Ref) -> mscclpp.Ref:
    """The kernel reads LL packets from the scratch buffer, whatever the op names."""
    return mscclpp.Ref(ref.rank, "Ps", ref.index, ref.size, False)


def _overlap(a: Region, b: Region) -> bool:
    return a.off < b.off + b.n and b.off < a.off + a.n


def is_mscclpp(head: str) -> bool:
    """Whether a JSON text (its first 4096 characters) is an MSCCL++ execution plan:
    "gpus" holding "threadblocks", as ``collcert audit`` detects it."""
    import re

    return '"threadblocks"' in head and re.search(r'"gpus"\s*:\s*\[', head) is not None
