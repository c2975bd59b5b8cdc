"""collcert measured: nccl-tests runs set beside the certified optimum (docs/measured.md).

What the numbers say and their exit codes: a rate above the certified optimum (exit 1,
with the likely reasons), corrupted data (exit 1), a plateau far below the optimum with
the what-if hint whose factor brings the certified optimum exactly to the measurement,
and ranks that do not match the topology (exit 2 with both counts)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from nccl_tests_logs import new_log

from collcert import platforms
from collcert.cli import main
from collcert.importers import LogError, parse_nccl_tests, read_nccl_tests
from collcert.measured import measure
from collcert.reference.forestcoll import optimum
from collcert.reference.model import fraction_str, what_if

DATA = Path(__file__).parent / "data" / "nccl-tests"
P5 = str(DATA / "aws-p5-h100x8-allreduce-nvls.txt")


def test_nvls_above_the_optimum_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    """8 H100 with NVLS measure 276 GB/s algbw; ForestColl's model (switches do not add:
    dgx_h100:1,none) certifies 1800/7: exit 1, naming in-network reduction and staying
    below C = 450."""
    code = main(["measured", "dgx_h100:1,none", P5, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["exit_code"] == 1
    run = out["runs"][0]
    assert run["ranks"] == 8 and run["test"] == "all_reduce_perf"
    model = run["series"][0]["model"]
    assert model["optimum_alg_bw"] == "1800/7" and model["cut_set_bound_alg_bw"] == "450"
    above = [v for v in run["verdicts"] if v["kind"] == "above"]
    assert len(above) == 1
    text = above[0]["text"]
    assert "276.20 GB/s algbw at 16 GiB (in-place)" in text
    assert "in-network reduction" in text and "does not declare" in text
    assert "below the cut-set bound C = 450" in text
    rows = run["series"][0]["rows"]
    assert rows[-1]["alg_bw"] == "27603/100" and rows[-1]["bus_bw"] == "9661/20"
    assert Fraction(rows[-1]["fraction_of_bound"]) == Fraction(27603, 100) / Fraction(1800, 7)
    names = [c["name"] for c in model["curves"]]
    assert "nccl-ring" in names and "nccl-tree" in names  # NCCL's, from the registry


def test_the_declared_in_network_model_is_used() -> None:
    """dgx_h100 declares its NVSwitch an NVLS switch: the optimum is the in-network
    model's, 400 GB/s = 450·8/9 (certified, checked by certify.innetwork), and the same
    run is 0.69 of it; no what-if search (the optimum is not the cut-set bound), said
    so."""
    m = measure(platforms.dgx_h100(1), read_nccl_tests(P5).runs[0], baselines=())
    model = m.series[0].model
    assert model is not None and model.in_network
    assert model.optimum == model.ceiling == 400 and "NVLS" in model.optimum_kind
    assert [v.kind for v in m.verdicts] == ["far-below"] and m.exit_code == 0
    assert "the plateau is 0.69 of the optimum" in m.verdicts[0].text
    assert m.hints == [] and any("not the cut-set bound" in n for n in m.notes)


def test_ranks_must_match_the_topology() -> None:
    a3 = read_nccl_tests(str(DATA / "gcp-a3mega-h100x16-allreduce.txt")).runs[0]
    with pytest.raises(LogError) as err:
        measure(platforms.dgx_h100(1), a3, baselines=())
    assert "16 ranks" in str(err.value) and "8 compute nodes" in str(err.value)
    p5 = read_nccl_tests(P5).runs[0]  # no rank lines: busbw / algbw says 8
    with pytest.raises(LogError) as err:
        measure(platforms.dgx_h100(2), p5, baselines=())
    assert "8 ranks" in str(err.value) and "16 compute nodes" in str(err.value)


def test_cli_rank_mismatch_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["measured", "dgx_h100:2", P5]) == 2
    err = capsys.readouterr().err
    assert "8 ranks" in err and "16 compute nodes" in err and "--ranks" in err


def test_corrupted_data_exits_1() -> None:
    sizes = [(2**k, 20 + 2**k / 1000) for k in range(10, 20, 3)]
    run = parse_nccl_tests(new_log("all_reduce", 4, sizes, wrong=12), "wrong.log").runs[0]
    m = measure(platforms.complete(4), run, baselines=())
    assert m.exit_code == 1
    assert m.verdicts[0].kind == "corrupted" and "#wrong 12" in m.verdicts[0].text


def test_far_below_hint_brings_the_optimum_to_the_measurement() -> None:
    """A 2-box allgather at 0.45 of the optimum: the hint's factor f, applied with
    collcert's what-if, gives a certified optimum equal to the measured peak, exactly."""
    sizes = [(2**k, 30 + 2**k / 240_000) for k in range(10, 32, 3)]
    run = parse_nccl_tests(new_log("all_gather", 16, sizes, op="none"), "ag.log").runs[0]
    t = platforms.dgx_h100(2)
    m = measure(t, run, baselines=())
    kinds = [v.kind for v in m.verdicts]
    assert kinds == ["far-below"] and m.exit_code == 0
    assert "the plateau is 0.45 of the optimum" in m.verdicts[0].text
    peak = m.series[0].peak()
    assert peak is not None
    by = {h.family: h for h in m.hints}
    assert by["one NIC"].factor is None  # one NIC alone cannot explain it
    f = by["every link between boxes"].factor
    assert f is not None and 0 < f < 1
    changed = what_if(t, degrade=[f"{u}>{v}={fraction_str(c * f)}"
                                  for (u, v), c in t.capacity.items()
                                  if (u, v) in set(by["every link between boxes"].links)])
    assert changed.topology is not None
    assert optimum(changed.topology, "allgather").algbw == peak.algbw


