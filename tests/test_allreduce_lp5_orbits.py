"""LP (5)'s schedule by orbits (reference/allreduce/lp5_orbits.py, issue 31): the cut form's
solution, fixed by the machine's symmetry, packed by the orbit-wise switch removal and
packing; the general path still there (with its estimate first), the compact document,
and the estimate told before the LP's rounds."""

from __future__ import annotations

import json
from typing import Any

import pytest

from collcert import platforms
from collcert.certify.forestcoll import check_schedule
from collcert.certify.model import Topo
from collcert.reference.allreduce import forestcoll_lp, lp5_cuts, lp5_schedule, lp_schedule
from collcert.reference.allreduce.lp5_orbits import orbit_trees
from collcert.reference.model import TopologyError


def _valid(t: Any, doc: dict[str, Any]) -> Any:
    v = check_schedule(Topo(t.to_json()), json.loads(json.dumps(doc)))
    assert v.ok, v.all_reasons()[:3]
    return v


@pytest.fixture(scope="module")
def built() -> Any:
    return lp_schedule(platforms.dgx_a100(4))


def test_the_trees_are_built_by_orbits_and_certified(built: Any) -> None:
    t, s = built.topology, built
    assert s.orbits and "representative" in s.orbits
    assert "built by orbits" in s.summary()
    v = _valid(t, s.to_json())
    assert v.facts["forestcoll_lp"] == s.algbw == 1 / v.facts["time_per_unit"]


def test_without_orbits_the_general_path_gives_the_same_rate(
        monkeypatch: pytest.MonkeyPatch) -> None:
    t = platforms.dgx_a100(4)
    said: list[tuple[str, float]] = []
    monkeypatch.setattr(lp5_schedule, "orbit_trees", lambda *a, **k: None)
    s = lp_schedule(t, notice=lambda text, sec: said.append((text, sec)))
    assert not s.orbits
    assert any("general algorithms" in text for text, _ in said)  # its estimate, first
    v = _valid(t, s.to_json())
    assert 1 / v.facts["time_per_unit"] == forestcoll_lp(t).value


def test_the_general_path_is_refused_beyond_the_time_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    t = platforms.dgx_a100(4)
    sol = forestcoll_lp(t)
    monkeypatch.setattr(lp5_schedule, "orbit_trees", lambda *a, **k: None)
    monkeypatch.setenv("COLLCERT_MAX_SECONDS", "0.000001")
    with pytest.raises(TopologyError, match="LP \\(5\\) schedule of .*general algorithms"):
        lp_schedule(t, lp=sol)


def test_a_solution_the_symmetry_does_not_keep_is_not_built_by_orbits() -> None:
    t = platforms.dgx_a100(4)
    sol = forestcoll_lp(t)
    scale = lp5_schedule._scale(sol)
    supply = {v: int(x * scale) for v, x in sol.x.items()}
    bc = {e: int(c * scale) for e, c in sol.c_bc.items() if c}
    re_rev = {(v, u): int(c * scale) for (u, v), c in sol.c_re.items() if c}
    assert orbit_trees(t, bc, re_rev, supply, scale) is not None
    e = next(iter(bc))
    assert orbit_trees(t, {**bc, e: bc[e] + 1}, re_rev, supply, scale) is None
    v = next(iter(supply))
    assert orbit_trees(t, bc, re_rev, {**supply, v: supply[v] + 1}, scale) is None


def test_large_schedules_are_written_with_walk_tables(monkeypatch: pytest.MonkeyPatch,
                                                      built: Any) -> None:
    t, s = built.topology, built
    monkeypatch.setattr(lp5_schedule, "COMPACT_EDGES", 1)
    doc = s.to_json()
    phase = doc["phases"][1]
    assert "walks" in phase and all(isinstance(i, int) for i in phase["trees"][0]["edges"])
    assert len(phase["walks"]) < sum(len(tr["edges"]) for tr in phase["trees"])
    full = _valid(t, s.to_json(compact=False))
    assert _valid(t, doc).facts["time_per_unit"] == full.facts["time_per_unit"]


def test_the_lp_estimate_is_told_before_the_rounds() -> None:
    said: list[tuple[str, float]] = []
    rounds: list[int] = []

    def note(text: str, seconds: float) -> None:
        assert not rounds  # before any round
        said.append((text, seconds))

    lp5_cuts.forestcoll_lp_cuts(platforms.dgx_a100(8), notice=note,
                                progress=lambda r, c: rounds.append(r))
    assert len(said) == 1 and rounds
    text, seconds = said[0]
    assert "64 compute nodes in 1 orbit" in text and "estimated" in text and seconds > 0


def test_optimum_allreduce_shows_the_lp_estimate_and_rounds(
        capsys: pytest.CaptureFixture[str]) -> None:
    from collcert.cli import main

    assert main(["optimum", "-c", "allreduce", "dgx_a100:2", "--progress"]) == 0
    err = capsys.readouterr().err
    lp = err.index("allreduce: LP (5) ...")
    assert err.index("LP (5) of 2-box DGX A100 by cut generation") > lp
    assert "estimated" in err and "LP (5): round 1," in err
