"""Helpers of the "every stated figure is compared" tests (issue 22 item 5).

A test changes one field of a certificate with :func:`mutated` and asks
:func:`accepts` whether ``collcert check``'s dispatcher still accepts it. Imported as
``from stated_mutation import accepts, mutated`` (tests/ is on ``sys.path``, see
conftest.py).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from collcert.certify.dispatch import check_certificate
from collcert.certify.model import InputError


def mutated(v: Any) -> Any:
    """A different value of the same kind: a flipped bool, an int plus one, a number
    string doubled plus one, any other string with an "x" added; None becomes 1/7."""
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return v + 1
    if isinstance(v, str):
        try:
            return str(Fraction(v) * 2 + 1)
        except (ValueError, ZeroDivisionError):
            return v + "x"
    return "1/7" if v is None else None


def accepts(topo: dict[str, Any], cert: dict[str, Any]) -> tuple[bool, str]:
    """(accepted, the reasons given) for a certificate checked against a topology's JSON;
    a file refused as input counts as not accepted, its message as the reason."""
    try:
        _, v = check_certificate(topo, cert)
    except InputError as exc:
        return False, str(exc)
    return v.ok, " ".join(v.all_reasons())
