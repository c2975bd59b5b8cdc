"""The finite schedules of Legrand et al. 2003, §5.5 and §6, compacted: every transfer as early as possible.

The schedule of :mod:`.pipe` keeps the periods of the steady state, so a few
messages wait for their period and lag (the initialisation and clean-up of
§5.5 cost whole periods). Compaction keeps *what* is sent, on which link and
in which order on every port, and starts each transfer as soon as its sender's
port, its receiver's port and the message (at the sender) are free:
processing the transfers in the order of their start in the periodic
schedule, start = max(send port free, receive port free, arrival of the
message at the sender). By induction every start is no later than before, so
the makespan never grows; the order on each port is kept, so the one-port rule
holds; a message is forwarded only after it arrived. The result is an explicit
list of transfers, which ``collcert.certify.broadcast.pipe`` checks one by one.
"""

from __future__ import annotations

from collections.abc import Hashable
from fractions import Fraction
from typing import Any

from .steady import SteadyBroadcast

Node = Hashable
MAX_EVENTS = 10_000
"""Above this many transfers no compacted schedule is built (it is listed in full)."""

# (sender, receiver, message, start, end)
Event = tuple[Node, Node, int, Fraction, Fraction]


def periodic_events(sb: SteadyBroadcast, n: int, size: Fraction | None,
                    startup: dict[Any, Fraction], scale: Fraction) -> list[Event]:
    """Every transfer of messages 0..n−1 in the (stretched) periodic schedule, by start."""
    sched, cost = sb.schedule, sb.platform.cost
    T, M = sched.period, sched.messages_per_period
    batches = -(-n // M)
    out: list[Event] = []
    for r in range(batches + sched.max_lag):
        for step in sched.steps:
            for (a, b), blocks in step.transfers:
                c = cost[(a, b)]
                dur = c if size is None else startup.get((a, b), 0) + size * c
                at = step.start
                for bl in blocks:
                    batch = r - bl.lag
                    if 0 <= batch < batches:
                        for i in range(bl.count):
                            g = batch * M + bl.first + i
                            if g < n:
                                start = scale * (r * T + at + i * c)
                                out.append((a, b, g, start, start + dur))
                    at += bl.count * c
    out.sort(key=lambda ev: ev[3])
    return out


def compact(sb: SteadyBroadcast, n: int, size: Fraction | None = None,
            startup: dict[Any, Fraction] | None = None,
            scale: Fraction = Fraction(1)) -> tuple[list[Event], Fraction] | None:
    """The compacted transfers and their makespan (module doc), or None above
    ``MAX_EVENTS`` transfers."""
    if n * (len(sb.platform.nodes) - 1) > MAX_EVENTS:
        return None
    beta = startup or {}
    source = sb.source
    send_free: dict[Node, Fraction] = {}
    recv_free: dict[Node, Fraction] = {}
    have: dict[tuple[Node, int], Fraction] = {}
    out: list[Event] = []
    for a, b, g, was, end in periodic_events(sb, n, size, beta, scale):
        dur = end - was
        start = max(send_free.get(a, Fraction(0)), recv_free.get(b, Fraction(0)),
                    Fraction(0) if a == source else have[(a, g)])
        send_free[a] = recv_free[b] = have[(b, g)] = start + dur
        out.append((a, b, g, start, start + dur))
    return out, max(ev[4] for ev in out)
