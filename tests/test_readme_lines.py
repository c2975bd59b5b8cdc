"""Every line of the README's "Using it" block runs as it is (issue 33 row 8).

A fresh clone with the Quick start's install ran the README's 'collcert smoke' lines
into exit 2 (torch is an optional extra). Each line now names the extra it needs in its
comment; this test holds that, and that every line still parses with today's options
and names only shipped files or files a line above writes (quick: no command runs).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import tomllib

from collcert.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = {"smoke": "[smoke]", "draw": "[draw]", "prove": "[z3]"}
FILE = re.compile(r"\.(json|xml|gz|txt|png|svg|pdf)$")


def _lines() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## Using it", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def _commands(line: str) -> tuple[list[list[str]], str]:
    """The collcert commands of a line (argv without 'collcert') and its comment."""
    code, _, comment = line.partition(" #")
    code = code.strip()
    inner = re.fullmatch(r'eval "\$\((.*)\)"', code)
    if inner:
        code = inner.group(1)
    out = []
    for part in code.split("&&"):
        argv = shlex.split(part.split(">", 1)[0] if " > " in part else part)
        assert argv and argv[0] == "collcert", f"not a collcert command: {line!r}"
        out.append(argv[1:])
    return out, comment


@pytest.mark.parametrize("line", _lines())
def test_line_parses_and_names_its_extra(line: str) -> None:
    optional = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    for argv, comment in [(a, c) for cmds, c in [_commands(line)] for a in cmds]:
        if argv == ["--help"]:
            continue
        try:
            build_parser().parse_args(argv)
        except SystemExit:
            pytest.fail(f"the README line no longer parses: {line!r}")
        needs = {EXTRAS[argv[0]]} if argv[0] in EXTRAS else set()
        if "--plot" in argv:
            needs.add("[draw]")
        for extra in needs:
            assert extra in comment, f"say '{extra}' in the comment of: {line!r}"
            assert extra.strip("[]") in optional, f"no extra {extra} in pyproject.toml"


def test_every_file_named_is_shipped_or_written_above() -> None:
    written: set[str] = set()
    for line in _lines():
        commands, _ = _commands(line)
        for argv in commands:
            outs = {argv[i + 1] for i, a in enumerate(argv[:-1])
                    if a in ("-o", "--output", "--plot")}
            code = line.partition(" #")[0]
            if " > " in code:
                outs.add(code.split(" > ", 1)[1].split()[0])
            for a in argv:
                if FILE.search(a) and a not in outs and not a.startswith("-"):
                    assert a in written or (ROOT / a).is_file(), \
                        f"{a} is neither shipped nor written by a line above: {line!r}"
            written |= outs
