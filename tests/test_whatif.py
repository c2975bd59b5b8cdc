"""What-if analysis: ``--degrade LINK=CAP`` / ``--fail NODE_OR_LINK`` (reference.model.whatif
and the optimum/schedule commands): the changed machine, its optimum, the loss and the
cut that explains it, and clear refusals of bad input."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from collcert import platforms
from collcert.cli import main
from collcert.reference.forestcoll import optimum
from collcert.reference.model import TopologyError, what_if

NCCL_DUMP = "tests/data/importers/dgx_a100_dump.xml"


def test_degrade_sets_exact_capacities_both_directions() -> None:
    t = platforms.dgx_a100(2)
    w = what_if(t, degrade=["b1.gpu2<>b1.nic2=25/2"])
    assert w.topology is not None and not w.disconnected
    new = w.topology.capacity
    assert new[("b1.gpu2", "b1.nic2")] == new[("b1.nic2", "b1.gpu2")] == Fraction(25, 2)
    untouched = [e for e in t.capacity if e not in w.changed]
    assert all(new[e] == t.capacity[e] for e in untouched)
    assert set(w.changed) == {("b1.gpu2", "b1.nic2"), ("b1.nic2", "b1.gpu2")}


def test_half_speed_nic_matches_the_hand_derivation() -> None:
    # NIC b3.nic2 at 25/2 on every link: the worst cut is the complement S of box 3;
    # 7 NICs at 25 and one at 25/2 enter box 3, so 1/x* = 8·(k−1) / (7·25 + 25/2) and
    # algbw = N·x* with N = 8k (Zhao & Krishnamurthy 2023, eq. (1)).
    k = 4
    t = platforms.dgx_a100(k)
    w = what_if(t, degrade=["b3.nic2=25/2"])
    assert w.topology is not None
    opt = optimum(w.topology, "allgather")
    enter_box = 7 * 25 + Fraction(25, 2)
    assert opt.algbw == 8 * k * enter_box / (8 * (k - 1))
    assert opt.cut is not None
    outside = {v for v in w.topology.compute_nodes if v not in opt.cut}
    assert outside == {f"b3.gpu{g}" for g in range(8)}
    assert opt.algbw < optimum(t, "allgather").algbw


def test_failed_node_takes_its_links() -> None:
    t = platforms.dgx_a100(2)
    w = what_if(t, fail=["b0.nic5"])
    assert w.topology is not None and "b0.nic5" not in w.topology.index
    assert w.removed_nodes == ("b0.nic5",)
    assert all("b0.nic5" not in e for e in w.topology.capacity)
    assert len(w.changed) == sum(1 for e in t.capacity if "b0.nic5" in e)


def test_disconnection_names_the_cut_off_compute_nodes() -> None:
    t = platforms.dgx_a100(2)
    w = what_if(t, fail=["ib0", "ib1"])
    assert w.disconnected and w.cut is not None
    assert len(w.cut_off) == 8 and len({str(v)[:2] for v in w.cut_off}) == 1
    # no link of the changed machine leaves S, and S splits the compute nodes
    left = {e: c for e, c in t.capacity.items() if e not in w.changed}
    assert not [e for e in left if e[0] in w.cut and e[1] not in w.cut]
    assert 0 < sum(v in w.cut for v in t.compute_nodes) < t.num_compute


@pytest.mark.parametrize(("degrade", "fail", "words"), [
    (["b1.gpu2<>b1.nic9=1"], [], "not a node"),
    (["b1.gpu2<>b1.nic3=1"], [], "no link"),
    (["b1.gpu2<>b1.nic2=0"], [], "must be > 0"),
    (["b1.gpu2<>b1.nic2=-1/2"], [], "must be > 0"),
    (["b1.gpu2<>b1.nic2=fast"], [], "not a capacity"),
    (["b1.gpu2<>b1.nic2"], [], "LINK=CAPACITY"),
    (["b1.gpu2>b1.nic2=1"], [], "SRC<>DST"),
    ([], ["b1.gpu0>b1.nvswitch"], "SRC<>DST"),
    (["b1.gpu2<>b1.nic2=3"], ["b1.nic2"], "also given to --fail"),
    ([], ["b1.gpu99"], "did you mean"),
])
def test_bad_input_is_refused_clearly(degrade: list[str], fail: list[str], words: str) -> None:
    with pytest.raises(TopologyError, match=words.replace(">", ".")):
        what_if(platforms.dgx_a100(2), degrade=degrade, fail=fail)


def test_optimum_command_reports_loss_and_cut(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimum", "dgx_a100:2", "--fail", "b1.nic2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["whatif"]
    healthy, now = Fraction(out["healthy_algbw"]), Fraction(out["algbw"])
    assert now < healthy
    assert Fraction(out["loss_percent"]) == (healthy - now) * 100 / healthy
    cut = out["cut"]
    assert cut["listed_side"] == "outside" and cut["listed"] == ["b1.gpu2"]
    # allgather: algbw = N · B⁺(S) / |S ∩ V_c| at the witness cut
    assert now == 16 * Fraction(cut["out_capacity"]) / cut["compute_inside"]
    assert main(["optimum", "dgx_a100:2", "--fail", "b1.nic2"]) == 0
    text = capsys.readouterr().out
    assert "loss" in text and "b1.gpu2" in text


def test_optimum_command_disconnected_is_rate_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimum", "dgx_a100:2", "--fail", "ib0", "--fail", "ib1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["whatif"]
    assert out["disconnected"] and out["algbw"] == "0" and out["loss_percent"] == "100"
    assert len(out["cut_off"]) == 8 and out["cut"]["out_capacity"] == "0"


def test_commands_exit_2_on_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimum", "dgx_a100:2", "--degrade", "b1.gpu2<>b1.nic2=0"]) == 2
    assert main(["schedule", "dgx_a100:2", "--fail", "nowhere"]) == 2
    assert main(["schedule", "dgx_a100:2", "--fail", "ib0", "--fail", "ib1"]) == 2
    err = capsys.readouterr().err
    assert "cut off" in err and "Traceback" not in err


def test_schedule_on_the_changed_machine_is_certified(capsys: pytest.CaptureFixture[str],
                                                      ) -> None:
    assert main(["schedule", "dgx_a100:2", "--degrade", "b0.nic1=25/2", "--check",
                 "--json"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["optimal"]
    assert "loss" in captured.err
    healthy = optimum(platforms.dgx_a100(2), "allgather").algbw
    assert Fraction(summary["algbw"]) < healthy


def test_imported_nccl_topology(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimum", NCCL_DUMP, "--degrade", "gpu3<>nvswitch=150", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["whatif"]
    assert Fraction(out["algbw"]) < Fraction(out["healthy_algbw"])
    assert out["cut"]["listed"] == ["gpu3"]


def test_symmetrized_machine_is_below_the_degraded_one_and_symmetric() -> None:
    from collcert.reference.forestcoll.symmetrize import symmetrized
    from collcert.reference.symmetry import find_symmetry

    h = platforms.dgx_a100(4)
    t = what_if(h, degrade=["b3.nic2=25/2"]).topology
    assert t is not None
    m = symmetrized(t, h)
    assert m is not None and find_symmetry(m) is not None and find_symmetry(t) is None
    assert all(c <= t.capacity[e] for e, c in m.capacity.items())
    # every box's NIC 2 now at the degraded capacity
    assert all(m.capacity[(f"b{b}.gpu2", f"b{b}.nic2")] == Fraction(25, 2) for b in range(4))
    failed = what_if(h, fail=["b1.nic5"]).topology
    assert failed is not None
    m2 = symmetrized(failed, h)
    assert m2 is not None and not any(f"b{b}.nic5" in m2.index for b in range(4))
    # a failed GPU changes the compute nodes: nothing to borrow
    gone = what_if(h, fail=["b1.gpu0"]).topology
    assert gone is not None and symmetrized(gone, h) is None


@pytest.mark.parametrize("change", [{"degrade": ["b2.nic2=25/2"]}, {"fail": ["b1.nic6"]}])
def test_degraded_schedule_borrowed_from_the_symmetrized_machine(change: dict[str, list[str]],
                                                                 ) -> None:
    from collcert.certify.forestcoll import check_schedule
    from collcert.certify.model import Topo
    from collcert.reference.forestcoll import schedule

    h = platforms.dgx_a100(8)
    t = what_if(h, **change).topology  # type: ignore[arg-type]
    assert t is not None
    s = schedule(t, "allgather", healthy=h)
    assert "symmetrized" in s.extra
    assert s.topology is t and s.time_per_unit == optimum(t, "allgather").time_per_unit
    doc = json.loads(json.dumps(s.to_json(compact=True)))
    verdict = check_schedule(Topo(t.to_json()), doc)
    assert verdict.ok, verdict.all_reasons()[:3]
    assert verdict.facts["time_per_unit"] == s.time_per_unit


def test_no_borrowing_when_symmetrizing_costs_bandwidth() -> None:
    from collcert.reference.forestcoll import schedule

    # every box loses all four NICs in the symmetrized machine, and four boxes have no
    # room to group these faults (three classes) one class per box orbit (nearpack)
    h = platforms.dgx_a100(4)
    t = what_if(h, fail=["b0.nic2", "b1.nic5", "b3.nic1", "b3.nic3"]).topology
    assert t is not None
    s = schedule(t, "allgather", healthy=h)
    assert "symmetrized" not in s.extra
    assert s.time_per_unit == optimum(t, "allgather").time_per_unit
