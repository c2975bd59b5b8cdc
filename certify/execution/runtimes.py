"""Runtime profiles by name: how each runtime that reads a program file judges it.

collcert writes programs for runtimes it cannot run (MSCCL's executors, MSCCL++),
and audits files written for them. What a runtime does with a file is read
from its source at a stated commit (docs/runtimes.md, with file:line
references) and held here as a *profile*: a function that judges a file's
text as that runtime's reader and scheduler would, and returns a
:class:`Loadability`:

``loads``       every rank loads it and the runtime selects it for some calls
                (``calls`` says which: in place or out of place, sizes);
``refuses``     the loader stops with an error the user sees (``rule``, ``line``,
                the runtime's own message, ``source`` = file:line at the commit);
``ignores``     it loads, but no call ever selects it (``maxBytes="0"`` on
                microsoft/msccl, neither in place nor out of place, …);
``falls-back``  the loader refuses it without a message the user sees by default
                and the collective runs on NCCL's own algorithms instead;
``misreads``    the reader takes it without an error but runs something else than
                the file says (a value stored in a narrower field, an array overrun:
                undefined behaviour in the reader).

Every profile has a name, the format it reads (``msccl-xml``, ``mscclpp-json``)
and its source. The registry (this module) is shared by the exporters
(``collcert schedule --format F --runtime NAME`` checks every file against its
profile before writing it) and the auditor (``collcert audit`` prints one
loadability line per runtime of the file's format; ``--runtime NAME`` makes a
refused or ignored file INVALID).

Registering a profile: a module of this room defines its judge and calls
:func:`register` at import; the room's face (``__init__.py``) imports that
module, so ``collcert.certify.execution`` always has every profile. Names
collcert knows are listed in :data:`SLOTS` with their format; a slot whose
module has not registered yet is refused by :func:`get` with a clear message.
``mscclpp`` is the MSCCL++ executor's slot (microsoft/mscclpp).

Standard library only, like the rest of ``certify``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..model import InputError

LOADS, REFUSES, IGNORES, FALLS_BACK, MISREADS = ("loads", "refuses", "ignores", "falls-back",
                                                 "misreads")
STATUSES = (LOADS, REFUSES, IGNORES, FALLS_BACK, MISREADS)

SLOTS: dict[str, str] = {
    "msccl-executor-nccl": "msccl-xml",  # Azure/msccl-executor-nccl: the default for msccl-xml
    "rccl": "msccl-xml",  # ROCm/rccl's MSCCL executor
    "microsoft-msccl": "msccl-xml",  # microsoft/msccl (2023), NCCL 2.12 with MSCCL inside
    "mscclpp": "mscclpp-json",  # microsoft/mscclpp's executor
}
DEFAULTS: dict[str, str] = {"msccl-xml": "msccl-executor-nccl", "mscclpp-json": "mscclpp"}


@dataclass
class Loadability:
    """What one runtime does with one file (see the module docstring)."""

    runtime: str
    status: str  # one of STATUSES
    rule: str = ""  # a short name of the rule that decided, e.g. "xml-declaration"
    line: int | None = None  # the file's line the rule is about (1-based), when there is one
    message: str = ""  # what the runtime says or does, in its own words where it has some
    source: str = ""  # where in the runtime's source, "path:line" at the profile's commit
    consequence: str = ""  # what happens next (NCCL runs instead, init fails, …)
    calls: list[str] = field(default_factory=list)  # loads: which calls select it

    @property
    def ok(self) -> bool:
        return self.status == LOADS

    def describe(self) -> str:
        """One line: ``NAME: refuses (rule R, line L): message [source]; consequence``, or
        ``NAME: loads it, for CALLS; consequence``."""
        if self.status == LOADS:
            calls = f", for {', '.join(self.calls)}" if self.calls else ""
            return f"{self.runtime}: loads it{calls}" + (
                f"; {self.consequence}" if self.consequence else "")
        where = ", ".join(x for x in (self.rule and f"rule {self.rule}",
                                      self.line is not None and f"line {self.line}" or "")
                          if x)
        text = f"{self.runtime}: {self.status}" + (f" ({where})" if where else "")
        if self.message:
            text += f": {self.message}"
        if self.source:
            text += f" [{self.source}]"
        if self.consequence:
            text += f"; {self.consequence}"
        return text

    def to_json(self) -> dict[str, Any]:
        return {"runtime": self.runtime, "status": self.status, "rule": self.rule or None,
                "line": self.line, "message": self.message, "source": self.source,
                "consequence": self.consequence, "calls": list(self.calls)}


Judge = Callable[[str, str], Loadability]


@dataclass(frozen=True)
class RuntimeProfile:
    """A runtime as collcert knows it: ``judge(text, origin)`` says what it does with a
    file of ``fmt``; ``source`` is the repository and commit its rules were read from;
    ``export`` holds what an exporter must write for it (attribute values, spellings),
    free-form per format."""

    name: str
    fmt: str
    title: str
    source: str
    judge: Judge
    export: dict[str, Any] = field(default_factory=dict)


_PROFILES: dict[str, RuntimeProfile] = {}


def register(profile: RuntimeProfile) -> RuntimeProfile:
    """Add ``profile`` (its name must be a slot of its format); returns it, its judge
    remembering its last answers (the exporter judges a file, then the command that wrote
    it prints the same judgement)."""
    if SLOTS.get(profile.name) != profile.fmt:
        raise ValueError(f"runtime {profile.name!r} is not a slot of format {profile.fmt!r} "
                         "(add it to runtimes.SLOTS)")
    judge = profile.judge
    seen: list[tuple[str, Loadability]] = []

    def remembered(text: str, origin: str) -> Loadability:
        for old, answer in seen:
            if old is text or old == text:
                return answer
        answer = judge(text, origin)
        seen[:] = [(text, answer)] + seen[:3]
        return answer

    profile = RuntimeProfile(profile.name, profile.fmt, profile.title, profile.source,
                             remembered, profile.export)
    _PROFILES[profile.name] = profile
    return profile


def get(name: str, fmt: str | None = None) -> RuntimeProfile:
    """The profile called ``name``; InputError naming the runtimes there are (of ``fmt``)."""
    if name in _PROFILES and (fmt is None or _PROFILES[name].fmt == fmt):
        return _PROFILES[name]
    known = ", ".join(names(fmt)) or "none"
    if name in SLOTS and fmt is not None and SLOTS[name] != fmt:
        raise InputError(f"--runtime {name} reads {SLOTS[name]} files, not {fmt}; the runtimes "
                         f"of {fmt}: {known}")
    if name in SLOTS and (fmt is None or SLOTS[name] == fmt):
        raise InputError(f"--runtime {name}: its profile is not available in this build "
                         f"(runtimes there are: {known})")
    what = f" for {fmt}" if fmt else ""
    raise InputError(f"--runtime {name}: no such runtime{what}; known: {known}")


def names(fmt: str | None = None) -> list[str]:
    """Registered runtime names (of format ``fmt``), the default first."""
    found = [n for n, p in _PROFILES.items() if fmt is None or p.fmt == fmt]
    return sorted(found, key=lambda n: (n not in DEFAULTS.values(), n))


def default(fmt: str) -> str:
    """The runtime a file of ``fmt`` is written for when none is named."""
    return DEFAULTS[fmt]


def judge_all(text: str, fmt: str, origin: str = "file") -> list[Loadability]:
    """Every registered runtime of ``fmt`` on one file, the default first."""
    return [_PROFILES[n].judge(text, origin) for n in names(fmt)]
