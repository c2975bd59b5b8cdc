"""certify/ must stay independent of the code it checks (read from the source with ast)."""

from __future__ import annotations

import ast
import pathlib
import sys

import pytest

CERTIFY = pathlib.Path(__file__).resolve().parent.parent / "certify"
STDLIB = set(sys.stdlib_module_names)


def imports(path: pathlib.Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: stays inside certify/ unless it climbs out
                if node.level > 1:
                    found.append(("." * node.level + (node.module or ""), node.lineno))
                continue
            found.append((node.module or "", node.lineno))
    return found


def test_certify_files_exist() -> None:
    assert len(list(CERTIFY.glob("*.py"))) >= 8


@pytest.mark.parametrize("path", sorted(CERTIFY.glob("*.py")), ids=lambda p: p.name)
def test_certify_imports_only_stdlib_and_itself(path: pathlib.Path) -> None:
    for name, line in imports(path):
        top = name.split(".")[0]
        assert not name.startswith("."), f"{path.name}:{line} climbs out of certify/ ({name})"
        assert not (top == "collcert" and not name.startswith("collcert.certify")), (
            f"{path.name}:{line} imports {name}: certify/ must not import collcert.reference "
            "or collcert's top level"
        )
        assert top in STDLIB or name.startswith("collcert.certify"), (
            f"{path.name}:{line} imports {name}, which is not in the standard library"
        )


def test_the_checker_catches_a_forbidden_import(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nfrom collcert.reference import optimum\nfrom .. import x\n")
    names = [n for n, _ in imports(bad)]
    assert "collcert.reference" in names and ".." in names


# mypy --strict on certify/ runs in tests/test_static.py
