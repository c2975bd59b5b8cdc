"""The docs say what their commands print (issue 33 row 9).

docs/baselines.md quoted a comparison (recursive doubling fastest at 1 KB, NCCL's tree
from 4 MB, LP (5) from 256 MB) that the command had long stopped printing. Every quoted
output and 'fastest' caption is rerun here (tests/docs_outputs.py; small machines:
dgx_a100:2 allgather, dgx_a100:1 allreduce); 'python tests/docs_outputs.py --write'
writes them again.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import docs_outputs  # noqa: E402


@pytest.mark.parametrize("doc", docs_outputs.DOCS)
def test_quoted_outputs_are_what_the_commands_print(doc: str) -> None:
    text = (docs_outputs.ROOT / doc).read_text(encoding="utf-8")
    assert docs_outputs.quoted(text) or docs_outputs.CAPTION.search(text)
    assert docs_outputs.drift(doc) == []


def test_the_baselines_listed_are_the_registry() -> None:
    from collcert.reference.baselines import BASELINES

    text = (docs_outputs.ROOT / "docs/baselines.md").read_text(encoding="utf-8")
    listed = re.search(r"`--baselines ([a-z,-]+)`", text)
    assert listed and tuple(listed.group(1).split(",")) == BASELINES


def test_the_matcher_sees_a_changed_figure_and_skips_only_where_told() -> None:
    actual = ["a took 1.4 s", "b", "c", "d"]
    assert docs_outputs.matches(["a took 9.9 s", "b", "…", "d"], actual) is None
    assert docs_outputs.matches(["a took 1.4 s", "c"], actual) == "c"
    assert docs_outputs.matches(["a took 1.4 s", "b", "c"], actual) is not None
    table = "    size (B)  x  y   fastest\n 1024 1 2   x\n 524288 1 2   x\n 4194304 2 1   y\n"
    assert docs_outputs.fastest_sentence(table) == "fastest: `x` up to 512 KB, `y` from 4 MB"
