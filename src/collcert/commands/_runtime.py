"""``--runtime NAME`` of ``schedule`` and ``audit``: which runtime a program is for.

The names and what each runtime does with a file are the profiles of
``collcert.certify.execution.runtimes`` (docs/runtimes.md).
"""

from __future__ import annotations

import argparse

from collcert.certify.execution import runtimes
from collcert.reference.model import ScheduleError

RUNTIME_FORMATS = ("msccl-xml", "mscclpp-json")


def add_argument(p: argparse.ArgumentParser, audit: bool) -> None:
    """The option, its help naming every runtime of every format."""
    known = "; ".join(f"{fmt}: {', '.join(runtimes.names(fmt)) or 'none yet'} (default "
                      f"{runtimes.default(fmt)})" for fmt in RUNTIME_FORMATS)
    what = ("judge the file as this runtime would: one it refuses, ignores or misreads is "
            "INVALID (exit 1), naming the rule and the line; without it the verdict is about "
            "the program and one line per runtime says which would load it"
            if audit else "write the program for this runtime: its spelling, its limits; "
            "the file is checked against the runtime's profile before it is written")
    p.add_argument("--runtime", metavar="NAME", default=None,
                   help=f"{what} ({known}; docs/runtimes.md)")


def resolve(args: argparse.Namespace, fmt: str) -> str | None:
    """The runtime ``args`` name (checked: exit 2 for an unknown one or another format's),
    else the format's default when its profile is registered; None for other formats."""
    name = getattr(args, "runtime", None)
    if fmt not in RUNTIME_FORMATS:
        if name is not None:
            raise ScheduleError(f"--runtime applies to --format {' or '.join(RUNTIME_FORMATS)}, "
                                f"not {fmt}: drop --runtime, or add --format msccl-xml")
        return None
    if name is None:
        name = runtimes.default(fmt)
        return name if name in runtimes.names(fmt) else None
    runtimes.get(name, fmt)  # InputError naming the runtimes there are
    return str(name)


def check_in_place(args: argparse.Namespace, fmt: str, runtime: str | None) -> None:
    """``--in-place`` means a program for in-place calls: MSCCL++ plans, and MSCCL XML for a
    runtime that selects a program for one kind of call only (microsoft-msccl)."""
    if not getattr(args, "in_place", False) or fmt == "mscclpp-json":
        return
    if fmt == "msccl-xml" and runtime is not None and \
            not runtimes.get(runtime).export.get("both_modes", True):
        return
    if fmt == "msccl-xml":
        raise ScheduleError(f"--in-place: the program written for {runtime} serves in-place "
                            "and out-of-place calls both (inplace=\"1\" outofplace=\"1\"); "
                            "--in-place applies to mscclpp-json and to msccl-xml "
                            "--runtime microsoft-msccl, which selects a program for one kind "
                            "of call only")
    raise ScheduleError(f"--in-place applies to --format mscclpp-json only, not {fmt} (and to "
                        "msccl-xml for --runtime microsoft-msccl): drop --in-place")


def judge(text: str, fmt: str, runtime: str | None) -> runtimes.Loadability | None:
    """What ``runtime`` does with ``text`` (None: no runtime)."""
    return None if runtime is None else runtimes.get(runtime, fmt).judge(text, "file")
