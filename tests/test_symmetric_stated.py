"""Every figure a schedule file states is checked against the topology (issue 33 rows 2, 11).

Row 2: a symmetric file's G* capacities (one arc per orbit) were checked only against
the trees, so ``certificates.gstar.capacities[0][2]`` raised by 5 was VALID; the same
edit in a full file was refused by its routing. Symmetric files now carry the routing
of their arcs, checked by orbits (the link loads of all images, ⌊U·c⌋ each), and a G*
with no routing at all is a figure nothing proves: INVALID, in full files too.

Row 11: ``"order": "4"`` (a string) was read as 4 though the schema says integer; it and
every other integer field of the schedule, steady-broadcast and reduction schemas are
now refused as strings (exit 2, naming the field).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import collcert
from collcert import platforms
from collcert.certify.forestcoll import check_schedule
from collcert.certify.model import InputError, Topo


@pytest.fixture(scope="module")
def built() -> tuple[Topo, dict[str, Any], dict[str, Any]]:
    t = platforms.dgx_a100(2)
    s = collcert.schedule(t, "allgather")
    return Topo(t.to_json()), s.to_json(symmetric=True), s.to_json()


def _reasons(topo: Topo, doc: dict[str, Any]) -> str:
    v = check_schedule(topo, doc)
    assert not v.ok
    return " | ".join(v.all_reasons())


def test_symmetric_file_carries_routing_and_checks(built: Any) -> None:
    topo, sym, _ = built
    assert "symmetry" in sym and sym["certificates"]["routing"]
    assert "flows" not in sym["certificates"]
    assert check_schedule(topo, sym).ok


def test_a_raised_gstar_capacity_is_refused_by_orbits(built: Any) -> None:
    topo, sym, full = built
    for doc in (sym, full):
        bad = copy.deepcopy(doc)
        arc = bad["certificates"]["gstar"]["capacities"][0]
        arc[2] += 5
        assert f"has {arc[2]} units but only {arc[2] - 5} are routed through G" in _reasons(
            topo, bad)


def test_routing_over_a_link_counts_all_images(built: Any) -> None:
    """One more unit on a listed walk loads every image of its links."""
    topo, sym, _ = built
    bad = copy.deepcopy(sym)
    bad["certificates"]["routing"][0]["paths"][0][1] += 40
    assert "routed units, more than ⌊U·c⌋" in _reasons(topo, bad)


def test_a_gstar_without_routing_is_refused(built: Any) -> None:
    topo, sym, full = built
    for doc in (sym, full):
        bad = copy.deepcopy(doc)
        del bad["certificates"]["routing"]
        bad["certificates"].pop("flows", None)
        assert "states capacities but no 'routing'" in _reasons(topo, bad)


@pytest.mark.parametrize("path,field", [
    (("symmetry", "order"), "symmetry.order"),
    (("phases", 0, "k"), "k is '"),
    (("phases", 0, "trees", 0, "multiplicity"), "multiplicity is '"),
    (("phases", 0, "trees", 0, "height"), "height is '"),
    (("phases", 0, "trees", 0, "index"), "index is '"),
    (("certificates", "gstar", "k"), "gstar k"),
    (("certificates", "gstar", "capacities", 0, 2), "capacities[0] units"),
    (("certificates", "routing", 0, "paths", 0, 1), "routing[0].paths[0] count"),
])
def test_an_integer_written_as_a_string_is_refused(built: Any, path: tuple[Any, ...],
                                                   field: str) -> None:
    topo, sym, _ = built
    bad = copy.deepcopy(sym)
    node = bad
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = str(node[path[-1]])
    with pytest.raises(InputError, match="a string: expected a JSON integer") as info:
        check_schedule(topo, bad)
    assert field in str(info.value)


def test_the_cli_refuses_the_string_order(tmp_path: Path, built: Any,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from collcert.cli import main

    _, sym, _ = built
    bad = copy.deepcopy(sym)
    bad["symmetry"]["order"] = "2"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(bad))
    for command in ("audit", "check"):
        assert main([command, "dgx_a100:2", str(path)]) == 2
        assert "symmetry.order is '2', a string" in capsys.readouterr().err


def test_steady_broadcast_and_reduction_integers_as_strings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from collcert.cli import main

    bs, red = tmp_path / "bs.json", tmp_path / "r.json"
    assert main(["broadcast-steady", "fig1", "-o", str(bs)]) == 0
    assert main(["reduce-tree", "5", "-d", "1", "-c", "1", "-o", str(red)]) == 0
    capsys.readouterr()
    doc = json.loads(bs.read_text())
    doc["trees"][0]["weight"] = str(doc["trees"][0]["weight"])
    bs.write_text(json.dumps(doc))
    assert main(["check", "fig1", str(bs)]) == 2
    assert "trees[0] weight is '1', a string" in capsys.readouterr().err
    doc = json.loads(red.read_text())
    doc["n"] = "5"
    red.write_text(json.dumps(doc))
    assert main(["reduce-tree", "--check", str(red)]) == 2
    assert "n is '5', a string" in capsys.readouterr().err
