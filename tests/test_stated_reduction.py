"""Issue 22 item 5 for reduction schedules: every stated figure and structural element of a
`collcert reduce-tree -o` file, changed, is refused naming the field."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from collcert.certify.reduction import check_reduction
from collcert.cli import main

PROBLEMS = [["7", "-d", "1", "-c", "1"], ["9", "-d", "2", "-c", "1", "--max-transfers", "2"],
            ["9", "-d", "1", "-c", "2", "--max-reducers", "3"],
            ["6", "-d", "1", "-c", "2", "--non-overlapping"]]


def _doc(tmp_path: Path, args: list[str]) -> dict[str, Any]:
    out = tmp_path / "r.json"
    assert main(["reduce-tree", *args, "-o", str(out)]) == 0
    return dict(json.loads(out.read_text()))


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    try:
        return str(Fraction(value) + 1)
    except (TypeError, ValueError):
        return f"{value}x"


def _refused(doc: dict[str, Any], field: str) -> None:
    verdict, _ = check_reduction(doc)
    assert not verdict.ok, f"{field} changed and accepted"
    assert any(field in r for r in verdict.all_reasons()), (field, verdict.all_reasons())


@pytest.mark.parametrize("args", PROBLEMS, ids=lambda a: "_".join(a))
def test_every_stated_figure_is_compared(tmp_path: Path, args: list[str]) -> None:
    doc = _doc(tmp_path, args)
    verdict, _ = check_reduction(doc)
    assert verdict.ok, verdict.all_reasons()
    for key in ("makespan", "lower_bound", "upper_bound", "sink"):
        _refused(dict(doc, **{key: _changed(doc[key])}), key if key != "makespan" else
                 "makespan")
    for key in doc["tree"]:
        _refused(dict(doc, tree=dict(doc["tree"], **{key: _changed(doc["tree"][key])})),
                 f"tree.{key}")
    for i, bound in enumerate(doc["bounds"]):
        for key in ("kind", "value", "formula", "name"):
            bad = copy.deepcopy(doc)
            bad["bounds"][i][key] = _changed(bound[key])
            _refused(bad, "bounds")
        bad = copy.deepcopy(doc)
        del bad["bounds"][i]  # a bound of the problem left out
        _refused(bad, "bounds")
    for key, value in doc["check"]["facts"].items():
        bad = copy.deepcopy(doc)
        bad["check"]["facts"][key] = _changed(value)
        _refused(bad, f"check.facts.{key}")
    _refused(dict(doc, check=dict(doc["check"], ok=False)), "check")
    _refused(dict(doc, strategy="best"), "strategy")
    for where in (doc, doc["tree"], doc["check"]):  # an unknown field anywhere
        bad = copy.deepcopy(doc)
        target = bad if where is doc else bad["tree"] if where is doc["tree"] else bad["check"]
        target["speedup"] = "2"
        _refused(bad, "speedup")


def test_a_changed_limit_changes_the_bounds(tmp_path: Path) -> None:
    """max_transfers 2 → 3: the schedule still keeps to 3 transfers, but the bounds it states
    are those of K = 2."""
    doc = _doc(tmp_path, PROBLEMS[1])
    _refused(dict(doc, max_transfers=3), "bound")
