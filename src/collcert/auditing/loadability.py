"""Which runtimes load a program file, beside the audit's verdict (``collcert audit``).

For MSCCL XML (and MSCCL++ plans, once their profile is registered) every
runtime profile of ``collcert.certify.execution.runtimes`` judges the file as its
runtime would (docs/runtimes.md). Without ``runtime`` the verdict stays about the
program and the judgements are listed beside it (``AuditReport.runtimes``); with
``runtime`` a file that runtime does not load (refuses, ignores, misreads, or
falls back to NCCL on) is INVALID, with the rule, the line and the source.
"""

from __future__ import annotations

from collcert.certify.execution import runtimes

from .report import AuditReport

FORMATS = ("msccl-xml", "mscclpp-json")


def attach(report: AuditReport, text: str, fmt: str, runtime: str | None) -> AuditReport:
    """``report`` with every runtime's judgement of ``text``; INVALID when ``runtime`` is
    named and does not load it."""
    if fmt not in FORMATS:
        return report
    repo = None if runtime is None else runtimes.get(runtime, fmt).source.split("@")[0]
    verdicts = runtimes.judge_all(text, fmt, "schedule")
    report.runtimes = [v.to_json() for v in verdicts]
    if runtime is None:
        return report
    mine = next(v for v in verdicts if v.runtime == runtime)
    report.notes.append(f"judged as {runtime} would run it (--runtime)")
    if not mine.ok:
        where = f"line {mine.line}, " if mine.line is not None else ""
        report.valid = False
        report.reasons.insert(0, f"{runtime} {mine.status} this file ({where}rule "
                              f"{mine.rule}): {mine.message} [{repo} {mine.source}]"
                              + (f"; {mine.consequence}" if mine.consequence else ""))
    return report
