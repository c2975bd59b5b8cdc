"""A what-if schedule is judged on the machine it was built for (issue 33 row 7).

'schedule dgx_a100:2 --degrade b0.nic0=25/2 -o d.json; draw dgx_a100:2 d.json --loads'
drew it on the healthy machine: the slowed NIC 50 % busy (really 100 %), the caption
the healthy optimum. schedule now records the what-if in generator.whatif; draw and
smoke --topology judge such a file on that machine (saying so), all three take
--degrade/--fail, and audit on the healthy machine says how to audit it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collcert.cli import main

DEGRADE = ["--degrade", "0<>1=1/2"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("whatif") / "w.json"
    assert main(["schedule", "ring:4", *DEGRADE, "-o", str(path)]) == 0
    return path


def test_the_schedule_records_its_what_if(built: Path) -> None:
    gen = json.loads(built.read_text())["generator"]
    assert gen["whatif"] == {"degrade": ["0<>1=1/2"], "fail": []}


def test_audit_on_the_healthy_machine_says_how(built: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "ring:4", str(built)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("INVALID")
    assert f"Audit it on the machine it was built for: collcert audit ring:4 {built} " \
           "--degrade '0<>1=1/2'" in out
    assert main(["audit", "ring:4", str(built), *DEGRADE]) == 0
    out = capsys.readouterr().out
    assert out.startswith("VALID") and "ratio          = 1 of the optimum" in out


def test_draw_reads_the_what_if_and_takes_the_options(
        built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "l.png"
    assert main(["draw", "ring:4", str(built), "--loads", "-o", str(png)]) == 0
    out = capsys.readouterr().out
    assert "was built for ring:4 --degrade '0<>1=1/2'" in out and "drawn on that" in out
    assert "ring(4) (what-if)" in out and png.stat().st_size > 0
    assert main(["draw", "ring:4", *DEGRADE, "-o", str(png)]) == 0  # the machine alone
    assert "ring(4) (what-if)" in capsys.readouterr().out
    assert main(["draw", "ring:4", "--fail", "0", "--fail", "2", "-o", str(png)]) == 2
    assert "the machine is disconnected" in capsys.readouterr().err


def test_smoke_models_the_machine_the_file_was_built_for(built: Path) -> None:
    """smoke --topology (torch aside): the model is the changed machine's, said so."""
    import argparse

    from collcert import platforms
    from collcert.commands._whatif_machine import judged_machine

    args = argparse.Namespace(topology="ring:4", degrade=[], fail=[])
    healthy = platforms.ring(4)
    topo, note = judged_machine(args, healthy, str(built), "smoke")
    assert topo.content_hash() == json.loads(built.read_text())["topology"]
    assert note is not None and "modelled on that machine" in note
    other = argparse.Namespace(topology="ring:4", degrade=["0<>1=1/4"], fail=[])
    topo, note = judged_machine(other, healthy, str(built), "smoke")  # the options win
    assert note is None and topo.capacity[(0, 1)] == 1 / 4 * healthy.capacity[(0, 1)]
