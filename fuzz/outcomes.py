"""How a fuzz property reports: it holds (returns), fails, or does not apply.

Every property of :mod:`collcert.fuzz.properties` and :mod:`collcert.fuzz.allreduce`
raises :class:`PropertyFailure` when it does not hold on a topology and
:class:`Skipped` when it does not apply to it (too large for enumeration or
an LP); ``collcert fuzz check``, the shrinker and the tests tell the two apart.
"""

from __future__ import annotations


class PropertyFailure(AssertionError):
    """A property does not hold on a topology."""


class Skipped(Exception):
    """The property does not apply (the topology is too large for enumeration)."""
