"""An independent event simulator of associative reduction schedules.

The model is that of Canon & Antoniu, "Scheduling Associative Reductions with
Homogeneous Costs when Overlapping Communications and Computations" (INRIA
RR-7898, 2012), §3. A ``collcert-reduction/1`` schedule (docs/reduction-trees.md)
gives, for machines 1..n, the machine each one sends its result to
(``parent``, null for the sink) and the date its transfer starts
(``send_time``). This module recomputes everything else from those dates
alone and refuses a schedule that breaks a rule:

* the parent links form one in-tree towards the single sink;
* a transfer takes ``transfer`` (d) time units and a machine takes part in
  one transfer at a time: the transfers into a machine do not overlap;
* a machine reduces each element it receives into its own, one reduction of
  ``compute`` (c) time units at a time, in arrival order, each as early as
  possible; with the ``overlap`` model it may receive while it computes, with
  ``non-overlap`` a reduction waits for the machine's transfers (so k elements
  cost k(d + c));
* a machine sends once, after all its reductions (``send_time ≥ ready``);
* the reduction is associative but not commutative: each machine's partial
  result is a contiguous run of the final product x_{o1} ⊕ … ⊕ x_{on}
  (``operand_order``), and each reduction joins the accumulated run with the
  arriving one on its left or right side, so the two must be adjacent;
* optional limits: at most ``max_transfers`` transfers in flight at any
  instant, at most ``max_reducers`` machines that reduce.

The makespan is the date the sink finishes its last reduction. Everything is
exact: dates are scaled to integers over one common denominator.
Standard library only; never imports collcert.reference.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .base import InputError, Verdict, frac_str, integer, number

FORMAT = "collcert-reduction/1"
MODELS = ("overlap", "non-overlap")
MAX_MACHINES = 20_000_000


@dataclass
class Simulation:
    """What the simulator established, in integer units of ``1/scale``."""

    n: int
    sink: int  # 0-based
    parent: list[int]  # 0-based, -1 for the sink
    send: list[int]  # 0-based dates, 0 for the sink (unused)
    transfer: int
    compute: int
    scale: int
    ready: list[int]
    reductions: list[list[int]] = field(default_factory=list)  # start dates per machine
    order: list[int] | None = None
    model: str = "overlap"
    kids: list[int] = field(default_factory=list)  # senders of v: kids[start[v]:start[v+1]]
    start: list[int] = field(default_factory=list)

    def exact(self, value: int) -> Fraction:
        return Fraction(value, self.scale)


def _list(data: Mapping[str, Any], key: str, n: int) -> list[Any]:
    value = data.get(key)
    if not isinstance(value, list):
        raise InputError(f"'{key}' must be an array of {n} entries (machines 1..{n})")
    if len(value) != n:
        raise InputError(f"'{key}' has {len(value)} entries but n = {n}")
    return value


def _times(raw: list[Any], sink: int) -> tuple[list[int], list[Fraction | None], int]:
    """Integer numerators of the dates (fast path) or exact Fractions, and their lcm."""
    ints = [0] * len(raw)
    fracs: list[Fraction | None] = []
    scale = 1
    for i, x in enumerate(raw):
        if i == sink:
            if x is not None:
                raise InputError(f"send_time of the sink, machine {i + 1}, must be null: "
                                 "the sink sends nothing")
            continue
        if type(x) is int:
            ints[i] = x
            continue
        if isinstance(x, str) and x.isdigit() and len(x) < 300:
            ints[i] = int(x)
            continue
        if x is None:
            raise InputError(f"send_time of machine {i + 1} is null but it has a parent: "
                             "only the sink has no send time")
        f = number(x, f"send_time of machine {i + 1}")
        if not fracs:
            fracs = [None] * len(raw)
        fracs[i] = f
        scale = math.lcm(scale, f.denominator)
    return ints, fracs, scale


def read(data: Mapping[str, Any]) -> Simulation:
    """Read a ``collcert-reduction/1`` dict into integer data (InputError if unreadable)."""
    if not isinstance(data, Mapping):
        raise InputError(f"a reduction schedule is a JSON object ({FORMAT})")
    if data.get("format", FORMAT) != FORMAT:
        raise InputError(f"format {data.get('format')!r} is not {FORMAT!r}")
    n = integer(data.get("n"), "n", least=1)
    if n > MAX_MACHINES:
        raise InputError(f"n = {n}: more than {MAX_MACHINES} machines")
    d = number(data.get("transfer"), "transfer (d)")
    c = number(data.get("compute"), "compute (c)")
    if d < 0 or c < 0:
        raise InputError("transfer and compute costs must be non-negative")
    parents = _list(data, "parent", n)
    parent = [-1] * n
    sinks = []
    for i, p in enumerate(parents):
        if p is None:
            sinks.append(i)
            continue
        if type(p) is not int:
            p = integer(p, f"parent of machine {i + 1}")
        if not 1 <= p <= n:
            raise InputError(f"parent of machine {i + 1} is {p}: not a machine 1..{n}")
        if p == i + 1:
            raise InputError(f"machine {i + 1} sends to itself")
        parent[i] = p - 1
    if len(sinks) != 1:
        raise InputError(f"exactly one machine (the sink) has a null parent; found {len(sinks)}"
                         + (f": machines {', '.join(str(s + 1) for s in sinks[:5])}"
                            if sinks else ""))
    sink = sinks[0]
    ints, fracs, scale = _times(_list(data, "send_time", n), sink)
    scale = math.lcm(scale, d.denominator, c.denominator)
    if fracs:
        send = [int(f * scale) if f is not None else t * scale for t, f in zip(ints, fracs)]
    elif scale == 1:
        send = ints
    else:
        send = [t * scale for t in ints]
    order = None
    if data.get("operand_order") is not None:
        raw = _list(data, "operand_order", n)
        order = []
        for j, m in enumerate(raw):
            if type(m) is not int or not 1 <= m <= n:
                raise InputError(f"operand_order[{j}] = {m!r}: not a machine 1..{n}")
            order.append(m - 1)
    return Simulation(n=n, sink=sink, parent=parent, send=send, transfer=int(d * scale),
                      compute=int(c * scale), scale=scale, ready=[0] * n, order=order)


def _tree_order(sim: Simulation, verdict: Verdict) -> list[int] | None:
    """Machines from the sink outwards, or None (with a reason) if not one tree."""
    n = sim.n
    start = [0] * (n + 1)
    for p in sim.parent:
        if p >= 0:
            start[p + 1] += 1
    for v in range(n):
        start[v + 1] += start[v]
    kids = [0] * (n - 1)
    fill = start[:]
    for i, p in enumerate(sim.parent):
        if p >= 0:
            kids[fill[p]] = i
            fill[p] += 1
    order = [sim.sink]
    k = 0
    while k < len(order):
        v = order[k]
        order.extend(kids[start[v]:start[v + 1]])
        k += 1
    if len(order) != n:
        reached = bytearray(n)
        for v in order:
            reached[v] = 1
        stray = [i + 1 for i in range(n) if not reached[i]]
        verdict.fail(f"machines {', '.join(map(str, stray[:8]))}"
                     f"{' …' if len(stray) > 8 else ''} never reach the sink "
                     f"{sim.sink + 1}: their parent links form a cycle")
        return None
    sim.kids, sim.start = kids, start
    return order


def simulate(sim: Simulation, verdict: Verdict, record: bool = False) -> None:
    """Run every machine's receptions and reductions; fill ``sim.ready``."""
    order = _tree_order(sim, verdict)
    if order is None:
        return
    kids, start = sim.kids, sim.start
    D, C, send, ready = sim.transfer, sim.compute, sim.send, sim.ready
    overlap = sim.model == "overlap"
    if record:
        sim.reductions = [[] for _ in range(sim.n)]
    show = sim.exact
    for v in reversed(order):
        lo, hi = start[v], start[v + 1]
        if lo == hi:
            continue
        senders = sorted(kids[lo:hi], key=send.__getitem__)
        times = [send[k] for k in senders]
        f = 0
        for j, t in enumerate(times):
            if j and t < times[j - 1] + D:
                verdict.fail(f"machine {v + 1} receives from {senders[j - 1] + 1} during "
                             f"[{frac_str(show(times[j - 1]))}, "
                             f"{frac_str(show(times[j - 1] + D))}) and from {senders[j] + 1} "
                             f"from {frac_str(show(t))}: one transfer at a time")
            at = max(t + D, f)
            if not overlap:
                q = j + 1
                while q < len(times) and times[q] < at + C:
                    if times[q] + D > at:
                        at = times[q] + D
                    q += 1
            if record:
                sim.reductions[v].append(at)
            f = at + C
        ready[v] = f
    for i in range(sim.n):
        if i == sim.sink:
            continue
        if send[i] < 0:
            verdict.fail(f"machine {i + 1} sends at {frac_str(show(send[i]))}, before time 0")
        elif send[i] < ready[i]:
            verdict.fail(f"machine {i + 1} sends at {frac_str(show(send[i]))} but finishes "
                         f"its reductions only at {frac_str(show(ready[i]))}")


