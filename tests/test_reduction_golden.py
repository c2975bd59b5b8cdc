"""Reduction golden cases (golden/reduction/, Canon & Antoniu 2012): collcert and the exhaustive search agree.

The expected values come from the paper (Figure 1) and the digest's worked
values; golden/check_reduction_golden.py re-derives the small unconstrained ones
with the standard library, and this file re-derives the K-transfer ones with the
exhaustive search of collcert.fuzz.reduction_search (all trees × all transfer lists).
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from collcert.certify.reduction import check_reduction
from collcert.fuzz import reduction_search as rs
from collcert.reference.reduction import length_bounds as rb
from collcert.reference.reduction.trees import scaled, solve

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "golden" / "reduction").glob("*.json"))


def _cases() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in FILES:
        doc = json.loads(path.read_text(encoding="utf-8"))
        out += [(f"{path.stem}:{i}", case) for i, case in enumerate(doc["cases"])]
    return out


def test_files_present() -> None:
    names = {p.stem for p in FILES}
    assert {"figure1-n4-equal-costs", "alg1-equal-costs", "k-transfers-n7",
            "prop8-counterexamples"} <= names


@pytest.mark.parametrize("name,case", _cases(), ids=[c[0] for c in _cases()])
def test_collcert_reaches_the_golden_length(name: str, case: dict[str, Any]) -> None:
    sched = solve(case["n"], case["transfer"], case["compute"],
                  max_transfers=case["max_transfers"], max_reducers=case["max_reducers"],
                  overlap=case["model"] == "overlap")
    assert sched.makespan == Fraction(case["optimal_length"])


def test_k_transfer_cases_by_exhaustive_search() -> None:
    seen = 0
    for _, case in _cases():
        K = case["max_transfers"]
        if K is None or case["n"] > 8:
            continue
        D, C, L = scaled(Fraction(case["transfer"]), Fraction(case["compute"]))
        best, _ = rs.optimum(case["n"], D, C, max_transfers=K)
        assert Fraction(best, L) == Fraction(case["optimal_length"]), case
        seen += 1
    assert seen >= 17


def test_figure1_schedule() -> None:
    doc = json.loads((ROOT / "golden/reduction/figure1-n4-equal-costs.json").read_text())
    verdict, _ = check_reduction(doc["schedule"])
    assert verdict.ok, verdict.reasons
    assert verdict.facts["makespan"] == 4
    # collcert's Algorithm 1 produces exactly the figure's dates: t4 = 0, t3 = d, t2 = 2d
    sched = solve(4, 1, 1)
    assert sched.parent == [-1, 0, 0, 0]
    assert [sched.time(i) for i in (3, 2, 1)] == [0, 1, 2]


def test_printed_prop8_is_not_a_bound() -> None:
    doc = json.loads((ROOT / "golden/reduction/prop8-counterexamples.json").read_text())
    for entry, case in zip(doc["printed_prop8"], doc["cases"]):
        n, K = entry["n"], entry["K"]
        d, c = Fraction(entry["transfer"]), Fraction(entry["compute"])
        printed = rb.printed_prop8(n, d, c, K)
        assert printed == Fraction(entry["value"])
        assert printed < Fraction(case["optimal_length"])  # the printed "bound" is below OPT
        assert rb.transfers_upper(n, d, c, K) >= Fraction(case["optimal_length"])
    # n = 6: even Lemma 5 (a proven lower bound) is above the printed value
    assert rb.printed_prop8(6, Fraction(1), Fraction(0), 3) < rb.lemma5(6, Fraction(1), 0)


def test_stdlib_checker_passes() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "golden" / "check_reduction_golden.py"),
                           "--max-nodes", "7"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "re-derived" in proc.stdout


def test_stdlib_checker_catches_a_wrong_value(tmp_path: Path) -> None:
    doc = json.loads((ROOT / "golden/reduction/alg1-equal-costs.json").read_text())
    doc["cases"][4]["optimal_length"] = "5"  # n = 5 takes 4, not 5
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    proc = subprocess.run([sys.executable, str(ROOT / "golden" / "check_reduction_golden.py"),
                           str(bad)], capture_output=True, text=True)
    assert proc.returncode == 1 and "brute force gives 4" in proc.stdout
