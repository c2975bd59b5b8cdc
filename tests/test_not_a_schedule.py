"""A JSON file with no 'format' field given where a schedule is wanted: `smoke` and
`audit` say it is not a schedule, exit 2 (issue 24 row 11: plain words, not
"schedule format None" or "the topology needs at least two compute nodes")."""

from __future__ import annotations

from pathlib import Path

import pytest

from collcert.cli import main


@pytest.mark.parametrize("text", ["{}", "[]", '{"phases": []}'])
@pytest.mark.parametrize("command", ["smoke", "audit"])
def test_json_without_format_is_not_a_schedule(text: str, command: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch") if command == "smoke" else None
    f = tmp_path / "e.json"
    f.write_text(text)
    args = ["smoke", str(f), "--backend", "gloo"] if command == "smoke" else [
        "audit", "ring:4", str(f)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{f}: " in err and "not a schedule: " in err
    assert "None" not in err and "compute nodes" not in err
