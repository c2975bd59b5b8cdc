"""Steady-state broadcast schedules in an audit (Legrand et al. 2003): recognised, checked, reported.

A ``collcert-steady-broadcast/1`` file (``collcert broadcast-steady -o``) is a
periodic schedule of a series of broadcasts on a *one-port platform* (a cost
per link, one send and one receive per node at a time), not on a topology of
capacities. :func:`audit_steady` checks it with
``collcert.certify.broadcast.check_steady_broadcast`` — the LP certificate
that its throughput 1/T* is the best possible (Lemma 7), the weighted trees
and matchings of one period, and a replay event by event (§5.4) — and returns
a :class:`SteadyBroadcastReport`. :func:`steady_document` and
:func:`steady_schedule` recognise such a schedule by its content (the
``"format"`` it declares), for ``collcert audit`` and :func:`collcert.audit`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from collcert.certify.broadcast import check_pipe, check_series_doc, check_steady_broadcast
from collcert.certify.model import InputError, load_json, read_text
from collcert.certify.model import frac_str as fraction_str

from .report import AuditReport

STEADY_FORMAT = "collcert-steady-broadcast/1"
"""The ``"format"`` a steady-state broadcast schedule file declares."""
PIPE_FORMAT = "collcert-pipe-broadcast/1"
"""The ``"format"`` of a PIPE document (``collcert broadcast-steady --size L -o``)."""
SERIES_FORMAT = "collcert-series-broadcast/1"
"""The ``"format"`` of a finite series (``collcert broadcast-steady --messages N -o``)."""
FORMATS = (STEADY_FORMAT, PIPE_FORMAT, SERIES_FORMAT)
STEADY = "steady-broadcast"
"""The format's name in an audit report (``AuditReport.format``)."""
MAX_STEADY_BYTES = 256 * 1024 * 1024
_MARKS = (b"collcert-steady-broadcast", b"collcert-pipe-broadcast",
          b"collcert-series-broadcast")


@dataclass
class SteadyBroadcastReport(AuditReport):
    """The audit of a steady-state broadcast schedule on its one-port platform.

    ``throughput`` (messages per time unit, proven optimal: 1/T*) and ``period``
    are exact Fractions when the schedule is valid, else None; ``facts`` holds
    every exact number the checker established; ``name`` is the file audited,
    as the summary names it. Time and algbw per unit of data do not apply
    (None): a one-port platform has costs per message, not capacities.
    """

    throughput: Fraction | None = None
    period: Fraction | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    name: str = ""
    doc_format: str = STEADY_FORMAT  # which of FORMATS the audited file is

    def to_json(self) -> dict[str, Any]:
        """The checker's verdict (exact numbers as ``"p/q"`` strings), with ``valid``
        and the file ``format``: what ``collcert audit --json`` prints."""
        out = dict(self.checks[0])
        out.update({"valid": self.valid, "format": self.doc_format})
        return out

    def summary(self) -> str:
        pipe, series = self.doc_format == PIPE_FORMAT, self.doc_format == SERIES_FORMAT
        what = ("PIPE broadcast" if pipe else "finite series of broadcasts" if series
                else "steady-state broadcast schedule") + (f" {self.name}" if self.name else "")
        if not self.valid:
            return "\n".join([f"INVALID {what}:"] + [f"  - {r}" for r in self.reasons])
        f = self.facts
        if series:
            return "\n".join([
                f"VALID {what} (one-port model, Legrand et al. 2003, §5.5)",
                f"  makespan {fraction_str(f['makespan'])}; lower bound n·T* = "
                f"{fraction_str(f['lower_bound'])} (T* = {fraction_str(f['T_star'])}, proven;"
                " Lemma 7)" + (f"; compacted {fraction_str(f['series_compact_makespan'])}"
                               if "series_compact_makespan" in f else ""),
                "  replayed every period: no node sends or receives twice at once, every "
                "message forwarded after it arrived, every node gets every message once"])
        if pipe:
            runs = [f"  {k}: {f[k + '_packets']} packets, makespan "
                    f"{fraction_str(f[k + '_makespan'])}, ratio "
                    f"{fraction_str(f[k + '_ratio'])}"
                    + (f"; compacted {fraction_str(f[k + '_compact_makespan'])}"
                       if k + "_compact_makespan" in f else "") for k in ("paper", "best")]
            return "\n".join([
                f"VALID {what} (one-port model with start-ups, Legrand et al. 2003, §6)",
                f"  lower bound L·T* = {fraction_str(f['lower_bound'])} (T* = "
                f"{fraction_str(f['T_star'])}, proven; no schedule is faster, Lemma 7)",
                *runs,
                "  replayed every period: no node sends or receives twice at once, every "
                "packet forwarded after it arrived, every node gets every packet once"])
        tp, per, trees, mts = (f["throughput"], f["messages_per_period"], f["trees"],
                               f["matchings"])
        packing = (f"{trees} weighted tree{_s(trees)} (spanning, Σλ = N, load ≤ N·n), "
                   if f.get("method") == "trees" else
                   "DAG heights rising along every used link, loads = N·n, ")
        return "\n".join([
            f"VALID {what} (one-port model, Legrand et al. 2003)",
            f"  throughput {fraction_str(tp)} message{_s(tp)} per time unit = 1/T*, "
            f"T* = {fraction_str(f['T_star'])}: optimal (LP dual bound "
            f"{fraction_str(f['bound'])}; no schedule does better, Lemma 7)",
            f"  replayed {f['periods_replayed']} periods of {fraction_str(f['period'])} with "
            f"{per} message{_s(per)} each: no node sends or receives twice at once, every "
            "message forwarded after it arrived, every node gets every message once",
            f"  measured steady-state throughput {fraction_str(f['measured_throughput'])}; "
            f"first batch complete after {fraction_str(f['latency'])}",
            f"  packing: {packing}{mts} matching{_s(mts)} (Σμ = N·T*)",
        ])


