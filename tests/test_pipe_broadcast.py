"""A finite series of broadcasts and PIPE (Legrand et al. 2003, §5.5, §6, Thm 8): start-ups
in platform files, exact makespans against the independent replay (certify.broadcast.pipe)
and against Z3's optimum on tiny platforms, Thm 8's ratio, bad input."""

from __future__ import annotations

import copy
import json
import math
import random
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collcert.certify.broadcast.pipe import check_pipe, check_series
from collcert.cli import main
from collcert.fuzz.pipe_brute import optimal_makespan
from collcert.reference.broadcast import OnePortPlatform, paper_fig1, random_platform
from collcert.reference.broadcast.pipe import (
    finite_series,
    paper_packets,
    pipe_broadcast,
    pipe_run,
)
from collcert.reference.broadcast.steady import steady_broadcast
from collcert.reference.model import TopologyError


def with_startup(p: OnePortPlatform, beta: object, seed: int | None = None) -> OnePortPlatform:
    d = p.to_json()
    rng = random.Random(seed)
    for link in d["links"]:
        link["startup"] = str(beta if seed is None else rng.choice([0, 1, "1/2", 3]))
    return OnePortPlatform.from_json(d)


# ----------------------------------------------------------------- platform files
def test_startup_is_read_written_and_validated() -> None:
    p = with_startup(paper_fig1(), "3/2")
    assert set(p.startup.values()) == {Fraction(3, 2)}
    assert OnePortPlatform.from_json(p.to_json()).startup == p.startup
    assert p.content_hash() == paper_fig1().content_hash()  # β plays no part in §5
    q = p.packet_platform(4)
    assert q.cost[("s", "1")] == Fraction(3, 2) + 4 and not q.startup
    d = p.to_json()
    for bad, match in (("-1", "cannot be negative"), ("nan", "not a finite"),
                       ("x", "not a number")):
        d["links"][2]["startup"] = bad
        with pytest.raises(TopologyError, match=f"links\\[2\\].*{match}"):
            OnePortPlatform.from_json(d)


def test_paper_packet_count() -> None:
    for L in (1, 2, 4, 5, 99, 100, 101, Fraction(1, 3), Fraction(17, 4)):
        nu = paper_packets(Fraction(L))
        assert (nu - 1) ** 2 < L <= nu * nu


# ----------------------------------------------------------------- exact makespans
@settings(max_examples=12, deadline=None, derandomize=True)
@given(st.integers(3, 7), st.integers(0, 50), st.integers(1, 40))
def test_series_makespan_equals_the_replay(nodes: int, seed: int, n: int) -> None:
    p = random_platform(nodes, seed, 2)
    run = finite_series(p, "p0", n)
    compact = run.compact_json(n * run.steady.T_star)
    v = check_series(p.to_json(), run.steady.to_json(), n, run.makespan, compact)
    assert v.ok, v.all_reasons()
    assert run.compacted is not None and run.compacted[1] <= run.makespan
    assert run.makespan >= n * run.steady.T_star  # Lemma 7
    assert sum(run.phases().values()) == run.periods


@settings(max_examples=10, deadline=None, derandomize=True)
@given(st.integers(3, 6), st.integers(0, 50), st.integers(1, 300))
def test_pipe_makespans_equal_the_replay(nodes: int, seed: int, size: int) -> None:
    p = with_startup(random_platform(nodes, seed, 2), 0, seed)
    res = pipe_broadcast(p, "p0", size)
    v = check_pipe(p.to_json(), json.loads(json.dumps(res.to_json())))
    assert v.ok, v.all_reasons()
    assert res.lower_bound <= res.best.makespan <= res.paper.makespan


def test_replay_refuses_wrong_documents() -> None:
    p = with_startup(paper_fig1(), 1)
    doc = pipe_broadcast(p, "s", 50).to_json()
    assert check_pipe(p.to_json(), doc).ok
    for path, value in ((("paper", "makespan"), "1"), (("best", "ratio"), "1"),
                        (("paper", "packets"), 7), (("best", "packets"), 1),
                        (("lower_bound",), "49")):
        bad = copy.deepcopy(doc)
        target = bad
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        assert not check_pipe(p.to_json(), bad).ok, path
    bad = copy.deepcopy(doc)  # a compacted transfer moved earlier than its packet arrives
    bad["paper"]["compact"]["transfers"][-1][3] = "0"
    assert not check_pipe(p.to_json(), bad).ok
    bad = copy.deepcopy(doc)
    bad["best"]["compact"]["makespan"] = "1"
    assert not check_pipe(p.to_json(), bad).ok
    bad = copy.deepcopy(doc)  # two transfers of a step made to collide: one-port broken
    step = bad["schedule"]["steps"][0]
    step["transfers"][0]["src"], step["transfers"][0]["dst"] = "1", "3"
    assert not check_pipe(p.to_json(), bad).ok
    wrong = with_startup(paper_fig1(), 2)  # the same document against other start-ups
    assert not check_pipe(wrong.to_json(), doc).ok


# ----------------------------------------------------------------- Z3 brackets
@pytest.mark.parametrize("n", [1, 2, 3])
def test_series_is_bracketed_by_the_z3_optimum(n: int) -> None:
    p = paper_fig1()
    run = finite_series(p, "s", n)
    z = optimal_makespan(p.to_json(), "s", n)
    assert run.compacted is not None
    assert n * run.steady.T_star <= z <= run.compacted[1] <= run.makespan


