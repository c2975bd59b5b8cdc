"""The docs' habits: papers cited by title, links that resolve, and the schedule format's
minimal example, which must be valid and need every key the docs call required."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import collcert
from collcert import platforms

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
        ROOT / "golden" / "README.md", ROOT / "certify" / "README.md"]
GOLDEN = sorted((ROOT / "golden").rglob("*.json"))


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_docs_point_at_nothing_outside_the_repository(doc: Path) -> None:
    text = doc.read_text()
    outside = re.findall(r"\.\./shared|shared/(?:seeds|digests|platforms)|/work/", text)
    assert not outside, f"{doc.name} refers to files outside the repository: {outside}"
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if not target.startswith(("http://", "https://", "mailto:")):
            assert (doc.parent / target).exists(), f"{doc.name}: broken link {target}"


@pytest.mark.parametrize("case", GOLDEN, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_golden_provenance_points_at_nothing_outside_the_repository(case: Path) -> None:
    # provenance must be followable by a reader of the repository: papers, sections, figures
    outside = re.findall(r"\.\./shared|shared/(?:seeds|digests|platforms)|/work/", case.read_text())
    assert not outside, f"{case.name} refers to files outside the repository: {outside}"


def test_every_cited_paper_has_its_title() -> None:
    # the docs cite papers by author and year; docs/README.md is the bibliography
    index = (ROOT / "docs" / "README.md").read_text()
    table = index.split("## The papers", 1)[1]
    cited = set()
    for doc in DOCS:
        cited |= set(re.findall(r"\b((?:Zhao|Legrand|Canon|Zhou)[\w &.]*? (?:19|20)\d\d)\b",
                                doc.read_text()))
    assert cited, "the docs cite no paper at all?"
    for key in cited:
        row = re.search(rf"^\| {re.escape(key)} \| (.+?) \|", table, re.M)
        assert row and "*" in row.group(1), f"{key} has no title in docs/README.md"
    # (golden/README.md quotes the provenance strings of the data, which keep the numbers)
    prose = "".join(d.read_text() for d in DOCS if d.parent.name != "golden")
    assert not re.search(r"\bseed 00\d\b", prose), "a doc still cites a paper by its number"


def _minimal_example() -> dict[str, Any]:
    text = (ROOT / "docs" / "schedule-format.md").read_text()
    section = text.split("## Required keys and a minimal complete schedule", 1)[1]
    block = section.split("```json", 1)[1].split("```", 1)[0]
    doc: dict[str, Any] = json.loads(block)
    return doc


def test_the_minimal_schedule_is_valid_and_optimal() -> None:
    report = collcert.audit(platforms.ring(3), _minimal_example())
    assert report.valid and report.algbw == 3 and report.ratio == 1


REQUIRED = [("top", k) for k in ("format", "collective", "compute_nodes", "phases")] + [
    ("phase", k) for k in ("collective", "k", "trees")] + [
    ("tree", k) for k in ("root", "edges")] + [("edge", k) for k in ("src", "dst")]
LENIENT = [("tree", "multiplicity"), ("tree", "direction"), ("edge", "path")]


def _without(level: str, key: str) -> dict[str, Any]:
    bad = _minimal_example()
    holder = {"top": bad, "phase": bad["phases"][0], "tree": bad["phases"][0]["trees"][0],
              "edge": bad["phases"][0]["trees"][0]["edges"][0]}[level]
    del holder[key]
    return bad


@pytest.mark.parametrize("level,key", REQUIRED, ids=[f"{a}.{b}" for a, b in REQUIRED])
def test_each_required_key_is_needed(level: str, key: str) -> None:
    text = json.dumps(_without(level, key))  # as a file holds it
    try:
        report = collcert.audit(platforms.ring(3), text)
    except collcert.CollcertError:
        return  # refused outright
    assert not report.valid, f"the schedule without {level}.{key} was accepted"


@pytest.mark.parametrize("level,key", LENIENT, ids=[f"{a}.{b}" for a, b in LENIENT])
def test_the_documented_defaults(level: str, key: str) -> None:
    # multiplicity 1, the collective's direction and the direct link are what the
    # example writes, so leaving them out changes nothing
    report = collcert.audit(platforms.ring(3), json.dumps(_without(level, key)))
    assert report.valid and report.algbw == 3
    schema = pytest.importorskip("jsonschema")
    spec = json.loads((ROOT / "docs" / "schema" / "schedule.schema.json").read_text())
    schema.validate(_minimal_example(), spec)
    with pytest.raises(schema.ValidationError):
        schema.validate(_without(level, key), spec)
