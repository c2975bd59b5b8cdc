"""Compile a tree schedule into an MSCCL algorithm program (XML), as Zhao et al. 2026, §6.1 does.

The trees' execution plan (:mod:`collcert.reference.execution.treeplan`, one chunk per
cell: a tree of multiplicity m carries m chunks of M/``nchunksperloop`` for
allgather and reduce-scatter) becomes one program per GPU:

* one threadblock per (channel, receive peer, send peer); a tree's steps all
  run on channel ``tree index mod nchannels``;
* a receive that a node forwards to one child on the same threadblock is a
  single ``rcs`` (receive-copy-send) step; in-trees: the last child's partial
  sum is received, reduced and sent on in one ``rrs`` step (``rrcs`` at a node
  that also keeps it); otherwise ``r`` / ``rrc`` and ``s`` steps;
* dependencies (``depid``/``deps``, ``hasdep`` on the step waited for) order
  every access to a chunk after the step that wrote it (or read it, before a
  write), across threadblocks of a GPU; a step with several dependencies gets
  ``nop`` steps before it, as msccl-tools writes them;
* every threadblock runs its steps in the plan's global order (trees one after
  the other, each from the root outward or the leaves inward), so sends and
  receives match in order on every connection, and the program cannot
  deadlock: the earliest unfinished transfer is always ready on both sides.

Each program is written for one runtime (``runtime``, a name of
:mod:`collcert.certify.execution.runtimes`: ``msccl-executor-nccl``, the default,
``rccl`` or ``microsoft-msccl``), whose profile says how to spell it (the
collective's name, ``minBytes``/``maxBytes``, which calls it serves) and what its
reader takes (thread blocks, steps per thread block); the text is judged by that
profile before it is returned, and must load there. No ``<?xml …?>`` declaration:
the runtimes' hand-written reader refuses it.

On the executors the program serves both calls (``inplace="1" outofplace="1"``): the MSCCL
executor picks a program per call by whether its buffers alias (in place: the
allgather input is the output's own block, the reduce-scatter output the
input's own block, the allreduce output the input; frameworks call allreduce
in place). The dependencies above are those of the plan in both aliasings (an
in-place write to a chunk waits for every read of the same memory, whatever
its buffer's name), and a receive fuses with a send only where it may in both,
so one program is correct in either mode; the data moved, hence the algbw, is
the same. The MSCCL runtime
(Azure/msccl-executor-nccl) loads it with these limits, checked here: 64 steps
per threadblock, 32 send and 32 receive threadblocks per channel, 32 channels,
at most 71 chunks per step (longer transfers are split), chunk offsets below
32768, thread block ids below 128 when they are waited for, 4096 XML elements
per rank.

Switch paths: MSCCL names ranks, not links. Each tree edge (u, v) of the
switch-free graph G* becomes a connection from rank u to rank v; its path
through switches in the schedule is the route the fabric takes (NVSwitch,
InfiniBand switches). In-network multicast (a path that starts at a switch) has
no MSCCL counterpart: such an edge is sent from its G* source like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import quoteattr

from collcert.certify.execution import runtimes

from ..model import ScheduleError, check_budget, schedule_transfers
from .execplan import Op, Plan
from .msccl_analysis import analyse, copies_last
from .msccl_size import check_chunks
from .runtime_rate import rated_document
from .treeplan import plan_from_schedule

if TYPE_CHECKING:
    from ..forestcoll import Schedule
    from ..model import Topology

MAX_STEPS = 64
MAX_TB_PER_CHANNEL = 32
MAX_CHANNELS = 32
MAX_COUNT = 71
MAX_OFFSET = 32767
MAX_DEP_TB = 127
BYTES_PER_OP = 4000
SECONDS_PER_OP = 1e-3
"""Cost of the export per plan operation (/usr/bin/time -v collcert schedule dgx_a100:64
-c allreduce --format msccl-xml, 523,264 transfers: 519 s CPU, 1.97 GB on a loaded 2-core
machine; earlier 89 s and 920 MB, issue 24 491 s and 1.98 GB)."""
MAX_XML_ELEMENTS = 4095  # msccl_parser.h MAX_NODES = 4096: the 4096th kept element fails (:169)
DEFAULT_RUNTIME = "msccl-executor-nccl"
MSCCL_COLL = {"allgather": "allgather", "reduce-scatter": "reducescatter",
              "allreduce": "allreduce", "broadcast": "broadcast", "reduce": "reduce",
              "alltoall": "alltoall"}


@dataclass(eq=False)
class _Step:
    kind: str
    ops: list[int]  # plan op indices, first = position
    src: tuple[str, int] = ("i", -1)
    dst: tuple[str, int] = ("o", -1)
    cnt: int = 0
    deps: list[_Step] = field(default_factory=list)
    waited: bool = False
    tb: _Tb | None = None
    index: int = -1  # of the last piece, in its threadblock after nops and splits


@dataclass(eq=False)
class _Tb:
    rank: int
    chan: int
    recv: int
    send: int
    steps: list[_Step] = field(default_factory=list)
    id: int = -1


def msccl_xml(schedule: Schedule | dict[str, Any], channels: int | None = None,
              name: str | None = None, *, strict: bool = True,
              topology: Topology | None = None, runtime: str = DEFAULT_RUNTIME,
              inplace: bool = False) -> str:
    """The MSCCL XML of an allgather, reduce-scatter or allreduce tree schedule.

    ``channels``: how many channels to spread the trees over; by default the
    fewest (from 1) that keep every threadblock within the runtime's limits.
    Raises ScheduleError when the schedule cannot be expressed.

    The export's rate is computed first (:func:`.runtime_rate.export_rate`: the
    runtime sends a linked pair's traffic over its direct link): with ``strict``
    (the default) a program slower than its schedule is refused with
    :class:`.runtime_rate.SlowExportError`, which says the pair and link responsible.
    A dict schedule is checked when ``topology`` is given (it carries no capacities).

    ``runtime``: the runtime the program is written for (see the module docstring);
    ``inplace``: for a runtime that selects a program for one kind of call only
    (microsoft-msccl), write it for in-place calls."""
    profile = runtimes.get(runtime, "msccl-xml")  # an unknown name before any work
    doc = rated_document(schedule, topology, strict)
    coll = doc.get("collective")
    if coll not in MSCCL_COLL:
        raise ScheduleError(f"MSCCL export supports allgather, reduce-scatter, allreduce, "
                            f"broadcast and reduce, not {coll}; use --format json or "
                            "forestcoll-xml")
    w = doc.get("weights")
    if w and len({str(x) for x in w.values()}) > 1:
        raise ScheduleError("MSCCL export needs equal shards (MSCCL chunks are uniform); this "
                            "schedule has non-uniform weights")
    check_chunks(doc, MAX_OFFSET + 1)  # before the plan: --fixed-k 10^5 on 4 ranks is 400,000 chunks
    ops = schedule_transfers(doc)  # before the plan: --fixed-k 10^7 is 10^8 transfers
    check_budget(f"MSCCL export of {len(doc.get('compute_nodes') or [])} ranks",
                 BYTES_PER_OP * ops, f"compiling about {ops} transfers", seconds=SECONDS_PER_OP
                 * ops, action="use --format json or forestcoll-xml, or a smaller --fixed-k")
    return plan_xml(plan_from_schedule(doc, "schedule"), channels, name,
                    runtime=profile.name, inplace=inplace)


def plan_xml(plan: Plan, channels: int | None = None, name: str | None = None,
             advice: str = "--fixed-k with a smaller k, or a smaller topology", *,
             runtime: str = DEFAULT_RUNTIME, inplace: bool = False) -> str:
    """The MSCCL XML of an execution plan built from trees (allgather, reduce-scatter,
    allreduce; every op's ``group`` is ``(phase, tree)``): see :func:`msccl_xml`.
    ``advice``: what else to try when no channel count fits."""
    profile = runtimes.get(runtime, "msccl-xml")
    coll = plan.spec.collective
    plan = copies_last(plan)
    check_budget(f"MSCCL export of {plan.nranks} ranks", BYTES_PER_OP * len(plan.ops),
                 f"compiling {len(plan.ops)} transfers into threadblocks and steps",
                 seconds=SECONDS_PER_OP * len(plan.ops),
                 action="use --format json or forestcoll-xml for this many GPUs")
    if plan.problems:
        raise ScheduleError("the schedule cannot be compiled: " + "; ".join(plan.problems[:3]))
    raw = name or f"collcert_{coll.replace('-', '')}_{plan.name}"
    # the runtime's XML reader takes attribute values up to 255 characters, in double quotes
    name = "".join(ch if ch.isalnum() or ch in "_-.:" else "_" for ch in raw)[:120]
    tries = [channels] if channels is not None else list(range(1, MAX_CHANNELS + 1))
    last = ""
    analysis = analyse(plan)
    for ch in tries:
        if ch < 1 or ch > MAX_CHANNELS:
            raise ScheduleError(f"--msccl-channels {ch}: the MSCCL runtime takes 1 to "
                                f"{MAX_CHANNELS} channels (leave it out to use the fewest "
                                "that fit)")
        tbs = _compile(plan, ch, analysis)
        last = _limits(plan, tbs, ch, profile.export)
        if not last:
            return _checked(_render(plan, tbs, ch, name, profile.export, inplace), profile)
        if "steps" not in last:
            break
    raise ScheduleError(f"{profile.name} could not load this program: {last}. MSCCL runs "
                        "one threadblock per peer and channel with a fixed step budget "
                        "(Zhao et al. 2026, §6.3 names this its scalability limit); try more "
                        f"--msccl-channels (or leave it out), {advice}")


def _compile(plan: Plan, nch: int,
             analysis: tuple[list[list[int]], dict[int, list[int]], dict[int, int]]
             ) -> list[_Tb]:
    """The program's threadblocks on ``nch`` channels, numbered per rank: every op a step
    in plan order, a receive fused with the send that forwards it, and each step's
    waits on the other threadblocks of its rank."""
    ops = plan.ops
    deps, fusable, readers = analysis
    tbs = _pair_peers(ops, fusable, nch)
    step_of = _place_steps(ops, fusable, readers, nch, tbs)
    blocks = set(tbs.values())
    for tb in blocks:
        if tb.send == -2:
            tb.send = -1
    for tb in blocks:
        _wait_across(tb, ops, deps, step_of)
    ordered = sorted(blocks, key=lambda t: (t.rank, t.chan, t.send, t.recv))
    per_rank: dict[int, int] = {}
    for tb in ordered:
        tb.id = per_rank.get(tb.rank, 0)
        per_rank[tb.rank] = tb.id + 1
    return ordered


def _chan(op: Op, nch: int) -> int:
    """The channel of an op: its tree's index mod the number of channels."""
    assert op.group is not None
    return int(op.group[1]) % nch


def _pair_peers(ops: list[Op], fusable: dict[int, list[int]], nch: int,
                ) -> dict[tuple[int, int, str, int], _Tb]:
    """Threadblocks that receive from one peer and send to another, keyed by (rank,
    channel, "r", receive peer) and (rank, channel, "s", send peer): the pairs with the
    most fusable receive-and-forward steps first, each peer in one pair at most."""
    weight: dict[tuple[int, int, int, int], int] = {}
    for r, sends in fusable.items():
        for s in sends:
            key = (ops[r].rank, _chan(ops[r], nch), ops[r].peer, ops[s].peer)
            weight[key] = weight.get(key, 0) + 1
    tbs: dict[tuple[int, int, str, int], _Tb] = {}
    for (rank, ch, p, c), _ in sorted(weight.items(), key=lambda kv: (-kv[1], kv[0])):
        if (rank, ch, "r", p) not in tbs and (rank, ch, "s", c) not in tbs:
            tb = _Tb(rank, ch, p, c)
            tbs[(rank, ch, "r", p)] = tbs[(rank, ch, "s", c)] = tb
    return tbs


def _tb_for(tbs: dict[tuple[int, int, str, int], _Tb], rank: int, ch: int, way: str,
            peer: int) -> _Tb:
    """The threadblock of ``rank`` that receives from (``way`` "r") or sends to ("s")
    ``peer`` on channel ``ch``; a new one-way threadblock when no pair has it."""
    key = (rank, ch, way, peer)
    if key not in tbs:
        tbs[key] = _Tb(rank, ch, peer if way == "r" else -1, peer if way == "s" else -1)
    return tbs[key]


def _place_steps(ops: list[Op], fusable: dict[int, list[int]], readers: dict[int, int],
                 nch: int, tbs: dict[tuple[int, int, str, int], _Tb]) -> dict[int, _Step]:
    """Every op as a step of its threadblock, in plan order (a send fused into its
    receive's step is not placed again); the step of each op."""
    step_of: dict[int, _Step] = {}
    fused_send: set[int] = set()
    last_send = {(op.group, op.rank): j for j, op in enumerate(ops) if op.kind == "send"}
    for i, op in enumerate(ops):
        if i in fused_send:
            continue
        ch = _chan(op, nch)
        if op.kind == "recv":
            tb = _tb_for(tbs, op.rank, ch, "r", op.peer)
            partner = next((s for s in fusable.get(i, []) if ops[s].peer == tb.send), None)
            st = _recv_step(i, op, partner, readers)
            if partner is not None:
                fused_send.add(partner)
                step_of[partner] = st
        elif op.kind == "send":
            assert op.src is not None
            tb = _tb_for(tbs, op.rank, ch, "s", op.peer)
            st = _Step("s", [i], src=(op.src.buf, op.src.off), cnt=op.src.n)
        else:  # the root's copy of its input into its output: on its last send's block
            assert op.src is not None and op.dst is not None and op.kind == "copy"
            last = last_send.get((op.group, op.rank))
            tb = _tb_for(tbs, op.rank, ch, "s", ops[last].peer if last is not None else -2)
            st = _Step("cpy", [i], src=(op.src.buf, op.src.off), dst=(op.dst.buf, op.dst.off),
                       cnt=op.src.n)
        st.tb = tb
        tb.steps.append(st)
        step_of[i] = st
    return step_of


def _recv_step(i: int, op: Op, partner: int | None, readers: dict[int, int]) -> _Step:
    """The step of receive ``i``: ``r``, or ``rrc`` when it reduces; fused with the send
    ``partner`` that forwards what it wrote: ``rcs``, ``rrs`` (a partial sum in scratch
    that nothing else reads, so it is not kept) or ``rrcs``."""
    assert op.dst is not None
    st = _Step("r" if op.red is None else "rrc", [i], dst=(op.dst.buf, op.dst.off),
               cnt=op.dst.n)
    if op.red is not None:
        st.src = (op.red.buf, op.red.off)
    if partner is not None:
        st.ops.append(partner)
        if op.red is None:
            st.kind, st.src = "rcs", st.dst
        elif op.dst.buf == "s" and readers.get(i, 0) == 1:
            st.kind, st.dst = "rrs", ("o", -1)
        else:
            st.kind = "rrcs"
    return st


def _wait_across(tb: _Tb, ops: list[Op], deps: list[list[int]],
                 step_of: dict[int, _Step]) -> None:
    """Each step's waits on other threadblocks of its rank (``deps``): the latest step of
    each that it depends on, less what an earlier step of ``tb`` already waited for."""
    seen: dict[int, int] = {}  # id(tb) -> highest step position already waited for
    for st in tb.steps:
        need: dict[int, _Step] = {}
        for i in st.ops:
            for d in deps[i]:
                if ops[d].rank != tb.rank:
                    continue
                other = step_of[d]
                if other.tb is tb:
                    continue
                assert other.tb is not None
                tid = id(other.tb)
                cur = need.get(tid)
                if cur is None or _order(other) > _order(cur):
                    need[tid] = other
        st.deps = []
        for tid, other in sorted(need.items(), key=lambda kv: _order(kv[1])):
            if seen.get(tid, -1) >= _order(other):
                continue
            seen[tid] = _order(other)
            other.waited = True
            st.deps.append(other)


def _order(st: _Step) -> int:
    return st.ops[0]


def _pieces(st: _Step) -> int:
    return max(1, -(-st.cnt // MAX_COUNT))


def _layout(tbs: list[_Tb]) -> None:
    """Final step indices: nops for extra dependencies, long steps split."""
    for tb in tbs:
        n = 0
        for st in tb.steps:
            n += max(0, len(st.deps) - 1) + _pieces(st)
            st.index = n - 1


def _checked(text: str, profile: runtimes.RuntimeProfile) -> str:
    """``text``, once ``profile`` says its runtime loads it and selects it for calls."""
    verdict = profile.judge(text, "export")
    if not verdict.ok:
        raise RuntimeError(f"internal: the MSCCL export would not run on {profile.name}: "
                           f"{verdict.describe()}")
    return text


def _limits(plan: Plan, tbs: list[_Tb], nch: int, rt: dict[str, Any]) -> str:
    _layout(tbs)
    max_steps = int(rt.get("max_steps", MAX_STEPS))
    for tb in tbs:
        if tb.steps and tb.steps[-1].index + 1 > max_steps:
            return (f"rank {tb.rank} threadblock {tb.id} (channel {tb.chan}) needs "
                    f"{tb.steps[-1].index + 1} steps, more than the runtime's {max_steps} steps")
        if tb.id > MAX_DEP_TB and any(st.waited for st in tb.steps):
            return f"rank {tb.rank} needs more than {MAX_DEP_TB + 1} threadblocks"
        if tb.id >= int(rt.get("max_tbs", 1024)):
            return f"rank {tb.rank} needs more than the runtime's {rt['max_tbs']} threadblocks"
    for r in range(plan.nranks):
        for ch in range(nch):
            mine = [tb for tb in tbs if tb.rank == r and tb.chan == ch]
            for way, attr in (("send", "send"), ("receive", "recv")):
                n = sum(1 for tb in mine if getattr(tb, attr) >= 0)
                if n > MAX_TB_PER_CHANNEL:
                    return (f"rank {r} has {n} {way} threadblocks on channel {ch}, more than "
                            f"{MAX_TB_PER_CHANNEL}")
        if max(plan.buffers[r].values()) > MAX_OFFSET + 1:
            return f"rank {r} needs chunk offsets beyond {MAX_OFFSET}"
        mine = [tb for tb in tbs if tb.rank == r]
        elements = 1 + plan.nranks + len(mine) + sum(tb.steps[-1].index + 1 for tb in mine
                                                     if tb.steps)
        if elements > MAX_XML_ELEMENTS:
            return (f"rank {r} needs {elements} XML elements, more than the {MAX_XML_ELEMENTS} "
                    "the runtime's reader keeps per rank")
    return ""


def _render(plan: Plan, tbs: list[_Tb], nch: int, name: str, rt: dict[str, Any],
            inplace: bool) -> str:
    _layout(tbs)
    spec = plan.spec
    a2a = spec.collective == "alltoall"  # its Spec numbers all ranks' data: N·C cells
    chunks = spec.cells // plan.nranks if a2a else spec.cells
    coll = rt.get("coll", {}).get(spec.collective, MSCCL_COLL[spec.collective])
    modes = (0, 1) if a2a else (1, 1) if rt.get("both_modes", True) else (
        int(inplace), int(not inplace))
    q = quoteattr
    lines = [f'<algo name={q(name)} proto="Simple" nchannels="{nch}" '
             f'nchunksperloop="{chunks}" ngpus="{plan.nranks}" coll="{coll}" '
             f'inplace="{modes[0]}" outofplace="{modes[1]}" '
             f'minBytes="{rt.get("min_bytes", "0")}" maxBytes="{rt.get("max_bytes", "0")}"'
             + ("" if spec.root is None else f' root="{spec.root}"') + '>']

    def step(s: int, kind: str, src: tuple[str, int], dst: tuple[str, int], cnt: int,
             dep: _Step | None, hasdep: bool) -> str:
        depid, deps = (-1, -1) if dep is None else (dep.tb.id if dep.tb else -1, dep.index)
        return (f'      <step s="{s}" type="{kind}" srcbuf="{src[0]}" srcoff="{src[1]}" '
                f'dstbuf="{dst[0]}" dstoff="{dst[1]}" cnt="{cnt}" depid="{depid}" '
                f'deps="{deps}" hasdep="{int(hasdep)}"/>')

    for r in range(plan.nranks):
        b = plan.buffers[r]
        # scratch: only the partial sums some step writes or reads (an rrs keeps none)
        used = sorted({(buf[1], st.cnt) for tb in tbs if tb.rank == r for st in tb.steps
                       for buf in (st.src, st.dst) if buf[0] == "s" and buf[1] >= 0})
        packed, scratch = {}, 0
        for off, cnt in used:
            packed[off] = scratch
            scratch += cnt
        if spec.root is not None:  # the user's buffers: count elements on every rank
            b = {"i": chunks, "o": chunks}
        lines.append(f'  <gpu id="{r}" i_chunks="{b.get("i", 0)}" o_chunks="{b.get("o", 0)}" '
                     f's_chunks="{scratch}">')
        for tb in (t for t in tbs if t.rank == r):
            lines.append(f'    <tb id="{tb.id}" send="{tb.send}" recv="{tb.recv}" '
                         f'chan="{tb.chan}">')
            s = 0
            for st in tb.steps:
                for d in st.deps[:-1]:
                    lines.append(step(s, "nop", ("i", -1), ("o", -1), 0, d, False))
                    s += 1
                k = _pieces(st)
                for piece in range(k):
                    lo = piece * MAX_COUNT
                    cnt = min(MAX_COUNT, st.cnt - lo)
                    src = (st.src[0], _at(st.src, packed) + lo if st.src[1] >= 0 else -1)
                    dst = (st.dst[0], _at(st.dst, packed) + lo if st.dst[1] >= 0 else -1)
                    dep = st.deps[-1] if st.deps and piece == 0 else None
                    lines.append(step(s, st.kind, src, dst, cnt, dep,
                                      st.waited and piece == k - 1))
                    s += 1
            lines.append("    </tb>")
        lines.append("  </gpu>")
    lines.append("</algo>")
    return "\n".join(lines) + "\n"


def _at(buf: tuple[str, int], packed: dict[int, int]) -> int:
    return packed[buf[1]] if buf[0] == "s" else buf[1]
