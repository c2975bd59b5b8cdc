"""The outputs the docs quote, rerun from the commands they quote (issue 33 row 9).

docs/baselines.md said NCCL's tree is fastest from 4 MB and LP (5) from 256 MB, long
after the command had stopped saying so. Here every ``$ collcert ...`` line of a
``console`` block in :data:`DOCS` that is followed by output is run again in this
process, and a caption marked ``<!-- fastest: COMMAND -->`` is the sentence
:func:`fastest_sentence` makes of that command's size table.

``python tests/docs_outputs.py`` lists what drifted; ``--write`` rewrites the blocks,
the captions and the pictures their commands draw (docs/img). tests/test_docs_outputs.py
fails on any drift, so a change that moves a quoted figure regenerates the docs.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ["docs/baselines.md"]
BLOCK = re.compile(r"```console\n(.*?)```", re.S)
CAPTION = re.compile(r"<!-- fastest: (collcert [^>]*?) -->(.*?)<!-- /fastest -->", re.S)
SKIP = {"…", "...", "⋯"}
"""A line of only this in a quoted output stands for any number of lines."""


def _normal(line: str) -> str:
    """A line as compared: timings (took 1.4 s, 0.8 s) vary from run to run."""
    return re.sub(r"\b\d+(\.\d+)? s\b", "… s", line).rstrip()


def run(command: str, plot_to: str | None = None) -> str:
    """The standard output of ``collcert ...``. ``--plot FILE`` is drawn to ``plot_to``
    (--write: the docs' pictures); without it the picture is left out, which changes
    nothing else the command prints, and its 'Plot written' line is added (the test
    stays quick)."""
    from collcert.cli import main

    argv = shlex.split(command)[1:]
    shown = drawn = ""
    if "--plot" in argv and plot_to is None:
        i = argv.index("--plot")
        shown = argv[i + 1]
        del argv[i:i + 2]
        return run(shlex.join(["collcert", *argv])) + f"Plot written to {shown}.\n"
    if "--plot" in argv:
        i = argv.index("--plot") + 1
        shown, drawn = argv[i], plot_to or ""
        argv[i] = drawn
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    if code != 0:
        raise RuntimeError(f"{command}: exit {code}")
    return out.getvalue().replace(drawn, shown) if drawn else out.getvalue()


def quoted(text: str) -> list[tuple[str, list[str]]]:
    """(command, the output lines shown under it) of every console block."""
    found = []
    for block in BLOCK.findall(text):
        command, shown = None, []
        for line in block.splitlines() + ["$ end"]:
            if line.startswith("$ "):
                while shown and not shown[-1].strip():  # the blank line before the next $
                    shown.pop()
                if command and shown:
                    found.append((command, shown))
                command = line[2:].split("  #", 1)[0].strip()
                command = command if command.startswith("collcert ") else None
                shown = []
            elif command:
                shown.append(line)
    return found


def matches(shown: list[str], actual: list[str]) -> str | None:
    """None when the shown lines are the actual ones (a line of :data:`SKIP` skipping any
    number), else the first shown line that is not."""
    act = [_normal(x) for x in actual]
    pos, skipping = 0, False
    for line in shown:
        if line.strip() in SKIP:
            skipping = True
            continue
        want = _normal(line)
        if skipping:
            while pos < len(act) and act[pos] != want:
                pos += 1
        if pos >= len(act) or act[pos] != want:
            return line
        pos, skipping = pos + 1, False
    return None if skipping or pos == len(act) else f"(end: {actual[pos]!r} follows)"


def _size(n: int) -> str:
    for unit, k in (("GB", 30), ("MB", 20), ("KB", 10)):
        if n >= 1 << k and n % (1 << k) == 0:
            return f"{n >> k} {unit}"
    return f"{n} B"


def fastest_sentence(output: str) -> str:
    """The size table's ``fastest`` column in words: `recursive` up to 512 KB, `nccl-tree`
    from 4 MB, ... (or one schedule at every size)."""
    rows = [line.split() for line in output.splitlines()]
    table = [(int(r[0]), r[-1]) for r in rows if len(r) > 2 and r[0].isdigit()]
    runs: list[tuple[str, int, int]] = []
    for size, best in table:
        if runs and runs[-1][0] == best:
            runs[-1] = (best, runs[-1][1], size)
        else:
            runs.append((best, size, size))
    if len(runs) == 1:
        return f"`{runs[0][0]}` is fastest at every size"
    parts = [f"`{runs[0][0]}` up to {_size(runs[0][2])}"]
    parts += [f"`{name}` from {_size(lo)}" for name, lo, _ in runs[1:]]
    return "fastest: " + ", ".join(parts)


def drift(doc: str) -> list[str]:
    """What in ``doc`` no longer says what its commands print."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    out = []
    for command, shown in quoted(text):
        bad = matches(shown, run(command).splitlines())
        if bad is not None:
            out.append(f"{doc}: '{command}' no longer prints {bad!r}")
    for command, sentence in CAPTION.findall(text):
        want = fastest_sentence(run(command))
        if sentence.strip() != want:
            out.append(f"{doc}: '{command}': the caption says {sentence.strip()!r}, the "
                       f"command {want!r}")
    return out


def write(doc: str) -> None:
    """Rewrite ``doc``'s quoted outputs and captions, and draw their pictures."""
    path = ROOT / doc
    text = path.read_text(encoding="utf-8")
    for command, shown in quoted(text):
        argv = shlex.split(command)
        plot = argv[argv.index("--plot") + 1] if "--plot" in argv else None
        with tempfile.TemporaryDirectory() as tmp:
            new = run(command, plot_to=str(Path(tmp) / "p.png") if plot else None)
        new = new.rstrip("\n").splitlines()
        text = text.replace("$ " + command + "\n" + "\n".join(shown) + "\n",
                            "$ " + command + "\n" + "\n".join(new) + "\n", 1)
    for command, sentence in CAPTION.findall(text):
        argv = shlex.split(command)
        plot = argv[argv.index("--plot") + 1] if "--plot" in argv else None
        out = run(command, plot_to=str(ROOT / plot) if plot else None)
        text = text.replace(sentence, fastest_sentence(out), 1)
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    for name in DOCS:
        if "--write" in sys.argv:
            write(name)
        for problem in drift(name):
            print(problem)
