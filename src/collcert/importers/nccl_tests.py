"""Reading nccl-tests output (``all_reduce_perf``, ``all_gather_perf``, …) as it is found:
one or several runs per file, lines tagged by the MPI launcher, NCCL's debug lines in
between (even in the middle of a table row), every column set nccl-tests has printed
since 2019 (docs/measured.md). Anything else is refused (exit 2) naming its line.

What nccl-tests prints, read at NVIDIA/nccl-tests a0b82b2 (``src/util.cu``):
``writeDeviceReport`` (util.cu:622-735: the version line, ``# Collective test starting:``,
``# nThread … nGpus …``, ``# Using devices``, one ``#  Rank`` line per rank, util.cu:687),
``writeResultHeader`` (util.cu:739-760), the rows (:mod:`.nccl_tests_table`),
``writeResultFooter`` (util.cu:771-781: ``# Out of bounds values : N OK|FAILED``,
``# Avg bus bandwidth : X``, ``# Collective test concluded:``), ``writeErrors``
(util.cu:838-846, ``# error: …``); wrong data is reported as ``rank=%d #wrong=%d``
(common.cu:451) and a hang as ``…: Test timeout`` (common.cu:523). Older versions
printed ``#   Rank %2d Pid %6d on …`` (before d313d20, 2022) and ``# nThread …`` without
``agg iters``/``graph``. NCCL itself writes ``host:pid:tid [dev] NCCL INFO …``
(NCCL's ``src/debug.cc``) and, with ``NCCL_DEBUG=VERSION``, ``NCCL version 2.x.y``.
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .nccl_tests_run import RankLine, Run
from .nccl_tests_table import LogError, Row, consistent_algbw, number, parse_layout, parse_row

MAX_LOG_BYTES = 256 * 1024 * 1024
MAX_LINE = 100_000
# table rows in one file: each is read exactly and checked (about 0.4 ms) and compared
# (about 1 ms); nccl-tests prints one per size (34 for -b 8 -e 8G -f 2), so 10,000 is a
# campaign of some 300 runs. 2 million rows (250 MB) took 5.7 GB and 10 minutes unread.
MAX_ROWS = 10_000
_ROW_LIKE = re.compile(rb"(?m)^[^\S\n]*(?:\[[^\]\n]*\][^\s:]*:|\d+: )?[^\S\n]*\d+[^\S\n]+\d+[^\S\n]")

_TAG = re.compile(r"\[\d+(?:,\d+)?\](?:<std(?:out|err)>)?:?")  # [1,0]<stdout>:  or  [0]
_LEAD_TAG = re.compile(r"^\s*(?:\[\d+(?:,\d+)?\](?:<std(?:out|err)>)?:?|\d+: )")
_NCCL_MSG = re.compile(r"(?:\[[^\]]*\] )?[^\s\[]+:\d+:\d+ \[\d+\] NCCL (?:INFO|WARN|TRACE|ABORT)\b")
_NCCL_VERSION = re.compile(r"^NCCL version (\S+)")
_RANK = re.compile(r"^#\s+Rank\s+(\d+)(?:\s+Group\s+\d+)?(?:\s+Pid\s+\d+)?\s+on\s+(\S+)\s+"
                   r"device\s+(\d+)\s+\[([^\]]*)\]\s*(.*)$")
_HEADER = re.compile(r"^#?\s*nThread\s+\d+\s+nGpus\s+\d+\s+minBytes\s+\d+\s+maxBytes\s+\d+\s+"
                     r"step:\s*\d+\((?:factor|bytes)\)")
_COMMAND = re.compile(r"(?:^|[\s/])([a-z_]+?)_perf(?:_mpi)?(?=\s|$)")
_KNOWN_COMMENTS = (
    "Using devices", "Blocking Enabled", "Parallel Init Enabled", "Per-Iteration Report",
    "Reducing maxBytes", "GPU memory usage", "Writing JSON output", "skipping json output",
    "Errors with asterisks")


@dataclass
class NcclTestsLog:
    """What a file of nccl-tests output holds: its runs, and what was passed over."""

    source: str
    runs: list[Run] = field(default_factory=list)
    nccl_lines: int = 0  # NCCL debug lines (and fragments) passed over
    warnings: list[str] = field(default_factory=list)  # NCCL WARN lines, first ones
    dropped: list[str] = field(default_factory=list)  # runs without a table

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "runs": [r.to_json() for r in self.runs],
                "nccl_debug_lines": self.nccl_lines, "nccl_warnings": self.warnings,
                "dropped": self.dropped}


def read_nccl_tests(path: str) -> NcclTestsLog:
    """Read ``path``: LogError (exit 2) naming the line for anything that is not
    nccl-tests output (a binary file, a cut or corrupted row, NaN, 10^400 bytes…)."""
    try:
        size = os.path.getsize(path)
        if size > MAX_LOG_BYTES:
            raise LogError(f"{path}: {size} bytes; an nccl-tests log of more than "
                           f"{MAX_LOG_BYTES // 2**20} MiB is not read (split it, or keep the "
                           "runs you want)")
        chunks: list[bytes] = []
        total = 0
        with open(path, "rb") as fh:  # in pieces: a device (/dev/zero) has no size
            while total <= MAX_LOG_BYTES:
                piece = fh.read(1 << 20)
                if not piece:
                    break
                if b"\0" in piece:  # refused at once, naming its line
                    _decode(b"".join(chunks) + piece, path)
                chunks.append(piece)
                total += len(piece)
        if total > MAX_LOG_BYTES:
            raise LogError(f"{path}: more than {MAX_LOG_BYTES // 2**20} MiB; an nccl-tests "
                           "log that large is not read (split it, or keep the runs you want)")
        data = b"".join(chunks)
    except IsADirectoryError:
        raise LogError(f"{path}: a directory, not an nccl-tests log") from None
    except OSError as exc:
        raise LogError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return parse_nccl_tests(data, path)


def parse_nccl_tests(data: bytes | str, source: str = "log") -> NcclTestsLog:
    """The runs in ``data`` (bytes as read, or text)."""
    if isinstance(data, bytes):
        _check_rows(data, source)
    text = _decode(data, source) if isinstance(data, bytes) else data
    text = text[1:] if text.startswith("\ufeff") else text  # a byte-order mark, as editors write
    reader = _Reader(source)
    for number_, raw in enumerate(text.splitlines(), 1):
        reader.feed(raw, number_)
    return reader.finish()


def _check_rows(data: bytes, source: str) -> None:
    """Refuse, before reading any, a file with more lines that look like table rows than
    :data:`MAX_ROWS` (the reader counts the rows it reads as well)."""
    found = _ROW_LIKE.finditer(data)
    if sum(1 for _ in itertools.islice(found, MAX_ROWS + 1)) > MAX_ROWS:
        line = data.count(b"\n", 0, next(_ROW_LIKE.finditer(data)).start()) + 1
        raise LogError(f"{source}: more than {MAX_ROWS} table rows (from line {line} on), "
                       f"the most collcert reads from one file (each is read exactly and "
                       "compared, about 1.5 ms: 15 s for 10000); nccl-tests prints one row per "
                       "size: split the file, or keep the runs you want")


def _check_times(row: Row, time_name: str, where: str) -> None:
    """algbw is size / time (both from one measured time, each test's ``GetBw``); a row
    where it is not, beyond the printed rounding, was altered or corrupted."""
    if time_name != "time":  # -C: CPU time, not the time the bandwidth came from
        return
    for name, r in (("out-of-place", row.out_of_place), ("in-place", row.in_place)):
        if r is not None and not consistent_algbw(row, r):
            implied = Fraction(row.size, 1000) / r.time.value if r.time.value else None
            said = f"{float(implied):.4g}" if implied is not None else "infinite"
            raise LogError(f"{where}: {name} algbw {r.algbw.text} GB/s is not size / time = "
                           f"{row.size} B / {r.time.text} µs = {said} GB/s, as nccl-tests "
                           "computes both: the row was altered or corrupted")


def _decode(data: bytes, source: str) -> str:
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise LogError(f"{source}: line {line}: a NUL byte: this is a binary file, not "
                       "nccl-tests output")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise LogError(f"{source}: line {line}: not UTF-8 text (byte {exc.start}); "
                       "nccl-tests prints ASCII") from None


class _Reader:
    """The line-by-line state: the run being read and a table row split by NCCL lines."""

    def __init__(self, source: str) -> None:
        self.log = NcclTestsLog(source)
        self.run: Run | None = None
        self.pending: list[str] = []  # tokens of a row interrupted by NCCL's lines
        self.pending_line = 0
        self.rows_read = 0
        self.tagged = False  # the launcher tags lines: strip its tags inside lines too
        self.trailer_seen = False
        self.carried_version: str | None = None  # NCCL's version line before the next run

    def where(self, line: int) -> str:
        return f"{self.log.source}: line {line}"

    def feed(self, raw: str, line: int) -> None:
        if len(raw) > MAX_LINE:
            raise LogError(f"{self.where(line)}: a line of {len(raw)} characters; nccl-tests "
                           "lines are short (the file is not its output)")
        text = raw.rstrip("\r").replace("\t", " ")  # tabs: a log pasted through an editor
        lead = _LEAD_TAG.match(text)
        if lead is not None:  # mpirun --tag-output, -prepend-rank, srun --label
            self.tagged = True
            text = text[lead.end():]
        m = _NCCL_MSG.search(text)
        interrupted = False
        if m is not None:  # NCCL's debug line, maybe after the start of a row
            self._nccl(text[m.start():])
            text, interrupted = text[:m.start()], True
        if self.tagged:  # a row printed in pieces gets a tag before each piece
            text = _TAG.sub(" ", text)
        payload = text.strip()
        if self.pending:
            self._continue(payload, line, interrupted)
            return
        if not payload:
            return
        self._line(payload, line, interrupted)

    def _nccl(self, message: str) -> None:
        self.log.nccl_lines += 1
        v = re.search(r"NCCL INFO NCCL version (\S+)", message)
        if v:
            self._version(v.group(1))
        if " NCCL WARN " in message and len(self.log.warnings) < 10:
            self.log.warnings.append(message.strip()[:300])

    def _version(self, version: str) -> None:
        """NCCL prints its version when a communicator starts: after a run's trailer, that
        is the next run's."""
        if self.run is not None and not self.trailer_seen:
            self.run.nccl_version = version
        else:
            self.carried_version = version

    def _line(self, payload: str, line: int, interrupted: bool) -> None:
        if payload.startswith("#") or _HEADER.match(payload) or payload.startswith(
                ("Out of bounds values", "Avg bus bandwidth")):  # 2017: no '#' (b188a15)
            self._comment(payload, line)
            return
        v = _NCCL_VERSION.match(payload)
        if v:
            self._version(v.group(1))
            return
        if self._known_other(payload, line):
            return
        if self.run is not None and self.run.layout is not None and not self.trailer_seen \
                and payload[:1].isdigit():
            self.pending, self.pending_line = payload.split(), line
            self._continue("", line, interrupted)
            return
        raise LogError(f"{self.where(line)}: not nccl-tests output: {payload[:80]!r}"
                       + ("" if self.run is None or self.run.layout is not None else
                          " (a table row before the column header?)"))

    def _continue(self, payload: str, line: int, interrupted: bool) -> None:
        """Add ``payload`` to the row being read; parse it once it has every field."""
        assert self.run is not None and self.run.layout is not None
        if payload.startswith("#"):
            raise LogError(f"{self.where(self.pending_line)}: a table row cut short "
                           f"({len(self.pending)} of {self.run.layout.fields} fields)")
        self.pending += payload.split()
        need = self.run.layout.fields
        if len(self.pending) > need:
            raise LogError(f"{self.where(self.pending_line)}: a table row with "
                           f"{len(self.pending)} fields where the column header has {need}")
        if len(self.pending) == need:
            row = parse_row(self.pending, self.run.layout, self.pending_line,
                            self.where(self.pending_line))
            _check_times(row, self.run.layout.time_name, self.where(self.pending_line))
            self.run.rows.append(row)
            self.pending = []
            self.rows_read += 1
            if self.rows_read > MAX_ROWS:
                raise LogError(f"{self.where(row.line)}: more than {MAX_ROWS} table rows in "
                               "one file; nccl-tests prints one row per size: split the file, "
                               "or keep the runs you want")
        elif not interrupted:  # only NCCL's own lines may split a row
            raise LogError(f"{self.where(self.pending_line)}: a table row cut short "
                           f"({len(self.pending)} of {need} fields)")

    def _known_other(self, payload: str, line: int) -> bool:
        """Lines nccl-tests prints outside the table: wrong-data reports, timeouts,
        ignored options, and the command line that started the test."""
        if re.match(r"^rank=\d+ #wrong=\d+$", payload) or re.match(
                r"^rank=\d+ elt\[\d+\]: want=", payload):
            if self.run is not None:
                self.run.failures.append(f"{self.where(line)}: {payload[:80]}")
            return True
        if re.search(r": Test timeout \(\d+s\)", payload):
            if self.run is not None:
                self.run.failures.append(f"{self.where(line)}: {payload[:80]}")
            return True
        if re.match(r"^Warning: Permanently added '[^']*' \([\w-]+\) to the list of known "
                    r"hosts\.$", payload):  # OpenSSH, as mpirun starts remote ranks
            return True
        if re.match(r"^(?:Option -\w .*Ignoring|Option -\w .*Defaulting)", payload):
            if self.run is not None:
                self.run.notes.append(payload[:120])
            return True
        m = _COMMAND.search(payload)
        if m and (self.run is None or not self.run.rows or self.trailer_seen):
            self._start(line)
            assert self.run is not None
            self.run.test, self.run.test_line = m.group(1), line
            return True
        return False

    def _start(self, line: int) -> None:
        """A new run starts here, unless the current one has not begun its table."""
        if self.run is not None and (self.run.rows or self.run.layout is not None):
            self._close()
        if self.run is None:
            self.run = Run(self.log.source, line, nccl_version=self.carried_version)
            self.carried_version = None
            self.trailer_seen = False

    def _close(self) -> None:
        if self.run is None:
            return
        if self.pending:
            raise LogError(f"{self.where(self.pending_line)}: a table row cut short "
                           f"({len(self.pending)} fields)")
        if self.run.rows:
            self.log.runs.append(self.run)
        else:  # a run that stopped before its table (a crash, a failed init)
            self.log.dropped.append(f"{self.where(self.run.first_line)}: a run with no table "
                                    "rows (it stopped before the first message size)")
        self.run = None

    def _comment(self, payload: str, line: int) -> None:
        body = payload.lstrip("#").strip()
        if _HEADER.match(payload):
            self._header(body, line)
        elif body.startswith("nccl-tests version") or body.startswith("Collective test starting"):
            self._versions(body, line)
        elif body.startswith("Rank "):
            self._rank(payload, line)
        elif body.startswith(("size ", "bytes ")):
            self._columns(body, line)
        elif body.startswith("Out of bounds values"):
            self._out_of_bounds(body, line)
        elif body.startswith("Avg bus bandwidth"):
            self._average(body, line)
        elif body.startswith("Collective test concluded"):
            pass
        elif body.startswith("error:"):
            if self.run is not None:
                self.run.failures.append(f"{self.where(line)}: nccl-tests reports {body[:100]}")
        elif not body or "out-of-place" in body or body.startswith("(B)") or \
                body.startswith(_KNOWN_COMMENTS):
            pass
        elif self.run is not None:
            self.run.notes.append(f"line {line}: {body[:100]}")

    def _header(self, body: str, line: int) -> None:
        self._start(line)
        assert self.run is not None
        if self.run.header:  # a second header before any table: a new run
            self._close()
            self._start(line)
            assert self.run is not None
        pairs = re.findall(r"([A-Za-z][A-Za-z ]*?):?\s+(-?\d+(?:\((?:factor|bytes)\))?)", body)
        self.run.header = {k.strip().rstrip(":"): v for k, v in pairs}

    def _versions(self, body: str, line: int) -> None:
        if self.run is None or self.run.layout is not None or self.run.rows:
            self._start(line)
        assert self.run is not None
        if body.startswith("nccl-tests version"):
            self.run.nccl_tests_version = body.split()[2] if len(body.split()) > 2 else None
            m = re.search(r"nccl-library=(\d{5,6})\b", body)
            if m and self.run.nccl_version is None:  # NCCL_VERSION_CODE since 2.9: X*10000+Y*100+Z
                code = int(m.group(1))
                self.run.nccl_version = f"{code // 10000}.{code // 100 % 100}.{code % 100}"
        else:
            name = body.split(":", 1)[1].strip()
            m = re.match(r"^(?:.*/)?([a-z_]+?)_perf(?:_mpi)?$", name)
            if m is None:
                raise LogError(f"{self.where(line)}: 'Collective test starting: {name[:40]}' "
                               "names no nccl-tests binary (*_perf)")
            self.run.test, self.run.test_line = m.group(1), line

    def _rank(self, payload: str, line: int) -> None:
        m = _RANK.match(payload)
        if m is None:
            raise LogError(f"{self.where(line)}: a rank line nccl-tests would not print "
                           f"(cut short?): {payload[:80]!r}")
        if self.run is None or self.run.layout is not None:
            self._start(line)
        assert self.run is not None
        rank = int(m.group(1))
        if rank > 1 << 20:
            raise LogError(f"{self.where(line)}: rank {rank} is beyond any machine")
        self.run.ranks.append(RankLine(rank, m.group(2), int(m.group(3)), m.group(4),
                                       m.group(5).strip(), line))

    def _columns(self, body: str, line: int) -> None:
        layout = parse_layout(body.split(), self.where(line))
        if self.run is None or self.run.layout is not None:
            self._start(line)
        assert self.run is not None
        self.run.layout = layout
        self.trailer_seen = False

    def _out_of_bounds(self, body: str, line: int) -> None:
        m = re.match(r"^Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)?\s*$", body)
        if m is None or self.run is None:
            raise LogError(f"{self.where(line)}: an 'Out of bounds values' line nccl-tests "
                           "would not print, or one before any run")
        self.run.out_of_bounds = int(m.group(1)[:12])
        self.trailer_seen = True

    def _average(self, body: str, line: int) -> None:
        m = re.match(r"^Avg bus bandwidth\s*:\s*(\S+)\s*(OK|FAILED)?\s*$", body)
        if m is None or self.run is None:
            raise LogError(f"{self.where(line)}: an 'Avg bus bandwidth' line nccl-tests would "
                           "not print, or one before any run")
        self.run.avg_busbw = number(m.group(1), "the average bus bandwidth",
                                    self.where(line)).value
        self.trailer_seen = True

    def finish(self) -> NcclTestsLog:
        if self.pending:
            raise LogError(f"{self.where(self.pending_line)}: the file ends inside a table row "
                           f"({len(self.pending)} fields): the log is cut short")
        if self.run is not None:
            self._close()
        if not self.log.runs:
            why = f" ({self.log.dropped[0]})" if self.log.dropped else ""
            if self.log.warnings:
                why += f"; NCCL warned: {self.log.warnings[0][:200]}"
            raise LogError(f"{self.log.source}: no nccl-tests run in this file (no table of "
                           f"'size count type … time algbw busbw' rows){why}")
        return self.log
