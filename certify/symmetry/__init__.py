"""Automorphisms a certificate may carry, verified on the topology; the orbits they generate.

Module ``automorphisms``: read, verify, orbits of nodes and links.
"""

from . import automorphisms

__all__ = ["automorphisms"]
