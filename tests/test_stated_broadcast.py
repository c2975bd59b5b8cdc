"""Issue 22 item 5 for steady-state broadcast files (`collcert broadcast-steady -o`): every
stated figure and structural element (a tree, a period, a rate, a node) changed is refused,
and the reason names what was changed."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from collcert.certify.broadcast import check_steady_broadcast
from collcert.certify.model import InputError
from collcert.cli import main
from collcert.reference.broadcast import paper_fig1, paper_fig5

Doc = dict[str, Any]


def _doc(tmp_path: Path, *args: str) -> Doc:
    out = tmp_path / "sb.json"
    assert main(["broadcast-steady", *args, "-o", str(out)]) == 0
    return dict(json.loads(out.read_text()))


def _set(path: tuple[Any, ...], value: Any) -> Callable[[Doc], None]:
    def change(doc: Doc) -> None:
        target: Any = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


# (what, change, words one of which the reason must contain)
COMMON: list[tuple[str, Callable[[Doc], None], tuple[str, ...]]] = [
    ("throughput", _set(("throughput",), "2"), ("throughput",)),
    ("T_star", _set(("T_star",), "7"), ("'T_star'",)),
    ("lp.T_star", _set(("lp", "T_star"), "7"), ("T*",)),
    ("period", _set(("period",), "99"), ("period",)),
    ("messages_per_period", _set(("messages_per_period",), "99"), ("'messages_per_period'",)),
    ("lp.problem", _set(("lp", "problem"), "other"), ("'lp.problem'",)),
    ("packing.tick", _set(("packing", "tick"), "1/1000"), ("'packing.tick'",)),
    ("packing.N", _set(("packing", "N"), 99), ("N =", "'packing.N'")),
    ("packing.stretch", _set(("packing", "stretch"), 3), ("stretch",)),
    ("a matching's duration", _set(("matchings", 0, "duration"), "99"), ("matching",)),
    ("a step's start", _set(("steps", 1, "start"), "99"), ("steps[1]",)),
    ("a step's duration", _set(("steps", 0, "duration"), "99"), ("steps", "period")),
    ("a transfer's source node", _set(("steps", 0, "transfers", 0, "src"), "3"),
     ("one-port", "steps", "link", "stretch·m_e")),
    ("a block's count", _set(("steps", 0, "transfers", 0, "blocks", 0, "count"), 99),
     ("steps[0]", "messages")),
    ("a rate n", _set(("lp", "n", 0, 2), "1/1000"), ("n =", "primal")),
    ("a cut weight", _set(("lp", "dual", "cuts", 0, "weight"), "5"), ("cuts", "dual")),
    ("a cut listing a node twice", lambda d: d["lp"]["dual"]["cuts"][0]["nodes"].append(
        d["lp"]["dual"]["cuts"][0]["nodes"][0]), ("'lp.dual.cuts[0].nodes'",)),
    ("a port price", _set(("lp", "dual", "send", "s"), "2"), ("price",)),
    ("a load", _set(("packing", "loads", 0, 2), 99), ("load", "carries")),
    ("unknown top-level field", _set(("speedup",), "2"), ("'speedup'",)),
    ("unknown field in a step", _set(("steps", 0, "speedup"), 2), ("'steps[].speedup'",)),
    ("unknown field in a block", _set(("steps", 0, "transfers", 0, "blocks", 0, "note"), 1),
     ("blocks[].note",)),
    ("unknown field in the LP", _set(("lp", "dual", "cuts", 0, "note"), 1),
     ("'lp.dual.cuts[].note'",)),
]
TREES = COMMON + [
    ("a tree's weight", _set(("trees", 0, "weight"), 5), ("tree weights",)),
    ("a tree's node", _set(("trees", 0, "edges", 0, 1), "4"), ("trees[0]", "link")),
    ("method", _set(("method",), "dag"), ("heights", "'method'")),
    ("unknown field in a tree", _set(("trees", 0, "note"), 1), ("'trees[].note'",)),
]
DAG = COMMON + [
    ("packing.q", _set(("packing", "q"), 99), ("'packing.q'",)),
    ("a node's height", _set(("packing", "heights", "4"), 9), ("lag", "heights")),
    ("method", _set(("method",), "trees"), ("'lp.problem'", "tree")),
]


def _refused(platform: dict[str, Any], doc: Doc, words: tuple[str, ...]) -> None:
    try:
        v = check_steady_broadcast(platform, doc)
    except InputError as exc:  # unreadable: refused too (exit 2), the message names it
        reasons = [str(exc)]
    else:
        assert not v.ok
        reasons = v.all_reasons()
    assert any(w in r for w in words for r in reasons), (words, reasons)


@pytest.mark.parametrize("case", ["trees", "dag"])
def test_every_mutation_is_refused_naming_it(tmp_path: Path, case: str) -> None:
    if case == "trees":
        platform, doc, cases = paper_fig1().to_json(), _doc(tmp_path, "fig1"), TREES
    else:
        platform, doc, cases = (paper_fig5().to_json(), _doc(tmp_path, "fig5", "--dag"), DAG)
    assert check_steady_broadcast(platform, doc).ok
    for what, change, words in cases:
        bad = copy.deepcopy(doc)
        change(bad)
        assert bad != doc, what
        _refused(platform, bad, words)


PIPE: list[tuple[str, Callable[[Doc], None], str]] = [
    ("slack_w", _set(("slack_w",), "0"), "'slack_w'"),
    ("a run's stretch", _set(("paper", "stretch"), "3"), "'paper.stretch'"),
    ("a run's batches", _set(("best", "batches"), 1000), "'best.batches'"),
    ("a run's periods", _set(("paper", "periods", "steady"), 1000), "'paper.periods'"),
    ("the search range", _set(("searched", "most"), 0), "'searched'"),
    ("the platform hash", _set(("topology",), "sha256:0"), "'topology'"),
    ("the source", _set(("source",), "1"), "'source'"),
    ("unknown top-level field", _set(("speedup",), "2"), "'speedup'"),
    ("unknown field in a run", _set(("best", "speedup"), "2"), "'best.speedup'"),
    ("unknown field in the search", _set(("searched", "seconds"), 1), "'searched.seconds'"),
]


def test_pipe_mutations_are_refused_naming_them(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    platform = "fig1:startup=1/2"  # start-ups: w = max β/c = 1
    out = tmp_path / "pipe.json"
    assert main(["broadcast-steady", platform, "--size", "9", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["slack_w"] == "1"
    capsys.readouterr()
    for what, change, word in PIPE:
        bad = copy.deepcopy(doc)
        change(bad)
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad))
        assert main(["audit", platform, str(path)]) == 1, what
        text = capsys.readouterr().out
        assert word in text, (what, text)
