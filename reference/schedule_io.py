"""Writers for schedules: the ForestColl tree XML (003 §6.1) and JSON files.

The JSON document itself is built by :meth:`Schedule.to_json`
(docs/schedule-format.md); here are the file-level helpers.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import quoteattr

if TYPE_CHECKING:
    from .schedule import Phase, Schedule


def _phase_xml(phase: Phase, indent: str) -> list[str]:
    lines = [f"{indent}<algo nchunkspernode={quoteattr(str(phase.k))} "
             f"collective={quoteattr(phase.collective)}>"]
    for tr in phase.trees:
        lines.append(
            f"{indent}  <tree root={quoteattr(str(tr.root))} index={quoteattr(str(tr.index))} "
            f"nchunks={quoteattr(str(tr.multiplicity))} height={quoteattr(str(tr.height))}>"
        )
        for e in tr.edges:
            path = ",".join(str(x) for x in e.path)
            lines.append(
                f"{indent}    <send src={quoteattr(str(e.src))} dst={quoteattr(str(e.dst))} "
                f"path={quoteattr(path)}/>"
            )
        lines.append(f"{indent}  </tree>")
    lines.append(f"{indent}</algo>")
    return lines


def forestcoll_xml(schedule: Schedule) -> str:
    """The ForestColl tree format: one ``<algo>`` per phase.

    A schedule with several phases (allreduce) wraps its ``<algo>`` elements
    in ``<schedule collective="allreduce">``. Node ids are written by their
    string form.
    """
    lines = ['<?xml version="1.0" encoding="UTF-8"?>']
    if len(schedule.phases) == 1:
        lines += _phase_xml(schedule.phases[0], "")
    else:
        lines.append(f"<schedule collective={quoteattr(schedule.collective)}>")
        for ph in schedule.phases:
            lines += _phase_xml(ph, "  ")
        lines.append("</schedule>")
    return "\n".join(lines) + "\n"


def write_schedule(schedule: Schedule, path: str | os.PathLike[str], fmt: str = "json",
                   *, certificates: bool = True) -> None:
    """Write ``schedule`` to ``path`` as ``json`` (collcert-schedule/1) or ``forestcoll-xml``.

    Raises :class:`~collcert.ScheduleError` when the file cannot be written."""
    from .errors import ScheduleError

    text = render(schedule, fmt, certificates=certificates)
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise ScheduleError(f"cannot write {os.fspath(path)}: {exc.strerror}") from None


def render(schedule: Schedule, fmt: str = "json", *, certificates: bool = True) -> str:
    if fmt == "json":
        doc: Any = schedule.to_json(certificates=certificates)
        return json.dumps(doc, indent=1) + "\n"
    if fmt == "forestcoll-xml":
        return forestcoll_xml(schedule)
    raise ValueError(f"unknown schedule format {fmt!r}: use json or forestcoll-xml")
