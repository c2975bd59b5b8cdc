"""Weighted RS+AG (issue 19 item 5): the optimum over shards, its certificate, its trees, the CLI."""

from __future__ import annotations

import copy
import itertools
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from conftest import cycle_topology

from collcert import platforms
from collcert.certify.allreduce import Graph, check_rsag_weighted
from collcert.certify.forestcoll import check_schedule
from collcert.certify.model import Topo
from collcert.cli import main
from collcert.reference.allreduce import forestcoll_lp, weighted_rsag, weighted_rsag_schedule
from collcert.reference.forestcoll import optimum
from collcert.reference.model import Topology, TopologyError, fraction_str
from collcert.reference.solvers import LinearProgram, solve_lp

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "golden" / "allreduce"


def golden_topology(name: str) -> Topology:
    return Topology.from_json(json.loads((GOLDEN / f"{name}.json").read_text())["topology"])


def splitting_sets(t: Topology) -> list[frozenset[Any]]:
    out = []
    for r in range(1, len(t.nodes)):
        for s in itertools.combinations(t.nodes, r):
            inside = sum(1 for v in s if t.is_compute(v))
            if 0 < inside < t.num_compute:
                out.append(frozenset(s))
    return out


def out_cap(t: Topology, s: frozenset[Any]) -> Fraction:
    return sum((c for (u, v), c in t.capacity.items() if u in s and v not in s), Fraction(0))


def rsag_time(t: Topology, f: dict[Any, Fraction]) -> Fraction:
    """T_RS(f) + T_AG(f) by enumerating every splitting set."""
    sets = splitting_sets(t)
    ag = max(sum((f[v] for v in s if t.is_compute(v)), Fraction(0)) / out_cap(t, s) for s in sets)
    rs = max(sum((f[v] for v in t.compute_nodes if v not in s), Fraction(0)) / out_cap(t, s)
             for s in sets)
    return ag + rs


def full_lp(t: Topology) -> Fraction:
    """max Σw s.t. w(S) ≤ B⁺(S) for every splitting S, all rows written out."""
    lp = LinearProgram("max")
    for v in t.compute_nodes:
        lp.add_variable(("w", str(v)), 1)
    for i, s in enumerate(splitting_sets(t)):
        lp.add_row(("S", i), {("w", str(v)): 1 for v in s if t.is_compute(v)}, "<=",
                   out_cap(t, s))
    return solve_lp(lp).objective / 2


def checked(t: Topology, cert: dict[str, Any]) -> Any:
    return check_rsag_weighted(Graph(t.to_json()), json.loads(json.dumps(cert, default=str)))


@pytest.mark.parametrize("name,claimed", [
    ("hypothesis-counterexample-equal-shards", ["1/6", "1/6", "1/3", "1/6", "1/6"]),
    ("hypothesis-counterexample-rsag", ["1/2", "0", "0", "1/2", "0"]),
])
def test_reaches_lp5_on_the_section_5_7_counterexamples(name: str, claimed: list[str]) -> None:
    t = golden_topology(name)
    r = weighted_rsag(t)
    best = forestcoll_lp(t).value
    assert r.value == best > optimum(t, "allreduce").algbw
    # the shards reach it too, by enumeration of every cut
    f = {v: Fraction(x) for v, x in zip(t.compute_nodes, claimed)}
    assert 1 / rsag_time(t, f) == best
    assert 1 / rsag_time(t, r.shards) == best
    assert checked(t, r.certificate()).ok


@pytest.mark.parametrize("seed", range(12))
def test_equals_the_full_lp_and_sits_in_the_chain(seed: int) -> None:
    t = cycle_topology(seed, n_nodes=min(7, 3 + seed % 5), n_switch=seed % 2)
    r = weighted_rsag(t)
    assert r.value == full_lp(t)
    assert sum(r.shards.values()) == 1 and min(r.shards.values()) >= 0
    assert 1 / rsag_time(t, r.shards) == r.value
    assert optimum(t, "allreduce").algbw <= r.value <= forestcoll_lp(t).value
    v = checked(t, r.certificate())
    assert v.ok, v.all_reasons()


def test_equal_shards_where_rs_ag_is_already_optimal() -> None:
    t = platforms.torus([3, 3])
    r = weighted_rsag(t)
    assert r.value == optimum(t, "allreduce").algbw
    assert set(r.shards.values()) == {Fraction(1, 9)}


