"""Checker 7b: replay a periodic one-port broadcast schedule event by event (Legrand et al. 2003, §5.4).

The schedule file lists one period of length T: steps, each with a start, a
duration and transfers (src, dst, blocks). A transfer sends its blocks back
to back from the step's start; a block {lag, first, count} sent in period r
carries messages first .. first+count−1 of batch r − lag, one after the
other, message x leaving at t_x and arriving at t_x + c_{src,dst} (the link's
cost). Batch b is the b-th group of M messages the source broadcasts
(M = messages per period); the source holds every message from the start.

:func:`check_events` checks, with exact times:

- **one-port**: within a period no node's send intervals overlap and no node's
  receive intervals overlap; every interval lies inside [0, T], so the
  periodic repetition never overlaps either;
- **causality**: replaying R = (largest lag) + 1 + W periods, every message a
  node other than the source forwards has arrived there no later than it
  leaves (blocks of a batch b < 0 are the warm-up's fictitious messages, the
  crosses of the paper's Fig. 2, and are skipped);
- **delivery**: for the first W batches, every node other than the source
  receives each of the M messages exactly once;
- **throughput**: batch b completes everywhere at C_b, and C_{b+1} − C_b = T,
  so in steady state M messages reach every node per period: the measured
  throughput is M / (C_1 − C_0), compared exactly with the claim.

Arrival and departure times within a block are linear in the message number,
so "arrived before it leaves" is checked at the two ends of every overlap
between a received block and a forwarded one: the work is per block, not per
message, and counts may be huge.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Link, Node, Verdict, frac_str, integer, number
from .oneport import OnePortTopo, entries

MAX_LAG = 10_000
MAX_REPLAYED_BLOCKS = 4_000_000
WINDOW = 2

# a block placed in the period: (lag, first, count, start within the period, src, dst)
Placed = tuple[int, int, int, Fraction, Node, Node]


def read_period(topo: OnePortTopo, doc: Mapping[str, Any], v: Verdict) -> tuple[
        Fraction, int, list[Placed], list[tuple[Fraction, list[Link]]]]:
    """Period T, messages per period M, every block with its start, and the steps."""
    T = number(doc.get("period"), "period")
    M = integer(doc.get("messages_per_period"), "messages_per_period", 1)
    if T <= 0:
        raise InputError("the period must be positive")
    placed: list[Placed] = []
    steps: list[tuple[Fraction, list[Link]]] = []
    sends: dict[Node, list[tuple[Fraction, Fraction, str]]] = {w: [] for w in topo.nodes}
    recvs: dict[Node, list[tuple[Fraction, Fraction, str]]] = {w: [] for w in topo.nodes}
    t = Fraction(0)
    for k, step in enumerate(entries(doc.get("steps"), "steps")):
        if not isinstance(step, Mapping):
            raise InputError(f"steps[{k}] is not an object with start, duration, transfers")
        start = number(step.get("start"), f"steps[{k}] start")
        dur = number(step.get("duration"), f"steps[{k}] duration")
        if start != t or dur <= 0:
            v.fail(f"steps[{k}] starts at {frac_str(start)} and lasts {frac_str(dur)}: steps "
                   f"must follow each other from 0 with positive durations (expected start "
                   f"{frac_str(t)})")
        edges: list[Link] = []
        for m, tr in enumerate(entries(step.get("transfers"), f"steps[{k}] transfers")):
            where = f"steps[{k}] transfers[{m}]"
            if not isinstance(tr, Mapping):
                raise InputError(f"{where} is not an object with src, dst, blocks")
            e = topo.link([tr.get("src"), tr.get("dst")], where)
            edges.append(e)
            c = topo.cost[e]
            at = start
            for q, bl in enumerate(entries(tr.get("blocks"), f"{where} blocks")):
                if not isinstance(bl, Mapping):
                    raise InputError(f"{where} blocks[{q}] is not an object")
                lag = integer(bl.get("lag"), f"{where} blocks[{q}] lag", 0, strict=True)
                first = integer(bl.get("first"), f"{where} blocks[{q}] first", 0, strict=True)
                count = integer(bl.get("count"), f"{where} blocks[{q}] count", 1, strict=True)
                if lag > MAX_LAG:
                    raise InputError(f"{where} blocks[{q}] lag {lag}: at most {MAX_LAG}")
                if first + count > M:
                    v.fail(f"{where} blocks[{q}] sends messages {first}..{first + count - 1}"
                           f", but a batch has messages 0..{M - 1}")
                placed.append((lag, first, count, at, e[0], e[1]))
                at += count * c
            if at > start + dur:
                v.fail(f"{where} ({e[0]!r} -> {e[1]!r}) needs until {frac_str(at)}, after its "
                       f"step ends at {frac_str(start + dur)}")
            label = f"{e[0]!r} -> {e[1]!r} in steps[{k}]"
            sends[e[0]].append((start, at, label))
            recvs[e[1]].append((start, at, label))
        steps.append((dur, edges))
        t = start + dur
    if t != T:
        v.fail(f"the steps last {frac_str(t)}, not the period {frac_str(T)}")
    for port, table in (("sends", sends), ("receives", recvs)):
        for w, ivs in table.items():
            ivs = [iv for iv in ivs if iv[1] > iv[0]]
            ivs.sort()
            for (_, a1, la), (b0, b1, lb) in zip(ivs, ivs[1:]):
                if b0 < a1:
                    v.fail(f"one-port: {w!r} {port} twice at once during "
                           f"[{frac_str(b0)}, {frac_str(min(a1, b1))}): {la} and {lb}")
    return T, M, placed, steps


# receipts[(node, batch)]: (lo, hi, start, cost): message lo+i arrives start + (i+1)·cost
Receipts = dict[tuple[Node, int], list[tuple[int, int, Fraction, Fraction]]]
# a forwarded block: (node, batch, lo, hi, start, cost): message lo+i leaves start + i·cost
Forward = tuple[Node, int, int, int, Fraction, Fraction]


def check_events(topo: OnePortTopo, source: Node, doc: Mapping[str, Any],
                 window: int = WINDOW) -> Verdict:
    """Replay the period (module doc). ``facts``: ``period``, ``messages_per_period``,
    ``measured_throughput``, ``latency`` (C_0), ``warmup_periods``, ``periods_replayed``,
    ``steps`` (list of (duration, links)), ``per_link`` (messages per period on each link)."""
    v = Verdict("one-port event replay (Legrand et al. 2003, §2, §5.4)")
    T, M, placed, steps = read_period(topo, doc, v)
    per_link: dict[Link, int] = {}
    for _, _, count, _, a, b in placed:
        per_link[(a, b)] = per_link.get((a, b), 0) + count
    v.facts.update({"period": T, "messages_per_period": M, "steps": steps, "per_link": per_link})
    if not v.ok:
        return v
    max_lag = max((b[0] for b in placed), default=0)
    R = max_lag + 1 + window
    if R * len(placed) > MAX_REPLAYED_BLOCKS:
        raise InputError(f"replaying {R} periods of {len(placed)} blocks is too large to check")
    receipts, forwards = _replay(topo, source, placed, T, R)
    _check_received_once(receipts, v)
    if not v.ok:  # overlapping receipts would make the walk below quadratic
        return v
    _check_causality(receipts, forwards, v)
    completion = _completions(topo, source, receipts, M, window, v)
    v.facts.update({"warmup_periods": max_lag, "periods_replayed": R})
    if v.ok:
        gaps = {c1 - c0 for c0, c1 in zip(completion, completion[1:])}
        if gaps != {T}:  # pragma: no cover - a periodic replay shifts every batch by T
            v.fail(f"batches complete at {', '.join(map(frac_str, completion))}: not one per "
                   "period")
        else:
            v.facts["measured_throughput"] = Fraction(M) / (completion[1] - completion[0])
            v.facts["latency"] = completion[0]
    return v


def _replay(topo: OnePortTopo, source: Node, placed: list[Placed], T: Fraction,
            R: int) -> tuple[Receipts, list[Forward]]:
    """Every block of R periods: what each node receives of each batch, and what nodes
    other than the source forward (blocks of batches < 0, the warm-up, are skipped)."""
    receipts: Receipts = {}
    forwards: list[Forward] = []
    for r in range(R):
        base = r * T
        for lag, first, count, at, a, b in placed:
            batch = r - lag
            if batch < 0:
                continue  # warm-up: a fictitious message
            c = topo.cost[(a, b)]
            receipts.setdefault((b, batch), []).append((first, first + count, base + at, c))
            if a != source:
                forwards.append((a, batch, first, first + count, base + at, c))
    for got in receipts.values():
        got.sort()
    return receipts, forwards


def _check_received_once(receipts: Receipts, v: Verdict) -> None:
    """No node receives a message of a batch twice."""
    for key, got in receipts.items():
        for (_, hi0, _, _), (lo1, hi1, _, _) in zip(got, got[1:]):
            if lo1 < hi0:
                v.fail(f"{key[0]!r} receives messages {lo1}..{min(hi0, hi1) - 1} of batch "
                       f"{key[1]} twice (each message must reach a node once)")


def _check_causality(receipts: Receipts, forwards: list[Forward], v: Verdict) -> None:
    """Every forwarded message arrived no later than it leaves, checked at both ends of
    each overlap of a forwarded block with a received one (times are linear in between)."""
    starts = {key: [g[0] for g in got] for key, got in receipts.items()}
    ends = {key: [g[1] for g in got] for key, got in receipts.items()}
    # the walk below visits each (forward, overlapped receipt) pair once: count them first
    work = sum(bisect.bisect_left(starts.get((a, b), []), hi)
               - bisect.bisect_right(ends.get((a, b), []), lo) + 1
               for a, b, lo, hi, _, _ in forwards)
    if work > MAX_REPLAYED_BLOCKS:
        raise InputError(f"checking causality would compare {work} pieces of forwarded and "
                         "received blocks: too large to check")
    for a, batch, lo, hi, at, c in forwards:
        got = receipts.get((a, batch), [])
        pos = lo
        k = max(bisect.bisect_right(starts.get((a, batch), []), lo) - 1, 0)
        while pos < hi:
            if k >= len(got) or got[k][0] > pos:
                end = hi if k >= len(got) else min(hi, got[k][0])
                v.fail(f"{a!r} forwards messages {pos}..{end - 1} of batch {batch} (from "
                       f"t = {frac_str(at + (pos - lo) * c)}) but never receives them")
                pos = end
                continue
            rlo, rhi, rat, rc = got[k]
            if rhi <= pos:
                k += 1
                continue
            piece_end = min(hi, rhi)
            for x in (pos, piece_end - 1):
                arrive = rat + (x - rlo + 1) * rc
                leave = at + (x - lo) * c
                if arrive > leave:
                    v.fail(f"{a!r} forwards message {x} of batch {batch} at t = "
                           f"{frac_str(leave)}, before it arrives at t = {frac_str(arrive)}")
                    break
            pos = piece_end
            k += 1


def _completions(topo: OnePortTopo, source: Node, receipts: Receipts, M: int, window: int,
                 v: Verdict) -> list[Fraction]:
    """When each of the first ``window`` batches has reached every node; a node that
    misses a message of one fails ``v``."""
    completion: list[Fraction] = []
    for batch in range(window):
        last = Fraction(0)
        for w in topo.nodes:
            if w == source:
                continue
            got = receipts.get((w, batch), [])
            pos = 0
            for lo, hi, at, c in got:
                if lo > pos:
                    break
                pos = max(pos, hi)
                last = max(last, at + (hi - lo) * c)
            if pos < M:
                v.fail(f"{w!r} never receives message {pos} of batch {batch} "
                       f"({M} messages per batch)")
        completion.append(last)
    return completion


def check_steady_broadcast(topology: Mapping[str, Any], doc: Mapping[str, Any]) -> Verdict:
    """Every check of a ``collcert-steady-broadcast/1`` file against its platform.

    ``facts``: ``throughput`` (proven optimal and measured), ``T_star``, ``period``,
    ``messages_per_period``, ``latency``, ``periods_replayed``, ``trees``, ``matchings``.
    """
    from .oneport import FORMAT, check_lp, check_packing
    from .stated import check_stated

    v = Verdict("steady-state broadcast schedule (Legrand et al. 2003)")
    topo = OnePortTopo(topology)
    if not isinstance(doc, Mapping) or doc.get("format") != FORMAT:
        raise InputError(f"not a {FORMAT} document (\"format\" is "
                         f"{doc.get('format') if isinstance(doc, Mapping) else None!r})")
    wrong = topo.other_platform(doc)
    if wrong:
        v.fail(wrong)
        return v
    s = topo.node(doc.get("source"), "source")
    lp = check_lp(topo, s, doc.get("lp", {}))
    v.absorb(lp, "lp: ")
    T = lp.facts["T_star"]
    claimed = number(doc.get("throughput"), "throughput")
    if claimed * T != 1:
        v.fail(f"the claimed throughput {frac_str(claimed)} is not 1/T* = {frac_str(1 / T)}")
    pk = check_packing(topo, s, doc, T, lp.facts["n"])
    v.absorb(pk, "packing: ")
    ev = check_events(topo, s, doc)
    v.absorb(ev, "events: ")
    stretch = integer(doc.get("packing", {}).get("stretch", 1), "packing stretch", 1,
                      strict=True)
    N = pk.facts["N"]
    if ev.facts.get("messages_per_period") != stretch * N:
        v.fail(f"messages_per_period is {ev.facts.get('messages_per_period')}, not stretch·N "
               f"= {stretch * N}")
    want = {e: stretch * m for e, m in pk.facts["loads"].items() if m}
    if ev.facts.get("per_link") != want:
        v.fail("the steps do not send stretch·m_e messages per period on every link")
    mts = doc.get("matchings", [])
    steps = ev.facts.get("steps", [])
    if isinstance(mts, list) and len(mts) == len(steps):
        for k, ((dur, edges), mt) in enumerate(zip(steps, mts)):
            mt_edges = {tuple(p) for p in mt.get("edges", [])} if isinstance(mt, Mapping) else set()
            mu = number(mt.get("duration"), f"matchings[{k}] duration")
            if dur != stretch * mu or not {(str(a), str(b)) for a, b in edges} <= {
                    (str(a), str(b)) for a, b in mt_edges}:
                v.fail(f"steps[{k}] is not matching {k} stretched ×{stretch}")
    check_stated(topo, doc, T, pk.facts, v)
    measured = ev.facts.get("measured_throughput")
    if measured is not None and measured != claimed:
        v.fail(f"the replay delivers {frac_str(measured)} messages per time unit, the file "
               f"claims {frac_str(claimed)}")
    v.facts.update({"throughput": claimed, "T_star": T, "bound": lp.facts.get("bound"),
                    "period": ev.facts.get("period"),
                    "messages_per_period": ev.facts.get("messages_per_period"),
                    "measured_throughput": measured, "latency": ev.facts.get("latency"),
                    "periods_replayed": ev.facts.get("periods_replayed"),
                    "trees": len(doc.get("trees", []) or []), "matchings": len(mts or []),
                    "method": doc.get("method")})
    return v
