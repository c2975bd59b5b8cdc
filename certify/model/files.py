"""Reading input for the checkers: plain or gzip-compressed, size-capped, in bounded memory.

A file is gunzipped when it starts with gzip's magic bytes (1f 8b), whatever
its name; reading (and decompressing) goes in chunks of a megabyte and stops
one byte past the cap, so ``/dev/zero``, an endless pipe or a small file that
would unpack to gigabytes costs no more than the cap. Text (JSON, XML, a
ranks list) never contains a NUL byte: the first one refuses the input at
once, which stops ``/dev/zero`` and random data after the first chunk.
Every problem is an :class:`InputError` naming the file.

:func:`memory_budget` is the memory a single command may plan to use (3/4 of
the least of the machine's memory, the address-space limit and the cgroup
limit, or ``COLLCERT_MAX_MEMORY``); :func:`check_json_memory` refuses a JSON
text whose parsed form would not fit in it, and :func:`load_json` parses JSON
text within these bounds. ``collcert.reference.model.limits``
uses the same budget for its size estimates.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from fractions import Fraction
from typing import Any, Protocol

from .base import InputError

GZIP_MAGIC = b"\x1f\x8b"


class Readable(Protocol):
    """A binary stream: an open file, ``sys.stdin.buffer``, a GzipFile."""

    def read(self, size: int = ..., /) -> bytes: ...

CHUNK = 1 << 20

ENV_MEMORY = "COLLCERT_MAX_MEMORY"
MEMORY_PERCENT = 75
"""Share of the available memory a single command may plan to use."""

JSON_BYTES_PER_ITEM = 64
"""Memory per JSON value (an upper estimate: an empty dict is 64 bytes, a small string 50,
plus the slot that holds it); :func:`check_json_memory` counts values by their separators."""

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def human_bytes(n: int | float) -> str:
    """``"1.9 GB"``: a byte count for messages (powers of 1024, one decimal), computed in
    exact arithmetic, so that any count prints (10^400 bytes too, in PB)."""
    units = ("KB", "MB", "GB", "TB", "PB")
    exact = Fraction(n)
    if exact < 1024:
        return f"{round(exact)} bytes"
    power = 1
    while power < len(units) and exact >= 1024 ** (power + 1):
        power += 1
    tenths = round(exact * 10 / 1024 ** power)
    return f"{tenths // 10}.{tenths % 10} {units[power - 1]}"


def parse_bytes(text: str) -> int:
    """``"64G"`` → 68719476736; plain digits are bytes. ValueError when unreadable."""
    m = re.fullmatch(r"\s*(\d{1,18})\s*([kmgt]?)i?b?\s*", text.lower())
    if not m:
        raise ValueError(f"{text!r} is not a size such as 64G, 512M or 1000000")
    return int(m.group(1)) * _UNITS[m.group(2)]


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return None


def _address_space_limit() -> int | None:
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else soft


def _cgroup_limit() -> int | None:
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path, encoding="ascii") as fh:
                text = fh.read(64).strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 1 << 60:
            return int(text)
    return None


def memory_budget() -> tuple[int, str]:
    """(bytes a command may plan to use, how that figure was chosen); ValueError when
    ``COLLCERT_MAX_MEMORY`` is set to something unreadable."""
    env = os.environ.get(ENV_MEMORY)
    if env:
        try:
            return parse_bytes(env), f"{ENV_MEMORY}={env}"
        except ValueError as exc:
            raise ValueError(f"{ENV_MEMORY}: {exc}") from None
    found = [(v, name) for v, name in ((_physical_memory(), "this machine's memory"),
                                       (_address_space_limit(), "the address-space limit "
                                        "(ulimit -v)"),
                                       (_cgroup_limit(), "the cgroup memory limit"))
             if v is not None]
    if not found:  # pragma: no cover - no way to tell: only the hard caps apply
        return 1 << 62, "no memory limit known"
    least, name = min(found)
    return (least * MEMORY_PERCENT // 100,
            f"{MEMORY_PERCENT}% of {name}, {human_bytes(least)}; set {ENV_MEMORY} to "
            "change it")


def check_json_memory(text: str | bytes, origin: str) -> None:
    """Refuse (InputError) a JSON text whose parsed form would not fit in the memory
    budget: one value per ``,``, ``[`` or ``{`` at :data:`JSON_BYTES_PER_ITEM` bytes
    each, plus the text itself (60 MB of ``{},{},…`` parse to over 1 GB)."""
    if len(text) < 1 << 20:
        return
    if isinstance(text, str):
        items = text.count(",") + text.count("[") + text.count("{")
    else:
        items = text.count(b",") + text.count(b"[") + text.count(b"{")
    check_fits(JSON_BYTES_PER_ITEM * items + 2 * len(text),
               f"{origin}: {human_bytes(len(text))} of JSON with about {items} values")


def check_fits(need: int, what: str) -> None:
    """Refuse (InputError) reading ``what`` when its estimated ``need`` of bytes exceeds the
    memory budget."""
    try:
        budget, how = memory_budget()
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if need > budget:
        raise InputError(
            f"{what} would take about {human_bytes(need)} of memory to read, more than the "
            f"{human_bytes(budget)} collcert may use ({how}); use a smaller file or a machine "
            "with more memory")


TEXT_COPIES = 3
"""Copies of an input's size that reading it holds at once: the bytes read, their copy
returned, the decoded text. The read stops at memory budget / TEXT_COPIES."""


def _capped(limit: int) -> tuple[int, str]:
    """``limit`` lowered to what the memory budget can hold (:data:`TEXT_COPIES`), and a
    sentence for the message when the budget is what stops the read ("" when not)."""
    try:
        budget, how = memory_budget()
    except ValueError as exc:
        raise InputError(str(exc)) from None
    fits = budget // TEXT_COPIES
    if fits >= limit:
        return limit, ""
    return fits, (f": reading it takes {TEXT_COPIES} times its size in memory, and "
                  f"collcert may use {human_bytes(budget)} ({how})")


def read_stream(stream: Readable, limit: int, origin: str, *, text: bool = True,
                ) -> bytearray:
    """At most ``limit`` bytes of ``stream`` (fewer when the memory budget cannot hold
    them: a gzip bomb stops there), read a megabyte at a time; with ``text``, the first
    NUL byte refuses the input (a binary file, ``/dev/zero``)."""
    limit, why = _capped(limit)
    buf = bytearray()
    while True:
        try:
            chunk = stream.read(min(CHUNK, limit + 1 - len(buf)))
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise InputError(f"{origin}: not a readable gzip file ({exc})") from None
        except OSError as exc:
            raise InputError(f"{origin}: cannot read ({exc.strerror or exc})") from None
        if not chunk:
            return buf
        if text:
            nul = chunk.find(b"\0")
            if nul >= 0:
                raise InputError(f"{origin}: contains a NUL byte at byte {len(buf) + nul}: a "
                                 "binary file, not UTF-8 text (JSON or XML)")
        buf += chunk
        if len(buf) > limit:
            raise InputError(f"{origin}: more than {limit} bytes ({human_bytes(limit)}); that "
                             f"is more than collcert reads{why}")


def read_bytes(path: str | os.PathLike[str], limit: int, *, text: bool = False) -> bytes:
    """The file's contents (decompressed if gzip), at most ``limit`` bytes; ``text``:
    refuse NUL bytes as soon as one is read (see :func:`read_stream`)."""
    return bytes(_read(path, limit, text))


def _read(path: str | os.PathLike[str], limit: int, text: bool) -> bytearray:
    p = os.fspath(path)
    try:
        with open(p, "rb") as fh:
            zipped = fh.read(2) == GZIP_MAGIC
            fh.seek(0)
            if zipped:
                with gzip.GzipFile(fileobj=fh, mode="rb") as gz:
                    data = read_stream(gz, limit, f"{p} (after decompression)", text=text)
            else:
                size = os.fstat(fh.fileno()).st_size
                cap, why = _capped(limit)
                if size > cap and os.path.isfile(p):
                    raise InputError(f"{p}: {size} bytes is more than collcert reads "
                                     f"({cap} bytes, {human_bytes(cap)}){why}")
                data = read_stream(fh, limit, p, text=text)
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{p}: is a directory, not an input file") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read ({exc.strerror or exc})") from None
    except ValueError as exc:  # a NUL byte in the path itself
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{p!r}: cannot read ({exc})") from None
    return data


def decode(data: bytes | bytearray, origin: str) -> str:
    """``data`` as UTF-8 text (InputError naming the byte if it is not)."""
    try:  # a byte-order mark (Windows editors write one) is not part of the text
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise InputError(f"{origin}: not UTF-8 text (byte {exc.start}): a binary file, not "
                         "text (JSON or XML)") from None


def read_text(path: str | os.PathLike[str], limit: int) -> str:
    """:func:`read_bytes` decoded as UTF-8; NUL bytes and non-UTF-8 data are refused."""
    return decode(_read(path, limit, True), os.fspath(path))


MAX_JSON_BYTES = 512 * 1024 * 1024


def load_json(text: str | bytes, origin: str) -> Any:
    """Parse JSON text with a size cap; InputError naming ``origin`` on failure.

    Absurd nesting makes the C parser raise RecursionError, which is caught:
    the cost stays linear in the (capped) size.
    """
    if len(text) > MAX_JSON_BYTES:
        raise InputError(f"{origin}: {len(text)} bytes is more than collcert reads")
    check_json_memory(text, origin)  # 60 MB of {},{},… would parse to over 1 GB
    sample = text if isinstance(text, str) else text.decode("utf-8", "replace")
    sample = sample.removeprefix("\ufeff")
    try:
        return json.loads(sample)
    except json.JSONDecodeError as exc:
        raise InputError(f"{origin}: not valid JSON at line {exc.lineno} column {exc.colno}: "
                         f"{exc.msg}") from None
    except RecursionError:
        raise InputError(f"{origin}: JSON nested too deeply to read (arrays or objects "
                         "thousands of levels deep)") from None
    except ValueError as exc:  # an integer beyond Python's 4300 digits
        why = ("a number with more than 4300 digits" if "digits" in str(exc)
               else str(exc)[:200])
        raise InputError(f"{origin}: not readable JSON: {why}") from None
