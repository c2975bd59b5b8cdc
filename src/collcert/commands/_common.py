"""Helpers shared by the CLI subcommands: loading topologies, progress, JSON output."""

from __future__ import annotations

import inspect
import json
import os
import re
import sys
import time
from typing import Any, TextIO

from collcert.reference.errors import TopologyError
from collcert.reference.topology import Topology

DEFAULT_TOPOLOGY = "dgx_a100:2"

_SPEC = re.compile(r"^([a-z_0-9]+)(?::(.*))?$")


def platform_names() -> list[str]:
    from collcert import platforms

    return [n for n in platforms.__all__ if callable(getattr(platforms, n))]


def load_topology(spec: str | None, *, strict: bool = True) -> Topology:
    """A topology from a JSON file, or from a built-in platform spec.

    Platform specs: ``NAME`` or ``NAME:ARG[,ARG...]`` with a builder of
    ``collcert.platforms``, e.g. ``dgx_a100:2``, ``mi250:2,8``, ``ring:8``,
    ``torus:4x4``. ``None`` gives the default, the 2-box DGX A100.
    """
    spec = DEFAULT_TOPOLOGY if spec is None else spec
    if spec == "-":
        return Topology.from_json(sys.stdin.read(), strict=strict)
    if os.path.exists(spec) or spec.endswith(".json") or "/" in spec:
        return Topology.from_json(spec, strict=strict)
    m = _SPEC.match(spec)
    names = platform_names()
    if not m or m.group(1) not in names:
        raise TopologyError(
            f"{spec!r} is neither a topology file nor a built-in platform; platforms are "
            f"{', '.join(names)} (e.g. dgx_a100:2, mi250:2,8, torus:4x4)"
        )
    from collcert import platforms

    builder = getattr(platforms, m.group(1))
    args: list[Any] = []
    if m.group(2):
        for part in m.group(2).split(","):
            if "x" in part:
                try:
                    args.append(tuple(int(p) for p in part.split("x")))
                except ValueError:
                    raise TopologyError(
                        f"platform {m.group(1)}: {part!r} is not a shape such as 4x4"
                    ) from None
            else:
                try:
                    args.append(int(part))
                except ValueError:
                    args.append(part)
    try:
        inspect.signature(builder).bind(*args)
    except TypeError as exc:
        raise TopologyError(f"platform {m.group(1)}: {exc}") from None
    result: Topology = builder(*args)
    return result


def add_topology_argument(parser: Any, *, optional: bool = True) -> None:
    parser.add_argument(
        "topology",
        nargs="?" if optional else None,
        default=None,
        metavar="TOPOLOGY",
        help="topology JSON file (docs/topology.md), '-' for stdin, or a built-in platform "
        "such as dgx_a100:2, dgx_h100:4, mi250:2, mi250:2,8, dgx1, two_box_example, "
        f"ring:8, torus:4x4, fat_tree:4 (default: {DEFAULT_TOPOLOGY})",
    )


def print_json(obj: Any, stream: TextIO | None = None) -> None:
    json.dump(obj, stream or sys.stdout, indent=2)
    (stream or sys.stdout).write("\n")


class Progress:
    """A small progress bar on stderr (shown only when stderr is a terminal,
    or always with ``force=True``). Call it as ``progress(done, total)``."""

    def __init__(self, label: str, *, force: bool = False, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = force or self.stream.isatty()
        self.start = time.monotonic()
        self._last = 0.0

    def __call__(self, done: int, total: int, note: str = "") -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        width = 30
        filled = int(width * done / total) if total else width
        elapsed = now - self.start
        eta = elapsed / done * (total - done) if done else 0.0
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(
            f"\r{self.label} [{bar}] {done}/{total} {elapsed:5.1f}s"
            + (f" (~{eta:.0f}s left)" if done < total else "")
            + (f" {note}" if note else "")
            + "\033[K"
        )
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()
