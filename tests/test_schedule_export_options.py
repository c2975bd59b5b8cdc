"""schedule: an export option given with another --format is refused, never ignored
(red team O.5.7; --strict already was)."""

from __future__ import annotations

from pathlib import Path

import pytest

from collcert.cli import main

CASES = [(["--in-place"], "mscclpp-json"), (["--mscclpp-channel", "port"], "mscclpp-json"),
         (["--mscclpp-channel", "memory"], "mscclpp-json"), (["--msccl-channels", "2"], "msccl-xml")]


@pytest.mark.parametrize("option,fmt", CASES)
@pytest.mark.parametrize("other", [[], ["--format", "forestcoll-xml"],
                                   ["--routes", "runtime"],
                                   ["-c", "allreduce", "--method", "lp"]])
def test_refused_with_another_format(option: list[str], fmt: str, other: list[str],
                                     tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "x"
    assert main(["schedule", "ring:4", *option, *other, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{option[0]} applies to --format {fmt} only" in err
    assert not out.exists()


@pytest.mark.parametrize("option,fmt", CASES)
def test_accepted_with_its_format(option: list[str], fmt: str, tmp_path: Path) -> None:
    out = tmp_path / "x"
    assert main(["schedule", "ring:4", *option, "--format", fmt, "-o", str(out)]) == 0
    assert out.stat().st_size > 0
