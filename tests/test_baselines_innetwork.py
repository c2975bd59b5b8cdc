"""NCCL's in-network and newer algorithms (NVLS, NVLS-tree, CollNet direct and chain, PAT)
as schedules: each audits at the rate derived by hand from NCCL's traffic
(docs/baselines.md), says why where NCCL would not run it, and ``collcert compare``
measures them against the optimum of the model the topology declares."""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

import pytest

from collcert import platforms
from collcert.certify.forestcoll import check_schedule
from collcert.certify.model import InputError, Topo
from collcert.reference import baselines as bl
from collcert.reference.model import Topology


def _check(t: Topology | dict[str, Any], doc: dict[str, Any]) -> Any:
    return check_schedule(Topo(t if isinstance(t, dict) else t.to_json()), doc)


def _algbw(t: Topology, name: str, coll: str) -> Fraction:
    v = _check(t, bl.baseline(t, name, coll).document)
    assert v.ok, v.all_reasons()[:3]
    return v.facts["algbw"]


def _star(n: int, nic: int = 50) -> Topology:
    """n hosts, one GPU each, its NIC switch on one InfiniBand switch."""
    links = []
    for i in range(n):
        links += [(f"g{i}", f"n{i}", 2 * nic), (f"n{i}", f"g{i}", 2 * nic),
                  (f"n{i}", "ib", nic), ("ib", f"n{i}", nic)]
    return Topology([f"g{i}" for i in range(n)], links,
                    [f"n{i}" for i in range(n)] + ["ib"], name="star", unit="GB/s")


def test_nvls_on_one_h100_box_carries_m_times_1_plus_1_over_n_each_way() -> None:
    # NCCL's NVLS allreduce on N GPUs of one NVSwitch (B = 450 each way): each GPU sends
    # its share of every part to the switch (M, its own part's share included:
    # multimem.ld_reduce reads all GPUs) and, as the head of one part, that part's sum
    # (M/N, multimem.st); it receives its part's sum (M/N) and every part from the
    # multicast (M, its own included). Time M(1 + 1/N)/B: algbw B·N/(N+1) = 400 at N = 8.
    t = platforms.dgx_h100(1)
    assert _algbw(t, "nccl-nvls", "allreduce") == Fraction(450 * 8, 9)
    # allgather: each GPU receives every GPU's data, its own included: M/B, algbw B;
    # reduce-scatter: each GPU sends its whole input through the switch: M/B
    assert _algbw(t, "nccl-nvls", "allgather") == 450
    assert _algbw(t, "nccl-nvls", "reduce-scatter") == 450


def test_nvls_tree_between_boxes_is_nic_bound_from_three_boxes() -> None:
    # Per part h and tree, a head's NIC carries its share to the parent and back down,
    # and to and from each child. Two trees (NCCL's double binary tree) over n boxes:
    # n = 2: one edge per tree, a NIC carries one share each way per tree: (2 trees ×
    # 1/16) = 1/8 of M per direction at 50 GB/s, 400; the NVLink inside (9/8 at 450)
    # gives 400 too. n = 4: a node inner in one tree and a leaf in the other carries 4
    # shares of 1/16 each way: 1/4 of M at 50 GB/s, 200.
    assert _algbw(platforms.dgx_h100(2), "nccl-nvls-tree", "allreduce") == 400
    assert _algbw(platforms.dgx_h100(4), "nccl-nvls-tree", "allreduce") == 200


def test_collnet_direct_and_chain_are_nvlink_bound_with_sharp() -> None:
    # CollNet direct: each GPU sends 7 of its 8 parts to their heads and gets the 7 totals
    # back, GPU to GPU through the NVSwitch (no NVLS): 2·7/8 of M each way at 450,
    # 1800/7; SHARP leaves each NIC one part each way (1/8 at 50 GB/s: 400). The chain
    # passes every channel's data up and down a chain of GPUs: the same NVLink load.
    for t in (platforms.dgx_h100(2, "sharp"), platforms.dgx_h100(3, "sharp")):
        assert _algbw(t, "nccl-collnet-direct", "allreduce") == Fraction(1800, 7)
        assert _algbw(t, "nccl-collnet-chain", "allreduce") == Fraction(1800, 7)
    doc = bl.baseline(t, "nccl-collnet-direct", "allreduce").document
    rs, ag = ([w["path"] for w in p["walks"]] for p in doc["phases"])
    assert ["b2.gpu0", "b2.nic0", "ib"] in rs  # the third box's sum ends in the switch (adds)
    assert ["ib", "b2.nic0", "b2.gpu0"] in ag  # and the total starts there (copies)


