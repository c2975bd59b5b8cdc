# ruff: noqa: UP031  (nccl-tests' own printf formats, kept as they are written in C)
"""The nccl-tests reader (collcert.importers.nccl_tests): real public logs as they are, every
column set nccl-tests has printed, launcher tags and NCCL's lines, and bad logs refused
naming the line (docs/measured.md)."""

from __future__ import annotations

import hashlib
import re
from fractions import Fraction
from pathlib import Path

import pytest
from nccl_tests_logs import figures, new_log, new_rows, old_log

from collcert.importers import LogError, parse_nccl_tests, read_nccl_tests

DATA = Path(__file__).parent / "data" / "nccl-tests"
SIZES = [(2**k, 10 + 2**k / 200_000) for k in range(10, 31, 4)]  # bytes, µs


def test_real_logs_are_kept_byte_for_byte() -> None:
    table = (DATA / "PROVENANCE.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `([^`]+\.(?:txt|log))` \|.*\| ([0-9a-f]{64}) \|$", table, re.M)
    files = sorted(p.name for p in DATA.iterdir() if p.suffix in (".txt", ".log"))
    assert sorted(name for name, _ in listed) == files
    for name, digest in listed:
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest, name


REAL = {  # file: (rows, ranks listed, every rank listed, the test the rows fit, ranks by factor)
    "aws-p5-h100x8-allreduce-nvls.txt": (32, None, False, "all_reduce", 8),
    "aws-p5-h100x16-allreduce.log": (32, 16, True, "all_reduce", 16),
    "gcp-a3mega-h100x16-allreduce.txt": (31, 16, True, "all_reduce", 16),
    "coreweave-gb200-nvl72-allreduce.txt": (5, 72, False, "all_reduce", 72),
    "coreweave-h100-sharp-allreduce.txt": (5, None, False, "all_reduce", 96),
    "aws-p4d-a100x16-allreduce-efa.txt": (30, 16, True, "all_reduce", 16),
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_logs_read_as_they_are(name: str) -> None:
    rows, listed, complete, test, n = REAL[name]
    log = read_nccl_tests(str(DATA / name))
    assert len(log.runs) == 1
    run = log.runs[0]
    assert len(run.rows) == rows
    assert run.listed_ranks() == (listed, complete)
    fitting = [t for t in run.candidates() if not run.fits(t, n)]
    assert fitting == [test]  # busbw / algbw leaves one test: all_reduce's 2(n-1)/n
    assert run.factor_ranks(test) == [n]


def test_real_logs_details() -> None:
    p5 = read_nccl_tests(str(DATA / "aws-p5-h100x8-allreduce-nvls.txt")).runs[0]
    last = p5.rows[-1]
    assert (last.size, last.count, last.dtype, last.redop, last.root) == (
        17179869184, 4294967296, "float", "sum", -1)
    assert last.out_of_place.algbw.value == Fraction(27603, 100)
    assert last.in_place is not None and last.in_place.busbw.text == "483.35"
    assert p5.avg_busbw == Fraction("156.742") and p5.out_of_bounds == 0
    two = read_nccl_tests(str(DATA / "aws-p5-h100x16-allreduce.log"))
    assert two.runs[0].nccl_version == "2.22.3+cuda12.2"
    assert two.nccl_lines == 2881  # NCCL INFO lines of every rank, passed over
    assert two.runs[0].rows[0].out_of_place.time.text == "85.70"  # tags inside the row
    old = read_nccl_tests(str(DATA / "aws-p4d-a100x16-allreduce-efa.txt")).runs[0]
    assert old.layout is not None and old.layout.check == "error"
    assert old.layout.prefix == ("size", "count", "type", "redop")
    assert old.ranks[3].host == "nccl-tests-efa-16-worker-0" and old.ranks[3].name == \
        "A100-SXM4-40GB"
    assert old.corrupted(16) == []  # 5e-07 errors: within 1e-5 × 15 (DeltaMaxValue)
    assert old.corrupted(1) != []


@pytest.mark.parametrize("columns,test,expect", [
    ((), "all_gather", ["all_gather", "sendrecv"]),
    (("root",), "broadcast", ["broadcast"]),
    (("redop", "root"), "reduce", ["reduce"]),
    (("redop",), "all_reduce", ["all_reduce", "reduce_scatter", "alltoall"]),
])
def test_old_column_sets(columns: tuple[str, ...], test: str, expect: list[str]) -> None:
    log = parse_nccl_tests(old_log(columns, test, 4, SIZES), "old.log")
    run = log.runs[0]
    assert run.layout is not None and run.layout.prefix == ("size", "count", "type") + columns
    assert run.candidates() == expect
    assert len(run.rows) == len(SIZES) and run.listed_ranks() == (4, True)
    assert [t for t in expect if not run.fits(t, 4)][0] == test


def test_first_format_2017_time_in_milliseconds() -> None:
    rows = []
    for size, t in SIZES:
        a = size / t / 1000
        rows.append("%12li  %12li  %6s  %6s" % (size, size // 4, "float", "sum")
                    + "".join("  %7.3f  %5.2f  %5.2f  %7.0le" % (t / 1000, a, a * 1.5, 0)
                              for _ in range(2)))
    text = ("nThread 1 nGpus 4 minBytes 1024 maxBytes 1073741824 step: 16(factor) warmup "
            "iters: 5 iters: 20 validation: 1 \n"
            "# %10s  %12s  %6s  %6s  %7s  %5s  %5s  %7s  %7s  %5s  %5s  %7s\n" % (
                "bytes", "N", "type", "op", "time", "algbw", "busbw", "res", "time", "algbw",
                "busbw", "res")
            + "\n".join(rows) + "\n Out of bounds values : 0 OK\n Avg bus bandwidth    : 1 \n")
    run = parse_nccl_tests(text, "2017.log").runs[0]
    assert run.layout is not None and run.layout.time_scale == 1000
    assert run.rows[-1].out_of_place.time.value > 1000  # read in µs
    assert run.factor_ranks("all_reduce") == [4]


def test_per_iteration_and_timestamp_columns() -> None:
    head = ("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s"
            "  %6s  %7s  %7s  %7s  %7s %*s\n") % (
        "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "i_min",
        "i_max", "i_p99", "i_cv%", "time", "algbw", "busbw", "#wrong", "i_min", "i_max",
        "i_p99", "i_cv%", 19, "timestamp")
    rows = []
    for size, t in SIZES:
        tt, a, b = figures(size, t, "all_reduce", 8)
        per = "  %7s  %7s  %7s  %7s" % ("1.00", "2.00", "1.90", "3.50")
        rows.append("%12li  %12li  %8s  %6s  %6s" % (size, size // 4, "float", "sum", "    -1")
                    + ("  %7s  %6s  %6s  %6g" % (tt, a, b, 0) + per) * 2
                    + "%21s" % "2026-06-08 10:00:00")
    run = parse_nccl_tests("#\n" + head + "\n".join(rows) + "\n", "iter.log").runs[0]
    assert run.layout is not None and run.layout.per_iteration and run.layout.timestamp
    assert len(run.rows) == len(SIZES)


def test_launcher_tags_and_nccl_lines_inside_rows() -> None:
    """MPICH's -prepend-rank tags ('[0]') before every piece nccl-tests prints, NCCL's
    tuning lines between the pieces of a row (as in NVIDIA/nccl#1453)."""
    info = "[0] node1:497888:497888 [0] NCCL INFO {} Bytes -> Algo 1 proto 2 time 25.87"
    lines = ["[0]" + line for line in NEW_ROWS_HEAD.splitlines()]
    for size, t in SIZES:
        tt, a, b = figures(size, t, "all_reduce", 8)
        lines += ["[0]%12li  %12li  %8s  %6s  %6s[0] " % (size, size // 4, "float", "sum", "    -1")
                  + info.format(size)[4:], info.format(size),
                  "[0]  %7s  %6s  %6s  %6g[0]  %7s  %6s  %6s  %6g" % (tt, a, b, 0, tt, a, b, 0)]
    log = parse_nccl_tests("\n".join(lines) + "\n", "tags.log")
    assert len(log.runs[0].rows) == len(SIZES)
    assert log.nccl_lines == 2 * len(SIZES)


NEW_ROWS_HEAD = "#\n# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n" % (
    "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
    "algbw", "busbw", "#wrong")


def test_srun_labels_and_several_runs() -> None:
    text = (new_log("all_gather", 4, SIZES, op="none") + "NCCL version 2.27.3+cuda12.9\n"
            + new_log("broadcast", 4, SIZES, op="none", root=2))
    labelled = "".join(f"0: {line}\n" for line in text.splitlines())
    log = parse_nccl_tests(labelled, "two.log")
    assert [r.test for r in log.runs] == ["all_gather", "broadcast"]
    assert log.runs[0].nccl_version == "2.27.3"  # nccl-library=22703
    assert log.runs[1].rows[0].root == 2


def test_wrong_data_is_reported() -> None:
    text = new_log("all_reduce", 4, SIZES, wrong=3).replace(
        "# Out of bounds values : 0 OK", "rank=1 #wrong=3\n# Out of bounds values : 6 FAILED")
    run = parse_nccl_tests(text, "wrong.log").runs[0]
    why = run.corrupted(4)
    assert any("#wrong 3" in w for w in why) and any("rank=1 #wrong=3" in w for w in why)
    assert any("6 out-of-bounds" in w for w in why)


BAD = [  # (what, text change, words the error must contain)
    ("row cut short", lambda t: t.replace(ROW_TAIL, "", 1), ["line 12", "cut short"]),
    ("NaN", lambda t: t.replace(ROW_TAIL, "nan    nan    nan       0", 1),
     ["line 12", "'nan'"]),
    ("negative time", lambda t: t.replace(ROW_TAIL, "-10.01    0.10    0.15       0", 1),
     ["line 12", "negative"]),
    ("10^400 bytes", lambda t: t.replace("        1024  ", "1" + "0" * 400 + "  ", 1),
     ["line 12", "401 digits"]),
    ("altered algbw", lambda t: t.replace(ROW_TAIL, "10.01    9.10    0.15       0", 1),
     ["line 12", "not size / time"]),
    ("header cut short", lambda t: t.replace("busbw  #wrong     time", "busbw", 1),
     ["line 10", "column header"]),
    ("unknown line", lambda t: t.replace("# Using devices", "Segmentation fault"),
     ["line 3", "not nccl-tests output", "Segmentation fault"]),
    ("file cut inside a row", lambda t: t[:t.index(ROW_TAIL)], ["line 12", "cut short"]),
    ("a rank line cut short", lambda t: t.replace("on      node0 device  1", "on", 1),
     ["line 5", "rank line"]),
]
ROW_TAIL = "10.01    0.10    0.15       0"


@pytest.mark.parametrize("what", [b[0] for b in BAD])
def test_bad_logs_are_refused_naming_the_line(what: str) -> None:
    change, words = next((b[1], b[2]) for b in BAD if b[0] == what)
    text = new_log("all_reduce", 4, [(1024, 10.01)] + SIZES[1:], version=False)
    assert ROW_TAIL in text
    with pytest.raises(LogError) as err:
        parse_nccl_tests(change(text), "bad.log")
    for word in words:
        assert word in str(err.value), (word, str(err.value))


def test_binary_and_empty_files(tmp_path: Path) -> None:
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"# nThread 1\n\n" + bytes(range(256)))
    with pytest.raises(LogError, match=r"line 3: a NUL byte"):
        read_nccl_tests(str(blob))
    empty = tmp_path / "empty.log"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(LogError, match="no nccl-tests run"):
        read_nccl_tests(str(empty))
    header_only = tmp_path / "crashed.log"
    header_only.write_text(new_log("all_reduce", 2, SIZES).split("#       size")[0], "utf-8")
    with pytest.raises(LogError, match=r"line 1: a run with no table rows"):
        read_nccl_tests(str(header_only))


def test_new_rows_match_new_header() -> None:
    """The synthetic rows have the field count of the real 2022+ column set."""
    real = read_nccl_tests(str(DATA / "gcp-a3mega-h100x16-allreduce.txt")).runs[0]
    run = parse_nccl_tests(NEW_ROWS_HEAD + new_rows("all_reduce", 16, SIZES), "x").runs[0]
    assert run.layout == real.layout
