"""Claims about a schedule's speed, and their refutation.

A tool that reports "allgather of 1 GB in 2.5 ms on 8 GPUs" claims an algbw
(data size / time) of 400 GB/s. ``collcert audit --claim-algbw`` or
``--claim-time T --size M`` checks such a claim against two proven limits:

* the schedule's own time: in the bandwidth model (every link carries its
  data at its capacity, latency ignored) the busiest link needs load/capacity
  per unit of data, and no run on the hardware is faster; a claim above the
  schedule's algbw is refuted, naming that link and its load;
* the certified optimum: no schedule of the collective on this topology (without
  in-network multicast) beats it; a claim above it is refuted with the cut (or,
  for alltoall, the LP dual or the link lengths) that proves it.

A claim that passes both is *not refuted*, which is not a proof that it is
true: latency and protocol overheads make real runs slower than the model.

Numbers are exact (``"2.5"``, ``"5/2"``, ``"1e9"``). Without units they are in
the topology's units: an algbw in its rate unit (e.g. GB/s), a size in its data
unit (GB) and a time in its time unit (s). With units (``400GB/s``, ``1GiB``,
``2.5ms``) they are converted exactly: B, KB, MB, GB, TB (powers of 10), KiB,
MiB, GiB, TiB (powers of 2), bit units (Gbit, Gb = 10⁹/8 bytes); s, ms, us
(or µs), ns. Converting needs the topology's unit to be such a rate
("GB/s").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from collcert.certify.model import InputError, frac_str, number

if TYPE_CHECKING:
    from .report import AuditReport

_PREFIX = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}
_TIME = {"s": Fraction(1), "ms": Fraction(1, 10**3), "us": Fraction(1, 10**6),
         "µs": Fraction(1, 10**6), "μs": Fraction(1, 10**6), "ns": Fraction(1, 10**9)}
_DATA = re.compile(r"^(|K|M|G|T|P|Ki|Mi|Gi|Ti|Pi)(B|bit|b)$")
_SPLIT = re.compile(r"^\s*([-+]?[0-9][0-9_.eE+\-/]*|[-+]?\.[0-9][0-9_eE+\-/]*)\s*(\S*)\s*$")


def bytes_of(unit: str) -> Fraction | None:
    """Bytes in one ``unit`` of data (``"GB"`` → 10⁹, ``"Gbit"`` → 10⁹/8), or None."""
    m = _DATA.match(unit)
    if not m:
        return None
    scale = Fraction(_PREFIX[m.group(1)])
    return scale if m.group(2) == "B" else scale / 8


def rate_of(unit: str) -> Fraction | None:
    """Bytes per second in one ``unit`` of rate (``"GB/s"``, ``"Gbit/s"``), or None."""
    data, slash, time = unit.partition("/")
    size = bytes_of(data.strip())
    if not slash or size is None or time.strip() not in _TIME:
        return None
    return size / _TIME[time.strip()]


def _split(text: str, what: str) -> tuple[Fraction, str]:
    m = _SPLIT.match(text)
    if not m:
        raise InputError(f"{what} {text[:40]!r} is not a number with an optional unit, such "
                         "as 400, 2.5ms, 1GiB or 400GB/s")
    value = number(m.group(1), what)
    if value <= 0:
        raise InputError(f"{what} must be positive, not {m.group(1)}")
    return value, m.group(2)


def parse_claim(algbw: str | None, time: str | None, size: str | None,
                unit: str) -> tuple[Fraction, str] | None:
    """(claimed algbw in the topology's ``unit``, the claim in words), or None if none.

    InputError (exit 2) for an unreadable number or unit, a time without a size
    (or the reverse), or both kinds of claim at once.
    """
    if algbw is None and time is None and size is None:
        return None
    if algbw is not None and (time is not None or size is not None):
        raise InputError("give either --claim-algbw, or --claim-time with --size, not both")
    target = rate_of(unit)
    if algbw is not None:
        value, u = _split(algbw, "--claim-algbw")
        if u and u != unit:
            given = rate_of(u)
            if given is None or target is None:
                raise InputError(f"--claim-algbw {algbw!r}: cannot convert {u!r} to the "
                                 f"topology's unit {unit!r}; give the number in {unit or 'it'}")
            value = value * given / target
        return value, f"algbw {algbw}"
    if time is None or size is None:
        raise InputError("--claim-time needs --size (the data size M the time is for), and "
                         "--size needs --claim-time")
    t, tu = _split(time, "--claim-time")
    m, mu = _split(size, "--size")
    if not tu and not mu:
        return m / t, f"size {size} in time {time}"
    scale_t, scale_m = _TIME.get(tu), bytes_of(mu)
    if scale_t is None or scale_m is None:
        raise InputError(f"--claim-time {time!r} / --size {size!r}: give both with units (s, "
                         "ms, us, ns; B, KB, MB, GB, KiB, MiB, GiB, …) or both as plain "
                         "numbers in the topology's units")
    if target is None:
        raise InputError(f"the topology's unit {unit!r} is not a data rate such as GB/s: give "
                         "--claim-time and --size as plain numbers in its units")
    return (m * scale_m) / (t * scale_t) / target, f"size {size} in time {time}"


@dataclass
class ClaimVerdict:
    algbw: Fraction  # claimed, in the topology's unit
    given: str
    refuted: bool
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"given": self.given, "algbw": frac_str(self.algbw), "refuted": self.refuted,
                "reasons": list(self.reasons), "notes": list(self.notes)}

    def summary(self, unit: str) -> str:
        head = (f"claim {self.given} (algbw {frac_str(self.algbw)} {unit}): "
                + ("REFUTED" if self.refuted else "not refuted"))
        return "\n".join([head] + [f"  - {r}" for r in self.reasons]
                         + [f"  note: {n}" for n in self.notes])


def judge(report: AuditReport, algbw: Fraction, given: str) -> ClaimVerdict:
    """Refute ``algbw`` if it beats the schedule's proven time or the certified optimum."""
    unit = report.unit
    out = ClaimVerdict(algbw, given, False)
    bound = report.bound_algbw
    if bound is not None and algbw > bound:
        out.reasons.append(
            f"it beats the certified optimum: no {report.collective} schedule on this topology "
            f"exceeds algbw {frac_str(bound)} {unit} ({report.bound_witness})")
    own = report.proven_time_per_unit
    if report.valid and own:
        if algbw > 1 / own:
            out.reasons.append(
                f"it beats the schedule itself: the schedule needs at least {frac_str(own)} "
                f"time per unit of data (algbw ≤ {frac_str(1 / own)} {unit}) even in the "
                f"bandwidth model, which ignores latency: {'; '.join(report.bottleneck)}")
    elif not report.valid:
        out.notes.append("the schedule is INVALID, so it delivers no claim at all")
    if bound is None:
        out.notes.append("no certified optimum bounds this collective here "
                         + ("(in-network multicast)" if report.multicast else ""))
    out.refuted = bool(out.reasons)
    if not out.refuted:
        out.notes.append("not refuted is not proven: latency and protocol overheads make real "
                         "runs slower than the bandwidth model")
    return out
