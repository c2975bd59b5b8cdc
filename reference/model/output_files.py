"""Writing an output file all or nothing: the old file stays until the new one is whole.

Every file collcert writes (``-o``, ``--plot``, schedules, certificates, pictures)
goes through :func:`output_file`: the text is written to a hidden temporary file
beside the target and renamed over it only once it is complete, so a refusal, an
error or an interrupt half-way leaves the old file (or no file) as it was, never an
empty or truncated one. A target that is not a regular file (``/dev/stdout``, a
named pipe, a terminal) is written directly: it cannot be replaced, and there is
nothing there to lose. A symbolic link is followed: its target is replaced and the
link stays.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping
from typing import IO, Any


def _mode_for(real: str) -> int:
    """The permissions the finished file gets: those of the file it replaces, else the
    ones ``open(path, "w")`` would give (0666 less the umask)."""
    try:
        return stat.S_IMODE(os.stat(real).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def output_file(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """A file object to write ``path`` through (``mode`` "w" for UTF-8 text, "wb" for
    bytes); the file appears at ``path`` only when the ``with`` block ends without an
    exception. Raises OSError as ``open`` would (a missing folder, no permission)."""
    if mode not in ("w", "wb"):
        raise ValueError(f"output_file mode {mode!r}: use 'w' or 'wb'")
    real = os.path.realpath(os.fspath(path))
    try:
        special = not stat.S_ISREG(os.stat(real).st_mode)
    except OSError:  # does not exist yet
        special = False
    encoding = "utf-8" if mode == "w" else None
    if special:
        with open(real, mode, encoding=encoding) as fh:
            yield fh
        return
    folder, name = os.path.split(real)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=folder or ".")
    try:
        with os.fdopen(fd, mode, encoding=encoding) as fh:
            yield fh
        os.chmod(tmp, _mode_for(real))
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_files(texts: Mapping[str, str]) -> None:
    """Write several files (path -> UTF-8 text) all or nothing: every text goes to a
    temporary file beside its target first, and the targets are replaced only once all
    of them are written; a failure on the way leaves every target as it was. Raises
    OSError as ``open`` would."""
    done: list[tuple[str, str]] = []  # (temporary, target)
    try:
        for path, text in texts.items():
            real = os.path.realpath(path)
            folder, name = os.path.split(real)
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=folder or ".")
            done.append((tmp, real))
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.chmod(tmp, _mode_for(real))
    except BaseException:
        for tmp, _ in done:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    for tmp, real in done:
        os.replace(tmp, real)
