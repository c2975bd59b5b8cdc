"""Figures of the package layout, read from the source (no import is run).

Prints, for reference/, certify/, src/collcert/ and fuzz/: the modules per room
(folder) with their lines, the import cycles (imports inside functions and
under TYPE_CHECKING count), imports of private names across modules and across
packages, imports that reach past a room's public face, and functions over 80
and modules over 500 lines. tests/test_layout.py turns the same figures into
rules; docs/architecture.md explains the rooms.

Usage: python benchmarks/layout_report.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import layout as L  # noqa: E402


def figures() -> dict[str, object]:
    mods = L.modules()
    per_room: dict[str, list[int]] = defaultdict(list)
    for mod in mods.values():
        folder = mod.path.parent.relative_to(L.ROOT).as_posix()
        per_room[folder].append(mod.lines)
    private = L.private_imports(mods)
    return {
        "modules": len(mods),
        "rooms": {room: {"modules": len(lines), "lines": sum(lines)}
                  for room, lines in sorted(per_room.items())},
        "cycles": L.cycles(L.graph(mods)),
        "private_imports": [f"{a} <- {b}.{n}" for a, b, n, _ in private],
        "private_imports_across_packages": [f"{a} <- {b}.{n}" for a, b, n, x in private if x],
        "past_a_face": L.face_violations(mods),
        "functions_over_80": [f"{name} {n}" for n, name in L.long_functions(mods, 80)],
        "modules_over_500": [f"{m.path.relative_to(L.ROOT)} {m.lines}" for m in mods.values()
                             if m.lines > 500],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args()
    fig = figures()
    if args.json:
        print(json.dumps(fig, indent=1))
        return 0
    print(f"{fig['modules']} modules")
    rooms = fig["rooms"]
    assert isinstance(rooms, dict)
    for room, info in rooms.items():
        print(f"  {room:32} {info['modules']:3} modules {info['lines']:6} lines")
    for key in ("cycles", "private_imports", "private_imports_across_packages", "past_a_face",
                "functions_over_80", "modules_over_500"):
        items = fig[key]
        assert isinstance(items, list)
        print(f"{key.replace('_', ' ')}: {len(items)}")
        for item in items:
            print(f"  {' <-> '.join(item) if isinstance(item, list) else item}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
