#!/usr/bin/env python3
"""Check the baseline golden cases (golden/baselines/) with the standard library only.

For every case this script

* reads the topology (collcert-topology/1) with exact ``fractions.Fraction``
  capacities;
* checks every NCCL ring channel: its ``order`` visits every compute node once,
  and route i is a walk in the topology from ``order[i]`` to ``order[i+1]`` (the
  last back to ``order[0]``) whose inner nodes are all switches;
* re-derives the ring's algbw from the channels: in a ring allgather or
  reduce-scatter over N ranks and C channels every hop carries (N-1)/N of its
  channel's 1/C of the data, so the time per unit of data is
  max over links e of uses(e)·(N-1)/(N·C·capacity(e)); allreduce is a
  reduce-scatter then an allgather, twice that; algbw = 1 / time;
* checks ``optimum_over_ring`` (and ``optimum_over_tree``) = optimum / algbw;
* for allgather and reduce-scatter, that the optimum is the bound of the stored
  cut S: time ≥ |S ∩ V_c| / (N · B⁺(S)) (Zhao & Krishnamurthy 2023, eq. (1);
  reduce-scatter on the transposed topology, the same for these symmetric
  machines), so no schedule, NCCL's included, beats it;
* prints the model's ratio beside the improvement 003 §6 measured.

Usage: python golden/check_baselines.py [CASE.json ...]
Exit status 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent


def exact(text: object) -> Fraction:
    if isinstance(text, int) and not isinstance(text, bool):
        return Fraction(text)
    if isinstance(text, str):
        return Fraction(text)
    raise ValueError(f"not an exact number: {text!r}")


def read_topology(data: dict) -> tuple[list[str], set[str], dict[tuple[str, str], Fraction]]:
    compute = [str(v) for v in data["compute_nodes"]]
    switches = {str(v) for v in data.get("switch_nodes", [])}
    cap: dict[tuple[str, str], Fraction] = {}
    for link in data["links"]:
        key = (str(link["src"]), str(link["dst"]))
        cap[key] = cap.get(key, Fraction(0)) + exact(link["capacity"])
    return compute, switches, cap


def ring_time(case: dict, errors: list[str]) -> Fraction:
    """The ring allgather's time per unit of data, re-derived from the channels."""
    compute, switches, cap = read_topology(case["topology"])
    n, rings = len(compute), case["rings"]
    uses: dict[tuple[str, str], int] = {}
    for c, ch in enumerate(rings):
        order, routes = ch["order"], ch["routes"]
        if sorted(order) != sorted(compute):
            errors.append(f"channel {c} does not visit every compute node once")
        for i, r in enumerate(routes):
            if (r[0], r[-1]) != (order[i], order[(i + 1) % n]):
                errors.append(f"channel {c} route {i} joins {r[0]} to {r[-1]}, not "
                              f"{order[i]} to {order[(i + 1) % n]}")
            if any(v not in switches for v in r[1:-1]):
                errors.append(f"channel {c} route {i} passes a compute node")
            for e in zip(r, r[1:]):
                if e not in cap:
                    errors.append(f"channel {c} route {i}: {e[0]} -> {e[1]} is no link")
                    continue
                uses[e] = uses.get(e, 0) + 1
    share = Fraction(n - 1, n * len(rings))
    return max(u * share / cap[e] for e, u in uses.items())


def cut_bound(case: dict) -> Fraction:
    """The allgather time bound |S ∩ V_c| / (N · B⁺(S)) of the stored cut S."""
    compute, _, cap = read_topology(case["topology"])
    s = set(case["allgather_optimum_cut"])
    egress = sum((c for (u, v), c in cap.items() if u in s and v not in s), Fraction(0))
    return Fraction(len([v for v in compute if v in s]), len(compute)) / egress


def check(path: Path) -> list[str]:
    case = json.loads(path.read_text())
    errors: list[str] = []
    if case.get("format") != "collcert-golden-baseline/1" or not case.get("provenance"):
        return [f"{path.name}: not a collcert-golden-baseline/1 case with provenance"]
    exp = case["expected"]
    coll = case["collective"]
    time = ring_time(case, errors) * (2 if coll == "allreduce" else 1)
    if len(case["rings"]) != exp["ring_channels"]:
        errors.append("ring_channels differs from the rings stored")
    if 1 / time != exact(exp["ring_algbw"]):
        errors.append(f"ring algbw re-derived {1 / time}, the case says {exp['ring_algbw']}")
    opt = exact(exp["optimum_algbw"])
    if opt / exact(exp["ring_algbw"]) != exact(exp["optimum_over_ring"]):
        errors.append("optimum_over_ring is not optimum / ring_algbw")
    if "tree_algbw" in exp and opt / exact(exp["tree_algbw"]) != exact(exp["optimum_over_tree"]):
        errors.append("optimum_over_tree is not optimum / tree_algbw")
    bound = 1 / cut_bound(case)
    if coll in ("allgather", "reduce-scatter") and bound != opt:
        errors.append(f"the stored cut bounds algbw by {bound}, not the optimum {opt}")
    if coll == "allreduce" and exact(exp["ring_algbw"]) > bound / 2:
        errors.append("the ring allreduce beats RS+AG's cut bound")
    return [f"{path.name}: {e}" for e in errors]


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((HERE / "baselines").glob("*.json"))
    failures: list[str] = []
    for path in paths:
        errs = check(path)
        failures += errs
        case = json.loads(path.read_text())
        exp, meas = case["expected"], case["measured"]
        ratio = float(exact(exp["optimum_over_ring"]))
        seen = meas["improvement_at_1GB"]
        shown = "—" if seen is None else f"{1 + float(seen):.2f}x"
        print(f"{'FAIL' if errs else 'ok  '} {case['id']:32s} model optimum/ring "
              f"{ratio:.3f}x   measured (003 §6) {shown}")
    for f in failures:
        print(f, file=sys.stderr)
    print(f"{len(paths)} cases, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
