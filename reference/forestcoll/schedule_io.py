"""Schedule files: the ForestColl tree XML (Zhao et al. 2026, §6.1), JSON writing, gzip, compact trees.

The documents themselves are built by :meth:`Schedule.to_json`
(docs/schedule-format.md) and :meth:`Schedule.to_forestcoll_xml`
(:mod:`.schedule_result`); here are the file-level helpers:

- files are written with compact trees (a per-phase table of walks, tree
  edges as indices into it) and one tree, walk or flow per line;
- a path ending in ``.gz`` is written gzip-compressed, and every reader of
  schedules here (:func:`read_text`) recognises gzip by its magic bytes,
  whatever the file is called; decompression stops at a size cap, so a
  "zip bomb" is refused, not unpacked;
- :func:`expand` turns compact trees back into the explicit
  ``{"src", "dst", "path"}`` edges for tools that want them;
- a schedule built by orbits can be written as a *symmetric file*
  (``symmetric=True``): the representative roots' trees and the generator of the
  symmetry, never mapping them to every root (docs/schedules.md).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any

from ..model import output_file

if TYPE_CHECKING:
    from .schedule_result import Schedule

MAX_SCHEDULE_BYTES = 512 * 1024 * 1024
"""Largest (decompressed) schedule text read; a 1024-GPU schedule is well below it."""
GZIP_MAGIC = b"\x1f\x8b"


def forestcoll_xml(schedule: Schedule) -> str:
    """The ForestColl tree format of ``schedule`` (:meth:`Schedule.to_forestcoll_xml`);
    a topology whose node ids that format cannot carry is refused (:func:`check_xml_ids`)."""
    check_xml_ids([str(v) for v in schedule.topology.nodes])
    return schedule.to_forestcoll_xml()


def _as_other_ids(pieces: list[str], known: set[str]) -> list[str]:
    """A way to cut ``pieces`` (an id split at its commas) into two or more runs, each
    joined by commas an id of ``known``; [] when there is none."""
    way: list[list[str] | None] = [[]] + [None] * len(pieces)
    for i in range(len(pieces)):
        for j in range(i + 1, len(pieces) + 1):
            part = ",".join(pieces[i:j])
            prefix = way[i]
            if prefix is not None and way[j] is None and j - i < len(pieces) and part in known:
                way[j] = prefix + [part]
    return way[-1] or []


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def check_xml_ids(ids: list[str]) -> None:
    """ScheduleError naming the node when an id cannot be written to the ForestColl XML
    and read back as itself: a character XML 1.0 cannot hold (NUL, most control
    characters), blanks around it or an empty id (paths are read with blanks stripped),
    or commas that make a path ambiguous (ids ``p``, ``q`` and ``p,q``: the path
    ``p,q`` reads both ways)."""
    from ..model import ScheduleError

    known = set(ids)
    for v in ids:
        bad = _XML_BAD.search(v)
        why = (f"it contains the character U+{ord(bad.group()):04X}, which XML cannot hold"
               if bad else "it is empty or has blanks around it, which a path drops"
               if v != v.strip() or not v else "")
        if not why and "," in v:
            reading = _as_other_ids(v.split(","), known)
            if reading:
                why = ("its commas make a path ambiguous: the path " + repr(v[:60])
                       + " also reads as " + " -> ".join(repr(p[:30]) for p in reading))
        if why:
            raise ScheduleError(f"node {v[:60]!r}: cannot be written as ForestColl XML: {why}; "
                                "rename the node or use --format json")


def dump_json(doc: Any, fh: IO[str], *, depth: int = 4) -> None:
    """Write ``doc`` as JSON: objects and arrays of objects/arrays above ``depth``
    one item per line, everything at ``depth`` on one line (a tree, a walk, a flow)."""

    def write(value: Any, level: int, pad: str) -> None:
        if level < depth and isinstance(value, Mapping) and value:
            inner = pad + " "
            fh.write("{")
            for i, (key, item) in enumerate(value.items()):
                fh.write(("," if i else "") + "\n" + inner + json.dumps(str(key)) + ": ")
                write(item, level + 1, inner)
            fh.write("\n" + pad + "}")
        elif (level < depth and isinstance(value, list) and value
              and isinstance(value[0], Mapping | list)):
            inner = pad + " "
            fh.write("[")
            for i, item in enumerate(value):
                fh.write(("," if i else "") + "\n" + inner)
                write(item, level + 1, inner)
            fh.write("\n" + pad + "]")
        else:
            fh.write(json.dumps(value, separators=(",", ":")))

    write(doc, 0, "")
    fh.write("\n")


def write_schedule(schedule: Schedule, path: str | os.PathLike[str], fmt: str = "json",
                   *, certificates: bool = True, compact: bool = True,
                   symmetric: bool = False) -> None:
    """Write ``schedule`` to ``path`` as ``json`` (collcert-schedule/1, compact trees
    unless ``compact=False``; ``symmetric``: the representatives' trees and the
    generator, docs/schedules.md) or ``forestcoll-xml``; gzip-compressed when ``path``
    ends in ``.gz``.

    Raises :class:`~collcert.ScheduleError` when the file cannot be written."""
    from ..model import ScheduleError

    p = os.fspath(path)
    if fmt not in ("json", "forestcoll-xml"):
        raise ValueError(f"unknown schedule format {fmt!r}: use json or forestcoll-xml")
    if fmt == "forestcoll-xml":  # before the file is opened: a refusal leaves no file
        check_xml_ids([str(v) for v in schedule.topology.nodes])
    elif symmetric and not schedule.symmetric:
        raise ScheduleError(schedule.why_not_symmetric())
    try:
        with output_file(p, "wb") as whole:  # all or nothing: the old file stays till then
            raw: Any = gzip.GzipFile(fileobj=whole, mode="wb", compresslevel=1,
                                     filename="") if p.endswith(".gz") else whole
            with io.TextIOWrapper(raw, encoding="utf-8", write_through=False) as fh:
                if fmt == "json":
                    dump_json(schedule.to_json(certificates=certificates, compact=compact,
                                               symmetric=symmetric), fh)
                else:
                    fh.write(forestcoll_xml(schedule))
    except OSError as exc:
        raise ScheduleError(f"cannot write {p}: {exc.strerror or exc}") from None


def render(schedule: Schedule, fmt: str = "json", *, certificates: bool = True,
           compact: bool = True, symmetric: bool = False) -> str:
    """The file text :func:`write_schedule` would write (uncompressed)."""
    if fmt == "json":
        buf = io.StringIO()
        dump_json(schedule.to_json(certificates=certificates, compact=compact,
                                   symmetric=symmetric), buf)
        return buf.getvalue()
    if fmt == "forestcoll-xml":
        return forestcoll_xml(schedule)
    raise ValueError(f"unknown schedule format {fmt!r}: use json or forestcoll-xml")


def read_bytes(path: str | os.PathLike[str], limit: int = MAX_SCHEDULE_BYTES) -> bytes:
    """The contents of a schedule file, gunzipped when it starts with gzip's magic
    bytes; at most ``limit`` bytes after decompression, read a megabyte at a time
    (:func:`collcert.certify.model.files.read_bytes`: ``/dev/zero`` and binary data stop at
    the first NUL byte). Raises ScheduleError naming the file on any problem (missing,
    a directory, too large, binary, corrupt gzip)."""
    from collcert.certify.model import InputError
    from collcert.certify.model import read_bytes as read_capped

    from ..model import ScheduleError

    try:
        return read_capped(path, limit, text=True)
    except InputError as exc:
        raise ScheduleError(str(exc)) from None


def read_text(path: str | os.PathLike[str], limit: int = MAX_SCHEDULE_BYTES) -> str:
    """:func:`read_bytes` decoded as UTF-8 (ScheduleError naming the byte if not)."""
    from ..model import ScheduleError

    data = read_bytes(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScheduleError(f"{os.fspath(path)}: not UTF-8 text (byte {exc.start})") from None


def expand(doc: Any) -> Any:
    """The same schedule document with compact trees written out as explicit
    ``{"src", "dst", "path"}`` edges (in place; returns ``doc``). Documents without
    compact trees are returned unchanged; malformed ones are left for the checker."""
    if not isinstance(doc, dict):
        return doc
    for ph in doc.get("phases") or []:
        if not isinstance(ph, dict) or not isinstance(ph.get("walks"), list):
            continue
        walks = ph["walks"]
        for tr in ph.get("trees") or []:
            edges = tr.get("edges") if isinstance(tr, dict) else None
            if isinstance(edges, list) and all(type(i) is int and 0 <= i < len(walks)
                                               for i in edges):
                tr["edges"] = [dict(walks[i]) for i in edges]
        del ph["walks"]
    return doc