def _tampered(cert: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    c = copy.deepcopy(cert)
    c["shards"][0][1], c["shards"][1][1] = c["shards"][1][1], "0"
    out.append(c)
    c = copy.deepcopy(cert)
    c["rate"], c["time_per_unit"] = "4", "1/4"
    out.append(c)
    c = copy.deepcopy(cert)
    c["ag_flows"].pop()
    out.append(c)
    c = copy.deepcopy(cert)
    c["rs_flows"][0]["flow"][0][2] += 1
    out.append(c)
    c = copy.deepcopy(cert)
    c["dual"] = c["dual"][1:]
    out.append(c)
    c = copy.deepcopy(cert)
    c["ag_cut"] = list(c["ag_cut"][:1])
    out.append(c)
    return out


def test_the_checker_refuses_tampered_certificates() -> None:
    t = golden_topology("hypothesis-counterexample-equal-shards")
    cert = json.loads(json.dumps(weighted_rsag(t).certificate(), default=str))
    assert checked(t, cert).ok
    for bad in _tampered(cert):
        assert not checked(t, bad).ok, bad


def test_schedule_is_valid_at_the_optimum() -> None:
    for t in (golden_topology("hypothesis-counterexample-equal-shards"),
              platforms.two_box_example()):
        s = weighted_rsag_schedule(t)
        doc = json.loads(json.dumps(s.to_json(), default=str))
        v = check_schedule(Topo(t.to_json()), doc)
        assert v.ok, v.all_reasons()
        assert v.facts["time_per_unit"] == 1 / weighted_rsag(t).value


def test_non_eulerian_is_refused() -> None:
    t = Topology([1, 2, 3], [(1, 2, 2), (2, 3, 2), (3, 1, 3)], strict=False)
    with pytest.raises(TopologyError, match="Eulerian"):
        weighted_rsag(t)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topo = tmp_path / "t.json"
    data = json.loads((GOLDEN / "hypothesis-counterexample-equal-shards.json").read_text())
    topo.write_text(json.dumps(data["topology"]))
    code, out, _ = run(capsys, "optimum", str(topo), "-c", "allreduce", "--method",
                       "rsag-weighted", "--json")
    assert code == 0 and json.loads(out)["checked_by_certify"] is True
    code, out, _ = run(capsys, "optimum", str(topo), "-c", "allreduce", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["checked_by_certify"]["rsag_weighted"]
    assert doc["rsag_weighted"] == doc["forestcoll_lp"]
    sched = tmp_path / "s.json"
    code, out, _ = run(capsys, "schedule", str(topo), "-c", "allreduce", "--method",
                       "rsag-weighted", "--check", "-o", str(sched))
    assert code == 0 and "checked by collcert.certify" in out
    code, out, _ = run(capsys, "audit", str(topo), str(sched))
    assert code == 0 and "VALID" in out
    for argv in (["optimum", str(topo), "--method", "rsag-weighted"],
                 ["schedule", str(topo), "--method", "rsag-weighted"],
                 ["schedule", str(topo), "-c", "allreduce", "--method", "rsag-weighted",
                  "--format", "forestcoll-xml"]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and "rsag-weighted" in err and "Traceback" not in err


def test_below_lp5_without_equal_bandwidth_and_a_forced_zero_shard(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = golden_topology("weighted-rsag-below-lp5-star")
    r = weighted_rsag(t)
    assert optimum(t, "allreduce").algbw < r.value < forestcoll_lp(t).value
    assert 0 in r.shards.values() and 1 / rsag_time(t, r.shards) == r.value
    assert r.value == full_lp(t)
    topo = tmp_path / "star.json"
    topo.write_text(json.dumps(t.to_json()))
    code, out, _ = run(capsys, "schedule", str(topo), "-c", "allreduce", "--method",
                       "rsag-weighted", "--check")
    assert code == 0 and f"time per unit {fraction_str(1 / r.value)}" in out
    # the same star with d behind a switch: ForestColl's packing needs positive shards
    links = [(u, v, c) for (u, v), c in t.capacity.items() if "d" not in (u, v)]
    links += [("c", "s", 6), ("s", "c", 6), ("s", "d", 6), ("d", "s", 6)]
    topo.write_text(json.dumps(Topology(t.compute_nodes, links, ["s"]).to_json()))
    code, _, err = run(capsys, "schedule", str(topo), "-c", "allreduce", "--method",
                       "rsag-weighted")
    assert code == 2 and "no shard" in err and "--method lp" in err


def test_fuzz_property_holds_on_the_counterexamples(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = []
    for name in ("hypothesis-counterexample-rsag", "hypothesis-counterexample-equal-shards"):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(golden_topology(name).to_json()))
        files.append(str(path))
    code, out, _ = run(capsys, "fuzz", "check", "--property", "rsag_weighted_lp", "--replay",
                       *files, "--no-save")
    assert code == 0 and "all hold" in out


def test_the_golden_checker_proves_a_papers_machine_and_catches_a_wrong_one(
        tmp_path: Path) -> None:
    script = ROOT / "golden" / "check_allreduce.py"
    case_path = GOLDEN / "papers" / "paper-dgx_a100-2.json"
    proc = subprocess.run([sys.executable, str(script), str(case_path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout
    case = json.loads(case_path.read_text())
    case["expected"]["rsag_weighted"] = case["expected"]["cut_set_bound"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(case))
    proc = subprocess.run([sys.executable, str(script), str(bad)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1 and "rsag_weighted" in proc.stdout


def test_large_machines_are_left_out_with_the_reason(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    import collcert.reference.allreduce as ar
    from collcert.reference.allreduce import allreduce_rate, report

    monkeypatch.setattr(report, "MAX_WEIGHTED_NODES", 3)
    monkeypatch.setattr(ar, "MAX_WEIGHTED_NODES", 3)
    r = allreduce_rate(platforms.ring(4), mac_bc=False, forestcoll=False)
    assert r.weighted is None and "compute nodes" in r.reasons["rsag_weighted"]
    code, _, err = run(capsys, "optimum", "ring:4", "-c", "allreduce", "--method",
                       "rsag-weighted")
    assert code == 2 and "limit here is 3 compute nodes" in err
