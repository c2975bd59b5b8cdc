"""``collcert reduce-tree`` and ``collcert draw`` on reduction files."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from collcert.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "reduce-tree", "4", "--transfer", "1", "--compute", "1")
    assert code == 0
    assert "makespan     4" in out and "Lemma 5" in out and "Prop 6" in out
    assert "operand order of the result: 1 4 3 2" in out  # Figure 1: t4 = 0, t3 = 1, t2 = 2
    assert "4  (sends at 0)" in out and "2  (sends at 2)" in out


def test_json_keys_and_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "reduce-tree", "9", "-d", "1/2", "-c", "1/3", "--json")
    assert code == 0
    doc = json.loads(out)
    for key in ("makespan", "lower_bound", "upper_bound", "parent", "send_time"):
        assert key in doc
    assert doc["makespan"] == "5/2"  # digest: (1/2, 1/3), n = 9
    assert doc["parent"][0] is None and all(p >= 1 for p in doc["parent"][1:])
    assert doc["send_time"][0] is None and len(doc["send_time"]) == 9
    assert Fraction(doc["lower_bound"]) <= Fraction(doc["makespan"]) <= Fraction(
        doc["upper_bound"])
    assert doc["check"]["ok"] is True
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs/schema/reduction.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(doc)


@pytest.mark.parametrize("extra,algorithm", [
    (["--max-transfers", "2"], "Algorithm 2"), (["--max-reducers", "2"], "Algorithm 3"),
    (["--non-overlapping"], "non-overlapping"), (["--strategy", "fibonacci"], "Fibonacci"),
])
def test_variants(capsys: pytest.CaptureFixture[str], extra: list[str], algorithm: str) -> None:
    code, out, _ = run(capsys, "reduce-tree", "7", "-d", "1", "-c", "2", "--json", *extra)
    doc = json.loads(out)
    assert code == 0 and algorithm in doc["algorithm"]
    if extra[0] == "--max-transfers":
        assert doc["makespan"] == "8" and doc["max_transfers"] == 2  # digest: n = 7, K = 2


def test_output_check_and_draw(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "tree.json"
    code, out, _ = run(capsys, "reduce-tree", "12", "-d", "2", "-c", "3", "-o", str(path))
    assert code == 0 and path.exists()
    code, out, _ = run(capsys, "reduce-tree", "--check", str(path))
    assert code == 0 and "VALID" in out and "makespan 16" in out
    picture = tmp_path / "tree.png"
    code, out, _ = run(capsys, "draw", str(path), "-o", str(picture))
    assert code == 0 and picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # a tampered file is INVALID (exit 1), with the reason
    doc = json.loads(path.read_text())
    doc["send_time"][2] = "0"
    doc["send_time"][3] = "0"
    path.write_text(json.dumps(doc))
    code, out, _ = run(capsys, "reduce-tree", "--check", str(path))
    assert code == 1 and "INVALID" in out and "one transfer at a time" in out


def test_figure2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    picture = tmp_path / "fig2.svg"
    code, _, _ = run(capsys, "reduce-tree", "60", "--figure2", str(picture), "-d", "1", "-c", "3")
    assert code == 0 and b"<svg" in picture.read_bytes()[:400]


@pytest.mark.parametrize("argv,words", [
    (["0", "-d", "1", "-c", "1"], "at least one element"),
    (["5", "-d", "-1", "-c", "1"], "non-negative"),
    (["5", "-d", "nan", "-c", "1"], "--transfer nan"),
    (["5", "-d", "1", "-c", "1", "--max-transfers", "0"], "between 1 and n = 5"),
    (["5", "-d", "1", "-c", "1", "--max-reducers", "6"], "between 1 and n = 5"),
    (["5", "-d", "1"], "give --compute"),
    (["-d", "1", "-c", "1"], "give N"),
    (["2.5", "-d", "1", "-c", "1"], "not a whole number"),
    (["5", "-d", "1", "-c", "1", "--strategy", "binomial", "--max-reducers", "2"],
     "plain model"),
    (["--check", "/nonexistent/x.json"], "no such file"),
])
def test_bad_input_exits_2(capsys: pytest.CaptureFixture[str], argv: list[str],
                           words: str) -> None:
    try:
        code = main(["reduce-tree", *argv])
    except SystemExit as exc:  # argparse's own errors exit directly
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code == 2 and words in err and "Traceback" not in err


def test_check_unreadable_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = run(capsys, "reduce-tree", "--check", str(bad))
    assert code == 2 and "not valid JSON" in err


def test_draw_limit_and_hint(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Above MAX_DRAWN machines draw refuses (exit 2, saying the limit) and reduce-tree -o
    suggests --check instead of draw; at the limit it suggests draw."""
    from collcert.commands._reduction_draw import MAX_DRAWN

    big = tmp_path / "big.json"
    code, out, _ = run(capsys, "reduce-tree", str(MAX_DRAWN + 1), "-d", "1", "-c", "1",
                       "-o", str(big))
    assert code == 0 and f"reduce-tree --check {big}" in out and "collcert draw" not in out
    code, _, err = run(capsys, "draw", str(big), "-o", str(tmp_path / "big.png"))
    assert code == 2 and f"at most {MAX_DRAWN}" in err and not (tmp_path / "big.png").exists()
    small = tmp_path / "small.json"
    code, out, _ = run(capsys, "reduce-tree", str(MAX_DRAWN), "-d", "1", "-c", "1",
                       "-o", str(small))
    assert code == 0 and f"collcert draw {small}" in out
