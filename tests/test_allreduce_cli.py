"""`collcert optimum -c allreduce`, `schedule -c allreduce --method lp`, audit and bad input."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from collcert import platforms
from collcert.certify.forestcoll import check_schedule
from collcert.certify.model import InputError, Topo
from collcert.cli import main
from collcert.reference.allreduce import lp_schedule
from collcert.reference.forestcoll import optimum
from collcert.reference.model import Topology, TopologyError

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "schema" / "schedule.schema.json").read_text())
TRI = {"compute_nodes": [1, 2, 3], "links": [{"src": 1, "dst": 2, "capacity": 2},
                                            {"src": 2, "dst": 3, "capacity": 2},
                                            {"src": 3, "dst": 1, "capacity": 3}]}


def write(tmp: Path, name: str, data: Any) -> str:
    path = tmp / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_has_the_three_keys_exact_and_reasons(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    f = write(tmp_path, "tri.json", TRI)  # the 3-cycle (2, 2, 3): not Eulerian
    code, out, _ = run(capsys, "optimum", f, "-c", "allreduce", "--json")
    doc = json.loads(out)
    assert code == 0
    assert (doc["cut_set_bound"], doc["mac_bc_lp"], doc["forestcoll_lp"]) == ("2", "7/4", "7/4")
    assert doc["rsag_algbw"] is None and "Eulerian" in doc["not_applicable"]["rsag"]
    assert doc["checked_by_certify"] == {"cut_set_bound": True, "mac_bc_lp": True,
                                         "forestcoll_lp": True}


def test_text_is_one_chain_naming_models_and_schedules(capsys: pytest.CaptureFixture[str],
                                                       ) -> None:
    code, out, _ = run(capsys, "optimum", "two_box_example", "-c", "allreduce")
    assert code == 0
    assert "[routing]" in out and "[coding]" in out and "--method lp" in out
    assert "not computed: defined for networks of compute nodes only" in out  # switches
    lines = [ln for ln in out.splitlines() if ln.startswith("  ≤ ") or ln.startswith("  = ")]
    assert lines and "bound (7)" in out and "not on R*" in out


@pytest.mark.parametrize("data,code,needle", [
    ({"compute_nodes": ["a"], "links": []}, 2, "unbounded"),
    ({"compute_nodes": ["a", "b"], "links": []}, 0, "every rate is 0"),
    ({"compute_nodes": ["a", "b", "c"], "links": [
        {"src": "a", "dst": "b", "capacity": 0, "bidirectional": True},
        {"src": "b", "dst": "c", "capacity": "1.5", "bidirectional": True}]}, 0,
     "every rate is 0"),
    ('{"compute_nodes": ["a", "b"], "links": [{"src": "a", "dst": "b", "bidirectional": true, '
     '"capacity": 0.1234567890123456789012}]}',  # a JSON float with many digits, read exactly
     0, str(Fraction("0.1234567890123456789012"))),
    ({"compute_nodes": ["a", "b"], "links": [{"src": "a", "dst": "b", "capacity": -1}]}, 2,
     "capacities must be positive"),
])
def test_bad_input_is_a_clear_answer_or_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              data: Any, code: int, needle: str) -> None:
    got, out, err = run(capsys, "optimum", write(tmp_path, "t.json", data), "-c", "allreduce")
    assert got == code and needle in out + err and "Traceback" not in err


def test_forestcoll_methods_still_refuse_non_eulerian_naming_the_method(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write(tmp_path, "tri.json", TRI)
    code, _, err = run(capsys, "optimum", f)
    assert code == 2 and "not Eulerian" in err  # strict loading, as before
    relaxed = Topology.from_json(TRI, strict=False)
    with pytest.raises(TopologyError, match="the ForestColl allgather optimum needs"):
        optimum(relaxed)
    with pytest.raises(TopologyError, match="the RS\\+AG allreduce time and bounds"):
        optimum(relaxed, "allreduce")
    import collcert

    with pytest.raises(TopologyError, match="a ForestColl allreduce schedule needs"):
        collcert.schedule(relaxed, "allreduce")


def test_lp_schedule_is_valid_at_the_lp_value_and_beats_rsag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = json.loads((ROOT / "golden" / "allreduce" /
                       "hypothesis-counterexample-equal-shards.json").read_text())
    topo = write(tmp_path, "topo.json", case["topology"])
    lp_file, rs_file = str(tmp_path / "lp.json"), str(tmp_path / "rs.json")
    assert run(capsys, "schedule", topo, "-c", "allreduce", "--method", "lp", "--check",
               "-o", lp_file)[0] == 0
    doc = json.loads(Path(lp_file).read_text())
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert doc["overlap"] is True and doc["claimed"]["algbw"] == "3"
    code, out, _ = run(capsys, "audit", topo, lp_file, "--json")
    rep = json.loads(out)
    assert code == 0 and rep["valid"] and rep["algbw"] == "3" and rep["ratio"] == "1"
    assert run(capsys, "schedule", topo, "-c", "allreduce", "-o", rs_file)[0] == 0
    rep = json.loads(run(capsys, "audit", topo, rs_file, "--json")[1])
    assert rep["valid"] and rep["ratio"] == "5/6"  # RS+AG: 5/2 of LP (5)'s 3


def test_lp_schedule_option_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "schedule", "ring:4", "--method", "lp")
    assert code == 2 and "allreduce" in err
    code, _, err = run(capsys, "schedule", "ring:4", "-c", "allreduce", "--method", "lp",
                       "--format", "forestcoll-xml")
    assert code == 2 and "ForestColl tree XML cannot express" in err


def test_overlap_adds_phase_loads_per_link() -> None:
    case = json.loads((ROOT / "golden" / "allreduce" /
                       "hypothesis-counterexample-equal-shards.json").read_text())
    t = Topology.from_json(case["topology"])
    doc = lp_schedule(t).to_json()
    topo = Topo(t.to_json())
    assert check_schedule(topo, doc).facts["time_per_unit"] == Fraction(1, 3)
    seq = dict(doc, overlap=False)
    seq.pop("claimed")
    # run one after the other, the same trees take the sum of the two phase times
    v = check_schedule(topo, seq)
    times = [Fraction(x) for x in v.facts["phase_times"]]
    assert v.facts["time_per_unit"] == sum(times) > Fraction(1, 3)
    with pytest.raises(InputError, match="overlap"):
        check_schedule(topo, dict(optimum_doc(t), overlap=True))


def optimum_doc(t: Topology) -> dict[str, Any]:
    import collcert

    return collcert.schedule(t, "allgather").to_json()


def test_zero_weight_roots_need_no_trees_but_weights_must_not_all_vanish() -> None:
    t = platforms.complete(3)
    doc = lp_schedule(t).to_json()
    topo = Topo(t.to_json())
    bad = dict(doc, weights={str(v): "0" for v in t.compute_nodes})
    with pytest.raises(InputError, match="every weight is 0"):
        check_schedule(topo, bad)
    neg = dict(doc, weights={**doc["weights"], "0": "-1"})
    with pytest.raises(InputError, match="≥ 0"):
        check_schedule(topo, neg)


def test_fuzz_properties(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "fuzz", "check", "--count", "3", "--seed", "2", "--property",
                       "allreduce_rate", "--no-save")
    assert code == 0 and "all hold" in out
    case = json.loads((ROOT / "golden" / "allreduce" /
                       "hypothesis-counterexample-rsag.json").read_text())
    f = write(tmp_path, "c.json", case["topology"])
    code, out, _ = run(capsys, "fuzz", "check", "--property", "rsag_lp", "--replay", f,
                       "--no-save")
    assert code == 1 and "RS+AG" in out
    code, out, _ = run(capsys, "fuzz", "check", "--property", "allreduce_hypothesis",
                       "--replay", f, "--no-save")
    assert code == 0  # equal shares reach LP (5) here: only the sequential reading fails
