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

from collcert import platforms
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


def test_save_schedules_refuses_before_writing_and_replaces_only_with_force(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 33 row 3: 'compare DIR/nccl-ring.json --save-schedules DIR' overwrote
    DIR/optimum.json, then refused to write its input. Now nothing is written when any
    file it would write is an input, or (without --force) is there already."""
    folder = tmp_path / "d"
    folder.mkdir()
    topo = folder / "nccl-ring.json"
    platforms.ring(4).save(topo)
    mine = folder / "optimum.json"
    mine.write_text("mine\n")
    for extra in ([], ["--force"]):
        assert main(["compare", str(topo), "--save-schedules", str(folder), *extra]) == 2
        assert "the command's input TOPOLOGY" in capsys.readouterr().err
        assert mine.read_text() == "mine\n"
    other = folder / "t.json"
    topo.rename(other)
    assert main(["compare", str(other), "--save-schedules", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "there already (optimum.json)" in err and "--force" in err
    assert mine.read_text() == "mine\n" and not (folder / "nccl-ring.json").exists()
    assert main(["compare", str(other), "--save-schedules", str(folder), "--force"]) == 0
    assert json.loads(mine.read_text())["format"] == "collcert-schedule/1"
    assert sorted(p.name for p in folder.iterdir()) == ["nccl-ring.json", "optimum.json",
                                                        "t.json"]


def test_fuzz_generate_replaces_case_files_only_with_force(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cases"
    assert main(["fuzz", "generate", "-n", "2", "-o", str(out)]) == 0
    (out / "case-0001.json").write_text("mine\n")
    assert main(["fuzz", "generate", "-n", "2", "--seed", "5", "-o", str(out)]) == 2
    assert "case-0000.json, case-0001.json" in capsys.readouterr().err
    assert (out / "case-0001.json").read_text() == "mine\n"
    assert main(["fuzz", "generate", "-n", "2", "--seed", "5", "-o", str(out), "--force"]) == 0
    assert json.loads((out / "case-0001.json").read_text())["format"] == "collcert-topology/1"