def test_pat_is_a_binomial_tree_per_root_at_the_ring_bandwidth() -> None:
    # PAT's data of rank x reaches x - s from x - (s & (s - 1)): each rank is the parent of
    # the same number of children over all roots (N - 1 sends of M/N): ring bandwidth,
    # 50·8/7 on the NICs, with trees ceil(log2 N) = 3 deep instead of a 7-hop ring.
    t = _star(8)
    for coll in ("allgather", "reduce-scatter"):
        assert _algbw(t, "nccl-pat", coll) == _algbw(t, "nccl-ring", coll) == Fraction(400, 7)
    b = bl.baseline(t, "nccl-pat", "allgather")
    tree = b.document["phases"][0]["trees"][0]  # root g0: distance s from 0 - (s & (s - 1))
    walks = b.document["phases"][0]["walks"]
    parent = {walks[i]["dst"]: walks[i]["src"] for i in tree["edges"]}
    assert parent == {"g7": "g0", "g6": "g0", "g5": "g6", "g4": "g0", "g3": "g4",
                      "g2": "g4", "g1": "g2"}
    assert "3 steps deep" in b.label


@pytest.mark.parametrize("t,name,coll,why", [
    (platforms.dgx_a100(1), "nccl-nvls", "allreduce", "forwards only"),
    (platforms.dgx_h100(1), "nccl-nvls", "broadcast", "rings only"),
    (platforms.dgx_h100(2), "nccl-nvls", "allreduce", "CollNet"),
    (platforms.gb200_nvl72(1), "nccl-nvls", "allgather", "at most 32 GPUs"),
    (platforms.dgx_h100(1), "nccl-nvls-tree", "allreduce", "on one node"),
    (platforms.dgx_h100(2), "nccl-nvls-tree", "allgather", "allreduce only"),
    (platforms.dgx_h100(2), "nccl-collnet-direct", "allreduce", "',sharp'"),
    (platforms.dgx_h100(1), "nccl-collnet-chain", "allreduce", "one box"),
    (platforms.gb200_nvl72(2, "sharp"), "nccl-collnet-direct", "allreduce", "up to 8 GPUs"),
    (platforms.dgx_h100(2), "nccl-pat", "allgather", "one GPU per node"),
    (platforms.dgx_h100(2), "nccl-pat", "allreduce", "allgather and reduce-scatter only"),
])
def test_where_nccl_would_not_run_it_the_reason_is_given(t: Topology, name: str, coll: str,
                                                         why: str) -> None:
    with pytest.raises(bl.BaselineError, match=why):
        bl.baseline(t, name, coll)


def test_a_switch_adds_and_copies_only_where_the_topology_declares_it() -> None:
    t = platforms.dgx_h100(1)
    doc = bl.baseline(t, "nccl-nvls", "allreduce").document
    gather = bl.baseline(t, "nccl-nvls", "allgather").document
    assert _check(t, doc).ok and _check(t, gather).ok
    data = t.to_json()
    data.pop("nvls_switches")  # the NVSwitch only forwards: no path may end or start there
    v = _check(data, doc)
    assert not v.ok and "nor a reducing switch" in " ".join(v.reasons)
    v = _check(data, gather)
    assert not v.ok and "nor a multicast switch" in " ".join(v.reasons)
    data["multicast_switches"] = ["b0.nvswitch"]  # copies, but adds nothing in an allreduce
    assert _check(data, gather).ok
    v = _check(data, doc)
    assert not v.ok and "nor a reducing switch" in " ".join(v.reasons)


