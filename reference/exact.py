"""Exact numbers: parsing user-supplied capacities and printing fractions."""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from numbers import Rational

_DECIMAL = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_RATIO = re.compile(r"^[+-]?\d+\s*/\s*[+-]?\d+$")


def parse_number(value: object) -> Fraction:
    """Read an exact rational from an int, Fraction, Decimal, float or string.

    Strings may be decimals (``"12.5"``, ``"1e3"``) or ratios (``"3/4"``).
    A Python float is read as the decimal it prints as (``0.1`` is 1/10),
    never as its binary expansion. Raises ``ValueError`` with a readable
    message for anything else, for NaN and for infinities.
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is a boolean, not a number")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, Fraction):
        return value
    if isinstance(value, Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ValueError(f"{value!r} is not a finite number")
        return Fraction(repr(value))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"{value!r} is not a finite number")
        return Fraction(value)
    if isinstance(value, str):
        text = value.strip()
        if _DECIMAL.match(text):
            try:
                return Fraction(Decimal(text))
            except (InvalidOperation, ValueError) as exc:  # pragma: no cover - regex guards
                raise ValueError(f"{value!r} is not a number") from exc
        if _RATIO.match(text):
            num, den = (int(part) for part in text.split("/"))
            if den == 0:
                raise ValueError(f"{value!r} divides by zero")
            return Fraction(num, den)
        raise ValueError(
            f"{value!r} is not a number: write an integer, a decimal such as \"12.5\" "
            'or a ratio such as "3/4"'
        )
    raise ValueError(f"{value!r} (a {type(value).__name__}) is not a number")


def fraction_str(value: Fraction | int) -> str:
    """Exact text of a rational: ``"65/3"``, or ``"7"`` for an integer."""
    value = Fraction(value)
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator}/{value.denominator}"


def decimal_str(value: Fraction | int, digits: int = 6) -> str:
    """A rounded decimal for display only, computed without binary floats."""
    value = Fraction(value)
    scaled = round(value * 10**digits)
    sign = "-" if scaled < 0 else ""
    scaled = abs(scaled)
    whole, frac = divmod(scaled, 10**digits)
    text = f"{whole}.{frac:0{digits}d}".rstrip("0").rstrip(".")
    return sign + text


def show(value: Fraction | int) -> str:
    """``"1040/3 (≈ 346.666667)"``: the exact value with a decimal beside it."""
    exact = fraction_str(value)
    if Fraction(value).denominator == 1:
        return exact
    return f"{exact} (≈ {decimal_str(value)})"


def lcm_of_denominators(values: list[Fraction]) -> int:
    scale = 1
    for v in values:
        scale = scale * v.denominator // math.gcd(scale, v.denominator)
    return scale