def _check_order(sim: Simulation, verdict: Verdict, order: list[int]) -> None:
    """Each reduction joins two adjacent runs of the product (non-commutative)."""
    n = sim.n
    pos = [-1] * n
    for j, m in enumerate(order):
        if pos[m] >= 0:
            verdict.fail(f"operand_order names machine {m + 1} twice")
            return
        pos[m] = j
    kids, start = sim.kids, sim.start
    lo_run, hi_run = pos[:], pos[:]
    arrive = sim.send
    todo = [sim.sink]
    seq = []
    while todo:  # top-down, then reversed: every machine after its senders
        v = todo.pop()
        seq.append(v)
        todo.extend(kids[start[v]:start[v + 1]])
    for v in reversed(seq):
        senders = sorted(kids[start[v]:start[v + 1]], key=arrive.__getitem__)
        a, b = lo_run[v], hi_run[v]
        i = 0
        while i < len(senders):
            j = i
            while j < len(senders) and arrive[senders[j]] == arrive[senders[i]]:
                j += 1
            by_lo = {lo_run[s]: s for s in senders[i:j]}
            by_hi = {hi_run[s]: s for s in senders[i:j]}
            for _ in range(j - i):  # simultaneous arrivals may be joined in any order
                s = by_lo.pop(b + 1, None)
                if s is not None:
                    del by_hi[hi_run[s]]
                    b = hi_run[s]
                    continue
                s = by_hi.pop(a - 1, None)
                if s is not None:
                    del by_lo[lo_run[s]]
                    a = lo_run[s]
                    continue
                s = next(iter(by_lo.values()))
                verdict.fail(f"machine {v + 1} holds operands {a + 1}..{b + 1} of the product "
                             f"when it reduces the run {lo_run[s] + 1}..{hi_run[s] + 1} from "
                             f"machine {s + 1}: they are not adjacent, so the reduction would "
                             "need commutativity")
                return
            i = j
        lo_run[v], hi_run[v] = a, b
    verdict.facts["operand_order"] = "checked"


