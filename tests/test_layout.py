"""The layout holds: no import cycles, rooms entered by their faces, short functions, citations.

Read from the source with ast (tests/layout.py); the figures behind these rules
are printed by benchmarks/layout_report.py. docs/architecture.md explains the
rooms.
"""

from __future__ import annotations

import re
from pathlib import Path

import layout as L
import pytest

MODS = L.modules()
ROOMS = L.rooms(MODS)
CHECKED = ("collcert.reference", "collcert.certify")  # where the length rules apply
PAPER_ROOMS = [f"{top}.{room}" for top in CHECKED
               for room in ("forestcoll", "allreduce", "broadcast", "reduction")]


def test_no_import_cycles() -> None:
    found = L.cycles(L.graph(MODS))
    assert not found, "import cycles (imports inside functions and TYPE_CHECKING count): " + \
        "; ".join(" <-> ".join(c) for c in found)


def test_rooms_are_entered_by_their_faces() -> None:
    found = L.face_violations(MODS)
    assert not found, "\n".join(found)


@pytest.mark.parametrize("room", ROOMS)
def test_every_room_has_a_face(room: str) -> None:
    mod = MODS[room]
    assert len(L.docstring(mod)) > 80, f"{room}/__init__.py: say what the room offers"
    face = L.exported(mod)
    assert face is not None, f"{room}/__init__.py lists no __all__"
    bound = {a.asname or a.name for node in mod.tree.body
             if isinstance(node, (L.ast.Import, L.ast.ImportFrom)) for a in node.names}
    bound |= {n.name for n in mod.tree.body
              if isinstance(n, (L.ast.FunctionDef, L.ast.ClassDef))}
    bound |= {t.id for n in mod.tree.body if isinstance(n, L.ast.Assign)
              for t in n.targets if isinstance(t, L.ast.Name)}
    assert face <= bound, f"{room}.__all__ names {sorted(face - bound)}, which it does not bind"


def test_private_names_stay_in_their_package() -> None:
    found = [f"{a} takes {name} from {b}" for a, b, name, across in L.private_imports(MODS)
             if across]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("room", ROOMS)
def test_no_module_shares_a_name_its_room_exports(room: str) -> None:
    # 'collcert.audit' was once a function and a module: which one you got depended on
    # the order of imports
    face = L.exported(MODS[room]) or set()
    clashes = [m for m in MODS if m.rsplit(".", 1)[0] == room and m.rsplit(".", 1)[1] in face
               and not MODS[m].is_package and _imports_module(room, m)]
    assert not clashes, f"{room} exports a name that is also a module of it: {clashes}"


def _imports_module(room: str, module: str) -> bool:
    """False when the face lists the module itself ('from . import orbits')."""
    leaf = module.rsplit(".", 1)[1]
    return not any(i.target == module and i.name is None for i in MODS[room].imports
                   if leaf in (L.exported(MODS[room]) or set()))


def test_functions_in_reference_and_certify_are_short() -> None:
    long = [f"{name}: {n} lines" for n, name in L.long_functions(MODS, 80)
            if name.startswith(CHECKED)]
    assert not long, "functions over 80 lines (split along responsibilities):\n" + \
        "\n".join(long)


def test_modules_in_reference_and_certify_are_short() -> None:
    long = [f"{m.path.relative_to(L.ROOT)}: {m.lines}" for m in MODS.values()
            if m.name.startswith(CHECKED) and m.lines > 500]
    assert not long, "modules over 500 lines: " + ", ".join(long)


@pytest.mark.parametrize("name", sorted(m for m in MODS if m.startswith(tuple(PAPER_ROOMS))))
def test_modules_that_implement_a_paper_cite_it(name: str) -> None:
    assert re.search(L.CITATION, L.docstring(MODS[name])), (
        f"{MODS[name].path.relative_to(L.ROOT)}: the module docstring cites no paper "
        "(author and year, as in docs/README.md)")


def test_no_internal_paper_codes_in_the_code() -> None:
    # 'seed 000' meant a paper only to readers of docs/README.md, and 'seed' is also
    # fuzz --seed; the code and the CLI help cite author and year
    code = re.compile(r"\b[Ss]eeds? 00[0-4]\b")
    found = [f"{m.path.relative_to(L.ROOT)}:{i}" for m in MODS.values()
             for i, line in enumerate(m.path.read_text(encoding="utf-8").splitlines(), 1)
             if code.search(line)]
    assert not found, ", ".join(found)


# The rules must be able to fail: the same functions on small made-up trees.

def _tree(tmp_path: Path, files: dict[str, str]) -> dict[str, L.Module]:
    for rel, text in files.items():
        path = tmp_path / "pkg" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return L.modules({"collcert": tmp_path / "pkg"})


def test_a_cycle_hidden_in_a_function_is_found(tmp_path: Path) -> None:
    mods = _tree(tmp_path, {"__init__.py": "", "a.py": "from .b import x\n",
                            "b.py": "def f():\n    from .a import y\n"})
    assert L.cycles(L.graph(mods)) == [["collcert.a", "collcert.b"]]


def test_reaching_past_a_face_is_found(tmp_path: Path) -> None:
    mods = _tree(tmp_path, {
        "__init__.py": "",
        "room/__init__.py": '"""A room."""\nfrom .inner import f\n__all__ = ["f"]\n',
        "room/inner.py": "def f(): pass\ndef g(): pass\n",
        "user.py": "from .room.inner import f\nfrom .room import g\nfrom .room import f\n",
    })
    found = L.face_violations(mods)
    assert len(found) == 2 and "past the face" in found[0] and "not in its __all__" in found[1]


def test_a_long_function_and_a_private_import_are_found(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(85))
    mods = _tree(tmp_path, {"__init__.py": "", "room/__init__.py": "",
                            "room/a.py": f"def long():\n{body}\ndef _hidden(): pass\n",
                            "b.py": "from .room.a import _hidden\n"})
    assert [name for _, name in L.long_functions(mods)] == ["collcert.room.a.long"]
    assert L.private_imports(mods) == [("collcert.b", "collcert.room.a", "_hidden", True)]