def _s(count: Any) -> str:
    return "" if count == 1 else "s"


def is_platform(platform: Any) -> bool:
    """True for a one-port platform: a ``OnePortPlatform``, or its JSON (``"port_model":
    "one-port"``)."""
    if isinstance(platform, Mapping):
        return platform.get("port_model") == "one-port"
    from collcert.reference.broadcast import OnePortPlatform

    return isinstance(platform, OnePortPlatform)


def steady_document(path: str | os.PathLike[str] | None) -> dict[str, Any] | None:
    """The parsed schedule when ``path`` is a regular file holding a
    ``collcert-steady-broadcast/1`` document, else None (another kind of schedule).

    Recognised by the format named in its first 4 KiB; read in bounded memory. A file
    that says it is one but cannot be read or parsed is a ScheduleError (exit 2).
    """
    from collcert.reference.model import ScheduleError

    if path is None or os.fspath(path) in ("", "-") or not os.path.isfile(path):
        return None
    p = os.fspath(path)
    try:
        with open(p, "rb") as fh:
            head = fh.read(4096)
            if not any(mark in head for mark in _MARKS):
                return None
        # bounded reading and a parse that must fit in memory (certify.files, readers)
        doc = load_json(read_text(p, MAX_STEADY_BYTES), p)
    except OSError as exc:
        raise ScheduleError(f"{p}: cannot read ({exc.strerror or exc})") from None
    except InputError as exc:
        raise ScheduleError(f"{exc} (a {STEADY_FORMAT} file)") from None
    return doc if isinstance(doc, dict) and doc.get("format") in FORMATS else None


_KINDS = {
    STEADY_FORMAT: "a steady-state broadcast schedule (collcert broadcast-steady -o)",
    PIPE_FORMAT: "a pipelined-broadcast (PIPE) schedule (collcert broadcast-steady --size L -o)",
    SERIES_FORMAT: "a schedule of a series of broadcasts (collcert broadcast-steady "
                   "--messages N -o)",
}


def document_kind(doc: Mapping[str, Any]) -> str:
    """What a steady-state, PIPE or series document is, in words, with the command that
    writes it: for messages that say a file is one of them and not a platform."""
    return _KINDS.get(str(doc.get("format")), _KINDS[STEADY_FORMAT])


def steady_schedule(schedule: Mapping[str, Any] | str) -> Mapping[str, Any] | None:
    """``schedule`` (a dict, or the text of a file) as a steady-state broadcast
    document, or None when it is another kind of schedule."""
    from collcert.reference.model import ScheduleError

    if isinstance(schedule, Mapping):
        return schedule if schedule.get("format") in FORMATS else None
    head = schedule.lstrip()[:4096]
    if not head.startswith("{") or not any(m.decode() in head for m in _MARKS):
        return None
    try:
        doc = load_json(schedule, "the schedule")
    except InputError as exc:
        raise ScheduleError(f"{exc} (a {STEADY_FORMAT} file)") from None
    return doc if isinstance(doc, dict) and doc.get("format") in FORMATS else None


def audit_steady(platform: Any, schedule: Mapping[str, Any], name: str = "",
                 ) -> SteadyBroadcastReport:
    """Audit a ``collcert-steady-broadcast/1`` (or ``collcert-pipe-broadcast/1``: PIPE,
    replayed by ``check_pipe``) document on its one-port ``platform``
    (a ``OnePortPlatform`` or its JSON). ``name``: the file, as messages and the
    summary name it. Raises ScheduleError when the document cannot be read."""
    from collcert.reference.model import ScheduleError

    data = platform if isinstance(platform, Mapping) else dict(platform.to_json())
    fmt = str(schedule.get("format"))
    check = {PIPE_FORMAT: check_pipe, SERIES_FORMAT: check_series_doc}.get(
        fmt, check_steady_broadcast)
    try:
        verdict = check(data, schedule)
    except InputError as exc:
        raise ScheduleError(f"{name}: {exc}" if name else str(exc)) from None
    facts = dict(verdict.facts)
    return SteadyBroadcastReport(
        verdict.ok, verdict.all_reasons(), None, None, None, None,
        "paths given by the schedule (one-port links)", format=STEADY,
        collective="broadcast", unit=str(data.get("unit", "")), checks=[verdict.to_json()],
        throughput=facts.get("throughput") if verdict.ok else None,
        period=facts.get("period") if verdict.ok else None, facts=facts, name=name,
        doc_format=fmt if fmt in FORMATS else STEADY_FORMAT)
