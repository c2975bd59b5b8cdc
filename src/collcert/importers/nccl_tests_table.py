"""The table of an nccl-tests run: its column header, its rows, the numbers in them.

nccl-tests (github.com/NVIDIA/nccl-tests) prints one row per message size:
``size count type [redop] [root]`` then, for the out-of-place and the in-place
call, ``time algbw busbw`` and a correctness column. Read at NVIDIA/nccl-tests
a0b82b2 (``src/util.cu``) and in its history:

* the header: ``writeResultHeader`` (util.cu:739-760); before the 2022 resync
  with NCCL 2.13 (51af557) each test printed its own (``all_reduce.cu:11-14``
  at 51af557~1: ``size count type redop``; ``all_gather.cu``, ``sendrecv.cu``:
  ``size count type``; ``broadcast.cu``: ``size count type root``;
  ``reduce.cu``: ``size count type redop root``); the first version (b188a15,
  2017) named them ``bytes N type op ... res`` and printed the time in milliseconds
  (``%7.3f`` of ``deltaSec * 1.0E3``, common.cu:573 there);
* a row: ``writeBenchmarkLinePreamble`` prints ``%12li  %12li  %8s  %6s  %6s``
  (util.cu:454-457), ``writeBenchmarkLineBody`` ``  %7s  %6s  %6s  %6g`` or
  ``    N/A`` (util.cu:497-511; the numbers by ``getFloatStr``, util.cu:487-492:
  two decimals when they fit, then one, none, ``%.1e``); the per-iteration
  columns ``i_min i_max i_p99 i_cv%`` (``-I``, util.cu:559-568) and a timestamp
  (``-Z``, util.cu:606-610) may follow;
* the correctness column: ``#wrong`` (since 51af557: the count of wrong
  elements, 0 when right) or, before, ``error`` (the largest relative error,
  ``%5.0le``; out of bounds above ``DeltaMaxValue(type) × (nranks − 1)``,
  common.cu:110-127 and :464 at 51af557~1).

Every number is read exactly (a Fraction of its decimal text) with the half-unit
of its last printed digit, so checks can allow for nccl-tests' rounding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from collcert.reference.model import CollcertError


class LogError(CollcertError):
    """A log that is not nccl-tests output as its authors' code prints it (exit 2)."""


MAX_SIZE = 2**64 - 1  # size_t: nccl-tests prints sizes with %li
MAX_EXPONENT = 30  # 1e30 µs or GB/s: far beyond any measurement

ELEMENT_BYTES = {"int8": 1, "uint8": 1, "char": 1, "f8e4m3": 1, "f8e5m2": 1, "half": 2,
                 "bfloat16": 2, "int32": 4, "uint32": 4, "int": 4, "float": 4, "int64": 8,
                 "uint64": 8, "double": 8}
"""nccl-tests' type names (common.cu:46-54, :69; ``char`` and ``int`` before NCCL 2.x
types) and their sizes."""
DELTA_MAX = {"half": Fraction(1, 100), "bfloat16": Fraction(1, 100), "float": Fraction(1, 10**5),
             "double": Fraction(1, 10**12)}
"""``DeltaMaxValue`` (common.cu:110-127 at 51af557~1): the largest relative error of the
old ``error`` column that is not counted out of bounds, per rank beyond the first;
integer types: 1e-200 (any error)."""
REDOPS = ("sum", "prod", "max", "min", "avg", "mulsum", "none")

_NUMBER = re.compile(r"^([0-9]+)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$")
_NAN = re.compile(r"^[+-]?(nan|inf|infinity)$", re.IGNORECASE)

PREFIX_NAMES = {"size": "size", "bytes": "size", "count": "count", "n": "count",
                "type": "type", "redop": "redop", "op": "redop", "root": "root"}
CHECK_NAMES = {"#wrong": "wrong", "wrong": "wrong", "error": "error", "res": "error"}
ITER_NAMES = ("i_min", "i_max", "i_p99", "i_cv%")


@dataclass(frozen=True)
class Number:
    """A number as nccl-tests printed it: exact ``value`` and the half-unit ``slack`` of
    its last digit (the most rounding can have moved it)."""

    text: str
    value: Fraction
    slack: Fraction


