"""The optimal makespan of a few broadcasts on a tiny one-port platform, by Z3.

Independent of collcert.reference: it reads the platform's JSON dict. ``n``
messages (or packets) leave the source; message m reaches every other node v
exactly once, over one chosen in-link (u, v), starting at t[m, v] and
arriving d_{u,v} later, where d = β + q·c for packets of size q (d = c for
unit messages). Constraints: the link's tail holds the message when it starts
(the source always does); one-port: the receptions at a node never overlap,
nor do the sends from a node (over the chosen links). Z3's optimiser minimises
the last arrival exactly. Receiving a message twice never helps, so this is
the optimum over all schedules (Legrand et al. 2003, §2's model).

Used by tests to bracket collcert's schedules: n·T* (Lemma 7) ≤ this optimum ≤
the makespan of collcert's §5.5 / §6 schedule.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

MAX_EVENTS = 40


def _durations(data: Mapping[str, Any], size: Fraction | None) -> dict[tuple[str, str],
                                                                       Fraction]:
    out: dict[tuple[str, str], Fraction] = {}
    for link in data["links"]:
        c = Fraction(str(link["cost"]))
        b = Fraction(str(link.get("startup", 0)))
        d = c if size is None else b + size * c
        pairs = [(str(link["src"]), str(link["dst"]))]
        if link.get("bidirectional"):
            pairs.append((pairs[0][1], pairs[0][0]))
        for e in pairs:
            out[e] = d
    return out


def optimal_makespan(data: Mapping[str, Any], source: str, n: int,
                     size: Fraction | None = None, timeout_ms: int = 60_000) -> Fraction:
    """The least makespan of broadcasting ``n`` messages (packets of ``size``) from
    ``source`` (module doc); raises RuntimeError if Z3 does not finish."""
    try:
        return _optimal_makespan(data, source, n, size, timeout_ms)
    except RuntimeError:  # Z3 answered 'unknown' once in CI where it takes 1 s: ask again
        return _optimal_makespan(data, source, n, size, timeout_ms)


def _optimal_makespan(data: Mapping[str, Any], source: str, n: int, size: Fraction | None,
                      timeout_ms: int) -> Fraction:
    import z3

    nodes = [str(v) for v in data["compute_nodes"]]
    dur = _durations(data, size)
    dests = [v for v in nodes if v != source]
    if n * len(dests) > MAX_EVENTS:
        raise ValueError(f"{n} messages to {len(dests)} nodes: too many for the brute force")
    opt = z3.Optimize()
    opt.set("timeout", timeout_ms)
    t = {(m, v): z3.Real(f"t_{m}_{v}") for m in range(n) for v in dests}
    arrive: dict[tuple[int, str], Any] = {}
    pick: dict[tuple[int, str, str], Any] = {}
    for m, v in t:
        ins = [(u, w) for (u, w) in dur if w == v]
        for u, _ in ins:
            pick[(m, u, v)] = z3.Bool(f"p_{m}_{u}_{v}")
        opt.add(z3.PbEq([(pick[(m, u, v)], 1) for u, _ in ins], 1))
        opt.add(t[(m, v)] >= 0)
        arrive[(m, v)] = z3.Sum([z3.If(pick[(m, u, v)], _q(dur[(u, v)]), 0) for u, _ in ins]) \
            + t[(m, v)]
    for (m, u, v), sel in pick.items():
        if u != source:
            opt.add(z3.Implies(sel, t[(m, v)] >= arrive[(m, u)]))
    for v in dests:  # receptions at v
        for m1, m2 in itertools.combinations(range(n), 2):
            opt.add(z3.Or(arrive[(m1, v)] <= t[(m2, v)], arrive[(m2, v)] <= t[(m1, v)]))
    sends = list(pick)
    for (m1, u1, v1), (m2, u2, v2) in itertools.combinations(sends, 2):
        if u1 == u2:
            opt.add(z3.Implies(z3.And(pick[(m1, u1, v1)], pick[(m2, u2, v2)]), z3.Or(
                t[(m1, v1)] + _q(dur[(u1, v1)]) <= t[(m2, v2)],
                t[(m2, v2)] + _q(dur[(u2, v2)]) <= t[(m1, v1)])))
    span = z3.Real("makespan")
    for a in arrive.values():
        opt.add(span >= a)
    opt.minimize(span)
    if opt.check() != z3.sat:
        raise RuntimeError(f"Z3 did not find the optimum: {opt.reason_unknown()}")
    val = opt.model()[span]
    return Fraction(val.numerator_as_long(), val.denominator_as_long())


def _q(x: Fraction) -> Any:
    import z3

    return z3.Q(x.numerator, x.denominator)
