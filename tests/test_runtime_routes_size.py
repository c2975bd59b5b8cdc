"""--routes runtime at scale (red team O.5.1): the estimate of cut generation is told
before it starts, and a master LP beyond the limits is refused at once (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_export_rate import issue_topology
from test_runtime_routes import _random

import collcert
from collcert.cli import main
from collcert.reference.execution.runtime_cuts import MAX_LP_COLUMNS, check_lp_size, lp_size
from collcert.reference.execution.runtime_routes import build_lp
from collcert.reference.model import TopologyError


@pytest.mark.parametrize("build", [issue_topology, collcert.platforms.dgx1, lambda: _random(0),
                                   lambda: collcert.platforms.ring(5)])
def test_the_size_bounds_the_first_master_lp(build: object) -> None:
    t = build()  # type: ignore[operator]
    lp = build_lp(t, True, False, sinks=False)
    columns, rows = lp_size(t)
    assert lp.num_variables <= columns
    assert lp.num_rows + 2 * t.num_compute <= rows


DATA = Path(__file__).parent / "data" / "topologies"


def test_a_master_lp_beyond_the_limit_is_refused_before_any_work() -> None:
    told: list[str] = []
    with pytest.raises(TopologyError, match=f"more than the {MAX_LP_COLUMNS} columns"):
        check_lp_size(collcert.platforms.ring(700), lambda text, s: told.append(text))
    assert not told  # refused: no estimate of work that will not start


def test_cli_refuses_an_lp_beyond_the_budget_with_its_size(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 22's machine needs the LP (ForestColl's schedule leaves a direct link); a time
    # budget below its estimate refuses it before any round, naming its size (ring:2000
    # was the case here: its ForestColl schedule is now built by orbits and already on
    # the runtime's routes, so no LP is solved)
    monkeypatch.setenv("COLLCERT_MAX_SECONDS", "0.001")
    out = tmp_path / "rr.json"
    assert main(["schedule", str(DATA / "issue22.json"), "--routes", "runtime",
                 "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "ForestColl's own schedule is not built" in err
    assert "runtime-routes LP of issue-22 (5 GPUs) has about" in err and "columns" in err
    assert not out.exists()


def test_cli_progress_tells_the_estimate_before_the_rounds(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topo = tmp_path / "t.json"
    topo.write_text(json.dumps(_random(0).to_json()))
    assert main(["schedule", str(topo), "--routes", "runtime", "--progress",
                 "-o", str(tmp_path / "rr.json")]) == 0
    err = capsys.readouterr().err
    estimate = err.index("ForestColl's own schedule sends c0 -> c1 off their direct link, "
                         "so the runtime-routes LP of")
    assert "a round" in err[estimate:]
    assert estimate < err.index("runtime routes: round 1")
