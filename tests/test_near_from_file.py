"""Near-symmetry from the file alone (reference/symmetry/healthy.py, commands/_near.py): a
topology file of a symmetric machine with some links changed is recognised, the symmetric
machine and the changed links are found without being told, and the schedule takes the
path --degrade takes, certified on the file's machine."""

from __future__ import annotations

import json
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from collcert import platforms
from collcert.certify.forestcoll import check_schedule
from collcert.certify.model import Topo
from collcert.cli import main
from collcert.reference.forestcoll import optimum, schedule
from collcert.reference.model import Topology, what_if
from collcert.reference.symmetry import find_symmetry, like_builtin, restore


def _changed(boxes: int, *, degrade: tuple[str, ...] = (), fail: tuple[str, ...] = (),
             rename: bool = False, seed: int = 1) -> Topology:
    """dgx_a100:boxes changed by what-if, written out as a file would be: links shuffled,
    and with ``rename`` every node renamed (an imported cluster's own names)."""
    t = what_if(platforms.dgx_a100(boxes), degrade=list(degrade), fail=list(fail)).topology
    assert t is not None
    doc: dict[str, Any] = json.loads(json.dumps(t.to_json()))
    if rename:
        new = {v: f"host{v[1:].replace('.', '-')}" if v.startswith("b") else f"leaf-{v}"
               for v in t.nodes}
        doc["compute_nodes"] = [new[v] for v in doc["compute_nodes"]]
        doc["switch_nodes"] = [new[v] for v in doc["switch_nodes"]]
        for link in doc["links"]:
            link["src"], link["dst"] = new[link["src"]], new[link["dst"]]
        doc["name"] = "imported cluster"
    random.Random(seed).shuffle(doc["links"])
    return Topology.from_json(doc)


def test_a_halved_nic_is_found_with_its_links_and_the_builtin_it_is_like() -> None:
    healthy = platforms.dgx_a100(8)
    got = restore(_changed(8, degrade=("b3.nic2=25/2",)))
    assert got.found and got.healthy is not None
    assert got.healthy.capacity == healthy.capacity  # the very machine, found exactly
    assert sorted(e for e, _, _ in got.changed) == sorted(
        e for e in healthy.capacity if "b3.nic2" in e)
    assert {(now, was) for _, now, was in got.changed} == {(Fraction(25, 2), Fraction(25))}
    got.like = like_builtin(got, {"DGX H100": platforms.dgx_h100(3),
                                  "DGX A100": platforms.dgx_a100(3)})
    assert got.like == "DGX A100"
    text = got.describe("GB/s")
    assert "an 8-box DGX A100-like machine with 4 directed links different in 1 box" in text
    assert "b3.nic2 (all 4 of its links) at 25/2 GB/s instead of 25" in text


def test_found_under_other_names_and_the_symmetry_is_verified() -> None:
    got = restore(_changed(8, degrade=("b5.nic1=10",), rename=True))
    assert got.found and got.healthy is not None and got.symmetry is not None
    assert got.symmetry.order == 8 * 2 * 4  # the 8 boxes x (2 x 4 inside a box), verified
    assert find_symmetry(got.healthy) is not None
    assert "host5-nic1 (all 4 of its links) at 10 instead of 25" in got.describe()


def test_a_removed_nic_and_a_failed_cable_come_back_in_the_symmetric_machine() -> None:
    healthy = platforms.dgx_a100(8)
    cable = restore(_changed(8, fail=("b3.gpu2<>b3.nic2",)))
    assert cable.found and cable.healthy is not None
    assert cable.healthy.capacity == healthy.capacity  # the NIC left alone is matched back
    assert {now for _, now, _ in cable.changed} == {0}
    nic = restore(_changed(8, fail=("b6.nic5",)))
    assert nic.found and nic.healthy is not None and nic.symmetry is not None
    assert len(nic.healthy.switch_nodes) == len(healthy.switch_nodes)  # one switch added
    assert len(nic.changed) == 4 and list(nic.missing.values()) == [
        "the box of b6.gpu0: its counterpart of b0.nic5"]


def test_faults_in_many_boxes_are_one_symmetric_machine() -> None:
    got = restore(_changed(8, fail=("b1.nic3", "b4.nic0", "b6.nic6")))
    assert got.found and got.odd_boxes == 3 and len(got.changed) == 12


def _perturbed(boxes: int, share: float, seed: int) -> Topology:
    """Every cable's capacity times 1/2, 3/4 or 3/2 with probability ``share`` (both
    directions alike, so the machine stays Eulerian)."""
    doc = platforms.dgx_a100(boxes).to_json()
    rng = random.Random(seed)
    factor: dict[tuple[str, str], Fraction] = {}
    for link in doc["links"]:
        key = tuple(sorted((link["src"], link["dst"])))
        if key not in factor:
            factor[key] = (rng.choice([Fraction(1, 2), Fraction(3, 4), Fraction(3, 2)])  # type: ignore[index]
                           if rng.random() < share else Fraction(1))
        link["capacity"] = str(Fraction(link["capacity"]) * factor[key])  # type: ignore[index]
    return Topology.from_json(doc)


@pytest.mark.parametrize("share", [0.5, 1.0])
def test_coincidental_or_no_symmetry_is_not_called_near_symmetric(share: float) -> None:
    got = restore(_perturbed(8, share, seed=3))
    assert not got.found and got.healthy is None
    assert got.describe().startswith("not near-symmetric: ")
    assert got.reason


def test_the_borrowed_schedule_is_certified_on_the_files_machine() -> None:
    t = _changed(8, degrade=("b3.nic2=25/2",), rename=True)
    got = restore(t)
    assert got.healthy is not None
    s = schedule(t, "allgather", healthy=got.healthy)
    assert "symmetrized" in s.extra  # built by orbits, as --degrade does
    assert s.time_per_unit == optimum(t, "allgather", symmetry=False).time_per_unit
    doc = json.loads(json.dumps(s.to_json(compact=True)))
    verdict = check_schedule(Topo(t.to_json()), doc)
    assert verdict.ok, verdict.all_reasons()[:3]


def test_schedule_command_says_what_it_found_and_refuses_symmetric_before_building(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(_changed(8, degrade=("b3.nic2=25/2",)).to_json()))
    assert main(["schedule", str(path), "--symmetric", "-o", str(tmp_path / "s.json")]) == 2
    err = capsys.readouterr().err
    assert "near-symmetric: an 8-box DGX A100-like machine" in err and "drop --symmetric" in err
    assert not (tmp_path / "s.json").exists()
    assert main(["schedule", str(path), "-o", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr()
    assert "b3.nic2 (all 4 of its links) at 25/2 GB/s instead of 25" in out.err
    assert "built by orbits on the symmetrized machine" in out.out