def test_ranks_mapping_onto_part_of_the_machine(tmp_path: Path) -> None:
    """--ranks: a 2-rank broadcast from rank 1 on two of complete:4's nodes, the others
    left out; the root is the node rank 1 names."""
    sizes = [(2**k, 1 + 2**k / 950) for k in range(10, 20, 3)]
    run = parse_nccl_tests(new_log("broadcast", 2, sizes, op="none", root=1), "b.log").runs[0]
    m = measure(platforms.complete(4), run, ranks=["3", "1"], baselines=())
    s = m.series[0]
    assert str(s.root_node) == "1" and s.model is not None
    assert s.model.optimum == 1  # one link of capacity 1 GB/s joins them
    assert m.verdicts[0].kind == "below"


def test_plot_and_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    sizes = [(2**k, 2 + 2**k / 4500) for k in range(10, 24, 2)]
    log = tmp_path / "ag.log"
    log.write_text(new_log("all_gather", 4, sizes, op="none"), encoding="utf-8")
    png = tmp_path / "m.png"
    code = main(["measured", "complete:4", str(log), "--alpha", "1", "--plot", str(png),
                 "--busbw"])
    out = capsys.readouterr().out
    assert code == 1 and png.stat().st_size > 10_000  # 4.5 GB/s beats the certified 4
    assert "ABOVE THE OPTIMUM" in out and "certified optimum: algbw 4 GB/s" in out
    assert "bandwidth dominates from 16 KiB" in out  # n½ = 4.5 GB/s × 2 µs = 9000 B


def test_alltoall_sendrecv_and_alpha_note() -> None:
    sizes = [(2**k, 2 + 2**k / 2500) for k in range(10, 24, 3)]
    t = platforms.complete(4)
    a2a = measure(t, parse_nccl_tests(new_log("alltoall", 4, sizes, op="none"), "a").runs[0])
    assert a2a.collective == "alltoall" and a2a.series[0].model is not None
    assert a2a.series[0].model.optimum == 4  # the certified maximum concurrent flow
    assert a2a.hints == []  # no cut-line hints for alltoall
    sr = measure(t, parse_nccl_tests(new_log("sendrecv", 4, sizes), "s").runs[0])
    assert [v.kind for v in sr.verdicts] == ["no-optimum"] and sr.exit_code == 0
    ag = parse_nccl_tests(new_log("all_gather", 4, sizes, op="none"), "g").runs[0]
    slow = measure(t, ag, alpha=1000, baselines=())  # α far beyond the 2 µs measured
    assert any("beats the optimum's α-β bound" in n for n in slow.notes)


def test_several_runs_and_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sizes = [(2**k, 2 + 2**k / 900) for k in range(10, 24, 3)]
    log = tmp_path / "two.log"
    log.write_text(new_log("all_gather", 4, sizes, op="none")
                   + new_log("all_reduce", 4, sizes, wrong=1), encoding="utf-8")
    assert main(["measured", "complete:4", str(log), "--json", "--baselines", "none"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [r["test"] for r in out["runs"]] == ["all_gather_perf", "all_reduce_perf"]
    assert [r["exit_code"] for r in out["runs"]] == [0, 1]
    assert main(["measured", "complete:4", str(log), "--run", "1", "--baselines", "none"]) == 0
    capsys.readouterr()
    assert main(["measured", "complete:4", str(log), "--run", "3"]) == 2
    assert "2 runs" in capsys.readouterr().err
    assert main(["measured", "complete:4", str(log), "--run", "1", "-c", "broadcast"]) == 2
    assert "names all_gather_perf" in capsys.readouterr().err
    assert main(["measured", "complete:4", str(log), "--baselines", "nccl-nope"]) == 2
    assert "choose from" in capsys.readouterr().err
