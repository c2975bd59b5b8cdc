"""Exception types of the reference implementation."""

from __future__ import annotations


class CollcertError(Exception):
    """Base class of every error collcert raises on purpose."""

    collcert_bad_input = True  # the CLI's exit 2, also marked on certify's InputError


class TopologyError(CollcertError, ValueError):
    """A topology is malformed.

    The message names the culprit (node, link, file position) and says what to do.
    """


class ScheduleError(CollcertError, ValueError):
    """A schedule cannot be built or read as asked."""