def number(text: str, what: str, where: str) -> Number:
    """A non-negative decimal (``12.34``, ``31289``, ``1.2e+05``), exactly; NaN,
    infinities, signs and exponents beyond 10^30 are refused naming ``where``."""
    m = _NUMBER.match(text)
    if m is None:
        if _NAN.match(text):
            raise LogError(f"{where}: {what} is {text!r}, not a number (nccl-tests prints NaN "
                           "when a time was 0 or a run failed); measure again")
        if text.startswith("-") and _NUMBER.match(text[1:]):
            raise LogError(f"{where}: {what} {text} is negative; a time or a bandwidth "
                           "cannot be (the line is corrupted)")
        raise LogError(f"{where}: {what} {text[:40]!r} is not a number")
    whole, frac, exp = m.group(1), m.group(2) or "", m.group(3)
    e = int(exp) if exp is not None and len(exp.lstrip("+-")) <= 3 else None
    if exp is not None and (e is None or abs(e) > MAX_EXPONENT):
        raise LogError(f"{where}: {what} {text[:40]!r} has an exponent beyond 10^{MAX_EXPONENT}")
    if len(whole) + len(frac) > 40:
        raise LogError(f"{where}: {what} has {len(whole) + len(frac)} digits; nccl-tests "
                       "prints at most 20")
    scale = Fraction(10) ** (e or 0)
    value = Fraction(int(whole + frac), 10 ** len(frac)) * scale
    return Number(text, value, Fraction(1, 2 * 10 ** len(frac)) * scale)


def integer(text: str, what: str, where: str, *, least: int = 0) -> int:
    """A whole number of bytes or elements (``%li``), at most 2^64 − 1."""
    t = text.lstrip("-") if least < 0 else text
    if not t.isdigit() or not t.isascii():
        raise LogError(f"{where}: {what} {text[:40]!r} is not a whole number")
    if len(t) > 20 or int(t) > MAX_SIZE:
        raise LogError(f"{where}: {what} has {len(t)} digits, more than a 64-bit count "
                       f"(at most {MAX_SIZE}); the line is corrupted")
    value = int(text)
    if value < least:
        raise LogError(f"{where}: {what} {value} is below {least}")
    return value


@dataclass(frozen=True)
class Layout:
    """The columns of a run's table, from its header line."""

    prefix: tuple[str, ...]  # size, count, type and maybe redop, root
    groups: int  # 2: out-of-place and in-place
    check: str  # "wrong" (#wrong) or "error" (old maximum error)
    time_name: str  # "time" or "cputime"
    per_iteration: bool
    timestamp: bool
    time_scale: int = 1  # µs per printed time unit: 1000 in the 2017 format (ms, %7.3f)

    @property
    def fields(self) -> int:
        """Tokens of a full row (a timestamp prints as two: date and time)."""
        return (len(self.prefix) + self.groups * (4 + (4 if self.per_iteration else 0))
                + (2 if self.timestamp else 0))


def parse_layout(words: list[str], where: str) -> Layout:
    """The column header's words after ``#`` (``size count type redop root time algbw
    busbw #wrong time ...``); LogError naming ``where`` when it is cut short."""
    low = [w.lower() for w in words]
    prefix: list[str] = []
    i = 0
    while i < len(low) and low[i] in PREFIX_NAMES:
        prefix.append(PREFIX_NAMES[low[i]])
        i += 1
    if prefix[:3] != ["size", "count", "type"] or len(set(prefix)) != len(prefix):
        raise LogError(f"{where}: a column header that does not start 'size count type' "
                       f"(it has {' '.join(words[:6])!r})")
    rest, groups, checks, iters = low[i:], 0, set(), False
    timestamp = bool(rest) and rest[-1] == "timestamp"
    if timestamp:
        rest = rest[:-1]
    time_names = set()
    while rest:
        if len(rest) < 4 or rest[0] not in ("time", "cputime") or rest[1:3] != ["algbw", "busbw"] \
                or rest[3] not in CHECK_NAMES:
            raise LogError(f"{where}: the column header is cut short or unknown after "
                           f"'{' '.join(words[:i])}': expected 'time algbw busbw #wrong' "
                           f"(or 'error'), found {' '.join(rest[:4])!r}")
        time_names.add(rest[0])
        checks.add(CHECK_NAMES[rest[3]])
        rest = rest[4:]
        if rest[:4] == list(ITER_NAMES):
            iters, rest = True, rest[4:]
        groups += 1
    if groups not in (1, 2) or len(checks) != 1 or len(time_names) != 1:
        raise LogError(f"{where}: the column header has {groups} groups of 'time algbw busbw'; "
                       "nccl-tests prints two (out-of-place, in-place)")
    scale = 1000 if low[0] == "bytes" else 1  # b188a15 common.cu:573: deltaSec * 1.0E3
    return Layout(tuple(prefix), groups, checks.pop(), time_names.pop(), iters, timestamp, scale)


