"""Symmetric schedule files (issue 20, item 4): representative trees plus the generator.

A symmetric file must audit exactly as its full form does (verdict, time, rate);
collcert.certify checks it by orbits and refuses every forgery naming what is
wrong; the tools that need all trees (draw, smoke, the α-β view) write it out,
up to a limit. The ring case is made by hand: its time 3/8 is derived in
tests/test_certify_schedule.py from the topology alone.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from collcert import platforms
from collcert.auditing import audit
from collcert.certify.forestcoll import check_schedule, expand_symmetric, read_schedule
from collcert.certify.model import InputError, Topo
from collcert.cli import main
from collcert.reference.forestcoll import Schedule, schedule
from collcert.reference.model import ScheduleError, Topology
from collcert.reference.symmetry import orbits
from tests.test_certify_schedule import ring_allgather

# the files of one generator σ (the box shift): the product group that collcert finds
# by default has several generators (tests/test_machines_as_built.py)


@pytest.fixture(scope="module")
def dgx4() -> tuple[Topology, Schedule]:
    t = platforms.dgx_a100(4)
    return t, schedule(t, "allgather", symmetry=orbits.box_shift(t))


@pytest.fixture(scope="module")
def dgx3_allreduce() -> tuple[Topology, Schedule]:
    t = platforms.dgx_a100(3)
    return t, schedule(t, "allreduce", symmetry=orbits.box_shift(t))


def _sym(s: Schedule) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(json.dumps(s.to_json(compact=True, symmetric=True)))
    return doc


def _reasons(t: Topology, doc: Any) -> str:
    v = check_schedule(Topo(t.to_json()), doc)
    assert not v.ok
    return " | ".join(v.all_reasons())


def _trees(t: Topology, doc: Any) -> list[tuple[str, int, tuple[tuple[str, ...], ...]]]:
    """Every tree of a document as (root, multiplicity, sorted paths), sorted."""
    sched = read_schedule(Topo(t.to_json()), doc)
    return sorted((str(tr.root), tr.multiplicity,
                   tuple(sorted(tuple(map(str, e.path)) for e in tr.edges)))
                  for ph in sched.phases for tr in ph.trees)


@pytest.mark.parametrize("case", ["dgx4", "dgx3_allreduce"])
def test_symmetric_file_audits_as_its_full_form(case: str, request: Any) -> None:
    t, s = request.getfixturevalue(case)
    assert s.symmetric
    doc = _sym(s)
    full = s.to_json(compact=True)
    reps = doc["symmetry"]["representatives"]
    assert {tr["root"] for ph in doc["phases"] for tr in ph["trees"]} == set(reps)
    assert doc["symmetry"]["order"] * len(reps) == t.num_compute
    a_sym, a_full = audit(t, json.dumps(doc)), audit(t, json.dumps(full))
    assert a_sym.valid and a_full.valid
    assert a_sym.time_per_unit == a_full.time_per_unit == s.time_per_unit
    assert a_sym.algbw == a_full.algbw and a_sym.ratio == a_full.ratio == 1
    assert any("checked by orbits" in n for n in a_sym.notes)
    # written out by collcert.certify alone, the file is the reference's full schedule
    assert _trees(t, expand_symmetric(doc)) == _trees(t, full)


def test_a_hand_made_ring_file() -> None:
    """ring(4) under the rotation i -> i+1: the two chains of root 0 stand for all 8."""
    t = platforms.ring(4)
    full = ring_allgather(4)
    doc = copy.deepcopy(full)
    doc["phases"][0]["trees"] = [tr for tr in full["phases"][0]["trees"] if tr["root"] == 0]
    doc["symmetry"] = {"generators": [[[i, (i + 1) % 4] for i in range(4)]], "order": 4,
                       "representatives": [0]}
    v = check_schedule(t.to_json(), doc)
    assert v.ok, v.all_reasons()
    assert v.facts["time_per_unit"] == Fraction(3, 8) and "checked_by_orbits" in v.facts
    rev = copy.deepcopy(doc)  # the reflection i -> -i is an automorphism, but not free
    rev["symmetry"]["generators"] = [[[1, 3], [3, 1]]]
    assert "does not act freely" in _reasons(t, rev)


def test_the_build_maps_no_tree_until_asked(dgx4: tuple[Topology, Schedule]) -> None:
    _, s = dgx4
    fresh = schedule(platforms.dgx_a100(8), "allgather")  # 64 GPUs: by orbits on its own
    assert fresh.symmetric and not any(ph.trees.made for ph in fresh.phases)
    assert fresh.tree_count == 64 and "64 trees" in fresh.summary()
    fresh.to_json(symmetric=True)
    assert not fresh.phases[0].trees.made
    assert len(fresh.to_json(compact=True)["phases"][0]["trees"]) == 64
    assert fresh.phases[0].trees.made


def test_forged_generator(dgx4: tuple[Topology, Schedule]) -> None:
    t, s = dgx4
    doc = _sym(s)
    pairs = doc["symmetry"]["generators"][0]
    i, j = (n for n, (u, _) in enumerate(pairs) if u in ("b0.gpu0", "b0.gpu1"))
    pairs[i][1], pairs[j][1] = pairs[j][1], pairs[i][1]
    text = _reasons(t, doc)
    assert "symmetry.generators[0] maps link" in text


def test_missing_representative(dgx4: tuple[Topology, Schedule]) -> None:
    t, s = dgx4
    doc = _sym(s)
    doc["symmetry"]["representatives"].remove("b0.gpu5")
    for ph in doc["phases"]:
        ph["trees"] = [tr for tr in ph["trees"] if tr["root"] != "b0.gpu5"]
    assert "the orbit of compute node 'b0.gpu5'" in _reasons(t, doc)
    doc = _sym(s)  # listed, but its trees are gone
    doc["phases"][0]["trees"] = [tr for tr in doc["phases"][0]["trees"]
                                 if tr["root"] != "b0.gpu5"]
    assert "the trees of root 'b0.gpu5' have multiplicities summing to 0" in _reasons(t, doc)
    doc = _sym(s)  # two representatives of one orbit
    doc["symmetry"]["representatives"][0] = "b2.gpu1"
    assert "'b2.gpu1' and 'b0.gpu1' lie in one orbit (σ^2 maps" in _reasons(t, doc)
    doc = _sym(s)  # a tree of a root that is no representative
    doc["phases"][0]["trees"][0]["root"] = "b1.gpu0"
    assert "is not one of the file's symmetry.representatives" in _reasons(t, doc)


def test_tree_edge_removed(dgx4: tuple[Topology, Schedule]) -> None:
    t, s = dgx4
    doc = _sym(s)
    tree = doc["phases"][0]["trees"][2]
    tree["edges"].pop()
    assert f"root '{tree['root']}'" in _reasons(t, doc) and "never receive" in _reasons(t, doc)


def test_over_capacity_and_changed_figures(dgx3_allreduce: tuple[Topology, Schedule]) -> None:
    t, s = dgx3_allreduce
    doc = _sym(s)
    phase = doc["phases"][1]  # allgather: a representative's first tree edge leaves it
    first = phase["walks"][phase["trees"][0]["edges"][0]]
    arc = next(a for a in phase["certificates"]["gstar"]["capacities"]
               if a[:2] == [first["src"], first["dst"]])
    arc[2] = 0  # G* claims no room on that arc's orbit
    text = _reasons(t, doc)
    assert f"G* edge '{arc[0]}' -> '{arc[1]}' carries" in text and "has capacity 0" in text
    doc = _sym(s)
    doc["claimed"]["algbw"] = str(Fraction(doc["claimed"]["algbw"]) * 2)
    assert "claims algbw" in _reasons(t, doc)
    doc = _sym(s)
    doc["phases"][0]["time_per_unit"] = "1/1000"
    assert "claims time_per_unit 1/1000" in _reasons(t, doc)
    doc = _sym(s)
    doc["symmetry"]["order"] = 6
    assert "field 'symmetry.order': 6" in _reasons(t, doc)
    doc = _sym(s)
    doc["phases"][1]["trees"][0]["height"] += 1
    assert "field 'height'" in _reasons(t, doc)


def test_unreadable_symmetry_blocks(dgx4: tuple[Topology, Schedule]) -> None:
    t, s = dgx4
    topo = Topo(t.to_json())
    for change, needle in [({"generators": []}, "exactly one generator σ"),
                           ({"order": "x"}, "symmetry.order"),
                           ({"representatives": "b0.gpu0"}, "symmetry.representatives"),
                           ({"seed": 1}, "field 'seed'")]:
        doc = _sym(s)
        doc["symmetry"].update(change)
        with pytest.raises(InputError, match=needle):
            check_schedule(topo, doc)
    doc = _sym(s)
    doc["root"] = "b0.gpu0"
    doc["collective"] = doc["phases"][0]["collective"] = "broadcast"
    with pytest.raises(InputError, match="single root"):
        check_schedule(topo, doc)


def test_expansion_has_a_limit(dgx4: tuple[Topology, Schedule], tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    t, s = dgx4
    doc = _sym(s)
    with pytest.raises(InputError, match="collcert writes out at most 100. "):
        expand_symmetric(doc, "f.json", limit=100)
    path = tmp_path / "sym.json"
    path.write_text(json.dumps(doc))
    monkeypatch.setattr(expand_symmetric, "__defaults__", ("schedule", 100))
    assert main(["draw", "dgx_a100:4", str(path), "-o", str(tmp_path / "x.png")]) == 2
    assert "and 'collcert check' read it by orbits" in capsys.readouterr().err
    assert main(["audit", "dgx_a100:4", str(path)]) == 0  # by orbits: no limit


def test_schedule_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    out = tmp_path / "s.json"
    assert main(["schedule", "dgx_a100:4", "--symmetric", "--check", "-o", str(out)]) == 0
    assert ("symmetric: the trees of 1 representative root and the 3 generators of a group "
            "of order 32 (4 × 2 × 4)") in capsys.readouterr().out
    assert json.loads(out.read_text())["symmetry"]["orders"] == [4, 2, 4]
    assert main(["check", "dgx_a100:4", str(out)]) == 0
    assert "checked_by_orbits" in capsys.readouterr().out
    assert main(["schedule", "dgx_a100:4", "--symmetric", "--no-symmetry"]) == 2
    assert "with --no-symmetry there is none" in capsys.readouterr().err
    assert main(["schedule", "dgx_a100:4", "--symmetric", "--fail", "b1.nic2"]) == 2
    err = capsys.readouterr().err  # refused before the build: no what-if block printed
    assert "--degrade/--fail lacks it" in err and "What-if" not in err
    assert main(["schedule", "dgx_a100:4", "--symmetric", "--format", "forestcoll-xml"]) == 2
    assert "--symmetric writes collcert JSON" in capsys.readouterr().err
    import collcert.certify.forestcoll as face  # a machine past the audit limit: automatic

    monkeypatch.setattr(face, "MAX_EDGES", 100)
    auto = tmp_path / "auto.json"
    assert main(["schedule", "dgx_a100:4", "-o", str(auto)]) == 0
    assert "note: written as a symmetric file" in capsys.readouterr().err
    assert "symmetry" in json.loads(auto.read_text())
    xml = tmp_path / "s.xml"
    assert main(["schedule", "dgx_a100:4", "--format", "forestcoll-xml", "-o", str(xml)]) == 2
    assert "more than collcert audits (100)" in capsys.readouterr().err and not xml.exists()


def test_to_json_refuses_a_schedule_not_built_by_orbits() -> None:
    s = schedule(platforms.dgx_a100(2), "allgather", symmetry=False)
    assert not s.symmetric
    with pytest.raises(ScheduleError, match="no symmetric form"):
        s.to_json(symmetric=True)


def test_the_worked_example_of_the_guide() -> None:
    """docs/schedules.md's symmetric ring:4 file: valid, time 3/8, and in the schema."""
    import jsonschema

    root = Path(__file__).resolve().parent.parent
    text = (root / "docs" / "schedules.md").read_text(encoding="utf-8")
    section = text.split("### Symmetric schedule files", 1)[1]
    doc = json.loads(section.split("```json\n", 1)[1].split("```", 1)[0])
    jsonschema.validate(doc, json.loads((root / "docs" / "schema" / "schedule.schema.json")
                                        .read_text(encoding="utf-8")))
    v = check_schedule(platforms.ring(4).to_json(), doc)
    assert v.ok and v.facts["time_per_unit"] == Fraction(3, 8), v.all_reasons()
    doc["symmetry"]["representatives"] = [0, 2]
    assert "0 and 2 lie in one orbit (σ^2 maps 0 to 2)" in _reasons(platforms.ring(4), doc)


