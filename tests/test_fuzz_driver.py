"""The differential driver `collcert fuzz run`, tested with a toy external generator.

The toy (written to a folder whose name contains a space, to exercise quoting) reads
the topology JSON with plain json and writes a collcert-schedule/1 allgather schedule:
one BFS out-tree per root (valid, usually not optimal). Flags inject bugs: a tree that
misses a compute node when N >= 4, a crash on capacities beyond int64, a hang.

The toy's output is judged by a small independent auditor written here (spanning trees,
walks in G, link loads -> algbw), so the driver is tested without collcert.audit; two
tests run the driver with the real collcert.audit too.
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from types import SimpleNamespace

import pytest
from conftest import TOY

from collcert import Topology, platforms
from collcert.cli import main
from collcert.fuzz import driver
from collcert.fuzz.generators import case_seed, generate


def toy_auditor(topology: Topology, path: str, fmt: str) -> SimpleNamespace:
    """An independent judge of collcert-schedule/1 allgather schedules (k = 1 per tree set)."""
    assert fmt == "json"
    data = json.load(open(path, encoding="utf-8"))
    reasons = []
    by_text = {str(v): v for v in topology.nodes}
    load: dict[tuple[object, object], Fraction] = {}
    n = topology.num_compute
    phase = data["phases"][0]
    k = phase["k"]
    for tree in phase["trees"]:
        root = by_text[str(tree["root"])]
        share = Fraction(tree["multiplicity"], k * n)
        reached = {root}
        for e in tree["edges"]:
            path = [by_text[str(x)] for x in e["path"]]
            for a, b in zip(path, path[1:]):
                if (a, b) not in topology.capacity:
                    reasons.append(f"tree of {root}: {a} -> {b} is not a link")
                load[(a, b)] = load.get((a, b), Fraction(0)) + share
            if any(topology.is_compute(x) for x in path[1:-1]):
                reasons.append(f"tree of {root}: path {path} passes a compute node")
            reached.add(path[-1])
        missing = [c for c in topology.compute_nodes if c not in reached]
        if missing:
            reasons.append(f"tree of {root} does not reach {missing}")
    time = max((lo / topology.capacity[e] for e, lo in load.items()
                if e in topology.capacity), default=Fraction(0))
    algbw = 1 / time if time else None
    return SimpleNamespace(valid=not reasons, reasons=reasons, algbw=algbw,
                           collective=data.get("collective"))


@pytest.fixture()
def toy(tmp_path):
    folder = tmp_path / "my generator"
    folder.mkdir()
    script = folder / "toy impl.py"
    script.write_text(TOY)

    def command(bug: str = "none") -> str:
        return f"{json.dumps(sys.executable)} {json.dumps(str(script))} {{topology}} {{schedule}} {bug}"

    return command


@pytest.fixture()
def fake_audit(monkeypatch):
    monkeypatch.setattr(driver, "default_auditor", lambda: toy_auditor)


def _cases(count: int, seed: int = 1, max_nodes: int = 7) -> list[tuple[str, Topology]]:
    return [(case_seed(seed, i), generate(case_seed(seed, i), max_nodes=max_nodes))
            for i in range(count)]


def test_correct_impl_is_valid_and_bounded_by_the_optimum(toy) -> None:
    results = driver.campaign(toy(), _cases(8), auditor=toy_auditor, timeout=30)
    assert [r.status for r in results] == ["valid"] * 8
    for r in results:
        assert r.algbw is not None and r.ratio is not None
        assert 0 < r.ratio <= 1  # no valid schedule beats the certified optimum
    # the toy's BFS trees on a ring are the optimal ring schedule
    ring = driver.run_case(toy(), platforms.ring(5), auditor=toy_auditor, timeout=30)
    assert ring.status == "valid"


def test_invalid_cases_are_shrunk_and_saved_with_a_reproducer(toy, tmp_path) -> None:
    save = tmp_path / "failures dir"
    cases = [c for c in _cases(12, seed=2, max_nodes=8) if c[1].num_compute >= 5][:2]
    assert cases
    results = driver.campaign(toy("missing-node"), cases, auditor=toy_auditor, timeout=30,
                              save_dir=save)
    for r in results:
        assert r.status == "invalid"
        assert any("does not reach" in reason for reason in r.reasons)
        assert r.shrunk is not None and r.shrunk.num_compute == 4  # the bug needs N >= 4
        assert r.saved is not None and r.saved.parent == save
        assert "--replay" in r.reproduce and "missing-node" in r.reproduce
        assert Topology.from_json(str(r.saved)) == r.shrunk
    assert "impl-invalid" in (save / "README.md").read_text()


def test_crash_and_missing_output_are_failures(toy) -> None:
    big = next(t for s, t in _cases(40, seed=3, max_nodes=6)
               if max(t.int_capacity.values()) > 2**62)
    res = driver.run_case(toy("crash-big"), big, auditor=toy_auditor, timeout=30)
    assert res.status == "crash"
    assert any("int64" in r for r in res.reasons)
    res = driver.run_case(toy("no-output"), platforms.ring(3), auditor=toy_auditor, timeout=30)
    assert res.status == "crash" and "wrote no schedule" in res.reasons[0]


def test_hanging_impl_is_killed(toy) -> None:
    res = driver.run_case(toy("hang"), platforms.ring(6), auditor=toy_auditor, timeout=1.5)
    assert res.status == "timeout"
    assert res.seconds < 20


def test_paths_are_shell_quoted() -> None:
    cmd = driver.substitute("x {topology} {schedule}", topology="/a b/t;rm -rf x.json",
                            schedule="/c'd/s.json")
    assert cmd == "x '/a b/t;rm -rf x.json' '/c'\"'\"'d/s.json'"


def test_cli_run_reports_and_exits(toy, fake_audit, tmp_path, capsys) -> None:
    rc = main(["fuzz", "run", "--impl", toy(), "--count", "4", "--seed", "1", "--max-nodes",
               "6", "--save-dir", str(tmp_path / "f"), "--progress"])
    out, err = capsys.readouterr()
    assert rc == 0, out + err
    assert out.count("VALID") == 4 and "ratio" in out and "4 cases: 4 valid" in out
    assert "fuzz run [" in err and "0 failed" in err  # the progress bar

    rc = main(["fuzz", "run", "--impl", toy("missing-node"), "--count", "6", "--seed", "2",
               "--max-nodes", "8", "--switches", "--save-dir", str(tmp_path / "g"), "--json"])
    out, _ = capsys.readouterr()
    report = json.loads(out)
    assert rc == 1 and report["failed"] >= 1 and not report["ok"]
    bad = [c for c in report["cases"] if c["status"] == "invalid"]
    assert bad and all(c["saved"] and c["reproduce"] for c in bad)

    # the saved reproducer replays the failure
    saved = bad[0]["saved"]
    rc = main(["fuzz", "run", "--impl", toy("missing-node"), "--replay", saved, "--no-shrink",
               "--save-dir", str(tmp_path / "h")])
    assert rc == 1
    assert "INVALID" in capsys.readouterr().out


def test_cli_run_bad_input(fake_audit, capsys) -> None:
    assert main(["fuzz", "run", "--impl", "mygen --in x --out y", "--count", "1"]) == 2
    assert "{topology}" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # argparse refuses the option itself
        main(["fuzz", "run", "--impl", "g {topology} {schedule}", "--timeout", "0"])
    assert exc.value.code == 2
    assert "--timeout" in capsys.readouterr().err


def test_cli_run_command_not_found_is_bad_input(fake_audit, tmp_path, capsys) -> None:
    # a misspelt program is one error (exit 2), not 50 shrunk and saved "crashes"
    rc = main(["fuzz", "run", "--impl", "no-such-gen-xyz {topology} {schedule}", "--count",
               "5", "--seed", "1", "--save-dir", str(tmp_path / "f")])
    err = capsys.readouterr().err
    assert rc == 2
    assert "no-such-gen-xyz" in err and "not found" in err and "PATH" in err
    assert not (tmp_path / "f").exists()
    # a generator that itself exits 127 is still the generator's crash
    res = driver.run_case("sh -c 'exit 127' {topology} {schedule}", platforms.ring(3),
                          auditor=toy_auditor, timeout=30)
    assert res.status == "crash"


def test_real_audit_accepts_the_toy_when_available(toy) -> None:
    auditor = driver.default_auditor()
    results = driver.campaign(toy(), _cases(4), auditor=auditor, timeout=60,
                              shrink_failures=False)
    assert all(r.status == "valid" for r in results), [r.reasons for r in results]
    bad = driver.run_case(toy("missing-node"), platforms.ring(5), auditor=auditor, timeout=60)
    assert bad.status == "invalid"


def test_collcert_own_scheduler_is_valid_and_optimal(tmp_path, capsys) -> None:
    driver.default_auditor()
    impl = (f"{json.dumps(sys.executable)} -m collcert schedule {{topology}} -o {{schedule}} "
            "--collective {collective}")
    for coll, fmt, extra in (("allgather", "json", ""), ("reduce-scatter", "json", ""),
                             ("allgather", "forestcoll-xml", " --format forestcoll-xml")):
        rc = main(["fuzz", "run", "--impl", impl + extra, "--impl-format", fmt, "--collective",
                   coll, "--count", "3", "--seed", "5", "--switches", "--max-nodes", "7",
                   "--save-dir", str(tmp_path), "--json"])
        report = json.loads(capsys.readouterr().out)
        assert rc == 0, report
        assert all(c["status"] == "valid" and c["ratio"] == "1" for c in report["cases"])
