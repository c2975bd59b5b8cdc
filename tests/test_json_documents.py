"""--json prints the very document -o writes, which audit and check read (issue 33 row 4).

``broadcast-steady fig1:startup=1 --size 100 --json > p.json; collcert audit
fig1:startup=1 p.json`` was INVALID: --json added ``checked_by_certify`` and ``seconds``
(and ``compare`` with --compare), fields no checker proves. The run's facts now go to
stderr; stdout is the document.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collcert.cli import main


@pytest.mark.parametrize("argv", [
    ["fig1:startup=1", "--size", "100"],
    ["fig1", "--compare"],
    ["fig1", "--messages", "5"],
])
def test_broadcast_steady_json_is_the_file(tmp_path: Path, argv: list[str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o.json"
    assert main(["broadcast-steady", *argv, "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["broadcast-steady", *argv, "--json"]) == 0
    got = capsys.readouterr()
    assert json.loads(got.out) == json.loads(out.read_text())
    assert "time:" in got.err
    if "--compare" in argv:
        assert "one broadcast tree" in got.err
    printed = tmp_path / "p.json"
    printed.write_text(got.out)
    assert main(["audit", argv[0], str(printed)]) == 0
    assert capsys.readouterr().out.startswith("VALID")
    assert main(["check", argv[0], str(printed)]) == 0
    assert capsys.readouterr().out.startswith("OK")


def test_schedule_summary_given_to_audit_says_what_it_is(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary, sched = tmp_path / "sum.json", tmp_path / "s.json"
    assert main(["schedule", "ring:4", "--json", "-o", str(sched)]) == 0
    summary.write_text(capsys.readouterr().out)
    assert main(["audit", "ring:4", str(summary)]) == 2
    assert "the summary 'collcert schedule --json' prints" in capsys.readouterr().err
