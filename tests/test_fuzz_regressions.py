"""Replay every saved regression under golden/regressions/: the property must hold now.

Descriptions starting with "[open] " are known, unfixed failures (xfail, not strict).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collcert import Topology
from collcert.fuzz import properties as props

FOLDER = Path(__file__).resolve().parent.parent / "golden" / "regressions"
CASES = sorted(FOLDER.glob("*.json")) if FOLDER.is_dir() else []


def _property_of(description: str) -> tuple[str | None, bool]:
    is_open = description.startswith("[open] ")
    head = description.removeprefix("[open] ").split(":", 1)[0].strip()
    return (head if head in props.PROPERTIES else None), is_open


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_saved_regression_holds(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    topo = Topology.from_json(str(path))
    name, is_open = _property_of(data.get("description", ""))
    if name is None:
        pytest.skip(f"{path.name} records a differential-run failure, not a property")
    message = props.check(name, topo)
    if is_open and message is not None:
        pytest.xfail(f"known open: {message}")
    assert message is None, f"{path.name}: {message}"


def test_every_saved_case_is_listed_in_the_readme() -> None:
    readme = (FOLDER / "README.md").read_text(encoding="utf-8")
    for path in CASES:
        assert f"`{path.name}`" in readme
