"""Every barrier of MSCCL++'s own plans removed in turn: what the audit and smoke say.

For each plan of tests/data/mscclpp that collcert simulates, every ``nop`` of every
threadblock (and every ``barrier``, from all the threadblocks that meet at it) is removed
in turn; the audit (certify.execution.mscclpp_sim, the executor's thread model) either
names a new race, by rule, or finds the plan as it was (why: the barrier's kind,
certify.execution.mscclpp_threads.why_unneeded); smoke's adversarial orders of the threads
(smoke.mscclppplan) either give a wrong result or not. tests/test_mscclpp_threads.py
checks one threadblock per distinct op sequence; this runs them all.

    python benchmarks/bench_mscclpp_barriers.py [--smoke] [PLAN.json ...]
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

from collcert.certify.execution import mscclpp, mscclpp_sim
from collcert.certify.execution.mscclpp_threads import why_unneeded
from collcert.smoke.mscclppplan import plan_from_mscclpp

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "mscclpp"


def removals(doc: dict[str, Any]) -> list[tuple[tuple[int, int, int], dict[str, Any]]]:
    out = []
    for g in doc["gpus"]:
        for k, t in enumerate(g["threadblocks"]):
            for i, o in enumerate(t["ops"]):
                if o["name"] == "nop":
                    d = copy.deepcopy(doc)
                    del d["gpus"][g["id"]]["threadblocks"][k]["ops"][i]
                    out.append(((g["id"], t["id"], i), d))
                elif o["name"] == "barrier" and t is min(
                        (x for x in g["threadblocks"] if o in x["ops"]), key=lambda x: x["id"]):
                    nth = sum(1 for x in t["ops"][:i] if x == o)
                    d = copy.deepcopy(doc)
                    for x in d["gpus"][g["id"]]["threadblocks"]:
                        at = [j for j, y in enumerate(x["ops"]) if y == o]
                        if len(at) > nth:
                            del x["ops"][at[nth]]
                    out.append(((g["id"], t["id"], i), d))
    return out


def _same(r: str) -> str:
    return re.sub(r"op \d+", "op N", r)


def outcome(base: list[str], doc: dict[str, Any], at: tuple[int, int, int],
            mutant: dict[str, Any]) -> tuple[str, list[str]]:
    known = {_same(r) for r in base}
    new = [r for r in mscclpp_sim.run(mscclpp.read(json.dumps(mutant))).verdict.reasons
           if _same(r) not in known]
    if not new:
        kind = why_unneeded(mscclpp.read(json.dumps(doc)).tbs[at[:2]], at[2])[0]
        return ("no new problem" if base and kind == "ordered" else f"not needed: {kind}"), []
    rule = next((f"rule {k}" for k in "12345" if f"rule {k}" in new[0]), "race")
    if all(r.startswith("in the next call") for r in new):
        rule += " (next call)"
    return rule, new


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("plans", nargs="*")
    ap.add_argument("--smoke", action="store_true", help="also run smoke's adversarial orders")
    args = ap.parse_args()
    cases = [e for e in json.loads((DATA / "expected.json").read_text())
             if e["verdict"] != "NOT SIMULATED" and (not args.plans or e["plan"] in args.plans)]
    for case in cases:
        doc = json.loads((DATA / case["plan"]).read_text())
        base = mscclpp_sim.run(mscclpp.read(json.dumps(doc))).verdict.reasons
        started = time.perf_counter()
        counts: Counter[str] = Counter()
        shown: Counter[str] = Counter()
        for at, mutant in removals(doc):
            kind, new = outcome(base, doc, at, mutant)
            counts[kind] += 1
            if args.smoke and new and "next call" not in kind:
                plan = plan_from_mscclpp(mscclpp.read(json.dumps(mutant)))
                shown["smoke FAIL" if "wrong result" in plan.notes[-1] else "smoke PASS"] += 1
        took = time.perf_counter() - started
        total = sum(counts.values())
        print(f"{case['plan']} ({case['verdict']}): {total} barriers removed in "
              f"{took:.1f} s: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
              + ("; " + ", ".join(f"{k} {v}" for k, v in sorted(shown.items()))
                 if shown else ""))


if __name__ == "__main__":
    main()
