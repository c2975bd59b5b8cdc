"""An independent event simulator of associative reduction schedules (Canon & Antoniu 2012, §3).

The model is that of Canon & Antoniu 2012, §3 ("Scheduling Associative
Reductions with Homogeneous Costs when Overlapping Communications and
Computations", INRIA RR-7898). A ``collcert-reduction/1`` schedule (docs/reduction-trees.md)
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
  ``non-overlap`` a reduction also waits for the machine's transfers to end
  (so k elements cost k(d + c));
* a machine sends once, after all its reductions (``send_time ≥ ready``), so
  its own transfer never meets the ones it receives;
* the reduction is associative but not commutative: each machine's partial
  result is a contiguous run of the final product x_{o1} ⊕ … ⊕ x_{on}
  (``operand_order``), and each reduction joins the accumulated run with the
  arriving one on its left or right, so the two runs must be adjacent
  (operands arriving at the same instant may be joined in any order);
* optional limits: at most ``max_transfers`` transfers in flight at any
  instant (intervals [t, t + d)), at most ``max_reducers`` machines reduce.

The makespan is the date the sink finishes its last reduction. Everything is
exact: dates are scaled to integers over one common denominator. The work is
a few sorts and linear passes (no per-machine lists), so 10^6 machines take
seconds. Standard library only; never imports collcert.reference.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..model import InputError, Verdict, frac_str, integer, number
from .stated import check_stated

FORMAT = "collcert-reduction/1"
MODELS = ("overlap", "non-overlap")
MAX_MACHINES = 20_000_000
MAX_DATE_BITS = 2**30
"""n × the bits of the dates' common denominator: at most 128 MiB of scaled dates."""


@dataclass
class Simulation:
    """What the simulator read and established, dates in integer units of ``1/scale``."""

    n: int
    sink: int  # 0-based
    parent: list[int]  # 0-based, -1 for the sink
    send: list[int]  # 0-based dates (0 for the sink, unused)
    transfer: int
    compute: int
    scale: int
    model: str = "overlap"
    order: list[int] | None = None  # operand order, 0-based machines
    ready: list[int] = field(default_factory=list)  # when each machine ends reducing
    arrivals: list[int] = field(default_factory=list)  # non-sinks by (receiver, send date)
    reductions: list[int] = field(default_factory=list)  # start of the reduction of each
    depth: list[int] = field(default_factory=list)  # sink 0; empty if not a tree

    def exact(self, value: int) -> Fraction:
        return Fraction(value, self.scale)


def _list(data: Mapping[str, Any], key: str, n: int) -> list[Any]:
    value = data.get(key)
    if not isinstance(value, list):
        raise InputError(f"'{key}' must be an array of {n} entries (machines 1..{n})")
    if len(value) != n:
        raise InputError(f"'{key}' has {len(value)} entries but n = {n}")
    return value


def _machines(raw: list[Any], what: str, n: int) -> list[int]:
    """1-based machine numbers (None allowed) → 0-based ints (-1 for None)."""
    if not set(map(type, raw)) <= {int, type(None)}:
        for j, m in enumerate(raw):
            if m is not None and type(m) is not int:
                raise InputError(f"{what}[{j}] = {m!r}: expected a machine number 1..{n}")
    values = [m for m in raw if m is not None]
    if values and (min(values) < 1 or max(values) > n):
        j, m = next((j, m) for j, m in enumerate(raw) if m is not None and not 1 <= m <= n)
        raise InputError(f"{what}[{j}] = {m}: not a machine 1..{n}")
    return [-1 if m is None else m - 1 for m in raw]


