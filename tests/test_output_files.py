"""Output files are written all or nothing, and never onto an input (issue 33 rows 1, 3).

``collcert.reference.model.output_file`` writes a hidden temporary file beside the
target and renames it over the target only when the text is complete; every writer
of the CLI goes through it (``-o``, ``--plot``, schedules, pictures, folders of files).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from collcert.cli import main
from collcert.reference.model import output_file


def test_a_failure_half_way_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), output_file(target) as fh:
        fh.write("half of the new")
        raise RuntimeError("stopped")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_a_link_is_followed_and_kept_and_permissions_stay(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    os.chmod(real, 0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with output_file(link) as fh:
        fh.write("new")
    assert link.is_symlink() and real.read_text() == "new"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    with output_file(tmp_path / "fresh.bin", "wb") as fb:  # a new file: open()'s mode
        fb.write(b"\x00")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "fresh.bin").stat().st_mode) == 0o666 & ~umask


def test_a_device_is_written_directly() -> None:
    with output_file("/dev/null") as fh:
        fh.write("nothing")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_optimum_o_writes_only_after_success(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 33 row 1: '--certificate > FILE' leaves an empty FILE when the command fails
    (the shell empties it first); '-o FILE' writes it only once the document is whole."""
    out = tmp_path / "opt.json"
    out.write_text("kept\n")
    assert main(["optimum", str(tmp_path / "missing.json"), "--certificate", "-o",
                 str(out)]) == 2
    assert out.read_text() == "kept\n"
    assert main(["optimum", "ring:4", "--certificate", "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert json.loads(out.read_text())["format"] == "collcert-certificate/1"
    assert main(["check", "ring:4", str(out)]) == 0
