"""Task functions for tests/test_fuzz_parallel.py, in a module that imports nothing
heavy: every fresh worker process imports it to unpickle the task."""

from __future__ import annotations

import os
from pathlib import Path


def square_or_die(x: int, bad: int, marker: str | None = None) -> int:
    """x², but the worker process dies on ``bad`` (only the first time with a marker)."""
    if x == bad and (marker is None or not os.path.exists(marker)):
        if marker is not None:
            Path(marker).touch()
        os._exit(7)
    return x * x
