"""audit --sizes/--plot of an MSCCL++ plan (red team O.5.3: it read the plan as a tree
schedule and failed after VALID): the table, the plot and the plan's latency term, the
longest chain of remote hops (collcert.certify.execution.mscclpp_latency)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from collcert.certify.execution import mscclpp, mscclpp_latency, mscclpp_sim
from collcert.cli import main


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("plans")
    for coll, extra in (("allgather", []), ("broadcast", ["--root", "2"]),
                        ("allreduce", [])):
        assert main(["schedule", "ring:4", "-c", coll, *extra, "--format", "mscclpp-json",
                     "-o", str(d / f"{coll}.json")]) == 0
    return d


def _sizes(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["audit", *args, "--json"]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


@pytest.mark.parametrize("fmt", [[], ["--format", "mscclpp-json"]])
def test_sizes_and_plot_of_a_plan(plans: Path, fmt: list[str],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    png = plans / "pl.png"
    out = _sizes(["ring:4", str(plans / "broadcast.json"), *fmt, "--sizes", "1K:4K",
                  "--plot", str(png)], capsys)
    sizes = out["sizes"]
    assert [r["size"] for r in sizes["rows"]] == [1024, 2048, 4096]
    assert sizes["latency"]["latency_us"] == "0"  # α = 0
    algbw = Fraction(out["algbw"])
    for row in sizes["rows"]:  # bandwidth only: time = size / algbw exactly
        assert row["root"] == 2
        assert Fraction(row["time"]) == Fraction(row["size"]) / (algbw * 1000)  # µs
    assert png.stat().st_size > 0


@pytest.mark.parametrize("coll", ["allgather", "broadcast", "allreduce"])
def test_the_latency_is_alpha_times_the_hops_and_above_the_bound(
        plans: Path, coll: str, capsys: pytest.CaptureFixture[str]) -> None:
    one = _sizes(["ring:4", str(plans / f"{coll}.json"), "--sizes", "1K", "--alpha", "1"],
                 capsys)["sizes"]
    two = _sizes(["ring:4", str(plans / f"{coll}.json"), "--sizes", "1K", "--alpha", "2"],
                 capsys)["sizes"]
    hops = one["latency"]["hops"]
    assert hops > 0 and Fraction(one["latency"]["latency_us"]) == hops
    assert Fraction(two["latency"]["latency_us"]) == 2 * hops
    assert hops >= Fraction(one["bound"]["latency"]["latency_us"])  # L ≥ D
    row = one["rows"][0]
    assert Fraction(row["time"]) == 1024 / (Fraction(_algbw(plans, coll, capsys)) * 1000) + hops


def _algbw(plans: Path, coll: str, capsys: pytest.CaptureFixture[str]) -> str:
    return str(_sizes(["ring:4", str(plans / f"{coll}.json")], capsys)["algbw"])


def test_a_hop_costs_only_on_its_own_ranks(plans: Path) -> None:
    plan = mscclpp.read((plans / "allgather.json").read_text())
    assert mscclpp_sim.run(plan).verdict.ok
    every = mscclpp_latency.latency(plan, lambda p, q: Fraction(1))
    assert every is not None
    none = mscclpp_latency.latency(plan, lambda p, q: Fraction(0))
    assert none is not None and none[0] == 0
    # one slow pair: the chain crosses it at least once (rank 1 needs rank 0's data) and
    # at most as often as it has hops
    slow = mscclpp_latency.latency(plan, lambda p, q: Fraction(100 if (p, q) == (0, 1) else 0))
    assert slow is not None and 100 <= slow[0] <= 100 * every[1]


def test_a_topology_alpha_is_used(plans: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    topo = {"compute_nodes": [0, 1, 2, 3],
            "links": [{"src": i, "dst": (i + 1) % 4, "capacity": 1, "alpha": 3,
                       "bidirectional": True} for i in range(4)]}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(topo))
    lat = _sizes([str(path), str(plans / "allgather.json"), "-f", "mscclpp-json",
                  "--plot", str(tmp_path / "x.png")], capsys)["sizes"]["latency"]
    assert Fraction(lat["latency_us"]) == 3 * lat["hops"] > 0
    assert (tmp_path / "x.png").exists()


def test_a_one_hop_ll_plan_meets_the_latency_bound(capsys: pytest.CaptureFixture[str]) -> None:
    """MSCCL++'s own LL allgather (tests/data/mscclpp, PROVENANCE.md): every rank writes
    its packets straight into every other rank, which reads them once their flags are
    set: one hop, so its latency is the farthest pair's α-distance, the bound D."""
    plan = Path(__file__).parent / "data" / "mscclpp" / "allgather_pkt_4gpu.json"
    sizes = _sizes(["ring:4", str(plan), "--sizes", "1K", "--alpha", "1"], capsys)["sizes"]
    assert sizes["latency"]["hops"] == 1
    assert sizes["latency"]["latency_us"] == sizes["bound"]["latency"]["latency_us"] == "2"
