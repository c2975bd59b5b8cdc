"""One run of an nccl-tests binary as read from its output: the header, the ranks, the
table, the trailer, and what they say about the collective and the number of ranks.

The bus-bandwidth factors are nccl-tests' own (each test's ``GetBw``, NVIDIA/nccl-tests
a0b82b2): ``all_reduce.cu:59-65`` 2(n−1)/n; ``all_gather.cu:38-44``,
``reduce_scatter.cu:37-43``, ``alltoall.cu:48-54``, ``alltoallv.cu:495-505``,
``gather.cu:38-44``, ``scatter.cu:34-40`` (n−1)/n; ``broadcast.cu:34-40``,
``reduce.cu:36-40``, ``sendrecv.cu:38-44``, ``hypercube.cu:40-46`` 1. algbw is the
larger buffer over the time in every test (``size / time``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .nccl_tests_table import DELTA_MAX, Layout, Row, consistent_busbw

TESTS: dict[str, tuple[str | None, Callable[[int], Fraction]]] = {  # test name ->
    # (collcert's collective or None, busbw factor of n ranks)
    "all_reduce": ("allreduce", lambda n: Fraction(2 * (n - 1), n)),
    "all_gather": ("allgather", lambda n: Fraction(n - 1, n)),
    "reduce_scatter": ("reduce-scatter", lambda n: Fraction(n - 1, n)),
    "broadcast": ("broadcast", lambda n: Fraction(1)),
    "reduce": ("reduce", lambda n: Fraction(1)),
    "alltoall": ("alltoall", lambda n: Fraction(n - 1, n)),
    "sendrecv": (None, lambda n: Fraction(1)),
    "alltoallv": (None, lambda n: Fraction(n - 1, n)),
    "gather": (None, lambda n: Fraction(n - 1, n)),
    "scatter": (None, lambda n: Fraction(n - 1, n)),
    "hypercube": (None, lambda n: Fraction(1)),
}
BY_COLLECTIVE = {c: t for t, (c, _) in TESTS.items() if c is not None}
MAX_RANKS = 1 << 20


@dataclass(frozen=True)
class RankLine:
    """``#  Rank  0 Group  0 Pid 123 on host device  0 [0000:1b:00] NVIDIA H100 80GB HBM3``."""

    rank: int
    host: str
    device: int
    bus_id: str
    name: str
    line: int


@dataclass
class Run:
    """One run: from its header (or its column header) to its trailer."""

    source: str
    first_line: int
    test: str | None = None  # "all_reduce", from a test-name line or the command line
    test_line: int | None = None
    header: dict[str, str] = field(default_factory=dict)  # nThread, nGpus, minBytes, ...
    ranks: list[RankLine] = field(default_factory=list)
    layout: Layout | None = None
    rows: list[Row] = field(default_factory=list)
    out_of_bounds: int | None = None
    avg_busbw: Fraction | None = None
    failures: list[str] = field(default_factory=list)  # wrong-data reports, timeouts, errors
    notes: list[str] = field(default_factory=list)
    nccl_version: str | None = None
    nccl_tests_version: str | None = None

    def where(self, line: int) -> str:
        return f"{self.source}: line {line}"

    # ------------------------------------------------------------------ collective
    def candidates(self) -> list[str]:
        """The tests this run can be, from its test name or else from its rows:
        redop ``none`` and root −1: allgather, alltoall…; a root: broadcast, reduce…"""
        if self.test is not None:
            return [self.test]
        rows = self.rows
        prefix = self.layout.prefix if self.layout else ()
        ops = {r.redop for r in rows}
        roots = {r.root for r in rows}
        if "redop" not in prefix and "root" not in prefix:  # before 2022: all_gather, sendrecv
            return ["all_gather", "sendrecv"]
        if "redop" not in prefix:
            return ["broadcast"]
        if ops == {"none"}:
            rooted = any(x is not None and x >= 0 for x in roots)
            return ["broadcast", "gather", "scatter"] if rooted else \
                ["all_gather", "alltoall", "alltoallv"]
        if "root" not in prefix:
            return ["all_reduce", "reduce_scatter", "alltoall"]
        return ["reduce"] if any(x is not None and x >= 0 for x in roots) else \
            ["all_reduce", "reduce_scatter", "sendrecv"]

    # ------------------------------------------------------------------ ranks
    def listed_ranks(self) -> tuple[int | None, bool]:
        """(the number of ranks the rank lines show, whether every rank is listed)."""
        if not self.ranks:
            return None, False
        seen = {r.rank for r in self.ranks}
        n = max(seen) + 1
        return n, len(seen) == n

    def fits(self, test: str, n: int) -> list[Row]:
        """The rows whose busbw is not algbw × the test's factor for ``n`` ranks."""
        factor = TESTS[test][1](n)
        return [row for row in self.rows for r in (row.out_of_place, row.in_place)
                if r is not None and not consistent_busbw(r, factor)]

    def factor_ranks(self, test: str) -> list[int]:
        """Rank counts for which every row's busbw / algbw is the test's factor (only
        informative where the factor is not 1 and algbw is large enough to tell)."""
        best = max((row.out_of_place for row in self.rows),
                   key=lambda r: r.algbw.value, default=None)
        if best is None or best.algbw.value == 0 or TESTS[test][1](4) == 1:
            return []
        f = best.busbw.value / best.algbw.value
        guess = [2 / (2 - f)] if test == "all_reduce" else [1 / (1 - f)] if f < 1 else []
        out = []
        for g in guess:
            if g <= 0:
                continue
            centre = round(g)
            for n in range(max(2, centre - 3), min(MAX_RANKS, centre + 4)):
                if not self.fits(test, n):
                    out.append(n)
        return out

    def corrupted(self, n: int | None) -> list[str]:
        """Why the data is wrong: a #wrong other than 0, an old maximum error beyond
        nccl-tests' bound (with ``n`` ranks), out-of-bounds values, wrong-data lines."""
        why = list(self.failures)
        if self.out_of_bounds:
            why.append(f"the trailer counts {self.out_of_bounds} out-of-bounds values")
        if self.layout is None:
            return why
        for row in self.rows:
            for name, r in (("out-of-place", row.out_of_place), ("in-place", row.in_place)):
                if r is None or r.wrong is None:
                    continue
                bad = r.wrong.value != 0 if self.layout.check == "wrong" else (
                    n is not None
                    and r.wrong.value > DELTA_MAX.get(row.dtype, Fraction(0)) * (n - 1))
                if bad:
                    label = "#wrong" if self.layout.check == "wrong" else "error"
                    why.append(f"{self.where(row.line)}: {label} {r.wrong.text} "
                               f"({name}, {row.size} bytes)")
        return why

    def to_json(self) -> dict[str, Any]:
        from collcert.reference.model import fraction_str

        n, complete = self.listed_ranks()
        return {"source": self.source, "first_line": self.first_line, "test": self.test,
                "header": self.header, "ranks_listed": n, "all_ranks_listed": complete,
                "hosts": sorted({r.host for r in self.ranks}),
                "devices": sorted({r.name for r in self.ranks}),
                "nccl_version": self.nccl_version, "nccl_tests_version": self.nccl_tests_version,
                "rows": len(self.rows),
                "out_of_bounds": self.out_of_bounds,
                "avg_busbw": None if self.avg_busbw is None else fraction_str(self.avg_busbw),
                "notes": self.notes}