@pytest.mark.parametrize("extra", [[], ["--symmetric"]])
def test_a_file_without_certificates_states_no_optimum(extra: list[str], tmp_path: Path) -> None:
    """--no-certificates: the generator's optimum figures, which only the embedded optimum
    certificate proves, are left out, so --check and audit accept the file."""
    out = tmp_path / "nc.json"
    assert main(["schedule", "dgx_a100:3", "-c", "allreduce", "--no-certificates", "--check",
                 "-o", str(out), *extra]) == 0
    assert "target_time_per_unit" not in json.loads(out.read_text())["generator"]
    assert main(["audit", "dgx_a100:3", str(out)]) == 0


def test_by_orbits_and_written_out_agree_on_broken_files(
        dgx3_allreduce: tuple[Topology, Schedule]) -> None:
    """The same verdict by orbits and on the file written out, for valid and broken files."""
    t, s = dgx3_allreduce
    topo = Topo(t.to_json())

    def edge_gone(d: Any) -> None:
        d["phases"][0]["trees"][1]["edges"].pop(0)

    def path_detour(d: Any) -> None:  # a walk through a switch it has no link to
        d["phases"][1]["walks"][0]["path"].insert(1, "b0.nvswitch")

    def no_room(d: Any) -> None:
        for arc in d["phases"][0]["certificates"]["gstar"]["capacities"]:
            arc[2] = 0

    def multiplicity(d: Any) -> None:
        d["phases"][1]["trees"][0]["multiplicity"] += 1

    for change in (None, edge_gone, path_detour, no_room, multiplicity):
        doc = _sym(s)
        if change is not None:
            change(doc)
        orbit = check_schedule(topo, copy.deepcopy(doc))
        full = check_schedule(topo, expand_symmetric(doc))
        assert orbit.ok == full.ok == (change is None), (change, orbit.all_reasons()[:2])
        assert orbit.facts.get("time_per_unit") == full.facts.get("time_per_unit")
