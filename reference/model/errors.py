"""Exception types of the reference implementation, and how their messages name a node."""

from __future__ import annotations


def node_name(node: object) -> str:
    """A node id for messages: its repr, shortened when it is absurdly long."""
    text = repr(node)
    return text if len(text) <= 60 else f"{text[:40]}…{text[-12:]} ({len(text)} characters)"


class CollcertError(Exception):
    """Base class of every error collcert raises on purpose."""

    collcert_bad_input = True  # the CLI's exit 2, also marked on certify's InputError


class TopologyError(CollcertError, ValueError):
    """A topology is malformed.

    The message names the culprit (node, link, file position) and says what to do.
    """


class ScheduleError(CollcertError, ValueError):
    """A schedule cannot be built or read as asked."""