@pytest.mark.parametrize("packets, size", [(1, 4), (2, 2), (2, 3)])
def test_pipe_is_bracketed_by_the_z3_optimum(packets: int, size: int) -> None:
    p = with_startup(paper_fig1(), 1)
    unit = steady_broadcast(p, "s")
    run = pipe_run(unit, packets, Fraction(size)).compacted()
    z = optimal_makespan(p.to_json(), "s", packets, Fraction(size))
    assert run.run.compacted is not None
    assert packets * size * unit.T_star <= z <= run.run.compacted[1] <= run.makespan


@settings(max_examples=6, deadline=None, derandomize=True)
@given(st.integers(3, 4), st.integers(0, 99), st.integers(1, 2), st.sampled_from([1, 2, 3]))
def test_random_tiny_platforms_are_bracketed_by_z3(nodes: int, seed: int, packets: int,
                                                   size: int) -> None:
    p = with_startup(random_platform(nodes, seed, 2), 0, seed)
    unit = steady_broadcast(p, "p0")
    run = pipe_run(unit, packets, Fraction(size))
    z = optimal_makespan(p.to_json(), "p0", packets, Fraction(size))
    assert packets * size * unit.T_star <= z <= run.makespan


def test_z3_optimum_on_a_chain_is_the_pipeline() -> None:
    """s → a → b, cost 1, start-up 1: p packets of size q take (p + 1)(1 + q)."""
    d = {"format": "collcert-topology/1", "port_model": "one-port",
         "compute_nodes": ["s", "a", "b"],
         "links": [{"src": "s", "dst": "a", "cost": 1, "startup": 1},
                   {"src": "a", "dst": "b", "cost": 1, "startup": 1}]}
    for packets, size in ((1, 6), (2, 3), (3, 2)):
        want = (packets + 1) * (1 + size)
        assert optimal_makespan(d, "s", packets, Fraction(size)) == want
        unit = steady_broadcast(OnePortPlatform.from_json(d), "s")
        assert pipe_run(unit, packets, Fraction(size)).makespan >= want


# ----------------------------------------------------------------- Thm 8
def test_thm8_ratio_tends_to_one_like_one_over_sqrt_l() -> None:
    p = with_startup(paper_fig1(), 1)
    gaps = []
    for L in (10**2, 10**4, 10**6, 10**8):
        res = pipe_broadcast(p, "s", L, search=False)
        ratio = res.paper.makespan / res.lower_bound
        assert ratio >= 1
        gaps.append((ratio - 1) * math.isqrt(L))
    assert all(g > 0 for g in gaps) and max(gaps) <= 2 * min(gaps)  # Θ(1/√L)


# ----------------------------------------------------------------- command line
def test_command_line(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["broadcast-steady", "fig1", "--size", "20", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["format"] == "collcert-pipe-broadcast/1" and Fraction(out["lower_bound"]) == 20
    assert Fraction(out["best"]["ratio"]) <= Fraction(out["paper"]["ratio"])
    assert main(["broadcast-steady", "fig1", "--messages", "5"]) == 0
    assert "makespan" in capsys.readouterr().out
    for bad in (["--size", "0"], ["--size", "-2"], ["--size", "x"], ["--messages", "0"],
                ["--packets", "3"], ["--size", "4", "--dag"], ["--size", "5", "--packets", "0"]):
        assert main(["broadcast-steady", "fig1", *bad]) == 2, bad
        assert "error" in capsys.readouterr().err


# ----------------------------------------------------------------- golden cases
GOLDEN = sorted((Path(__file__).resolve().parents[1] / "golden" / "steady-broadcast" / "pipe")
                .glob("*.json"))


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_reference_reproduces_the_golden_pipe_cases(path: Path) -> None:
    case = json.loads(path.read_text())
    res = pipe_broadcast(OnePortPlatform.from_json(case["platform"]), case["source"],
                         case["size"])
    exp = case["expected"]
    assert res.lower_bound == Fraction(exp["lower_bound"])
    for name, run in (("paper", res.paper), ("best", res.best)):
        assert (run.packets, run.makespan) == (exp[name]["packets"],
                                               Fraction(exp[name]["makespan"]))
    assert check_pipe(case["platform"], case["document"]).ok


def test_golden_pipe_checker_passes_and_can_fail(tmp_path: Path) -> None:
    script = GOLDEN[0].parents[2] / "check_pipe_broadcast.py"
    ok = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                        timeout=120)
    assert ok.returncode == 0 and len(GOLDEN) >= 3, ok.stdout + ok.stderr
    case = json.loads(GOLDEN[0].read_text())
    case["expected"]["paper"]["makespan"] = "15"
    case["document"]["schedule"]["steps"][0]["start"] = "0"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(case))
    fail = subprocess.run([sys.executable, str(script), str(bad)], capture_output=True,
                          text=True, timeout=120)
    assert fail.returncode == 1 and "expected" in fail.stdout


def test_audit_replays_a_pipe_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plat, doc = tmp_path / "plat.json", tmp_path / "pipe.json"
    plat.write_text(json.dumps(with_startup(paper_fig1(), 1).to_json()))
    assert main(["broadcast-steady", str(plat), "--size", "30", "-o", str(doc)]) == 0
    capsys.readouterr()
    assert main(["audit", str(plat), str(doc), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["valid"] and out["format"] == "collcert-pipe-broadcast/1"
    bad = json.loads(doc.read_text())
    bad["best"]["makespan"] = "1"
    doc.write_text(json.dumps(bad))
    assert main(["audit", str(plat), str(doc)]) == 1
    assert "the replay ends at" in capsys.readouterr().out
