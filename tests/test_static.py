"""Lint and type checks run as part of the test command (ruff; mypy, strict on certify/)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ["reference", "certify", "fuzz", "src", "tests", "benchmarks"]


def _tool(name: str) -> list[str]:
    exe = shutil.which(name)
    if exe:
        return [exe]
    return [sys.executable, "-m", name]


def test_ruff_clean() -> None:
    dirs = [d for d in SOURCES if (ROOT / d).is_dir()]
    proc = subprocess.run(_tool("ruff") + ["check", *dirs], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _package_tree(tmp: Path) -> Path:
    """The installed layout (collcert/, collcert/reference, ...) as symlinks to the repo."""
    pkg = tmp / "collcert"
    pkg.mkdir()
    for entry in (ROOT / "src" / "collcert").iterdir():
        if entry.name != "__pycache__":
            os.symlink(entry, pkg / entry.name)
    for sub in ("reference", "certify", "fuzz"):
        os.symlink(ROOT / sub, pkg / sub)
    return pkg


def test_mypy_clean_and_strict_on_certify(tmp_path: Path) -> None:
    pkg = _package_tree(tmp_path)
    cmd = _tool("mypy") + ["--config-file", str(ROOT / "pyproject.toml"),
                           "--cache-dir", str(tmp_path / ".mypy_cache"), "collcert"]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert pkg.exists()


def test_certify_is_checked_strictly() -> None:
    """The strict override must cover certify/, or the check above means little."""
    text = (ROOT / "pyproject.toml").read_text()
    assert 'module = ["collcert.certify", "collcert.certify.*"]' in text
    block = text.split('module = ["collcert.certify", "collcert.certify.*"]', 1)[1]
    assert "strict = true" in block.split("[[", 1)[0]


@pytest.mark.parametrize("folder", ["reference", "certify", "fuzz"])
def test_top_level_folders_are_packages(folder: str) -> None:
    assert (ROOT / folder / "__init__.py").is_file()


def _repo_modules() -> list[str]:
    roots = {"collcert": ROOT / "src" / "collcert", "collcert.reference": ROOT / "reference",
             "collcert.certify": ROOT / "certify", "collcert.fuzz": ROOT / "fuzz"}
    names = []
    for prefix, folder in roots.items():
        for path in sorted(folder.rglob("*.py")):
            rel = path.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            if parts and parts[-1] == "__main__":
                continue
            names.append(".".join([prefix, *parts]))
    return names


@pytest.mark.parametrize("module", _repo_modules())
def test_every_source_module_is_installed(module: str) -> None:
    """A module in the repo that the installed package lacks is a missing install step."""
    import importlib

    importlib.import_module(module)
