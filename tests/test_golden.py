"""Run every golden case (golden/cases/*.json, format in golden/README.md) through collcert.

Also validates every golden topology and every platform builder's JSON
against docs/schema/topology.schema.json with the ``jsonschema`` package
(draft 2020-12).
"""

from __future__ import annotations

import importlib.util
import json
import math
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from collcert import Topology, TopologyError, optimum, platforms

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted((ROOT / "golden" / "cases").glob("*.json"))
SCHEMA_PATH = ROOT / "docs" / "schema" / "topology.schema.json"


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"), parse_float=Decimal)
    return data


def exact(text: str) -> Fraction:
    assert isinstance(text, str), f"exact values are strings, got {text!r}"
    return Fraction(text)


def test_cases_present() -> None:
    names = {p.stem for p in CASES}
    for needed in ("two_box_example-allgather", "two_box_example-broadcast",
                   "dgx_a100-2box-allgather", "dgx_a100-2box-fixed-k1", "mi250-2box-allgather",
                   *(f"mi250-2box-fixed-k{k}" for k in range(1, 6))):
        assert needed in names


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden_case(path: Path) -> None:
    case = load(path)
    assert case["format"] == "collcert-golden/1"
    assert case["id"] == path.stem
    assert case["provenance"], "every case needs a provenance"
    t = Topology.from_json(case["topology"])
    q, exp = case["query"], case["expected"]
    opt = optimum(t, q["collective"], root=q.get("root"), fixed_k=q.get("fixed_k"))
    assert opt.algbw == exact(exp["algbw"])
    assert opt.time_per_unit == exact(exp["time_per_unit"])
    if "inv_x" in exp:
        assert opt.inv_x == exact(exp["inv_x"])
    if "k" in exp:
        assert opt.k == exp["k"]
    if "U" in exp:
        assert opt.U == exact(exp["U"])
    if q.get("fixed_k") is not None:
        assert opt.fixed_k == q["fixed_k"]
        assert opt.extra["thm15_holds"] is True
    if "cuts" in exp:
        allowed = {frozenset(c) for c in exp["cuts"]}
        assert opt.cut in allowed
    # the witness cut proves the value, whatever cut the implementation picked
    assert opt.cut is not None
    out = t.out_capacity(opt.cut)
    inside = sum(1 for v in opt.cut if t.is_compute(v))
    if q["collective"] in ("broadcast", "reduce"):
        assert out == exact(exp["cut_capacity"]) == opt.algbw
    elif q.get("fixed_k") is None:
        assert Fraction(inside) / out == opt.inv_x
    if "allreduce" in exp:
        for key, value in exp["allreduce"].items():
            got = opt.extra[key]
            if isinstance(value, str) and "/" in value or key.endswith("per_unit"):
                assert got == exact(value), key
            else:
                assert got == value, key
    paper = case.get("paper")
    if paper:
        digits = paper["decimals"]
        rounded = Fraction(math.floor(opt.algbw * 10**digits + Fraction(1, 2)), 10**digits)
        assert rounded == exact(paper["algbw"])


def _checker() -> Any:
    spec = importlib.util.spec_from_file_location("check_golden",
                                                  ROOT / "golden" / "check_golden.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_stdlib_checker_passes_small_cases() -> None:
    """golden/check_golden.py (no collcert) agrees, enumerating cuts up to 12 nodes."""
    mod = _checker()
    for path in CASES:
        assert mod.check_case(path, 12) == [], path.name


def test_stdlib_checker_can_fail(tmp_path: Path) -> None:
    mod = _checker()
    case = load(ROOT / "golden" / "cases" / "dgx1-allgather.json")
    case["expected"]["inv_x"] = "8/7"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(case, default=str))
    errors = mod.check_case(bad, 12)
    assert any("enumeration gives 1/x* = 7/6" in e for e in errors)


# --------------------------------------------------------------------------- #
# JSON Schema of collcert-topology/1
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def validator() -> Any:
    # jsonschema is a test dependency (pyproject [test] extra); without it only the
    # schema tests are skipped, the golden cases above still run
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_schema_accepts_golden_topologies(path: Path,
                                          validator: Any) -> None:
    validator.validate(json.loads(path.read_text(encoding="utf-8"))["topology"])


