"""The baseline golden cases (golden/baselines/): the stdlib checker passes with a bare
interpreter, catches a tampered figure, and agrees with collcert and golden/cases/."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = sorted((ROOT / "golden" / "baselines").glob("*.json"))
CHECKER = ROOT / "golden" / "check_baselines.py"


def test_the_stdlib_checker_passes_without_collcert() -> None:
    assert len(CASES) >= 12
    out = subprocess.run([sys.executable, "-I", str(CHECKER)], capture_output=True, text=True,
                         timeout=300, cwd="/")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 failures" in out.stdout


def test_the_checker_catches_a_tampered_ring(tmp_path: Path) -> None:
    case = json.loads((ROOT / "golden" / "baselines" / "dgx_a100-2-allgather.json").read_text())
    case["expected"]["ring_algbw"] = "220"  # faster than the channels allow
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(case))
    out = subprocess.run([sys.executable, "-I", str(CHECKER), str(bad)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 1 and "re-derived" in out.stderr
    case = json.loads((ROOT / "golden" / "baselines" / "dgx_a100-2-allgather.json").read_text())
    case["rings"][0]["routes"][3] = case["rings"][0]["routes"][4]  # a route that skips a GPU
    bad.write_text(json.dumps(case))
    out = subprocess.run([sys.executable, "-I", str(CHECKER), str(bad)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 1 and "route 3" in out.stderr


def test_golden_optima_agree_with_the_optimum_cases() -> None:
    pairs = {"dgx_a100-2-allgather": "dgx_a100-2box-allgather",
             "mi250-2-allgather": "mi250-2box-allgather",
             "mi250-2-8-allgather": "mi250-2box-8gpu-allgather"}
    for mine, theirs in pairs.items():
        a = json.loads((ROOT / "golden" / "baselines" / f"{mine}.json").read_text())
        b = json.loads((ROOT / "golden" / "cases" / f"{theirs}.json").read_text())
        assert Fraction(a["expected"]["optimum_algbw"]) == Fraction(b["expected"]["algbw"])


def test_collcert_rebuilds_the_small_cases() -> None:
    from collcert import platforms
    from collcert.reference.baselines import ring_channels

    case = json.loads((ROOT / "golden" / "baselines" / "dgx_a100-2-allgather.json").read_text())
    rings = ring_channels(platforms.dgx_a100(2))
    assert [[str(v) for v in ch.order] for ch in rings.channels] == \
        [ch["order"] for ch in case["rings"]]
