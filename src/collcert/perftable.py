"""nccl-tests-style tables: time, algbw and busbw of a schedule (or a bound) per message size.

``collcert optimum … --sizes 1K:8G`` and ``collcert audit … --sizes 1K:8G``
print what nccl-tests (github.com/NVIDIA/nccl-tests) would print for a run of
the collective, but computed with the α-β model of
:mod:`collcert.reference.execution.alphabeta` instead of measured:

* sizes as nccl-tests reads them: ``-b 1K -e 8G -f 2`` is ``--sizes 1K:8G``
  (factor 2 unless ``--stepfactor`` or ``1K:8G:4`` says otherwise); K, M, G, T
  are binary (1K = 1024 bytes), as in nccl-tests;
* the columns ``size count type redop root time algbw busbw`` with nccl-tests'
  widths and number format; size and count follow nccl-tests' rules (for
  allgather, reduce-scatter and alltoall the per-rank count is rounded down to
  a multiple of 16 bytes, so the size is a multiple of 16 × ranks);
* ``time`` in microseconds; ``algbw = size / time`` and ``busbw = algbw ×
  factor`` in GB/s (10⁹ bytes/s), with nccl-tests' factors (doc/PERFORMANCE.md):
  allreduce 2(n−1)/n; allgather, reduce-scatter, alltoall (n−1)/n; broadcast
  and reduce 1.

Every number is exact underneath (``--json`` gives ``"p/q"`` strings); the
table rounds for display only, like nccl-tests.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from collcert.reference.execution import AlphaBeta
from collcert.reference.model import CollcertError, fraction_str, parse_number


class SizeError(CollcertError):
    """A bad --sizes / --stepfactor / --dtype / --alpha argument."""


DTYPES = {"int8": 1, "uint8": 1, "char": 1, "half": 2, "float16": 2, "bfloat16": 2,
          "int32": 4, "uint32": 4, "int": 4, "float": 4, "float32": 4,
          "int64": 8, "uint64": 8, "double": 8, "float64": 8}

MAX_BYTES = 2**50  # 1 PiB: beyond any buffer
MAX_ROWS = 1000
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([kKmMgGtT]?)(i?[bB])?\s*$")
_PREFIX = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def busbw_factor(collective: str, n: int) -> Fraction:
    """nccl-tests' bus-bandwidth factor of ``collective`` on ``n`` ranks."""
    if collective == "allreduce":
        return Fraction(2 * (n - 1), n)
    if collective in ("allgather", "reduce-scatter", "alltoall"):
        return Fraction(n - 1, n)
    if collective in ("broadcast", "reduce"):
        return Fraction(1)
    raise SizeError(f"no nccl-tests bus bandwidth factor for {collective!r}")


def parse_size(text: str) -> int:
    """Bytes from ``"8"``, ``"1K"``, ``"4M"``, ``"8G"``, ``"1.5K"`` (binary prefixes, as
    nccl-tests reads -b/-e)."""
    m = _SIZE.match(text)
    if not m:
        raise SizeError(f"--sizes: {text!r} is not a number of bytes such as 8, 1K, 4M, 8G or "
                        "1T (binary units, at most 1P)")
    value = parse_number(m.group(1)) * _PREFIX[m.group(2).lower()]
    if value.denominator != 1:
        raise SizeError(f"--sizes: {text!r} is not a whole number of bytes")
    if not 0 <= value <= MAX_BYTES:
        raise SizeError(f"--sizes: {text[:40]!r} is more than {MAX_BYTES} bytes (1P)")
    return int(value)


def parse_sizes(spec: str, factor: int | None = None) -> list[int]:
    """``MIN:MAX[:FACTOR]`` (nccl-tests' -b MIN -e MAX -f FACTOR, factor 2 by default),
    a single size, or a comma-separated list of sizes."""
    if "," in spec:
        sizes = [parse_size(p) for p in spec.split(",") if p.strip()]
        if not sizes:
            raise SizeError(f"--sizes {spec!r} lists no size")
        if len(sizes) > MAX_ROWS:
            raise SizeError(f"--sizes lists {len(sizes)} sizes; at most {MAX_ROWS}")
        return sizes
    parts = spec.split(":")
    if len(parts) == 1:
        return [parse_size(parts[0])]
    if len(parts) not in (2, 3):
        raise SizeError(f"--sizes {spec!r}: write MIN:MAX or MIN:MAX:FACTOR, e.g. 1K:8G")
    lo, hi = parse_size(parts[0]), parse_size(parts[1])
    if len(parts) == 3:
        if factor is not None:
            raise SizeError("give the step factor once: in --sizes MIN:MAX:FACTOR or with "
                            "--stepfactor")
        try:
            factor = int(parts[2])
        except ValueError:
            raise SizeError(f"--sizes {spec!r}: the factor {parts[2]!r} is not an integer"
                            ) from None
    factor = 2 if factor is None else factor
    if factor < 2:
        raise SizeError(f"step factor {factor}: it must be an integer ≥ 2 (nccl-tests -f)")
    if lo < 1:
        raise SizeError(f"--sizes {spec!r}: the smallest size must be at least 1 byte")
    if lo > hi:
        raise SizeError(f"--sizes {spec!r}: the smallest size is larger than the largest")
    sizes = []
    size = lo
    while size <= hi:
        sizes.append(size)
        if len(sizes) > MAX_ROWS:
            raise SizeError(f"--sizes {spec!r} gives more than {MAX_ROWS} sizes; use a larger "
                            "factor")
        size *= factor
    return sizes


