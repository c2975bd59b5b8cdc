# ruff: noqa: UP031  (nccl-tests' own printf formats, kept as they are written in C)
"""nccl-tests output written as nccl-tests writes it, for the tests of every column set.

The formats are nccl-tests' own printf formats (NVIDIA/nccl-tests a0b82b2 ``src/util.cu``:
``writeBenchmarkLinePreamble`` :454-457, ``writeBenchmarkLineBody`` :497-511,
``getFloatStr`` :487-492, ``writeResultHeader`` :739-760; before 51af557 each test's
``print_header`` and ``print_line_header``, e.g. ``all_gather.cu:11-19`` at 51af557~1,
and ``PRINT("  %7s  %6.2f  %6.2f  %5.0le", ...)`` in common.cu). Real logs are in
tests/data/nccl-tests (PROVENANCE.md); these cover the column sets no public log at hand
shows, with figures consistent as nccl-tests computes them (algbw = size / time, busbw =
algbw × the test's factor).
"""

from __future__ import annotations

from fractions import Fraction


def float_str(value: float, width: int) -> str:
    """``getFloatStr`` (util.cu:487-492)."""
    for fmt in (f"%{width}.2f", f"%{width}.1f", f"%{width}.0f"):
        text = fmt % value
        if len(text) <= width:
            return text
    return (f"%{width}.1e" if width >= 7 else f"%{width}.0e") % value


def factor(test: str, n: int) -> Fraction:
    if test == "all_reduce":
        return Fraction(2 * (n - 1), n)
    if test in ("all_gather", "reduce_scatter", "alltoall"):
        return Fraction(n - 1, n)
    return Fraction(1)


def figures(size: int, time_us: float, test: str, n: int) -> tuple[str, str, str]:
    algbw = size / time_us / 1000
    return float_str(time_us, 7), float_str(algbw, 6), float_str(algbw * float(factor(test, n)), 6)


NEW_HEADER = (
    "#\n"
    "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n"
    % ("", "", "", "", "")
    + "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n"
    % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
       "algbw", "busbw", "#wrong")
    + "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n"
    % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
       "(GB/s)", ""))


def new_rows(test: str, n: int, sizes: list[tuple[int, float]], *, dtype: str = "float",
             op: str = "sum", root: int = -1, wrong: int = 0) -> str:
    """Rows of the 2022+ column set: size count type redop root, then per call
    time algbw busbw #wrong."""
    elt = {"float": 4, "half": 2, "double": 8}[dtype]
    out = []
    for size, t in sizes:
        count = size // elt // (n if test in ("all_gather", "reduce_scatter", "alltoall") else 1)
        line = "%12li  %12li  %8s  %6s  %6s" % (size, count, dtype, op, "%6i" % root)
        for _ in range(2):
            tt, a, b = figures(size, t, test, n)
            line += "  %7s  %6s  %6s  %6g" % (tt, a, b, wrong)
        out.append(line)
    return "\n".join(out) + "\n"


def new_log(test: str, n: int, sizes: list[tuple[int, float]], *, version: bool = True,
            ranks: bool = True, trailer: bool = True, **kw: object) -> str:
    """A whole run as nccl-tests 2.17+ prints it (``writeDeviceReport``, util.cu:622-735)."""
    head = ""
    if version:
        head += ("# nccl-tests version 2.17.6 nccl-headers=22703 nccl-library=22703\n"
                 f"# Collective test starting: {test}_perf\n")
    head += ("# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 "
             "iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n")
    if ranks:
        for r in range(n):
            head += ("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n"
                     % (r, 0, 1000 + r, f"node{r // 8}", r % 8, 0, 0x1b + r % 8, 0,
                        "NVIDIA H100 80GB HBM3"))
    body = NEW_HEADER + new_rows(test, n, sizes, **kw)  # type: ignore[arg-type]
    if trailer:
        body += ("# %-20s : %d %s\n" % ("Out of bounds values", 0, "OK")
                 + "# %-20s : %g %s\n" % ("Avg bus bandwidth", 1.5, "") + "#\n"
                 + f"# Collective test concluded: {test}_perf\n")
    return head + body


def old_log(columns: tuple[str, ...], test: str, n: int, sizes: list[tuple[int, float]],
            *, op: str = "sum", root: int = 0, error: str = "0e+00") -> str:
    """A run of the column sets before 51af557 (2022): ``columns`` among ("redop", "root"),
    type width 6 (2019) and ``%5.0le`` errors."""
    widths = "  ".join(["%6s"] * len(columns))
    pre = ("# %10s  %12s  %6s  " + widths + "            out-of-place                       "
           "in-place          \n") % ("", "", "", *[""] * len(columns))
    names = ("# %10s  %12s  %6s  " + widths + "  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n") % (
        "size", "count", "type", *columns, "time", "algbw", "busbw", "error", "time", "algbw",
        "busbw", "error")
    rows = []
    for size, t in sizes:
        vals = [op if c == "redop" else "%6i" % root for c in columns]
        line = ("%12li  %12li  %6s" + "".join("  %6s" for _ in columns)) % (size, size // 4,
                                                                           "float", *vals)
        for _ in range(2):
            tt, a, b = figures(size, t, test, n)
            line += "  %7s  %6s  %6s  %5s" % (tt, a, b, error)
        rows.append(line)
    return ("# nThread 1 nGpus %d minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 5 "
            "iters: 20 validation: 1 \n#\n# Using devices\n" % n
            + "".join("#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s\n"
                      % (r, 77, "host", r, r, "Tesla V100-SXM2-32GB") for r in range(n))
            + "#\n" + pre + names + "\n".join(rows) + "\n"
            + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.2 \n#\n")
