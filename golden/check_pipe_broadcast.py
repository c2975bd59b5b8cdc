#!/usr/bin/env python3
"""Check the PIPE golden cases (golden/steady-broadcast/pipe/) with the standard library only.

Each case (format ``collcert-golden-pipe/1``) holds a one-port platform whose
links may carry a ``startup`` β, a source, a message size L, ``expected``
figures and the ``collcert-pipe-broadcast/1`` document that reaches them
(Legrand et al. 2003, §6; docs/steady-broadcast.md). This script

* proves T* of unit messages without start-ups from the document's SSB
  certificate (unit flows within n, ports ≤ T*, a feasible dual with
  Σ weights = T*), with ``check_bound`` of check_steady_broadcast.py: so
  L·T* is a lower bound on any broadcast of L (Lemma 7);
* replays, message by message, the paper's run (ν = ⌈√L⌉ packets of size ν) and
  the best run: the unit schedule's period stretched by s = q + w
  (w = max β/c), packet i of a block starting at the start of its slot and
  arriving β + q·c later; it checks that every node other than the source
  receives every packet exactly once, that a node forwards only packets it
  already holds, that no node sends twice at once or receives twice at once,
  and recomputes the makespan;
* compares T*, L·T*, the packet counts and sizes and both makespans with
  ``expected``, and where a case lists ``z3_optimum`` (the least makespan of
  that packetisation over all schedules, from Z3 in the case's provenance),
  checks L·T* ≤ z3_optimum ≤ the replayed makespan.

Usage: python golden/check_pipe_broadcast.py [CASE.json ...]; exit 0 when all pass.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("csb", HERE / "check_steady_broadcast.py")
assert _spec and _spec.loader
csb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(csb)


def startups(data: dict) -> dict[tuple[str, str], Fraction]:
    out = {}
    for link in data["links"]:
        b = Fraction(str(link.get("startup", 0)))
        out[(str(link["src"]), str(link["dst"]))] = b
        if link.get("bidirectional"):
            out[(str(link["dst"]), str(link["src"]))] = b
    return out


def replay(sched: dict, cost: dict, beta: dict, s_node: str, nodes: list[str], p: int,
           q: Fraction, errors: list[str], label: str) -> Fraction:
    w = max(b / cost[e] for e, b in beta.items())
    s = q + w
    T = Fraction(sched["period"])
    M = int(sched["messages_per_period"])
    lag = max(bl["lag"] for st in sched["steps"] for tr in st["transfers"] for bl in tr["blocks"])
    batches = -(-p // M)
    events = []  # (sender, receiver, packet, start, end)
    for r in range(batches + lag):
        for st in sched["steps"]:
            for tr in st["transfers"]:
                e = (str(tr["src"]), str(tr["dst"]))
                c = cost[e]
                at = Fraction(st["start"])
                for bl in tr["blocks"]:
                    batch = r - bl["lag"]
                    for i in range(bl["count"]):
                        g = batch * M + bl["first"] + i
                        if 0 <= batch and g < p:
                            start = s * (r * T + at + i * c)
                            events.append((e[0], e[1], g, start, start + beta[e] + q * c))
                    at += bl["count"] * c
    arrival: dict[tuple[str, int], Fraction] = {}
    for _, b, g, _, end in events:
        if (b, g) in arrival or b == s_node:
            errors.append(f"{label}: {b} receives packet {g} twice (or is the source)")
        arrival[(b, g)] = end
    for v in nodes:
        for g in range(p):
            if v != s_node and (v, g) not in arrival:
                errors.append(f"{label}: {v} never receives packet {g}")
    for a, _, g, start, _ in events:
        if a != s_node and arrival.get((a, g), start + 1) > start:
            errors.append(f"{label}: {a} forwards packet {g} before holding it")
    for side in (0, 1):
        by_node: dict[str, list] = {}
        for ev in events:
            by_node.setdefault(ev[side], []).append((ev[3], ev[4]))
        for v, spans in by_node.items():
            spans.sort()
            if any(b0 < a1 for (_, a1), (b0, _) in zip(spans, spans[1:])):
                errors.append(f"{label}: {v} {'sends' if side == 0 else 'receives'} twice "
                              "at once")
    return max(end for *_, end in events)


def check_case(path: Path) -> list[str]:
    case = json.loads(path.read_text())
    errors: list[str] = []
    assert case["format"] == "collcert-golden-pipe/1" and case["provenance"]
    nodes, cost = csb.platform(case["platform"])
    beta = {e: startups(case["platform"]).get(e, Fraction(0)) for e in cost}
    s_node = str(case["source"])
    doc = case["document"]
    sched = doc["schedule"]
    lp = sched["lp"]
    T = Fraction(lp["T_star"])
    n = {(str(u), str(v)): Fraction(x) for u, v, x in lp["n"]}
    csb.check_bound(nodes, cost, s_node, n, T, lp["dual"], errors)
    L = Fraction(case["size"])
    exp = case["expected"]
    if T != Fraction(exp["T_star"]) or L * T != Fraction(exp["lower_bound"]):
        errors.append(f"T* = {T}, L·T* = {L * T}: not the expected values")
    spans = {}
    for name in ("paper", "best"):
        run = doc[name]
        p, q = int(run["packets"]), Fraction(run["packet_size"])
        if p * q < L or (name == "paper" and (p != q or not (p - 1) ** 2 < L <= p * p)):
            errors.append(f"{name}: {p} packets of {q} are not a valid packetisation of {L}")
        spans[name] = replay(sched, cost, beta, s_node, nodes, p, q, errors, name)
        want = exp[name]
        if (p, q, spans[name]) != (int(want["packets"]), Fraction(want["packet_size"]),
                                   Fraction(want["makespan"])):
            errors.append(f"{name}: replayed {p} packets of {q} ending at {spans[name]}, "
                          f"expected {want}")
    if "z3_optimum" in exp:
        z = Fraction(exp["z3_optimum"]["makespan"])
        if not L * T <= z <= spans[exp["z3_optimum"]["run"]]:
            errors.append(f"Z3's optimum {z} is not between L·T* and the replayed makespan")
    return errors


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((HERE / "steady-broadcast" / "pipe").glob("*.json"))
    bad = 0
    for path in paths:
        errors = check_case(path)
        print(f"{'ok  ' if not errors else 'FAIL'} {path.name}")
        for e in errors[:10]:
            print(f"     {e}")
        bad += bool(errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