def test_a_self_edge_loads_its_links_and_must_leave_and_come_back_right() -> None:
    t = platforms.dgx_h100(1)
    doc = copy.deepcopy(bl.baseline(t, "nccl-nvls", "allreduce").document)
    rs = doc["phases"][0]
    own = [i for i, w in enumerate(rs["walks"]) if w["src"] == w["dst"]]
    assert len(own) == 8
    # without both round trips the links would carry M each way, 450; NVLink SHARP
    # cannot run that (the load-reduce reads the issuer too, the store writes it too),
    # a switch adding the SHARP way can
    for phase in doc["phases"]:
        selfs = {i for i, w in enumerate(phase["walks"]) if w["src"] == w["dst"]}
        for tree in phase["trees"]:
            tree["edges"] = [i for i in tree["edges"] if i not in selfs]
    v = _check(t, doc)
    assert not v.ok and "sends no share of its own" in " ".join(v.reasons)
    sharp = t.to_json()
    sharp["reducing_switches"] = sharp.pop("nvls_switches")
    assert _check(sharp, doc).ok and _check(sharp, doc).facts["algbw"] == 450
    bad = copy.deepcopy(bl.baseline(t, "nccl-nvls", "allreduce").document)
    bad["phases"][0]["walks"][own[0]]["path"] = ["b0.gpu0", "b0.nvswitch", "b0.gpu1"]
    v = _check(t, bad)  # a root's share sent to another GPU is no round trip
    assert not v.ok and "ends at 'b0.gpu1'" in " ".join(v.reasons)


def test_a_reduction_rate_limits_the_switch_like_a_link() -> None:
    # b0.nvswitch outputs 8 sums of 1/8 of M each per unit of M (one per part it adds):
    # at a rate of 300 that takes 1/300, more than the links' 9/3600 = 1/400.
    data = platforms.dgx_h100(1).to_json()
    doc = bl.baseline(platforms.dgx_h100(1), "nccl-nvls", "allreduce").document
    data["reduction_rates"] = {"b0.nvswitch": "300"}
    v = _check(data, doc)
    assert v.ok and v.facts["algbw"] == 300
    assert "reducing switch b0.nvswitch" in v.facts["bottleneck"][0]


def test_compare_measures_them_against_the_in_network_optimum() -> None:
    t = platforms.dgx_h100(1)
    cmp = bl.compare(t, "allreduce", names=("nccl-ring", "nccl-nvls"))
    # NVLS's optimum is NCCL's NVLS: 400 = 450·8/9 (docs/in-network.md)
    assert cmp.optimum == 400 and cmp.optimum_kind == "certified"
    assert cmp.model == ("in-network: NVLS: b0.nvswitch reduces to a member GPU and "
                         "multicasts from one")
    assert cmp.row("nccl-nvls").ratio == 1 and cmp.row("lp5").algbw == Fraction(1800, 7)
    doubled = copy.deepcopy(cmp.row("nccl-nvls").document)
    assert doubled is not None
    doubled["weights"] = None  # cannot beat the optimum: dropping the round trips is refused
    for phase in doubled["phases"]:
        selfs = {i for i, w in enumerate(phase["walks"]) if w["src"] == w["dst"]}
        for tree in phase["trees"]:
            tree["edges"] = [i for i in tree["edges"] if i not in selfs]
    assert not _check(t, doubled).ok
    j = cmp.to_json()
    assert j["optimum_model"] == cmp.model


def test_msccl_export_is_refused_for_a_schedule_that_adds_in_a_switch() -> None:
    b = bl.baseline(platforms.dgx_h100(1), "nccl-nvls", "allreduce")
    with pytest.raises(bl.BaselineError, match="inside switches"):
        bl.msccl_program(b)


