"""Reduction schedule files (``collcert-reduction/1``, Canon & Antoniu 2012) as the CLI meets them.

``collcert reduce-tree --check FILE`` and ``collcert draw FILE`` both read
one: :func:`is_reduction_file` recognises it by its beginning (so ``draw``
can tell it from a topology), :func:`read_reduction_file` reads it in bounded
memory; the simulator of ``collcert.certify.reduction`` checks what it says.
"""

from __future__ import annotations

import os
from typing import Any

from collcert.reference.reduction import ReductionError

MAX_FILE_BYTES = 512 * 1024 * 1024


def is_reduction_file(path: object) -> bool:
    """True when ``path`` names a JSON file whose beginning declares collcert-reduction/1."""
    if not isinstance(path, str) or not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return b'"collcert-reduction/1"' in head


def read_reduction_file(path: str) -> Any:
    """The parsed JSON of a reduction schedule file, read in bounded memory: a missing,
    binary, oversized or unparsable file is a ReductionError naming it (exit 2)."""
    from collcert.certify.model import InputError, load_json, read_text

    try:
        return load_json(read_text(path, MAX_FILE_BYTES), path)
    except InputError as exc:
        raise ReductionError(str(exc)) from None
