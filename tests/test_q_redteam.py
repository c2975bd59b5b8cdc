"""Red-team holes of the second round (helper Q; /work/notes/O.md section 5): long solves
say their size and estimate before the work, and files handed to the wrong command or
platform say what they are and what they want."""

from __future__ import annotations

from typing import Any

import pytest

from collcert import platforms
from collcert.cli import main
from collcert.commands import _alltoall
from collcert.reference.alltoall import alltoall_optimum
from collcert.reference.alltoall.lp_size import solve_seconds


def test_alltoall_notice_comes_before_the_solve_with_the_lp_size() -> None:
    heard: list[tuple[str, float]] = []
    t = platforms.ring(6)
    opt = alltoall_optimum(t, symmetry=False, notice=lambda w, s: heard.append((w, s)))
    cols = 6 * len(t.capacity)
    assert heard == [(f"the alltoall LP with {cols} flow variables (6 compute nodes × "
                      f"{len(t.capacity)} links)", solve_seconds(cols))]
    assert opt.result.stats["columns"] == cols + 1  # the flows and λ: the size it said
    heard.clear()
    alltoall_optimum(t, symmetry=True, notice=lambda w, s: heard.append((w, s)))
    assert len(heard) == 1 and "orbits of compute nodes" in heard[0][0]


def test_alltoall_long_estimate_is_printed_before_the_solve(
        capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_alltoall, "ESTIMATE_SHOWN_FROM", 0.0)  # ring:6 counts as long
    assert main(["optimum", "-c", "alltoall", "ring:6"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert "estimated about" in err[0] and "flow variables" in err[0]
    assert "LP solved in" in err[1] and "certificate checked in" in err[2]
    monkeypatch.setattr(_alltoall, "ESTIMATE_SHOWN_FROM", 10.0**9)
    assert main(["optimum", "-c", "alltoall", "ring:6"]) == 0
    assert capsys.readouterr().err == ""  # a short solve stays quiet without --progress
    assert main(["optimum", "-c", "alltoall", "ring:6", "--progress"]) == 0
    assert "estimated about" in capsys.readouterr().err
