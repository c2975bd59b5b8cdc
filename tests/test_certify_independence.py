"""certify/ must stay independent of the code it checks (read from the source with ast)."""

from __future__ import annotations

import ast
import pathlib
import sys

import pytest

CERTIFY = pathlib.Path(__file__).resolve().parent.parent / "certify"
STDLIB = set(sys.stdlib_module_names)


def imports(path: pathlib.Path, depth: int = 0) -> list[tuple[str, int]]:
    """The imports of ``path``, a file ``depth`` folders below certify/. A relative import
    that stays inside certify/ is left out; one that climbs out is kept, as dots."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: stays inside certify/ unless it climbs out
                if node.level - 1 > depth:
                    found.append(("." * node.level + (node.module or ""), node.lineno))
                continue
            found.append((node.module or "", node.lineno))
    return found


SOURCES = sorted(CERTIFY.rglob("*.py"))


def test_certify_files_exist() -> None:
    assert len(SOURCES) >= 8
    # every room of certify/ is a package: nothing there escapes these checks
    for folder in {p.parent for p in SOURCES}:
        assert (folder / "__init__.py").is_file(), folder


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(CERTIFY)))
def test_certify_imports_only_stdlib_and_itself(path: pathlib.Path) -> None:
    depth = len(path.relative_to(CERTIFY).parts) - 1
    for name, line in imports(path, depth):
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
    bad.write_text("import os\nfrom collcert.reference import optimum\nfrom .. import x\n"
                   "from ...y import z\n")
    names = [n for n, _ in imports(bad)]
    assert "collcert.reference" in names and ".." in names
    # one folder down, '..' stays inside certify/ but '...' climbs out
    names = [n for n, _ in imports(bad, depth=1)]
    assert ".." not in names and "...y" in names


# mypy --strict on certify/ runs in tests/test_static.py