def check_reduction(data: Mapping[str, Any], *, record: bool = False
                    ) -> tuple[Verdict, Simulation | None]:
    """Check a ``collcert-reduction/1`` schedule; recompute its makespan.

    Returns the verdict (facts: ``makespan``, ``reducers``,
    ``max_concurrent_transfers``) and the simulation (None if unreadable).
    """
    verdict = Verdict("reduction schedule")
    try:
        sim = read(data)
        model = data.get("model", "overlap")
        if model not in MODELS:
            raise InputError(f"model {model!r} is not one of {', '.join(MODELS)}")
        sim.model = model
        kt = data.get("max_transfers")
        kr = data.get("max_reducers")
        kt = None if kt is None else integer(kt, "max_transfers", least=1)
        kr = None if kr is None else integer(kr, "max_reducers", least=1)
    except InputError as exc:
        verdict.fail(str(exc))
        return verdict, None
    simulate(sim, verdict, record=record)
    if not sim.start:  # not a tree: nothing more to check
        return verdict, sim
    makespan = sim.exact(sim.ready[sim.sink])
    reducers = sum(1 for v in range(sim.n) if sim.start[v + 1] > sim.start[v])
    peak = _peak_transfers(sim)
    verdict.facts.update(makespan=makespan, reducers=reducers, max_concurrent_transfers=peak,
                         n=sim.n)
    if kt is not None and peak > kt:
        verdict.fail(f"{peak} transfers are in flight at once but max_transfers = {kt}")
    if kr is not None and reducers > kr:
        verdict.fail(f"{reducers} machines reduce but max_reducers = {kr}")
    if sim.order is not None:
        _check_order(sim, verdict, sim.order)
    else:
        verdict.facts["operand_order"] = "not given (valid for a commutative operator)"
    for key in ("makespan",):
        if data.get(key) is not None:
            try:
                claim = number(data[key], key)
            except InputError as exc:
                verdict.fail(str(exc))
                continue
            if claim != makespan:
                verdict.fail(f"the file claims makespan {frac_str(claim)}, the simulation "
                             f"gives {frac_str(makespan)}")
    if data.get("lower_bound") is not None:
        low = number(data["lower_bound"], "lower_bound")
        if makespan < low:
            verdict.fail(f"the claimed lower bound {frac_str(low)} on any schedule is above "
                         f"this valid schedule's makespan {frac_str(makespan)}")
    if data.get("upper_bound") is not None and data.get("strategy", "optimal") == "optimal":
        high = number(data["upper_bound"], "upper_bound")
        if makespan > high:
            verdict.fail(f"the schedule claims to be optimal but its makespan "
                         f"{frac_str(makespan)} exceeds the claimed upper bound "
                         f"{frac_str(high)} on the optimum")
    return verdict, sim


def _peak_transfers(sim: Simulation) -> int:
    """Most transfers in flight at one instant (intervals [t, t + d), d > 0)."""
    if sim.transfer == 0 or sim.n < 2:
        return 0 if sim.n < 2 or sim.transfer == 0 else 1
    D = sim.transfer
    starts = sorted(t for i, t in enumerate(sim.send) if i != sim.sink)
    peak = 0
    j = 0  # starts[j] is the oldest transfer possibly still running
    for i, t in enumerate(starts):
        while starts[j] + D <= t:
            j += 1
        peak = max(peak, i - j + 1)
    return peak

