"""collcert schedule --symmetric is refused before the long work where the symmetric form
cannot hold (issue 31 item 3): a rooted collective, weights, or multicast switches kept,
before any work; no box symmetry, or an orbit-wise build that gets stuck, before the
general algorithms start (it refused only after the whole general build)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collcert import platforms
from collcert.cli import main
from collcert.reference.forestcoll import SymmetryFailed, schedule
from collcert.reference.forestcoll import schedule_build as build
from collcert.reference.model import what_if


@pytest.mark.parametrize("argv, words", [
    (["dgx_a100:2", "-c", "broadcast", "--root", "b0.gpu0"], "broadcast has a root"),
    (["dgx_a100:2", "--weights", ",".join(["1"] * 8 + ["2"] * 8)], "weights"),
])
def test_refused_before_any_work(argv: list[str], words: str, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError("the schedule was started")

    monkeypatch.setattr("collcert.commands.schedule.schedule", no_work)
    out = tmp_path / "s.json"
    assert main(["schedule", *argv, "--symmetric", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert words in err and "drop --symmetric" in err and not out.exists()


def test_no_symmetry_is_refused_before_the_general_algorithms(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    t = what_if(platforms.ring(8), degrade=["0<>1=1/2"]).topology
    assert t is not None
    path = tmp_path / "ring.json"
    path.write_text(json.dumps(t.to_json()))

    def no_general(*args: object, **kwargs: object) -> None:
        raise AssertionError("the general algorithms were started")

    monkeypatch.setattr(build, "_general", no_general)
    assert main(["schedule", str(path), "--symmetric", "-o", str(tmp_path / "s.json")]) == 2
    err = capsys.readouterr().err
    assert "no box symmetry of this machine was found" in err
    assert "the general algorithms were not started" in err


def test_a_stuck_orbit_build_raises_instead_of_falling_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def stuck(*args: object, **kwargs: object) -> None:
        raise SymmetryFailed("a greedy orbit packing got stuck")

    monkeypatch.setattr(build, "_by_orbits", stuck)
    with pytest.raises(SymmetryFailed, match="got stuck"):
        schedule(platforms.dgx_a100(2), orbits_only=True)
    assert schedule(platforms.dgx_a100(2)).time_per_unit > 0  # without it: the general path


def test_a_fallback_to_the_general_path_is_announced_with_its_estimate(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def stuck(*args: object, **kwargs: object) -> None:
        raise SymmetryFailed("a greedy orbit packing got stuck")

    monkeypatch.setattr(build, "_by_orbits", stuck)
    told: list[object] = []
    schedule(platforms.dgx_a100(2), estimate=told.append)
    assert told
    est = told[0]
    assert est.worth_announcing  # type: ignore[attr-defined]
    text = est.describe()  # type: ignore[attr-defined]
    assert text.startswith("the build by orbits stopped (a greedy orbit packing got stuck); "
                           "so the general path")
