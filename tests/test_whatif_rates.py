"""--degrade/--fail for optimum -c allreduce, -c alltoall and compare (issue 20 item 3): the
changed machine's figure, the loss against the healthy one and the cut that explains it,
each compared with the same command run on the changed machine written out by hand."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from collcert import platforms
from collcert.cli import main
from collcert.reference.model import Topology


def _ring8_slow_link(both: bool = True) -> Topology:
    base = platforms.ring(8)
    slow = {(0, 1), (1, 0)} if both else {(0, 1)}
    return Topology(base.nodes, [(u, v, Fraction(1, 2) if (u, v) in slow else c)
                                 for (u, v), c in base.capacity.items()],
                    name="by hand", strict=False)


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("link,both", [("0<>1", True), ("0>1", False)])
def test_allreduce_what_if_matches_the_changed_machine(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], link: str, both: bool) -> None:
    hand = tmp_path / "hand.json"
    hand.write_text(json.dumps(_ring8_slow_link(both).to_json()))
    got = _json(["optimum", "-c", "allreduce", "ring:8", "--degrade", f"{link}=1/2",
                 "--json"], capsys)
    healthy = _json(["optimum", "-c", "allreduce", "ring:8", "--json"], capsys)
    direct = _json(["optimum", "-c", "allreduce", str(hand), "--json"], capsys)
    w = got["whatif"]
    assert isinstance(w, dict)
    best = max(Fraction(str(direct[k])) for k in ("forestcoll_lp", "mac_bc_lp",
                                                  "rsag_weighted", "rsag_algbw")
               if direct[k] is not None)
    before = Fraction(str(healthy["forestcoll_lp"]))
    assert Fraction(w["algbw"]) == best and Fraction(w["healthy_algbw"]) == before
    assert Fraction(w["loss_percent"]) == (before - best) * 100 / before
    assert w["cut_set_bound"]["now"] == direct["cut_set_bound"]
    assert Fraction(w["cut"]["out_capacity"]) == Fraction(str(direct["cut_set_bound"]))
    assert got["forestcoll_lp"] == direct["forestcoll_lp"]  # the changed machine's chain


def test_alltoall_what_if_matches_the_changed_machine(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hand = tmp_path / "hand.json"
    hand.write_text(json.dumps(_ring8_slow_link().to_json()))
    got = _json(["optimum", "-c", "alltoall", "ring:8", "--degrade", "0<>1=1/2", "--json"],
                capsys)
    direct = _json(["optimum", "-c", "alltoall", str(hand), "--json"], capsys)
    healthy = _json(["optimum", "-c", "alltoall", "ring:8", "--json"], capsys)
    w = got["whatif"]
    assert isinstance(w, dict)
    assert w["algbw"] == direct["algbw"] and w["healthy_algbw"] == healthy["algbw"]
    before, now = Fraction(str(healthy["algbw"])), Fraction(str(direct["algbw"]))
    assert Fraction(w["loss_percent"]) == (before - now) * 100 / before > 0
    assert "bottleneck" in w and w["cut"]["changed_links_leaving"]


def test_a_disconnecting_failure_is_rate_zero_with_its_cut(
        capsys: pytest.CaptureFixture[str]) -> None:
    for coll in ("allreduce", "alltoall"):
        got = _json(["optimum", "-c", coll, "ring:4", "--fail", "0<>1", "--fail", "2<>3",
                     "--json"], capsys)
        w = got["whatif"]
        assert isinstance(w, dict)
        assert w["disconnected"] and w["algbw"] == "0" and w["loss_percent"] == "100"
        assert w["cut"]["out_capacity"] == "0" and sorted(w["cut_off"]) == ["0", "3"]


def test_compare_what_if_matches_compare_on_the_changed_machine(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hand = tmp_path / "hand.json"
    hand.write_text(json.dumps(_ring8_slow_link().to_json()))
    got = _json(["compare", "ring:8", "--degrade", "0<>1=1/2", "--json"], capsys)
    direct = _json(["compare", str(hand), "--json"], capsys)
    healthy = _json(["compare", "ring:8", "--json"], capsys)
    w = got["whatif"]
    assert isinstance(w, dict)
    assert w["algbw"] == direct["optimum_algbw"]
    assert w["healthy_algbw"] == healthy["optimum_algbw"]
    rows = {r["name"]: r["algbw"] for r in direct["rows"]}  # type: ignore[union-attr]
    for name, row in w["rows"].items():
        assert row["now"] == rows.get(name)
    assert "0>1" in w["cut"]["changed_links_leaving"] or "1>0" in w["cut"][
        "changed_links_leaving"]
    assert main(["compare", "ring:8", "--degrade", "0<>1=1/2"]) == 0
    text = capsys.readouterr().out
    assert "What-if on ring(8)" in text and "loss %" in text


@pytest.mark.parametrize("coll", ["allgather", "allreduce", "alltoall"])
def test_a_what_if_certificate_is_checked_with_the_same_options(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], coll: str) -> None:
    """optimum --certificate with --degrade/--fail writes only the changed machine's
    certificate (the block goes to stderr); check proves it with the same options."""
    cert = tmp_path / "c.json"
    assert main(["optimum", "-c", coll, "ring:6", "--degrade", "0<>1=1/2",
                 "--certificate"]) == 0
    out, err = capsys.readouterr()
    assert "What-if on ring(6)" in err and "whatif" not in json.loads(out)
    cert.write_text(out)
    assert main(["check", "ring:6", str(cert), "--degrade", "0<>1=1/2"]) == 0
    assert capsys.readouterr().out.startswith("OK")
    assert main(["check", "ring:6", str(cert)]) == 1  # not the healthy machine's
    capsys.readouterr()


def test_no_certificate_of_a_disconnected_machine(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimum", "ring:4", "--fail", "0<>1", "--fail", "2<>3",
                 "--certificate"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "disconnected" in err and "no certificate" in err