def nccl_size(collective: str, nranks: int, size: int, elt: int) -> tuple[int, int]:
    """(bytes, count) as nccl-tests prints them for a requested ``size``: count is
    elements per rank for allgather / reduce-scatter / alltoall (rounded down to a
    multiple of 16 bytes) and of the whole buffer otherwise; bytes is the larger
    buffer (nccl-tests' max(sendBytes, recvBytes))."""
    count = size // elt
    if collective in ("allgather", "reduce-scatter", "alltoall"):
        per_rank = (count // nranks) & ~(max(16 // elt, 1) - 1)
        return per_rank * nranks * elt, per_rank
    return count * elt, count


@dataclass
class Row:
    size: int
    count: int
    dtype: str
    redop: str
    root: int
    time: Fraction  # µs
    algbw: Fraction  # GB/s
    busbw: Fraction  # GB/s
    bound_algbw: Fraction | None = None  # GB/s, upper bound at this size

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"size": self.size, "count": self.count, "type": self.dtype,
                               "redop": self.redop, "root": self.root,
                               "time": fraction_str(self.time), "alg_bw": fraction_str(self.algbw),
                               "bus_bw": fraction_str(self.busbw)}
        if self.bound_algbw is not None:
            out["bound_alg_bw"] = fraction_str(self.bound_algbw)
        return out


def table_rows(collective: str, nranks: int, sizes: Sequence[int], dtype: str, root: int,
               model: AlphaBeta, bound: AlphaBeta | None = None) -> list[Row]:
    """One row per size: the modelled time, algbw and busbw (and the bound's algbw)."""
    if dtype not in DTYPES:
        raise SizeError(f"--dtype {dtype!r}: choose one of {', '.join(DTYPES)}")
    elt = DTYPES[dtype]
    redop = "none" if collective in ("allgather", "broadcast", "alltoall") else "sum"
    factor = busbw_factor(collective, nranks)
    rows = []
    for want in sizes:
        size, count = nccl_size(collective, nranks, want, elt)
        time = model.time_us(size)
        algbw = Fraction(0) if size == 0 or time == 0 else Fraction(size, 1000) / time
        bnd = None
        if bound is not None and size:
            bt = bound.time_us(size)
            bnd = Fraction(size, 1000) / bt if bt else None
        rows.append(Row(size, count, dtype, redop, root, time, algbw, algbw * factor, bnd))
    return rows


def _num(value: Fraction, width: int) -> str:
    """nccl-tests' number format: 2 decimals if they fit the column, then 1, 0, then
    scientific notation (display only)."""
    x = float(value)
    for fmt in (f"{{:{width}.2f}}", f"{{:{width}.1f}}", f"{{:{width}.0f}}"):
        text = fmt.format(x)
        if len(text) <= width:
            return text
    return (f"{{:{width}.1e}}" if width >= 7 else f"{{:{width}.0e}}").format(x)


def format_table(rows: Sequence[Row], comments: Sequence[str] = (),
                 with_bound: bool = False) -> str:
    """The rows in nccl-tests' layout, ``comments`` as ``#`` lines above them."""
    lines = [f"# {c}" if c else "#" for c in comments]
    lines.append("#")
    extra = (f"  {'%bound':>6}", f"  {'(%)':>6}") if with_bound else ("", "")
    lines.append(f"# {'size':>10}  {'count':>12}  {'type':>8}  {'redop':>6}  {'root':>6}  "
                 f"{'time':>7}  {'algbw':>6}  {'busbw':>6}{extra[0]}")
    lines.append(f"# {'(B)':>10}  {'(elements)':>12}  {'':>8}  {'':>6}  {'':>6}  "
                 f"{'(us)':>7}  {'(GB/s)':>6}  {'(GB/s)':>6}{extra[1]}".rstrip())
    for r in rows:
        line = (f"{r.size:12d}  {r.count:12d}  {r.dtype:>8}  {r.redop:>6}  {r.root:6d}  "
                f"{_num(r.time, 7)}  {_num(r.algbw, 6)}  {_num(r.busbw, 6)}")
        if with_bound:
            pct = (_num(100 * r.algbw / r.bound_algbw, 6) if r.bound_algbw else "   N/A")
            line += f"  {pct}"
        lines.append(line)
    if rows:
        avg = sum((r.busbw for r in rows), Fraction(0)) / len(rows)
        lines.append(f"# {'Avg bus bandwidth':<20} : {float(avg):g}")
    return "\n".join(lines)