@pytest.mark.parametrize(
    "build",
    [lambda: platforms.dgx_a100(1), lambda: platforms.dgx_a100(3), lambda: platforms.dgx_h100(2),
     lambda: platforms.mi250(2), lambda: platforms.mi250(2, 8), lambda: platforms.dgx1(),
     lambda: platforms.dgx1("25/2"), lambda: platforms.two_box_example(),
     lambda: platforms.ring(5), lambda: platforms.complete(4), lambda: platforms.hypercube(3),
     lambda: platforms.torus((2, 3)), lambda: platforms.fat_tree(4),
     lambda: Topology(["a", "b"], [("a", "w", "1/3"), ("w", "a", "1/3"), ("b", "w", "1/3"),
                                   ("w", "b", "1/3")], ["w"], multicast_switches=["w"])],
)
def test_schema_accepts_platforms(build: Any, validator: Any) -> None:
    validator.validate(build().to_json())


@pytest.mark.parametrize(
    "doc",
    [
        {"compute_nodes": ["a", "b"]},  # no links
        {"links": []},  # no compute nodes
        {"compute_nodes": ["a", "b"], "links": [{"src": "a", "dst": "b"}]},
        {"compute_nodes": ["a", "b"], "links": [{"src": "a", "dst": "b", "capacity": "-1"}]},
        {"compute_nodes": ["a", "b"], "links": [{"src": "a", "dst": "b", "capacity": "0"}]},
        {"compute_nodes": ["a", "b"], "links": [{"src": "a", "dst": "b", "capacity": "1/0"}]},
        {"compute_nodes": ["a", "b"], "links": [{"src": "a", "dst": "b", "capacity": "abc"}]},
        {"compute_nodes": ["a", "b"], "links": [{"src": "a", "dst": "b", "capacity": 0}]},
        {"compute_nodes": ["a", 1.5], "links": []},
        {"compute_nodes": ["a", True], "links": []},
        {"compute_nodes": ["a", "a"], "links": []},
        {"format": "collcert-topology/2", "compute_nodes": ["a", "b"], "links": []},
        {"compute_nodes": ["a", "b"], "links": [], "extra": 1},
        {"compute_nodes": ["a", "b"],
         "links": [{"src": "a", "dst": "b", "capacity": "1", "latency": 1}]},
    ],
)
def test_schema_rejects(doc: dict[str, Any], validator: Any) -> None:
    assert not validator.is_valid(doc)


def test_docs_example_is_valid(validator: Any) -> None:
    text = (ROOT / "docs" / "topology.md").read_text(encoding="utf-8")
    block = text.split("```json\n", 1)[1].split("```", 1)[0]
    doc = json.loads(block)
    validator.validate(doc)
    t = Topology.from_json(doc)
    assert t.capacity[("gpu0", "sw")] == Fraction(25, 2)
    assert t.capacity[("gpu1", "gpu0")] == Fraction(3, 4)


@pytest.mark.parametrize(
    "text",
    ["300", "12.5", "0.5", ".5", "5.", "1e3", "1.25E-2", "+7", "3/4", "3 / 4", "007/010",
     str(2**100), "0", "0.0", "0e5", "-1", "1/0", "0/3", "abc", "1/2/3", "", " 1", "nan",
     "inf", "1e", "/4"],
)
def test_schema_capacity_agrees_with_reader(text: str,
                                            validator: Any) -> None:
    """A capacity string the schema accepts is one collcert reads as a positive number."""
    doc = {"compute_nodes": ["a", "b"], "links": [
        {"src": "a", "dst": "b", "capacity": text, "bidirectional": True}]}
    if validator.is_valid(doc):
        t = Topology.from_json(doc)
        assert t.capacity[("a", "b")] > 0
    else:
        try:
            t = Topology.from_json(doc)
        except TopologyError:  # rejected by both: consistent (any other error is a crash)
            return
        # collcert is allowed to be more lenient only with surrounding spaces
        assert text != text.strip(), f"collcert accepts {text!r} but the schema rejects it"
