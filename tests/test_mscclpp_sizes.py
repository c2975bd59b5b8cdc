"""audit --sizes/--plot of an MSCCL++ plan (red team O.5.3): the bandwidth-only table and
plot (α = 0); a latency (--alpha, per-link 'alpha') is refused before anything is printed,
since the latency of a plan is not modelled."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from collcert.cli import main


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("plans")
    for coll, extra in (("allgather", []), ("broadcast", ["--root", "2"])):
        assert main(["schedule", "ring:4", "-c", coll, *extra, "--format", "mscclpp-json",
                     "-o", str(d / f"{coll}.json")]) == 0
    return d


@pytest.mark.parametrize("fmt", [[], ["--format", "mscclpp-json"]])
def test_sizes_and_plot_of_a_plan(plans: Path, fmt: list[str],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    png = plans / "pl.png"
    assert main(["audit", "ring:4", str(plans / "broadcast.json"), *fmt, "--sizes", "1K:4K",
                 "--plot", str(png), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    sizes = out["sizes"]
    assert [r["size"] for r in sizes["rows"]] == [1024, 2048, 4096]
    assert sizes["latency"]["latency_us"] == "0"
    algbw = Fraction(out["algbw"])
    for row in sizes["rows"]:  # bandwidth only: time = size / algbw exactly
        assert row["root"] == 2
        assert Fraction(row["time"]) == Fraction(row["size"]) / (algbw * 1000)  # µs
    assert png.stat().st_size > 0


def test_alpha_is_refused_before_anything_is_printed(plans: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["audit", "ring:4", str(plans / "allgather.json"), "--sizes", "1K:1M",
                 "--alpha", "2"]) == 2
    got = capsys.readouterr()
    assert got.out == ""  # no VALID line before the refusal
    assert "--alpha 2" in got.err and "MSCCL++ plan" in got.err and "msccl-xml" in got.err


def test_a_topology_alpha_is_refused_before_the_audit(
        plans: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topo = {"compute_nodes": [0, 1, 2, 3],
            "links": [{"src": i, "dst": (i + 1) % 4, "capacity": 1, "alpha": 1,
                       "bidirectional": True} for i in range(4)]}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(topo))
    capsys.readouterr()
    assert main(["audit", str(path), str(plans / "allgather.json"), "-f", "mscclpp-json",
                 "--plot", str(tmp_path / "x.png")]) == 2
    got = capsys.readouterr()
    assert got.out == "" and "per-link 'alpha'" in got.err
    assert not (tmp_path / "x.png").exists()
