"""Holes the red team found in the day's new features (issues 29, 30, 32), each pinned by
the smallest input that showed it: the command-line path it broke, and what it does now."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from collcert.certify.execution import mscclpp
from collcert.smoke import load_plan
from collcert.smoke.mscclppplan import _orders

DATA = Path(__file__).resolve().parent / "data" / "mscclpp"


def test_smoke_seed_draws_the_mscclpp_thread_orders() -> None:
    """`collcert smoke PLAN --seed S` used seed 0 for an MSCCL++ plan's random thread
    orders whatever S was: the seed now reaches them, and the note names it."""
    text = (DATA / "allgather_2gpu.json").read_text()
    pp = mscclpp.read(text)
    a = [order for name, order in _orders(pp, 8, 1) if name.startswith("random")]
    b = [order for name, order in _orders(pp, 8, 2) if name.startswith("random")]
    assert len(a) == 4 and a != b
    plan = load_plan(text, "mscclpp-json", seed=12345)[0]
    assert any("seed 12345" in note for note in plan.notes), plan.notes


NCCL = Path(__file__).resolve().parent / "data" / "nccl-tests"
P5 = NCCL / "aws-p5-h100x8-allreduce-nvls.txt"


def _p5_rows(text: str, size: str, time: str) -> str:
    """The 4 GiB row of the p5 log with its size or out-of-place time replaced."""
    old = "  4294967296    1073741824     float     sum      -1    15791  271.98"
    assert old in text
    return text.replace(old, f"  {size:>10}    1073741824     float     sum      -1  {time:>7}  271.98")


def test_measured_refuses_a_row_of_zero_bytes_or_zero_time_with_a_rate() -> None:
    """A row of 0 bytes (or a time of 0) with algbw 271.98 cannot be size / time; both
    were accepted (the check returned early) and compared as measurements."""
    from collcert.importers import LogError, parse_nccl_tests

    text = P5.read_text()
    for size, time, said in (("0", "15791", "0 B / 15791"), ("4294967296", "0", "infinite")):
        with pytest.raises(LogError, match=f"line 33: out-of-place algbw 271.98 .*{said}"):
            parse_nccl_tests(_p5_rows(text, size, time).encode(), "p5.txt")
    zero = text.replace("           8             2     float     sum      -1    12.90    0.00",
                        "           0             0     float     sum      -1    12.90    0.00")
    assert parse_nccl_tests(zero.encode(), "p5.txt").runs[0].rows[0].size == 0  # as printed


def test_measured_reads_tabs_and_a_byte_order_mark() -> None:
    """A log pasted through an editor (tabs for runs of spaces; a UTF-8 byte-order mark)
    was refused as 'not nccl-tests output' at its first row or first line."""
    from collcert.importers import parse_nccl_tests

    data = P5.read_bytes()
    want = [(r.size, r.out_of_place.algbw.value) for r in parse_nccl_tests(data).runs[0].rows]
    for variant in (data.replace(b"     ", b"\t"), b"\xef\xbb\xbf" + data):
        rows = parse_nccl_tests(variant, "pasted.txt").runs[0].rows
        assert [(r.size, r.out_of_place.algbw.value) for r in rows] == want


def test_measured_refuses_more_rows_than_it_reads_before_reading(monkeypatch: Any) -> None:
    """2 million rows (250 MB) were read and compared for 10 minutes and 5.7 GB, silently:
    a file with more table rows than MAX_ROWS is refused from a scan of its lines."""
    from collcert.importers import LogError, nccl_tests

    monkeypatch.setattr(nccl_tests, "MAX_ROWS", 40)
    text = P5.read_text()
    lines = text.splitlines()
    big = "\n".join(lines[:3] + lines[3:35] * 2 + lines[35:])
    with pytest.raises(LogError, match="more than 40 table rows .from line 4 on.*split"):
        nccl_tests.parse_nccl_tests(big.encode(), "big.txt")
    called: list[int] = []  # the scan is what refused it: no row was parsed
    monkeypatch.setattr(nccl_tests, "parse_row", lambda *a: called.append(1))
    with pytest.raises(LogError):
        nccl_tests.parse_nccl_tests(big.encode(), "big.txt")
    assert not called


def test_measured_runs_of_one_test_share_the_optimum(monkeypatch: Any) -> None:
    """20 identical runs in one file computed the optimum and the baselines 20 times
    (79 s where one run takes 8 s), with one run's estimate: runs of the same test,
    ranks and sizes now share one model."""
    from collcert import platforms
    from collcert.importers import parse_nccl_tests
    from collcert.measured import analysis

    built: list[str] = []
    real = analysis.build_model

    def counting(*args: Any, **kw: Any) -> Any:
        built.append(args[1])
        return real(*args, **kw)

    monkeypatch.setattr(analysis, "build_model", counting)
    runs = parse_nccl_tests(P5.read_bytes() * 3, "p5x3.txt").runs
    assert len(runs) == 3
    topo, models = platforms.dgx_a100(1), {}
    out = [analysis.measure(topo, r, hint=False, models=models) for r in runs]
    assert built == ["allreduce"]
    figures = [[(r["size"], r["bound_alg_bw"], r["models_alg_bw"])
                for r in m.to_json()["series"][0]["rows"]] for m in out]
    alone = analysis.measure(topo, runs[2], hint=False)  # its own models: the same figures
    assert figures[2] == [(r["size"], r["bound_alg_bw"], r["models_alg_bw"])
                          for r in alone.to_json()["series"][0]["rows"]]
    assert figures[0] == figures[2] and len(figures[0]) == 32


def test_the_docs_issue22_topology_is_the_tests_machine() -> None:
    """docs/runtimes.md, schedules.md and smoke.md ran `collcert schedule issue22.json`,
    a file no newcomer had (the machine lived in tests/test_export_rate.py): it is kept
    in tests/data/topologies/issue22.json, and is that machine."""
    from test_export_rate import issue_topology

    from collcert.reference.model import Topology

    path = Path(__file__).resolve().parent / "data" / "topologies" / "issue22.json"
    kept = Topology.from_json(json.loads(path.read_text()))
    assert kept.to_json() == issue_topology().to_json()
    docs = Path(__file__).resolve().parents[1] / "docs"
    for page in ("runtimes.md", "schedules.md", "smoke.md"):
        text = (docs / page).read_text()
        assert " issue22.json" not in text and "tests/data/topologies/issue22.json" in text
