"""The optimal one-port steady-state broadcast (Legrand et al. 2003), with its certificate.

Legrand, Beaumont, Marchal, Robert: *Optimizing the steady-state throughput of
Broadcasts on heterogeneous platforms* (INRIA RR-4871, 2003). A source sends
an unbounded series of unit messages to every other node of a platform whose
links have costs (time per message) and whose nodes send to one neighbour and
receive from one neighbour at a time. :func:`steady_broadcast`:

1. solves SSB(G) (§5.2) exactly — or SSBPDAG (§4.1) on a DAG with ``dag=True``
   — :mod:`collcert.reference.broadcast.steady_lp`; TP = 1/T* is the best throughput of
   any schedule (Lemma 7), proven by the LP dual;
2. builds a periodic schedule that reaches it (weighted broadcast trees, Thm 5,
   or the §4.3 height-based DAG schedule; edge colouring, Lemma 1) —
   :mod:`collcert.reference.broadcast.steady_schedule`;
3. writes both as a ``collcert-steady-broadcast/1`` file
   (docs/steady-broadcast.md) that :mod:`collcert.certify.broadcast.oneport` checks by
   replaying the schedule event by event.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..model import TopologyError, fraction_str, show
from .oneport import OnePortPlatform
from .steady_lp import SSBSolution, check_ssb_counts, solve_ssb, solve_ssbpdag
from .steady_schedule import PeriodicSchedule, dag_schedule, schedule_json, tree_schedule

FORMAT = "collcert-steady-broadcast/1"
Node = Hashable
Link = tuple[Node, Node]
Progress = Callable[[int, int, str], None]


@dataclass
class SteadyBroadcast:
    """The optimum (``solution``) and a periodic schedule reaching it (``schedule``)."""

    platform: OnePortPlatform
    source: Node
    solution: SSBSolution
    schedule: PeriodicSchedule
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def throughput(self) -> Fraction:
        return self.solution.throughput

    @property
    def T_star(self) -> Fraction:
        return self.solution.T

    def to_json(self) -> dict[str, Any]:
        """The schedule file (``collcert-steady-broadcast/1``, docs/steady-broadcast.md)."""
        sched = schedule_json(self.schedule)
        packing = sched.pop("packing")
        out: dict[str, Any] = {
            "format": FORMAT,
            "topology": self.platform.content_hash(),
            "topology_name": self.platform.name,
            "source": self.source,
            "method": self.schedule.method,
            "throughput": fraction_str(self.throughput),
            "T_star": fraction_str(self.T_star),
            "period": sched.pop("period"),
            "messages_per_period": str(sched.pop("messages_per_period")),
            "trees": packing.pop("trees", []),
            "matchings": packing.pop("matchings"),
            "packing": packing,
            "lp": self.solution.certificate(),
        }
        out.update(sched)
        return out

    def summary(self, limit: int = 8) -> str:
        p, sol, sc = self.platform, self.solution, self.schedule
        unit = p.unit

        def qty(value: Fraction) -> str:
            plural = unit == "time unit" and value != 1
            return f"{show(value)} {unit}{'s' if plural else ''}"

        lp = ("SSBPDAG (Legrand et al. 2003, §4.1) on the DAG" if sol.lp == "ssbpdag"
               else "SSB (Legrand et al. 2003, §5.2) on the whole graph")
        lines = [
            f"Steady-state broadcast from {self.source} on {p.name or 'the platform'} "
            f"({len(p.nodes)} nodes, {len(p.cost)} links), one-port model; {lp}",
            f"  throughput TP = {show(self.throughput)} message"
            f"{'' if self.throughput == 1 else 's'} per {unit}"
            f"   (T* = {qty(self.T_star)} per message)",
            f"  no schedule, periodic or not, does better (Lemma 7): the LP dual "
            f"({len(sol.cuts)} cut{'s' if len(sol.cuts) != 1 else ''} and port prices) proves "
            f"T* ≥ {fraction_str(self.T_star)}",
            f"  period {qty(sc.period)}: {sc.messages_per_period} messages per period "
            f"(batch N = {sc.N}" + (f", stretched ×{sc.sigma} to whole messages" if sc.sigma > 1
                                    else "") + ")",
        ]
        if sc.method == "trees":
            lines.append(f"  broadcast trees (Thm 5): {len(sc.trees)}, weights Σλ = "
                         f"{sum(w for w, _ in sc.trees)} = N")
            for lam, edges in sc.trees[:limit]:
                lines.append(f"    λ = {lam}: " + " ".join(f"{u}->{v}" for u, v in edges))
            if len(sc.trees) > limit:
                lines.append(f"    … and {len(sc.trees) - limit} more (--json lists all)")
        else:
            hs = sorted(sc.heights.items(), key=lambda it: (it[1], p.index[it[0]]))
            lines.append(f"  DAG schedule (§4.3): q = {sc.q}, heights "
                         + " ".join(f"{v}:{h}" for v, h in hs))
        total = sum(mu for mu, _ in sc.matchings)
        lines.append(f"  matchings (Lemma 1): {len(sc.matchings)}, Σμ = "
                     f"{qty(total * sc.tick)} = N·T* (one batch of N messages)")
        for mu, edges in sc.matchings[:limit]:
            lines.append(f"    μ = {fraction_str(mu * sc.tick)}: "
                         + " ".join(f"{u}->{v}" for u, v in edges))
        if len(sc.matchings) > limit:
            lines.append(f"    … and {len(sc.matchings) - limit} more (--json lists all)")
        return "\n".join(lines)


def steady_broadcast(platform: OnePortPlatform, source: object, *, dag: bool = False,
                     progress: Progress | None = None) -> SteadyBroadcast:
    """Solve, schedule and time the steady-state broadcast from ``source`` (module doc)."""
    t0 = time.perf_counter()
    sol = solve_ssbpdag(platform, source) if dag else solve_ssb(platform, source,
                                                                progress=progress)
    t1 = time.perf_counter()
    sched = dag_schedule(sol) if dag else tree_schedule(sol)
    t2 = time.perf_counter()
    if sched.throughput != sol.throughput:  # pragma: no cover - Lemma 6 with equality
        raise RuntimeError(f"internal: the schedule reaches {sched.throughput}, the LP says "
                           f"{sol.throughput}")
    return SteadyBroadcast(platform, sol.source, sol, sched,
                           {"lp": t1 - t0, "schedule": t2 - t1})


# ----------------------------------------------------------------- platforms
def paper_fig1() -> OnePortPlatform:
    """Legrand et al. 2003, Fig. 1 (costs as inferred in the digest, consistent with every number
    in §3.1): s→1, s→2, 1→2, 2→1 cost 1; 1→3, 2→4 cost 1/2."""
    return OnePortPlatform(
        ["s", "1", "2", "3", "4"],
        [("s", "1", 1), ("s", "2", 1), ("1", "2", 1), ("2", "1", 1), ("1", "3", "1/2"),
         ("2", "4", "1/2")], name="Legrand et al. 2003, Fig. 1", unit="time unit")


def paper_fig5() -> OnePortPlatform:
    """Legrand et al. 2003, Fig. 5: the DAG of Fig. 1 without the link 2→1."""
    p = paper_fig1()
    return p.subplatform([e for e in p.cost if e != ("2", "1")], name="Legrand et al. 2003, Fig. 5")


def random_platform(nodes: int, seed: int = 0, degree: int = 3) -> OnePortPlatform:
    """A random platform: a random arborescence from node p0 (so p0 reaches every
    node) plus random links up to about ``degree`` out-links per node; costs drawn
    from {1/2, 1, 3/2, 2, 3, 4, 5}."""
    if nodes < 2:
        raise TopologyError(f"random:{nodes}: a platform needs at least two nodes")
    want = min(max(degree, 1) * nodes, nodes * (nodes - 1))
    check_ssb_counts(nodes, want, f"random:{nodes},{seed},{degree}")  # before generating it
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(nodes)]
    costs = [Fraction(1, 2), Fraction(1), Fraction(3, 2), Fraction(2), Fraction(3), Fraction(4),
             Fraction(5)]
    links: dict[Link, Fraction] = {}
    for i in range(1, nodes):
        links[(names[rng.randrange(i)], names[i])] = rng.choice(costs)
    if 2 * want > nodes * (nodes - 1):  # dense: draw from the missing pairs, no rejection
        missing = [(u, v) for u in names for v in names if u != v and (u, v) not in links]
        rng.shuffle(missing)
        for e in missing[:want - len(links)]:
            links[e] = rng.choice(costs)
    while len(links) < want:
        u, v = rng.sample(names, 2)
        links.setdefault((u, v), rng.choice(costs))
    return OnePortPlatform(names, [(u, v, c) for (u, v), c in links.items()],
                           name=f"random:{nodes},{seed}", unit="time unit")
