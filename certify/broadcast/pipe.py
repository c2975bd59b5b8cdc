"""Checker 7c: a finite series of broadcasts and PIPE, replayed (Legrand et al. 2003, §5.5, §6).

Input: a one-port platform (links may carry a ``startup`` β ≥ 0) and a
``collcert-pipe-broadcast/1`` document: the periodic schedule of unit messages
(``schedule``, a ``collcert-steady-broadcast/1`` file, checked in full by
:func:`.oneport_events.check_steady_broadcast`, which proves T*), the message
size L and, for the paper's packet choice and the best one found, the packet
count p, the packet size q and the claimed makespan.

For a run, the stretch is s = q + w with w = max β/c (proof of Thm 8): the
block {lag, first, count} placed at time a of the period sends, in period r,
messages first.. of batch r − lag, message i of the block in the slot
[s·(rT + a + i·c), s·(rT + a + (i+1)·c)), taking β + q·c from the slot's
start. Only real packets (ids < p, batches 0 .. ⌈p/M⌉ − 1) are sent. This
checker replays periods 0 .. ⌈p/M⌉ + D − 1 (D the largest lag) block by block
and checks, with exact times:

- **one-port**: no node's send intervals overlap, no node's receive intervals
  overlap, over the whole finite schedule;
- **causality**: every packet a node forwards has arrived there before it leaves;
- **delivery**: every node other than the source receives each packet 0..p−1
  of the message exactly once, and p·q ≥ L (the message is covered; the paper
  pads it to ν² with ν = ⌈√L⌉);
- **makespan**: the last arrival, recomputed, equals the claim; the lower bound
  L·T* (Lemma 7) and the ratio are recomputed; the best run is no slower than
  the paper's.

``messages`` mode (β ignored, q = 1, s = 1): the §5.5 schedule of n unit messages,
same checks.

A run may also carry ``compact``: the same transfers started as early as possible
(``collcert.reference.broadcast.pipe_compact``), listed one by one as
[src, dst, packet, start]; :func:`check_compact` checks them on their own (each
lasting β + q·c, every packet delivered once to every node, forwarded only after it
arrived, one send and one receive per node at a time) and recomputes their makespan.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Link, Node, Verdict, frac_str, integer, number
from .oneport import OnePortTopo, entries
from .oneport_events import (
    MAX_REPLAYED_BLOCKS,
    Forward,
    Receipts,
    _check_causality,
    _check_received_once,
    check_steady_broadcast,
    read_period,
)
from .stated import check_pipe_stated, check_series_stated

FORMAT = "collcert-pipe-broadcast/1"
SERIES_FORMAT = "collcert-series-broadcast/1"


def startups(data: Mapping[str, Any], topo: OnePortTopo) -> dict[Link, Fraction]:
    """β per link from the platform's link objects (``startup``, default 0; ≥ 0)."""
    out: dict[Link, Fraction] = {}
    for i, link in enumerate(entries(data.get("links"), "links")):
        if not isinstance(link, Mapping) or "startup" not in link:
            continue
        b = number(link["startup"], f"links[{i}] startup")
        if b < 0:
            raise InputError(f"links[{i}] has startup {frac_str(b)}: β must be ≥ 0")
        e = (topo.node(link.get("src"), f"links[{i}] src"),
             topo.node(link.get("dst"), f"links[{i}] dst"))
        for pair in (e, (e[1], e[0])) if link.get("bidirectional") is True else (e,):
            out[pair] = b
    return out


