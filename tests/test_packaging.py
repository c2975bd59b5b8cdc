"""Every package of the source tree is installed: pyproject.toml lists packages one by
one (the design card's folders map into one namespace), and CI installs the project
without ``-e``. A room added without its line (collcert.measured, reference.innetwork,
certify.innetwork) imported in an editable install and failed CI's collection."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _config() -> dict[str, object]:
    if sys.version_info < (3, 11):
        pytest.skip("tomllib is in the standard library from Python 3.11")
    import tomllib

    with open(ROOT / "pyproject.toml", "rb") as fh:
        tool = tomllib.load(fh)["tool"]["setuptools"]
    assert isinstance(tool, dict)
    return tool


def test_every_package_folder_is_listed_for_installation() -> None:
    tool = _config()
    listed = set(tool["packages"])  # type: ignore[arg-type]
    found = set()
    for name, folder in tool["package-dir"].items():  # type: ignore[attr-defined]
        root = ROOT / folder
        for init in root.rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            rel = init.parent.relative_to(root).parts
            found.add(".".join((name, *rel)))
    assert found - listed == set(), "add these to [tool.setuptools] packages"
    assert listed - found == set(), "these listed packages have no folder"
