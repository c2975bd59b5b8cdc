"""``collcert broadcast-steady`` and its audit / draw hooks, as a user runs them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from collcert.cli import main
from collcert.reference.broadcast import OnePortPlatform

ROOT = Path(__file__).resolve().parent.parent


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_fig1_text_shows_the_gap(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "broadcast-steady", "fig1", "--compare")
    assert code == 0
    assert "throughput TP = 1 message per time unit" in out
    assert "Lemma 7" in out
    assert re.search(r"one broadcast tree.*: 2/3", out) and re.search(r"a DAG.*: 4/5", out)


def test_json_keys_and_exact_strings(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "broadcast-steady", "fig5", "--dag", "--json")
    doc = json.loads(out)
    assert code == 0
    assert (doc["throughput"], doc["period"], doc["messages_per_period"]) == ("4/5", "5", "4")
    assert doc["trees"] == [] and doc["method"] == "dag" and doc["matchings"]
    assert doc["packing"]["q"] == 5


def test_schedule_file_validates_against_the_schema(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    out = tmp_path / "s.json"
    assert run(capsys, "broadcast-steady", "random:9,2", "-o", str(out))[0] == 0
    schema = json.loads((ROOT / "docs/schema/steady-broadcast.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads(out.read_text()))
    topo_schema = json.loads((ROOT / "docs/schema/topology.schema.json").read_text())
    from collcert.reference.broadcast import paper_fig1

    jsonschema.Draft202012Validator(topo_schema).validate(paper_fig1().to_json())
    mixed = paper_fig1().to_json()
    mixed["links"][0] = {"src": "s", "dst": "1", "capacity": "1"}
    assert list(jsonschema.Draft202012Validator(topo_schema).iter_errors(mixed))


def test_docs_example_platform_reads(tmp_path: Path) -> None:
    text = (ROOT / "docs/steady-broadcast.md").read_text()
    block = text.split("```json", 1)[1].split("```", 1)[0]
    p = OnePortPlatform.from_json(block)
    from collcert.reference.broadcast import paper_fig1

    assert p.cost == paper_fig1().cost


def test_write_audit_tamper(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plat = tmp_path / "p.json"
    from collcert.reference.broadcast import random_platform

    random_platform(8, 4).save(plat)
    sched = tmp_path / "s.json"
    assert run(capsys, "broadcast-steady", str(plat), "-s", "p0", "-o", str(sched))[0] == 0
    code, out, _ = run(capsys, "audit", str(plat), str(sched))
    assert code == 0 and out.startswith("VALID") and "measured steady-state throughput" in out
    code, out, _ = run(capsys, "audit", str(plat), str(sched), "--json")
    assert code == 0 and json.loads(out)["valid"] is True
    doc: dict[str, Any] = json.loads(sched.read_text())
    doc["throughput"] = str(Fraction(doc["throughput"]) * 2)
    sched.write_text(json.dumps(doc))
    code, out, _ = run(capsys, "audit", str(plat), str(sched))
    assert code == 1 and out.startswith("INVALID") and "1/T*" in out


@pytest.mark.parametrize("argv, words", [
    (["fig1", "-s", "nowhere"], "not a node of the platform"),
    (["fig1", "--dag"], "cycle"),
    (["nosuch"], "neither a platform file nor a built-in"),
    (["missing.json"], "no such file"),
])
def test_bad_input_exits_2(argv: list[str], words: str,
                           capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "broadcast-steady", *argv)
    assert code == 2 and words in err and "Traceback" not in err


def test_bad_costs_from_a_file_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for cost in ("0", "-1", "NaN", "Infinity", '"inf"'):
        path = tmp_path / "bad.json"
        path.write_text('{"port_model": "one-port", "compute_nodes": ["s", "a"],\n'
                        f' "links": [{{"src": "s", "dst": "a", "cost": {cost}}}]}}')
        code, _, err = run(capsys, "broadcast-steady", str(path))
        assert code == 2 and "links[0] (line 2)" in err, (cost, err)


def test_unreachable_nodes_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "u.json"
    path.write_text(json.dumps({"port_model": "one-port", "compute_nodes": ["s", "a", "b"],
                                "links": [["s", "a", 1], ["b", "a", 1]]}))
    code, _, err = run(capsys, "broadcast-steady", str(path))
    assert code == 2 and "'b'" in err and "throughput is 0" in err


def test_optimum_on_a_one_port_file_points_here(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from collcert.reference.broadcast import paper_fig1

    path = tmp_path / "p.json"
    paper_fig1().save(path)
    code, _, err = run(capsys, "optimum", str(path))
    assert code == 2 and "collcert broadcast-steady" in err


def test_draw_makes_a_picture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    sched = tmp_path / "s.json"
    assert run(capsys, "broadcast-steady", "fig1", "-o", str(sched))[0] == 0
    png = tmp_path / "p.png"
    code, out, _ = run(capsys, "draw", "fig1", str(sched), "-o", str(png))
    assert code == 0 and png.read_bytes()[:4] == b"\x89PNG"
    doc = json.loads(sched.read_text())
    doc["steps"][0]["transfers"][0]["blocks"][0]["lag"] = 5  # no longer valid: refused
    sched.write_text(json.dumps(doc))
    code, _, err = run(capsys, "draw", "fig1", str(sched), "-o", str(png))
    assert code == 2 and "INVALID" in err


def test_golden_checker_passes_and_can_fail(tmp_path: Path) -> None:
    script = ROOT / "golden" / "check_steady_broadcast.py"
    ok = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    case = json.loads((ROOT / "golden/steady-broadcast/fig1.json").read_text())
    case["expected"]["best_tree"]["throughput"] = "3/4"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(case))
    fail = subprocess.run([sys.executable, str(script), str(bad)], capture_output=True, text=True)
    assert fail.returncode == 1 and "best tree" in fail.stdout


@pytest.mark.parametrize("name", ["fig1", "fig5"])
def test_reference_reproduces_golden(name: str) -> None:
    from collcert.reference.broadcast import best_tree, solve_ssbpdag, steady_broadcast

    case = json.loads((ROOT / f"golden/steady-broadcast/{name}.json").read_text())
    p = OnePortPlatform.from_json(case["topology"])
    exp = case["expected"]
    res = steady_broadcast(p, case["source"])
    assert res.T_star == Fraction(exp["T_star"])
    if "ssb_n" in exp:
        assert {e: c for e, c in res.solution.n.items() if c} == {
            (u, v): Fraction(x) for u, v, x in exp["ssb_n"]}
        assert best_tree(p, case["source"])[0] == Fraction(exp["best_tree"]["throughput"])
    else:
        dag = solve_ssbpdag(p, case["source"])
        assert {e: r * exp["dag_q"] for e, r in dag.stats["rate_n"].items()} == {
            (u, v): Fraction(x) for u, v, x in exp["dag_q_n"]}