def _dates(raw: list[Any], sink: int) -> tuple[list[int], int]:
    """Send dates as integers over their common denominator, and that denominator."""
    if raw[sink] is not None:
        raise InputError(f"send_time of the sink, machine {sink + 1}, must be null: it sends "
                         "nothing")
    kinds = set(map(type, raw))
    if kinds <= {int, type(None)}:
        if raw.count(None) != 1:
            i = next(i for i, x in enumerate(raw) if x is None and i != sink)
            raise InputError(f"send_time of machine {i + 1} is null but it has a parent: "
                             "only the sink has no send time")
        out = list(raw)
        out[sink] = 0
        return out, 1
    nums = [0] * len(raw)
    dens = [1] * len(raw)
    for i, x in enumerate(raw):
        if i == sink:
            continue
        if type(x) is int:
            nums[i] = x
            continue
        if x is None:
            raise InputError(f"send_time of machine {i + 1} is null but it has a parent: "
                             "only the sink has no send time")
        if type(x) is str and len(x) < 200:  # fast path for "p" and "p/q"
            a, slash, b = x.partition("/")
            if a.isascii() and a.isdigit() and (not slash or (
                    b.isascii() and b.isdigit() and b.strip("0"))):
                nums[i], dens[i] = int(a), int(b) if slash else 1
                continue
        f = number(x, f"send_time of machine {i + 1}")
        nums[i], dens[i] = f.numerator, f.denominator
    scale = 1
    for den in set(dens):
        scale = _bounded(math.lcm(scale, den), len(raw))
    return [a * (scale // b) for a, b in zip(nums, dens)], scale


def _bounded(scale: int, n: int) -> int:
    """``scale`` if n dates over it stay within MAX_DATE_BITS, else InputError (dates with
    many distinct denominators, 1/2, 1/3, 1/5, …, would make every date a huge integer)."""
    if scale.bit_length() * n > MAX_DATE_BITS:
        raise InputError(f"the send dates, transfer and compute costs have a common "
                         f"denominator of about {scale.bit_length() * 3 // 10} digits: {n} "
                         "dates over it are too large to check exactly (write the dates "
                         "over a few common denominators)")
    return scale


def read(data: Mapping[str, Any]) -> Simulation:
    """Read a ``collcert-reduction/1`` dict into integer data (InputError if unreadable)."""
    if not isinstance(data, Mapping):
        raise InputError(f"a reduction schedule is a JSON object ({FORMAT})")
    if data.get("format", FORMAT) != FORMAT:
        raise InputError(f"format {data.get('format')!r} is not {FORMAT!r}")
    n = integer(data.get("n"), "n", least=1, strict=True)
    if n > MAX_MACHINES:
        raise InputError(f"n = {n}: more than {MAX_MACHINES} machines")
    d = number(data.get("transfer"), "transfer (d)")
    c = number(data.get("compute"), "compute (c)")
    if d < 0 or c < 0:
        raise InputError("transfer and compute costs must be non-negative")
    model = data.get("model", "overlap")
    if model not in MODELS:
        raise InputError(f"model {model!r} is not one of {', '.join(MODELS)}")
    parent = _machines(_list(data, "parent", n), "parent", n)
    sinks = [i for i, p in enumerate(parent) if p < 0]
    if len(sinks) != 1:
        raise InputError(f"exactly one machine (the sink) has a null parent; found {len(sinks)}"
                         + (f": machines {', '.join(str(s + 1) for s in sinks[:5])}"
                            if sinks else ""))
    selfish = next((i for i, p in enumerate(parent) if p == i), None)
    if selfish is not None:
        raise InputError(f"machine {selfish + 1} sends to itself")
    send, scale = _dates(_list(data, "send_time", n), sinks[0])
    scale2 = _bounded(math.lcm(scale, d.denominator, c.denominator), n)
    if scale2 != scale:
        send = [t * (scale2 // scale) for t in send]
    order = None
    if data.get("operand_order") is not None:
        order = _machines(_list(data, "operand_order", n), "operand_order", n)
        if -1 in order:
            raise InputError("operand_order lists machines 1..n, without null")
    return Simulation(n=n, sink=sinks[0], parent=parent, send=send, transfer=int(d * scale2),
                      compute=int(c * scale2), scale=scale2, model=model, order=order)


def _depths(sim: Simulation, verdict: Verdict) -> bool:
    """Depth of every machine (sink 0) by walking up the parent links; False on a cycle."""
    parent, depth = sim.parent, [-1] * sim.n
    depth[sim.sink] = 0
    stray: list[int] = []
    for i in range(sim.n):
        if depth[i] != -1:
            continue
        path = []
        v = i
        while depth[v] == -1:
            depth[v] = -2  # on the current path
            path.append(v)
            v = parent[v]
        if depth[v] < 0:  # back on the path (a cycle) or into a known stray part
            for u in path:
                depth[u] = -3
            stray += path
            continue
        dv = depth[v]
        for u in reversed(path):
            dv += 1
            depth[u] = dv
    if stray:
        stray.sort()
        verdict.fail(f"machines {', '.join(str(v + 1) for v in stray[:8])}"
                     f"{' …' if len(stray) > 8 else ''} never reach the sink "
                     f"{sim.sink + 1}: their parent links form a cycle")
        return False
    sim.depth = depth
    return True


def simulate(sim: Simulation, verdict: Verdict) -> None:
    """Every machine's receptions and reductions; fills ready, arrivals, reductions."""
    n, sink, parent, send = sim.n, sim.sink, sim.parent, sim.send
    D, C = sim.transfer, sim.compute
    show = sim.exact
    by_time = sorted(range(n), key=send.__getitem__)
    by_time.remove(sink)
    arrivals = sorted(by_time, key=parent.__getitem__)  # stable: by receiver, then date
    ready = [0] * n
    start = [0] * n
    overlap = sim.model == "overlap"
    m = len(arrivals)
    j = 0
    while j < m:
        v = parent[arrivals[j]]
        f = 0
        prev = -1
        k = j
        while k < m and parent[arrivals[k]] == v:
            s = arrivals[k]
            t = send[s]
            if prev >= 0 and t < send[prev] + D:
                verdict.fail(f"machine {v + 1} receives from {prev + 1} during "
                             f"[{frac_str(show(send[prev]))}, {frac_str(show(send[prev] + D))})"
                             f" and from {s + 1} from {frac_str(show(t))}: one transfer at "
                             "a time")
            at = t + D if t + D > f else f
            if not overlap:  # wait for later transfers into v that would overlap
                q = k + 1
                while q < m and parent[arrivals[q]] == v and send[arrivals[q]] < at + C:
                    if send[arrivals[q]] + D > at:
                        at = send[arrivals[q]] + D
                    q += 1
            start[s] = at
            f = at + C
            prev = s
            k += 1
        ready[v] = f
        j = k
    sim.ready, sim.arrivals, sim.reductions = ready, arrivals, start
    late = [i for i in range(n) if i != sink and send[i] < ready[i]]
    for i in late[:10]:
        when = frac_str(show(send[i]))
        if send[i] < 0:
            verdict.fail(f"machine {i + 1} sends at {when}, before time 0")
        else:
            verdict.fail(f"machine {i + 1} sends at {when} but finishes its reductions only "
                         f"at {frac_str(show(ready[i]))}")
    if len(late) > 10:
        verdict.fail(f"… and {len(late) - 10} more machines send before they are ready")


def _check_order(sim: Simulation, verdict: Verdict, order: list[int]) -> None:
    """Each reduction joins two adjacent runs of the product (non-commutative)."""
    n = sim.n
    pos = [-1] * n
    for j, m in enumerate(order):
        if pos[m] >= 0:
            verdict.fail(f"operand_order names machine {m + 1} twice")
            return
        pos[m] = j
    parent, send, arrivals = sim.parent, sim.send, sim.arrivals
    first = {}  # receiver -> index of its first arrival in `arrivals`
    for k in range(len(arrivals) - 1, -1, -1):
        first[parent[arrivals[k]]] = k
    lo, hi = pos[:], pos[:]
    m = len(arrivals)
    for v in sorted(first, key=sim.depth.__getitem__, reverse=True):
        a, b = lo[v], hi[v]
        k = first[v]
        while k < m and parent[arrivals[k]] == v:
            s = arrivals[k]
            q = k + 1  # [k, q): arrivals at the same instant (possible when d = 0)
            while q < m and parent[arrivals[q]] == v and send[arrivals[q]] == send[s]:
                q += 1
            if q == k + 1:
                if lo[s] == b + 1:
                    b = hi[s]
                elif hi[s] == a - 1:
                    a = lo[s]
                else:
                    _not_adjacent(verdict, v, a, b, s, lo[s], hi[s])
                    return
                k = q
                continue
            by_lo = {lo[s]: s for s in arrivals[k:q]}
            by_hi = {hi[s]: s for s in arrivals[k:q]}
            while by_lo:
                s = by_lo.get(b + 1, -1)
                if s < 0:
                    s = by_hi.get(a - 1, -1)
                if s < 0:
                    s = next(iter(by_lo.values()))
                    _not_adjacent(verdict, v, a, b, s, lo[s], hi[s])
                    return
                if lo[s] == b + 1:
                    b = hi[s]
                else:
                    a = lo[s]
                del by_lo[lo[s]], by_hi[hi[s]]
            k = q
        lo[v], hi[v] = a, b
    verdict.facts["operand_order"] = "checked"


def _not_adjacent(verdict: Verdict, v: int, a: int, b: int, s: int, sa: int, sb: int) -> None:
    verdict.fail(f"machine {v + 1} holds operands {a + 1}..{b + 1} of the product when it "
                 f"reduces operands {sa + 1}..{sb + 1} from machine {s + 1}: the runs are not "
                 "adjacent, so the reduction would need commutativity")


def _peak_transfers(sim: Simulation) -> int:
    """Most transfers in flight at one instant (intervals [t, t + d), d > 0)."""
    if sim.transfer == 0 or sim.n < 2:
        return 0
    D = sim.transfer
    starts = sorted(t for i, t in enumerate(sim.send) if i != sim.sink)
    peak = 0
    j = 0  # starts[j] is the oldest transfer possibly still running
    for i, t in enumerate(starts):
        while starts[j] + D <= t:
            j += 1
        if i - j + 1 > peak:
            peak = i - j + 1
    return peak


def _claims(data: Mapping[str, Any], verdict: Verdict, makespan: Fraction) -> None:
    for key in ("makespan", "lower_bound", "upper_bound"):
        if data.get(key) is None:
            continue
        try:
            claim = number(data[key], key)
        except InputError as exc:
            verdict.fail(str(exc))
            continue
        if key == "makespan" and claim != makespan:
            verdict.fail(f"the file claims makespan {frac_str(claim)}, the simulation gives "
                         f"{frac_str(makespan)}")
        if key == "lower_bound" and makespan < claim:
            verdict.fail(f"the claimed lower bound {frac_str(claim)} on every schedule is above "
                         f"this valid schedule's makespan {frac_str(makespan)}")
        if (key == "upper_bound" and data.get("strategy", "optimal") == "optimal"
                and makespan > claim):
            verdict.fail(f"the schedule claims to be optimal but its makespan "
                         f"{frac_str(makespan)} exceeds the claimed upper bound "
                         f"{frac_str(claim)} on the optimum")


def check_reduction(data: Mapping[str, Any]) -> tuple[Verdict, Simulation | None]:
    """Check a ``collcert-reduction/1`` schedule and recompute its makespan.

    Returns the verdict (facts: ``makespan``, ``reducers``,
    ``max_concurrent_transfers``, ``depth``, ``operand_order``) and the
    simulation (None if the input could not be read).
    """
    verdict = Verdict("reduction schedule")
    try:
        sim = read(data)
        limits = {}
        for key in ("max_transfers", "max_reducers"):
            if data.get(key) is not None:
                limits[key] = integer(data[key], key, least=1, strict=True)
    except InputError as exc:
        verdict.fail(str(exc))
        return verdict, None
    if not _depths(sim, verdict):
        return verdict, sim
    simulate(sim, verdict)
    makespan = sim.exact(sim.ready[sim.sink])
    reducers = len(set(map(sim.parent.__getitem__, sim.arrivals)))
    peak = _peak_transfers(sim)
    verdict.facts.update(makespan=makespan, reducers=reducers, max_concurrent_transfers=peak,
                         n=sim.n, depth=max(sim.depth) + 1)
    if "max_transfers" in limits and peak > limits["max_transfers"]:
        verdict.fail(f"{peak} transfers are in flight at once but max_transfers = "
                     f"{limits['max_transfers']}")
    if "max_reducers" in limits and reducers > limits["max_reducers"]:
        verdict.fail(f"{reducers} machines reduce but max_reducers = {limits['max_reducers']}")
    if sim.order is not None:
        _check_order(sim, verdict, sim.order)
    else:
        verdict.facts["operand_order"] = "not given: valid for a commutative operator only"
    _claims(data, verdict, makespan)
    check_stated(data, verdict, sim.parent, sim.sink)
    return verdict, sim
