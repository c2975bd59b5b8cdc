"""`collcert broadcast-steady --messages N -o FILE` writes a `collcert-series-broadcast/1`
document (Legrand et al. 2003, §5.5) that `collcert check` and `collcert audit` read and
replay; every figure it states is compared, naming the field. The PIPE document
(`--size L -o`) is read by `collcert check` too."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from stated_mutation import accepts, mutated

from collcert.cli import main
from collcert.reference.broadcast import paper_fig1


def _series(tmp_path: Path, n: int = 5) -> dict[str, Any]:
    out = tmp_path / "m.json"
    assert main(["broadcast-steady", "fig1", "--messages", str(n), "-o", str(out)]) == 0
    doc: dict[str, Any] = json.loads(out.read_text())
    return doc


def test_check_and_audit_read_the_series_file(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    doc = _series(tmp_path)
    assert doc["format"] == "collcert-series-broadcast/1" and doc["messages"] == 5
    capsys.readouterr()
    f = str(tmp_path / "m.json")
    assert main(["check", "fig1", f]) == 0
    assert "OK: finite series of broadcasts" in capsys.readouterr().out
    assert main(["audit", "fig1", f]) == 0
    out = capsys.readouterr().out
    assert out.startswith("VALID finite series of broadcasts")
    assert f"makespan {doc['makespan']};" in out  # the replay's, as the file states it
    assert main(["audit", "fig1", f, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "collcert-series-broadcast/1"


def test_check_reads_the_pipe_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "p.json"
    assert main(["broadcast-steady", "fig1", "--size", "9", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["check", "fig1", str(out)]) == 0
    assert "OK: PIPE broadcast" in capsys.readouterr().out


TOP = ("messages", "makespan", "lower_bound", "ratio", "batches", "source", "topology")


@pytest.mark.parametrize("key", TOP)
def test_every_stated_top_level_figure_is_compared(key: str, tmp_path: Path) -> None:
    doc = _series(tmp_path)
    platform = paper_fig1().to_json()
    assert accepts(platform, doc)[0]
    bad = copy.deepcopy(doc)
    bad[key] = mutated(doc[key])
    ok, why = accepts(platform, bad)
    assert not ok and (key in why or "replay" in why), (key, why)


@pytest.mark.parametrize(("path", "value", "word"), [
    (("periods", "steady"), 9, "'periods'"),
    (("compact", "makespan"), "1", "compact"),
    (("compact", "note"), "x", "'compact.note'"),
    (("speedup",), "2", "'speedup'"),
])
def test_nested_and_unknown_fields_fail_naming_them(path: tuple[str, ...], value: Any,
                                                    word: str, tmp_path: Path) -> None:
    doc = _series(tmp_path)
    where: Any = doc
    for p in path[:-1]:
        where = where[p]
    where[path[-1]] = value
    ok, why = accepts(paper_fig1().to_json(), doc)
    assert not ok and word in why, why