@dataclass(frozen=True)
class Result:
    """One call's figures in a row: time (µs), algbw and busbw (GB/s), and the
    correctness column (``wrong``: count, or the old maximum error; None for N/A)."""

    time: Number
    algbw: Number
    busbw: Number
    wrong: Number | None


@dataclass(frozen=True)
class Row:
    """One message size of a run."""

    line: int  # where the row starts in the file (1-based)
    size: int  # bytes (nccl-tests: the larger of the send and receive buffers)
    count: int  # elements (per rank for allgather, reduce-scatter, alltoall)
    dtype: str
    redop: str | None
    root: int | None
    out_of_place: Result
    in_place: Result | None

    def result(self, in_place: bool = False) -> Result | None:
        return self.in_place if in_place else self.out_of_place


def parse_row(tokens: list[str], layout: Layout, line: int, where: str) -> Row:
    """A row's tokens (all of them, however many physical lines they took)."""
    if len(tokens) != layout.fields:
        raise LogError(f"{where}: a row with {len(tokens)} fields where the column header "
                       f"has {layout.fields}; the line is cut short or corrupted")
    values = dict(zip(layout.prefix, tokens))
    size = integer(values["size"], "size", where)
    count = integer(values["count"], "count", where)
    dtype = values["type"]
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,15}", dtype):
        raise LogError(f"{where}: type {dtype[:40]!r} is not a data type name")
    redop = values.get("redop")
    if redop is not None and redop not in REDOPS:
        raise LogError(f"{where}: redop {redop[:40]!r} is not one nccl-tests prints "
                       f"({', '.join(REDOPS)})")
    root = integer(values["root"], "root", where, least=-1) if "root" in values else None
    step = 4 + (4 if layout.per_iteration else 0)
    start = len(layout.prefix)
    results = [_result(tokens[start + g * step:start + g * step + 4], where, layout.check,
                       layout.time_scale) for g in range(layout.groups)]
    if layout.per_iteration:
        for g in range(layout.groups):
            for k, text in enumerate(tokens[start + g * step + 4:start + (g + 1) * step]):
                number(text, ITER_NAMES[k], where)
    return Row(line, size, count, dtype, redop, root, results[0],
               results[1] if len(results) > 1 else None)


def _result(words: list[str], where: str, check: str, scale: int = 1) -> Result:
    time = number(words[0], "time", where)
    if scale != 1:  # kept in µs, as every later version prints it
        time = Number(time.text, time.value * scale, time.slack * scale)
    algbw = number(words[1], "algbw", where)
    busbw = number(words[2], "busbw", where)
    wrong = None if words[3] == "N/A" else number(
        words[3], "#wrong" if check == "wrong" else "error", where)
    return Result(time, algbw, busbw, wrong)


def consistent_algbw(row: Row, r: Result) -> bool:
    """Whether algbw is size / time as nccl-tests computes both from one measured time
    (``GetBw``: algbw = bytes / 1e9 / seconds), within the rounding of both printed
    figures."""
    if row.size == 0:  # 0 bytes in any time: nccl-tests prints 0.00
        return r.algbw.value <= r.algbw.slack
    lo_t, hi_t = r.time.value - r.time.slack, r.time.value + r.time.slack
    lo = Fraction(row.size, 1000) / hi_t - r.algbw.slack
    if lo_t <= 0:
        return r.algbw.value >= lo
    hi = Fraction(row.size, 1000) / lo_t + r.algbw.slack
    return lo <= r.algbw.value <= hi


def consistent_busbw(r: Result, factor: Fraction) -> bool:
    """Whether busbw = algbw × factor within the rounding of both printed figures."""
    gap = abs(r.busbw.value - r.algbw.value * factor)
    return gap <= r.busbw.slack + factor * r.algbw.slack