def replay(topo: OnePortTopo, source: Node, sched: Mapping[str, Any], packets: int,
           size: Fraction | None, beta: Mapping[Link, Fraction], v: Verdict) -> Fraction:
    """Replay ``packets`` packets of ``size`` (None: unit messages, no β, no stretch);
    the makespan (module doc). Failures go to ``v``."""
    T, M, placed, _ = read_period(topo, sched, v)
    w = max((b / topo.cost[e] for e, b in beta.items() if b), default=Fraction(0))
    s = Fraction(1) if size is None else size + w
    batches = -(-packets // M)
    lag = max((p[0] for p in placed), default=0)
    if (batches + lag) * len(placed) > MAX_REPLAYED_BLOCKS:
        raise InputError(f"replaying {batches + lag} periods of {len(placed)} blocks is too "
                         f"large to check (at most {MAX_REPLAYED_BLOCKS} blocks); use fewer "
                         "messages or packets")
    receipts: Receipts = {}
    forwards: list[Forward] = []
    busy: dict[tuple[str, Node], list[tuple[Fraction, Fraction]]] = {}
    for r in range(batches + lag):
        for d, first, count, at, a, b in placed:
            batch = r - d
            hi = min(first + count, packets - batch * M)
            if batch < 0 or batch >= batches or hi <= first:
                continue
            c = topo.cost[(a, b)]
            dur = c if size is None else beta.get((a, b), Fraction(0)) + size * c
            start = s * (r * T + at)
            receipts.setdefault((b, batch), []).append((first, hi, start + dur - s * c, s * c))
            if a != source:
                forwards.append((a, batch, first, hi, start, s * c))
            span = (start, start + (hi - first - 1) * s * c + dur)
            busy.setdefault(("sends", a), []).append(span)
            busy.setdefault(("receives", b), []).append(span)
    for (port, node), spans in busy.items():
        spans.sort()
        for (_, end0), (start1, _) in zip(spans, spans[1:]):
            if start1 < end0:
                v.fail(f"one-port: {node!r} {port} twice at once at t = {frac_str(start1)}")
                break
    for got in receipts.values():
        got.sort()
    _check_received_once(receipts, v)
    if v.ok:
        _check_causality(receipts, forwards, v)
    _check_delivery(topo, source, receipts, packets, M, batches, v)
    return max((st + (hi - lo) * c for got in receipts.values() for lo, hi, st, c in got),
               default=Fraction(0))


def _check_delivery(topo: OnePortTopo, source: Node, receipts: Receipts, packets: int, M: int,
                    batches: int, v: Verdict) -> None:
    for w in topo.nodes:
        if w == source:
            continue
        for batch in range(batches):
            want = min(M, packets - batch * M)
            pos = 0
            for lo, hi, _, _ in receipts.get((w, batch), []):
                if lo > pos:
                    break
                pos = max(pos, hi)
            if pos < want:
                v.fail(f"{w!r} never receives packet {batch * M + pos} of the message")
                return


def check_compact(topo: OnePortTopo, source: Node, packets: int, size: Fraction | None,
                  beta: Mapping[Link, Fraction], raw: object, v: Verdict) -> Fraction:
    """A compacted schedule: every transfer [src, dst, packet, start] listed, each lasting
    β + q·c (c for unit messages). Checks delivery (each packet once at every node but the
    source), causality, the one-port rule; returns the makespan."""
    arrival: dict[tuple[Node, int], Fraction] = {}
    sends: list[tuple[Node, int, Fraction]] = []
    ports: dict[tuple[str, Node], list[tuple[Fraction, Fraction]]] = {}
    rows = entries(raw, "compact transfers")
    if len(rows) > MAX_REPLAYED_BLOCKS:
        raise InputError(f"{len(rows)} compacted transfers: too many to check")
    for k, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != 4:
            raise InputError(f"compact transfers[{k}] is not [src, dst, packet, start]")
        a, b = topo.link([row[0], row[1]], f"compact transfers[{k}]")
        g = integer(row[2], f"compact transfers[{k}] packet", 0)
        start = number(row[3], f"compact transfers[{k}] start")
        c = topo.cost[(a, b)]
        end = start + (c if size is None else beta.get((a, b), Fraction(0)) + size * c)
        if g >= packets or start < 0 or b == source or (b, g) in arrival:
            v.fail(f"compact transfers[{k}]: packet {g} to {b!r} at {frac_str(start)} is not "
                   "a first delivery of a real packet")
        arrival[(b, g)] = end
        if a != source:
            sends.append((a, g, start))
        ports.setdefault(("sends", a), []).append((start, end))
        ports.setdefault(("receives", b), []).append((start, end))
    for a, g, start in sends:
        if arrival.get((a, g), start + 1) > start:
            v.fail(f"compact: {a!r} forwards packet {g} at {frac_str(start)} before holding it")
            break
    for (port, node), spans in ports.items():
        spans.sort()
        if any(b0 < a1 for (_, a1), (b0, _) in zip(spans, spans[1:])):
            v.fail(f"compact: one-port: {node!r} {port} twice at once")
    missing = [(w, g) for w in topo.nodes if w != source for g in range(packets)
               if (w, g) not in arrival]
    if missing:
        v.fail(f"compact: {missing[0][0]!r} never receives packet {missing[0][1]}")
    return max(arrival.values(), default=Fraction(0))


def _check_compact_claim(topo: OnePortTopo, source: Node, packets: int, size: Fraction | None,
                         beta: Mapping[Link, Fraction], claim: object, bound: Fraction,
                         label: str, v: Verdict) -> None:
    if claim is None:
        return
    if not isinstance(claim, Mapping):
        raise InputError(f"{label} compact must be an object or null")
    mk = check_compact(topo, source, packets, size, beta, claim.get("transfers"), v)
    if number(claim.get("makespan"), f"{label} compact makespan") != mk:
        v.fail(f"{label}: the compacted transfers end at {frac_str(mk)}, not at the claimed "
               f"{claim.get('makespan')}")
    if number(claim.get("ratio"), f"{label} compact ratio") != mk / bound:
        v.fail(f"{label}: the compacted ratio is {frac_str(mk / bound)}")
    v.facts[f"{label}_compact_makespan"] = mk


def check_pipe(platform: Mapping[str, Any], doc: Mapping[str, Any]) -> Verdict:
    """Every check of a ``collcert-pipe-broadcast/1`` document (module doc).

    ``facts``: ``T_star``, ``lower_bound``, and for ``paper`` and ``best``:
    ``paper_packets``, ``paper_makespan``, ``paper_ratio``, ``best_…``."""
    v = Verdict("PIPE broadcast (Legrand et al. 2003, §6)")
    if not isinstance(doc, Mapping) or doc.get("format") != FORMAT:
        raise InputError(f"not a {FORMAT} document")
    topo = OnePortTopo(platform)
    wrong = topo.other_platform(doc)
    if wrong:
        v.fail(wrong)
        return v
    beta = startups(platform, topo)
    sched = doc.get("schedule")
    if not isinstance(sched, Mapping):
        raise InputError("the document needs 'schedule' (the unit-message periodic schedule)")
    st = check_steady_broadcast(platform, sched)
    v.absorb(st, "periodic schedule: ")
    if not v.ok:
        return v
    T = st.facts["T_star"]
    source = topo.node(sched.get("source"), "source")
    L = number(doc.get("size"), "size")
    if L <= 0:
        raise InputError(f"size {frac_str(L)}: the message size must be positive")
    bound = L * T
    for key, want in (("T_star", T), ("lower_bound", bound)):
        if number(doc.get(key), key) != want:
            v.fail(f"{key} is stated as {doc.get(key)}, the proven value is {frac_str(want)}")
    v.facts.update(T_star=T, lower_bound=bound)
    for name in ("paper", "best"):
        run = doc.get(name)
        if not isinstance(run, Mapping):
            raise InputError(f"the document needs '{name}'")
        p = integer(run.get("packets"), f"{name} packets", 1)
        q = number(run.get("packet_size"), f"{name} packet_size")
        if q <= 0 or p * q < L:
            v.fail(f"{name}: {p} packets of {frac_str(q)} do not cover the message of "
                   f"{frac_str(L)}")
        if name == "paper" and (p != q or not (p - 1) ** 2 < L <= p * p):
            v.fail(f"paper: ν = ⌈√L⌉ packets of size ν means ν = {math.isqrt(math.ceil(L))}"
                   f" or one more with (ν−1)² < L ≤ ν²; the document has {p} of {frac_str(q)}")
        mk = replay(topo, source, sched, p, q, beta, v)
        claimed = number(run.get("makespan"), f"{name} makespan")
        if mk != claimed:
            v.fail(f"{name}: the replay ends at {frac_str(mk)}, the document claims "
                   f"{frac_str(claimed)}")
        if number(run.get("ratio"), f"{name} ratio") != mk / bound:
            v.fail(f"{name}: the ratio is {frac_str(mk / bound)}, not {run.get('ratio')}")
        v.facts.update({f"{name}_packets": p, f"{name}_makespan": mk,
                        f"{name}_ratio": mk / bound})
        _check_compact_claim(topo, source, p, q, beta, run.get("compact"), bound, name, v)
    if v.ok and v.facts["best_makespan"] > v.facts["paper_makespan"]:
        v.fail("the 'best' run is slower than the paper's")
    check_pipe_stated(topo, beta, doc, st.facts, v)
    return v


def check_series(platform: Mapping[str, Any], sched: Mapping[str, Any], messages: int,
                 makespan: Fraction, compact: Mapping[str, Any] | None = None) -> Verdict:
    """The §5.5 schedule of ``messages`` unit messages (no start-ups), replayed: its
    makespan must be ``makespan``. ``facts``: ``makespan``, ``T_star``."""
    v = Verdict("finite series of broadcasts (Legrand et al. 2003, §5.5)")
    topo = OnePortTopo(platform)
    st = check_steady_broadcast(platform, sched)
    v.absorb(st, "periodic schedule: ")
    if not v.ok:
        return v
    source = topo.node(sched.get("source"), "source")
    mk = replay(topo, source, sched, messages, None, {}, v)
    if mk != makespan:
        v.fail(f"the replay ends at {frac_str(mk)}, not at the claimed {frac_str(makespan)}")
    v.facts.update(makespan=mk, T_star=st.facts["T_star"],
                   messages_per_period=st.facts["messages_per_period"])
    _check_compact_claim(topo, source, messages, None, {}, compact, messages * st.facts["T_star"],
                         "series", v)
    return v


def check_series_doc(platform: Mapping[str, Any], doc: Mapping[str, Any]) -> Verdict:
    """Every check of a ``collcert-series-broadcast/1`` document (``collcert
    broadcast-steady --messages N -o``): the periodic schedule proven and replayed for
    its n messages by :func:`check_series`, the lower bound n·T* (Lemma 7), the ratio
    and every other stated field (:func:`.stated.check_series_stated`)."""
    if not isinstance(doc, Mapping) or doc.get("format") != SERIES_FORMAT:
        raise InputError(f"not a {SERIES_FORMAT} document")
    wrong = OnePortTopo(platform).other_platform(doc)
    if wrong:
        v = Verdict("finite series of broadcasts (Legrand et al. 2003, §5.5)")
        v.fail(wrong)
        return v
    sched = doc.get("schedule")
    if not isinstance(sched, Mapping):
        raise InputError("the document needs 'schedule' (the unit-message periodic schedule)")
    n = integer(doc.get("messages"), "messages", 1)
    v = check_series(platform, sched, n, number(doc.get("makespan"), "makespan"),
                     doc.get("compact"))
    if not v.ok:
        return v
    bound = n * v.facts["T_star"]
    if number(doc.get("lower_bound"), "lower_bound") != bound:
        v.fail(f"field 'lower_bound': {doc.get('lower_bound')}, but n·T* = {frac_str(bound)}")
    if number(doc.get("ratio"), "ratio") != v.facts["makespan"] / bound:
        v.fail(f"field 'ratio': {doc.get('ratio')}, but the makespan over n·T* is "
               f"{frac_str(v.facts['makespan'] / bound)}")
    v.facts["lower_bound"] = bound
    check_series_stated(OnePortTopo(platform), doc, v.facts["messages_per_period"], v)
    return v
