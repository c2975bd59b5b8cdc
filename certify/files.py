"""Reading input files for the checkers: plain or gzip-compressed, size-capped.

A file is gunzipped when it starts with gzip's magic bytes (1f 8b), whatever
its name; decompression stops one byte past the cap, so a small file that
would unpack to gigabytes costs no more than the cap. Every problem is an
:class:`InputError` naming the file.
"""

from __future__ import annotations

import gzip
import os
import zlib

from .base import InputError

GZIP_MAGIC = b"\x1f\x8b"


def read_bytes(path: str | os.PathLike[str], limit: int) -> bytes:
    """The file's contents (decompressed if gzip), at most ``limit`` bytes."""
    p = os.fspath(path)
    try:
        with open(p, "rb") as fh:
            zipped = fh.read(2) == GZIP_MAGIC
            fh.seek(0)
            if zipped:
                try:
                    with gzip.GzipFile(fileobj=fh, mode="rb") as gz:
                        data = gz.read(limit + 1)
                except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
                    raise InputError(f"{p}: not a readable gzip file ({exc})") from None
            else:
                data = fh.read(limit + 1)
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{p}: is a directory, not an input file") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read ({exc.strerror or exc})") from None
    if len(data) > limit:
        how = " after decompression" if zipped else ""
        raise InputError(f"{p}: more than {limit} bytes{how}; that is more than collcert reads")
    return data


def read_text(path: str | os.PathLike[str], limit: int) -> str:
    """:func:`read_bytes` decoded as UTF-8."""
    data = read_bytes(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{os.fspath(path)}: not UTF-8 text (byte {exc.start})") from None
