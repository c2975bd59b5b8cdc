"""A finite series of broadcasts and the pipelined broadcast PIPE (Legrand et al. 2003, §5.5, §6).

**n messages (§5.5).** The periodic schedule of :func:`.steady.steady_broadcast`
(period T, M messages per period, a block of lag d sent in period r carries
batch r − d) broadcasts messages 0..n−1 in B = ⌈n/M⌉ batches: it runs periods
0 .. B + D − 1 (D the largest lag) and sends only the blocks that carry real
messages (id < n). The first D periods are the *initialisation* (lagged blocks
idle: the paper's crosses), periods D .. B − 1 are full *steady-state* periods,
and the last D periods are the *clean-up* (the lagged batches finish). Every
event is one of the periodic schedule's, so the one-port rule and causality
carry over; the makespan is the last arrival of a real message, exact. (The
paper's §5.5 routes its initialisation and clean-up message by message, which
only bounds them by constants; the lags do the same work inside the periods.)

**PIPE (§6, Thm 8).** One message of size L, cut into packets; a packet of
size q costs β_{j,k} + q·c_{j,k} on link (j, k). As in the proof of Thm 8,
with w = max β_{j,k}/c_{j,k} every packet fits in a slot of (q + w)·c_{j,k}: the
periodic schedule of *unit* messages (costs c, no start-up) is stretched by
s = q + w, each packet starting at the start of its slot and arriving
β + q·c later, so the one-port rule and causality still hold; p packets are
the series above with that stretch. The paper's choice is ν = ⌈√L⌉ packets
of size ν (L ≤ ν², the message padded); :func:`pipe_broadcast` also searches
the packet count p (packets of size L/p, no padding) and keeps the best
makespan found. Lower bound (Lemma 7, a fortiori without start-ups): T_opt(L)
≥ L·T*, T* the SSB period of unit messages. Thm 8: T_pipe(L) ≤ L·T* + O(√L),
so T_pipe / (L·T*) → 1: the period, the batch M and the lag D do not depend
on L. Everything is checked by ``collcert.certify.broadcast.pipe``, which
replays the stretched schedule event by event.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..model import TopologyError, fraction_str, parse_number
from .oneport import OnePortPlatform
from .pipe_compact import Event, compact
from .steady import SteadyBroadcast, steady_broadcast

PIPE_FORMAT = "collcert-pipe-broadcast/1"
SERIES_FORMAT = "collcert-series-broadcast/1"
MAX_PACKETS = 20_000
CLIMB = 64
"""At most this many ±1 steps refine the best packet count of the grid."""
Node = Hashable
Progress = Callable[[int, int], None]
LPProgress = Callable[[int, int, str], None]
"""The SSB LP's rounds (:func:`.steady.steady_broadcast`'s ``progress``)."""


@dataclass
class FiniteRun:
    """n messages sent by a periodic schedule: batches B, lag D, makespan (module doc)."""

    steady: SteadyBroadcast
    messages: int
    makespan: Fraction
    compacted: tuple[list[Event], Fraction] | None = None  # see :mod:`.pipe_compact`

    def compact_json(self, bound: Fraction) -> dict[str, Any] | None:
        """The compacted schedule: makespan, ratio and every transfer [src, dst, message,
        start] (None when not built: too many transfers)."""
        if self.compacted is None:
            return None
        events, mk = self.compacted
        return {"makespan": fraction_str(mk), "ratio": fraction_str(mk / bound),
                "transfers": [[a, b, g, fraction_str(t)] for a, b, g, t, _ in events]}

    def to_json(self) -> dict[str, Any]:
        """The ``collcert-series-broadcast/1`` document of n unit messages (§5.5), read
        back and replayed by ``collcert.certify.broadcast.check_series_doc``."""
        bound = self.messages * self.steady.T_star
        platform = self.steady.platform
        return {"format": SERIES_FORMAT, "topology": platform.content_hash(),
                "topology_name": platform.name, "source": self.steady.source,
                "messages": self.messages, "makespan": fraction_str(self.makespan),
                "lower_bound": fraction_str(bound),
                "ratio": fraction_str(self.makespan / bound), "batches": self.batches,
                "periods": self.phases(), "compact": self.compact_json(bound),
                "schedule": self.steady.to_json()}

    @property
    def batches(self) -> int:
        return -(-self.messages // self.steady.schedule.messages_per_period)

    @property
    def lag(self) -> int:
        return self.steady.schedule.max_lag

    @property
    def periods(self) -> int:
        return self.batches + self.lag

    def phases(self) -> dict[str, int]:
        """Periods of initialisation, steady state and clean-up (B + D in all)."""
        b, d = self.batches, self.lag
        return {"initialisation": min(d, b + d), "steady": max(0, b - d),
                "clean_up": b + d - min(d, b + d) - max(0, b - d)}


def finite_makespan(sb: SteadyBroadcast, n: int, size: Fraction | None = None,
                    startup: dict[Any, Fraction] | None = None) -> Fraction:
    """The last arrival when the periodic schedule ``sb`` (unit messages) broadcasts
    messages 0..n−1; with ``size`` q, packets of q with the start-ups ``startup``
    in slots stretched by s = q + w (module doc)."""
    if n < 1:
        raise TopologyError(f"{n} messages: broadcast at least one")
    sched, cost = sb.schedule, sb.platform.cost
    beta = startup or {}
    scale = Fraction(1) if size is None else size + slack(cost, beta)
    T, M = sched.period, sched.messages_per_period
    last_batch = (n - 1) // M
    in_last = n - last_batch * M  # real messages of the last batch: 0 .. in_last - 1
    best = Fraction(0)
    for step in sched.steps:
        for e, blocks in step.transfers:
            at = step.start
            dur = cost[e] if size is None else beta.get(e, 0) + size * cost[e]
            for bl in blocks:
                real = min(bl.count, in_last - bl.first)
                batch, k = (last_batch, real) if real > 0 else (last_batch - 1, bl.count)
                if batch >= 0:
                    best = max(best, scale * ((batch + bl.lag) * T + at + (k - 1) * cost[e])
                               + dur)
                at += bl.count * cost[e]
    return best


def slack(cost: dict[Any, Fraction], startup: dict[Any, Fraction]) -> Fraction:
    """w = max β_e / c_e (Legrand et al. 2003, proof of Thm 8)."""
    return max((b / cost[e] for e, b in startup.items()), default=Fraction(0))


def finite_series(platform: OnePortPlatform, source: object, n: int, *,
                  lp_progress: LPProgress | None = None) -> FiniteRun:
    """Broadcast n unit messages (β ignored: §5's series problem) with the optimal
    periodic schedule; its exact makespan. ``lp_progress``: the SSB LP's rounds."""
    sb = steady_broadcast(platform, source, progress=lp_progress)
    return FiniteRun(sb, n, finite_makespan(sb, n), compact(sb, n))


@dataclass
class PipeRun:
    """p packets of ``size`` in the unit schedule stretched by ``scale`` (module doc)."""

    packets: int
    size: Fraction
    scale: Fraction
    run: FiniteRun

    @property
    def makespan(self) -> Fraction:
        return self.run.makespan

    def to_json(self, bound: Fraction) -> dict[str, Any]:
        return {"packets": self.packets, "packet_size": fraction_str(self.size),
                "stretch": fraction_str(self.scale),
                "makespan": fraction_str(self.makespan),
                "ratio": fraction_str(self.makespan / bound),
                "batches": self.run.batches, "periods": self.run.phases(),
                "compact": self.run.compact_json(bound)}

    def compacted(self) -> PipeRun:
        """The same run with its compacted schedule (:mod:`.pipe_compact`)."""
        p = self.run.steady.platform
        got = compact(self.run.steady, self.packets, self.size, p.startup, self.scale)
        return PipeRun(self.packets, self.size, self.scale,
                       FiniteRun(self.run.steady, self.packets, self.makespan, got))


@dataclass
class PipeBroadcast:
    """PIPE for one size L: the bound L·T*, the paper's ν packets, the best count found."""

    platform: OnePortPlatform
    source: Node
    size: Fraction
    unit: SteadyBroadcast  # SSB of unit messages, no start-up: T*
    paper: PipeRun
    best: PipeRun
    searched: list[tuple[int, Fraction]] = field(default_factory=list)

    @property
    def lower_bound(self) -> Fraction:
        return self.size * self.unit.T_star

    def to_json(self) -> dict[str, Any]:
        bound = self.lower_bound
        return {"format": PIPE_FORMAT, "topology": self.platform.content_hash(),
                "topology_name": self.platform.name, "source": self.source,
                "size": fraction_str(self.size), "T_star": fraction_str(self.unit.T_star),
                "lower_bound": fraction_str(bound), "slack_w": fraction_str(
                    slack(self.platform.cost, self.platform.startup)),
                "paper": self.paper.to_json(bound), "best": self.best.to_json(bound),
                "searched": {"counts": len(self.searched),
                             "least": min(p for p, _ in self.searched) if self.searched else None,
                             "most": max(p for p, _ in self.searched) if self.searched else None},
                "schedule": self.unit.to_json()}


def paper_packets(size: Fraction) -> int:
    """ν = ⌈√L⌉ (Legrand et al. 2003, §6), exact for a rational L."""
    nu = math.isqrt(math.ceil(size))
    return nu if nu * nu >= size else nu + 1


def pipe_run(unit: SteadyBroadcast, packets: int, size: Fraction) -> PipeRun:
    """``packets`` packets of ``size`` each in ``unit``'s schedule, stretched."""
    p = unit.platform
    mk = finite_makespan(unit, packets, size, p.startup)
    return PipeRun(packets, size, size + slack(p.cost, p.startup), FiniteRun(unit, packets, mk))


def check_size(size: object) -> Fraction:
    """The message size L: an exact positive number (TopologyError otherwise)."""
    try:
        L = parse_number(size)
    except ValueError as exc:
        raise TopologyError(f"--size {size!r}: {exc}; give the message size L > 0") from None
    if L <= 0:
        raise TopologyError(f"--size {fraction_str(L)}: the message size L must be positive "
                            "(a broadcast of nothing takes no time)")
    if L > MAX_PACKETS ** 2:
        raise TopologyError(f"--size {fraction_str(L)}: at most {MAX_PACKETS ** 2} (the "
                            f"paper's ν = ⌈√L⌉ packets would exceed {MAX_PACKETS})")
    return L


def candidates(nu: int, limit: int = MAX_PACKETS) -> list[int]:
    """Packet counts to try: 1..64 and a geometric grid (ratio 2^(1/8)) up to 64ν."""
    grid = set(range(1, 65))
    k = 0
    while (p := round(2 ** (k / 8))) <= 64 * nu:
        grid.add(p)
        k += 1
    return sorted(p for p in grid if p <= limit)


def pipe_broadcast(platform: OnePortPlatform, source: object, size: object, *,
                   packets: int | None = None, search: bool = True,
                   progress: Progress | None = None,
                   lp_progress: LPProgress | None = None) -> PipeBroadcast:
    """PIPE of a message of ``size`` L from ``source`` (module doc).

    ``packets``: try this count too. ``search``: try the candidate counts and refine
    around the best (±1 until no neighbour improves, at most ``CLIMB`` steps); the best
    of every run (the paper's included) is ``best``: the best *found*, not a proven
    optimum over all counts. ``progress``: the packet counts tried; ``lp_progress``:
    the rounds of the SSB LP before them.
    """
    L = check_size(size)
    src = platform.check_source(source)
    unit = steady_broadcast(platform, src, progress=lp_progress)
    nu = paper_packets(L)
    paper = pipe_run(unit, nu, Fraction(nu))
    runs: dict[int, PipeRun] = {}
    if packets is not None and not 1 <= packets <= MAX_PACKETS:
        raise TopologyError(f"--packets {packets}: give a count from 1 to {MAX_PACKETS}")
    todo = ([packets] if packets is not None else []) + (candidates(nu) if search else [])
    for i, p in enumerate(todo):
        runs[p] = pipe_run(unit, p, L / p)
        if progress:
            progress(i + 1, len(todo))
    for _ in range(CLIMB if search and runs else 0):
        top = min(runs, key=lambda p: (runs[p].makespan, p))
        fresh = [p for p in (top - 1, top + 1) if 1 <= p <= MAX_PACKETS and p not in runs]
        if not fresh:
            break
        for p in fresh:
            runs[p] = pipe_run(unit, p, L / p)
    pool = list(runs.values()) + [paper]
    best = min(pool, key=lambda r: (r.makespan, r.packets))
    return PipeBroadcast(platform, src, L, unit, paper.compacted(), best.compacted(),
                         sorted((p, r.makespan) for p, r in runs.items()))
