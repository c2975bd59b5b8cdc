"""The package layout, read from the source with ast: modules, imports, faces, lengths.

Used by tests/test_layout.py (the rules) and benchmarks/layout_report.py (the
figures). Nothing is imported or run: every import statement counts, also those
inside functions and under ``TYPE_CHECKING``, since each is an arrow a reader
has to follow and a cycle hidden there is still a cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# import name -> folder (pyproject.toml's package-dir)
FOLDERS = {
    "collcert": ROOT / "src" / "collcert",
    "collcert.reference": ROOT / "reference",
    "collcert.certify": ROOT / "certify",
    "collcert.fuzz": ROOT / "fuzz",
}
CITATION = (r"(Zhao & Krishnamurthy 2023|Zhao et al\. 2026|Legrand et al\. 2003|"
            r"Canon & Antoniu 2012|Zhou & Sun 2026)")


@dataclass
class Import:
    """One imported name (``name`` None: the module itself) of ``target``, at ``line``."""

    target: str
    name: str | None
    line: int


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    tree: ast.Module = field(repr=False)
    imports: list[Import] = field(default_factory=list)

    @property
    def package(self) -> str:
        return self.name if self.is_package else self.name.rsplit(".", 1)[0]

    @property
    def lines(self) -> int:
        return len(self.path.read_text(encoding="utf-8").splitlines())


def _files(folders: dict[str, Path]) -> Iterator[tuple[str, Path]]:
    for top, folder in folders.items():
        for path in sorted(folder.rglob("*.py")):
            rel = path.relative_to(folder)
            if top == "collcert" and rel.parts[0] in ("reference", "certify", "fuzz"):
                continue
            parts = [top, *rel.with_suffix("").parts]
            yield ".".join(parts), path


def modules(folders: dict[str, Path] | None = None) -> dict[str, Module]:
    """Every module of the ``collcert`` namespace (or of ``folders``: import name ->
    folder), by dotted name, with its imports."""
    found: dict[str, Module] = {}
    for dotted, path in _files(folders or FOLDERS):
        is_package = dotted.endswith(".__init__")
        name = dotted.removesuffix(".__init__")
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        found[name] = Module(name, path, is_package, tree)
    for mod in found.values():
        mod.imports = list(_imports(mod, found))
    return found


def _resolve(mod: Module, level: int, module: str | None) -> str:
    if not level:
        return module or ""
    base = mod.package.split(".")
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _imports(mod: Module, known: dict[str, Module]) -> Iterator[Import]:
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    yield Import(alias.name, None, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(mod, node.level, node.module)
            if not target.startswith("collcert"):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in known:  # 'from package import module'
                    yield Import(sub, None, node.lineno)
                elif target in known:
                    yield Import(target, alias.name, node.lineno)


def graph(mods: dict[str, Module]) -> dict[str, set[str]]:
    """module -> the modules it imports."""
    return {m.name: {i.target for i in m.imports if i.target != m.name} for m in mods.values()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def rooms(mods: dict[str, Module]) -> list[str]:
    """The packages below the top-level ones: reference's and certify's rooms,
    collcert.auditing, collcert.drawing, ... Each has a public face."""
    tops = {m.name for m in mods.values() if m.is_package and "." not in m.name} | set(FOLDERS)
    return sorted(m.name for m in mods.values() if m.is_package and m.name not in tops)


def exported(mod: Module) -> set[str] | None:
    """The names in a package's literal ``__all__`` (None: it has none)."""
    for node in mod.tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            value = node.value
            if isinstance(value, (ast.List, ast.Tuple)):
                return {e.value for e in value.elts
                        if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return None


def room_of(name: str, room_names: list[str]) -> str | None:
    """The innermost room that holds module ``name`` (None: a top-level module)."""
    best = None
    for room in room_names:
        if (name == room or name.startswith(room + ".")) and (best is None or len(room) > len(best)):
            best = room
    return best


def face_violations(mods: dict[str, Module]) -> list[str]:
    """Imports that reach into another room past its face, or take a name its
    ``__all__`` does not list."""
    names = rooms(mods)
    found = []
    for mod in mods.values():
        mine = room_of(mod.name, names)
        for imp in mod.imports:
            theirs = room_of(imp.target, names)
            if theirs is None or theirs == mine:
                continue
            if mine is not None and mine.startswith(theirs + "."):
                continue  # a room's own sub-room may use its parent's modules
            where = f"{mod.name}:{imp.line}"
            face = exported(mods[theirs]) or set()
            parent, _, leaf = imp.target.rpartition(".")
            if imp.name is None and parent == theirs and leaf in face:
                continue  # a module the face lists as public ('from room import module')
            if imp.target != theirs:
                found.append(f"{where} imports {imp.target} past the face of {theirs}")
                continue
            if imp.name is not None and imp.name not in face:
                found.append(f"{where} imports {imp.name} from {theirs}, not in its __all__")
    return found


def private_imports(mods: dict[str, Module]) -> list[tuple[str, str, str, bool]]:
    """(importer, module, name, across packages) for every private name imported from
    another module."""
    found = []
    for mod in mods.values():
        for imp in mod.imports:
            if imp.name and imp.name.startswith("_") and not imp.name.startswith("__") \
                    and imp.target != mod.name:
                across = mods[imp.target].package != mod.package
                found.append((mod.name, imp.target, imp.name, across))
    return found


def long_functions(mods: dict[str, Module], limit: int = 80) -> list[tuple[int, str]]:
    """(lines, 'module.function') for every function longer than ``limit`` lines."""
    found = []
    for mod in mods.values():
        for node in ast.walk(mod.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    found.append((length, f"{mod.name}.{node.name}"))
    return sorted(found, reverse=True)


def docstring(mod: Module) -> str:
    return ast.get_docstring(mod.tree) or ""