@pytest.mark.parametrize("t,name,coll", [
    (platforms.dgx_h100(1), "nccl-nvls", "allreduce"),
    (platforms.dgx_h100(1), "nccl-nvls", "reduce-scatter"),
    (platforms.dgx_h100(2), "nccl-nvls-tree", "allreduce"),
    (platforms.dgx_h100(3, "sharp"), "nccl-collnet-direct", "allreduce"),
    (_star(5), "nccl-pat", "allgather"),
], ids=["nvls", "nvls-rs", "nvls-tree", "collnet", "pat"])
def test_they_pass_smoke_gpu_to_gpu(t: Topology, name: str, coll: str, tmp_path: Any) -> None:
    # smoke runs the trees' G* edges from GPU to GPU (what a switch adds is added at the
    # receiving GPU; a self-edge moves nothing between ranks): the data flow is right
    pytest.importorskip("torch")
    import json

    from collcert.smoke import smoke

    path = tmp_path / "b.json"
    path.write_text(json.dumps(bl.baseline(t, name, coll).document))
    rep = smoke(str(path), backend="single-gpu", device="cpu", size=4096 * t.num_compute,
                iters=1, seed=3)
    assert rep.passed, rep.failures


def test_draw_shows_a_tree_with_round_trips(tmp_path: Any) -> None:
    # a self-edge is not drawn as an edge of the tree (it made the layout loop forever)
    pytest.importorskip("matplotlib")
    import json

    from collcert.cli import main

    path = tmp_path / "nvls.json"
    path.write_text(json.dumps(bl.baseline(platforms.dgx_h100(1), "nccl-nvls",
                                           "allreduce").document))
    out = tmp_path / "t.png"
    assert main(["draw", "dgx_h100:1", str(path), "--tree", "0", "-o", str(out)]) == 0
    assert out.stat().st_size > 10_000


def test_the_measurements_page_runs_as_written(capsys: Any) -> None:
    # docs/in-network-measurements.md: its Python block prints the table quoted after it
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs/in-network-measurements.md"
            ).read_text(encoding="utf-8")
    code, table = re.search(r"```python\n(.*?)```\n\n```\n(.*?)```", text, re.S).groups()
    exec(compile(code, "in-network-measurements.md", "exec"), {})
    assert capsys.readouterr().out == table


@pytest.mark.parametrize("t,name,coll", [
    (platforms.dgx_h100(1), "nccl-nvls", "allreduce"),
    (platforms.dgx_h100(1), "nccl-nvls", "allgather"),
    (_star(4), "nccl-pat", "reduce-scatter"),
], ids=["nvls", "nvls-ag", "pat"])  # (2-box machines: 12 s each at load 9, left to the above)
def test_audit_gives_the_rate_the_alpha_beta_model_uses(t: Topology, name: str,
                                                         coll: str) -> None:
    # collcert audit of the saved document: the same exact algbw as compare's row, and the
    # α-β time of 1 GB = 1 GB / algbw + the latency of the deepest route
    from collcert.auditing import audit

    cmp = bl.compare(t, coll, names=(name,), sizes=[10**9], alpha=1)
    row = cmp.row(name)
    report = audit(t, row.document)
    assert report.valid and report.algbw == row.algbw
    assert row.latency_us is not None and row.latency_us > 0
    assert row.times_us[0] == Fraction(10**6, 1) / row.algbw + row.latency_us


def test_bad_input_is_refused_naming_it() -> None:
    from collcert.cli import main

    # the old short names are unknown: exit 2, naming them
    assert main(["compare", "dgx_h100:1", "-c", "allreduce", "--baselines",
                 "nvls,nccl-nvls"]) == 2
    t = platforms.dgx_h100(1)
    doc = copy.deepcopy(bl.baseline(t, "nccl-nvls", "allreduce").document)
    own = next(w for w in doc["phases"][1]["walks"] if w["src"] == w["dst"])
    own["path"] = ["b0.gpu2"]  # a self-edge must leave the GPU: refused as it is read
    with pytest.raises(InputError, match="walk 7: path must be an array of 2 to 64"):
        _check(t, doc)
    own["path"] = ["b0.nvswitch", "b0.gpu0", "b0.nvswitch", own["dst"]]
    v = _check(t, doc)  # through a GPU
    assert not v.ok and "only switches may sit inside a path" in " ".join(v.reasons)
