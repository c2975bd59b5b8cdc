"""The schedule format (JSON Schema), the XML writer, and the `schedule` / `draw` commands."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from test_schedule_checker import check_doc

import collcert
from collcert import platforms
from collcert.cli import main
from collcert.reference.forestcoll import expand

SCHEMA = json.loads(
    (Path(__file__).resolve().parent.parent / "docs" / "schema" / "schedule.schema.json")
    .read_text(encoding="utf-8"))


def _validate(doc: Any) -> None:
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)


def test_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("collective,kw", [
    ("allgather", {}), ("reduce-scatter", {}), ("allreduce", {}),
    ("broadcast", {"root": "c1.2"}), ("reduce", {"root": "c2.4"}),
    ("allgather", {"weights": [1, 1, 2, 2, 1, 1, 2, 2]}), ("allgather", {"fixed_k": 2}),
])
def test_emitted_schedules_validate_against_the_schema(collective: str, kw: Any) -> None:
    doc = collcert.schedule(platforms.two_box_example(), collective, **kw).to_json()
    _validate(doc)
    _validate(json.loads(json.dumps(doc)))  # and after a JSON round trip


def test_schema_rejects_malformed_documents() -> None:
    doc = collcert.schedule(platforms.two_box_example()).to_json(certificates=False)
    for breakage in (
        lambda d: d.update(format="collcert-schedule/2"),
        lambda d: d["phases"][0]["trees"][0].update(multiplicity=0),
        lambda d: d["phases"][0]["trees"][0].update(direction="up"),
        lambda d: d["phases"][0].update(U=0.5),
        lambda d: d["phases"][0]["trees"][0]["edges"][0].update(path=["c1.1"]),
    ):
        bad = json.loads(json.dumps(doc))
        breakage(bad)
        with pytest.raises(jsonschema.ValidationError):
            _validate(bad)


def test_cli_schedule_writes_a_valid_optimal_schedule(tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "s.json"
    assert main(["schedule", "dgx_a100:2", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "1040/3" in text and "k = 13" in text and "max height" in text
    doc = json.loads(out.read_text())
    _validate(doc)
    assert "walks" in doc["phases"][0]  # files hold compact trees (docs/schedule-format.md)
    check_doc(expand(doc), platforms.dgx_a100(2), Fraction(3, 1040))


def test_cli_schedule_json_summary_and_xml(tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "s.xml"
    assert main(["schedule", "mi250:2", "--fixed-k", "1", "--format", "forestcoll-xml",
                 "-o", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["algbw"] == "320" and summary["optimal"] is True
    root = ET.parse(out).getroot()
    assert root.tag == "algo" and len(root.findall("tree")) == summary["trees"]


def test_cli_schedule_bad_input_exit_code_2(capsys: Any) -> None:
    assert main(["schedule", "two_box_example", "-c", "broadcast", "--root", "w1"]) == 2
    assert "not a compute node" in capsys.readouterr().err
    assert main(["schedule", "no_such_platform:3"]) == 2
    assert main(["schedule", "two_box_example", "--fixed-k", "0"]) == 2


def test_cli_schedule_unwritable_output_exit_code_2(tmp_path: Path, capsys: Any) -> None:
    missing = tmp_path / "no such folder" / "s.json"
    assert main(["schedule", "ring:4", "-o", str(missing)]) == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and "Traceback" not in err


def test_cli_draw_png_and_svg(tmp_path: Path, capsys: Any) -> None:
    sched = tmp_path / "s.json"
    assert main(["schedule", "two_box_example", "-o", str(sched)]) == 0
    png, svg = tmp_path / "t.png", tmp_path / "t.svg"
    assert main(["draw", "two_box_example", str(sched), "-o", str(png), "--tree", "3"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["draw", "two_box_example", "-o", str(svg)]) == 0
    assert "<svg" in svg.read_text()
    capsys.readouterr()
    assert main(["draw", "two_box_example", str(sched), "-o", str(png), "--tree", "99"]) == 2
    assert "trees 0..7" in capsys.readouterr().err
    assert main(["draw", "two_box_example", "-o", str(tmp_path / "t.gif")]) == 2
