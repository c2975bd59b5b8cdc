"""Exact numbers: parsing user-supplied capacities and printing fractions.

Every number collcert reads from a user (topology capacities, weights, claims,
option values) goes through :func:`parse_number`, which refuses absurd sizes
*before* doing any arithmetic: a numerator or denominator of more than
:data:`MAX_DIGITS` decimal digits (``"1e999999999"``, ``"1e-999999999"``, a
2-million-digit decimal) is a :class:`NumberError`, in time proportional to
the length of the text. :func:`lcm_of_denominators` refuses a common
denominator of more than :data:`MAX_SCALE_BITS` bits (3,000 capacities
``1/p`` for distinct primes ``p``). Both limits keep every number collcert
computes from them far below Python's 4300-digit int-to-str limit.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction
from numbers import Rational

from .errors import CollcertError

MAX_DIGITS = 300
"""Most decimal digits of the numerator and of the denominator of a number read from
input (a bandwidth of 10^300 GB/s is far beyond any machine; exact ratios of real
capacities need a handful of digits)."""

MAX_TEXT = 2 * MAX_DIGITS + 50
"""Most characters of a number written as text (digits, sign, point, exponent, spaces)."""

MAX_SCALE_BITS = 1024
"""Most bits of the least common multiple of the denominators of a topology's
capacities (the scale that turns them into integers for max-flow)."""

_DECIMAL = re.compile(r"^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$")
_RATIO = re.compile(r"^([+-]?\d+)\s*/\s*([+-]?\d+)$")
_LIMIT = 10**MAX_DIGITS


class NumberError(CollcertError, ValueError):
    """A number that cannot be read, or is too large or too precise to compute with.

    A ``ValueError`` (callers that wrap bad numbers keep working) and a
    ``CollcertError`` (the CLI exits 2 with the message)."""


def _too_big(value: object, why: str) -> NumberError:
    text = value if isinstance(value, str) else repr(value)
    shown = text if len(text) <= 40 else f"{text[:20]}…{text[-8:]} ({len(text)} characters)"
    return NumberError(f"{shown!s} {why}; collcert reads numbers whose numerator and "
                       f"denominator have at most {MAX_DIGITS} digits")


def _checked(value: Fraction, original: object) -> Fraction:
    if abs(value.numerator) >= _LIMIT or value.denominator >= _LIMIT:
        raise _too_big(original, "is too large or too precise")
    return value


def _decimal_digits(sign: str, whole: str, frac: str, exp: int, original: object) -> Fraction:
    """sign whole.frac × 10^exp, refusing sizes beyond MAX_DIGITS before computing it."""
    digits = (whole + frac).lstrip("0")
    if not digits:
        return Fraction(0)
    stripped = digits.rstrip("0")
    shift = exp - len(frac) + len(digits) - len(stripped)  # value = int(stripped) · 10^shift
    digits = stripped
    num_digits = len(digits) + max(shift, 0)
    den_digits = -shift + 1 if shift < 0 else 1
    if num_digits > MAX_DIGITS or den_digits > MAX_DIGITS:
        if len(digits) > MAX_DIGITS:
            raise _too_big(original, f"has {len(digits)} significant digits")
        why = "is too large" if num_digits > MAX_DIGITS else "has too many decimal places"
        if exp:
            why += f" (exponent {exp})" if abs(exp) < 10**12 else " (a huge exponent)"
        raise _too_big(original, why)
    mant = int(digits)
    value = Fraction(mant * 10**shift) if shift >= 0 else Fraction(mant, 10**-shift)
    return _checked(-value if sign == "-" else value, original)


def parse_number(value: object) -> Fraction:
    """Read an exact rational from an int, Fraction, Decimal, float or string.

    Strings may be decimals (``"12.5"``, ``"1e3"``) or ratios (``"3/4"``).
    A Python float is read as the decimal it prints as (``0.1`` is 1/10),
    never as its binary expansion. Raises :class:`NumberError` (a
    ``ValueError``) with a readable message for anything else, for NaN and
    infinities, and for numbers beyond :data:`MAX_DIGITS` digits.
    """
    if isinstance(value, bool):
        raise NumberError(f"{value!r} is a boolean, not a number")
    if isinstance(value, int):
        if value.bit_length() > MAX_DIGITS * 10 // 3 + 1 or abs(value) >= _LIMIT:
            approx = int(value.bit_length() * 0.30103) + 1
            raise NumberError(f"an integer of about {approx} digits is too large; collcert "
                              f"reads numbers of at most {MAX_DIGITS} digits")
        return Fraction(value)
    if isinstance(value, Fraction):
        return _checked(value, value)
    if isinstance(value, Rational):
        return parse_number(Fraction(int(value.numerator), int(value.denominator)))
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise NumberError(f"{value!r} is not a finite number")
        return parse_number(repr(value))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise NumberError(f"{value!r} is not a finite number")
        sign, ds, exp = value.as_tuple()
        assert isinstance(exp, int)
        return _decimal_digits("-" if sign else "", "".join(map(str, ds)), "", exp, value)
    if isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_TEXT:
            raise _too_big(text, "is too long")
        if not text.isascii():  # int() reads '٣' (Arabic-Indic) or '３' as 3: not here
            shown = value if len(value) <= 40 else value[:40] + "…"
            raise NumberError(f"{shown!r} is not a number: write it with the digits 0-9")
        m = _DECIMAL.match(text)
        if m and (m.group(2) or m.group(3)):
            return _decimal_digits(m.group(1), m.group(2), m.group(3) or "",
                                   int(m.group(4) or 0), value)
        m = _RATIO.match(text)
        if m:
            num, den = int(m.group(1)), int(m.group(2))
            if den == 0:
                raise NumberError(f"{value!r} divides by zero")
            return _checked(Fraction(num, den), value)
        if text.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise NumberError(f"{value!r} is not a finite number")
        shown = value if len(value) <= 40 else value[:40] + "…"
        raise NumberError(
            f"{shown!r} is not a number: write an integer, a decimal such as \"12.5\" "
            'or a ratio such as "3/4"'
        )
    raise NumberError(f"{value!r} (a {type(value).__name__}) is not a number")


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


def lcm_of_denominators(values: list[Fraction], max_bits: int | None = MAX_SCALE_BITS,
                        what: str = "the numbers") -> int:
    """The least common multiple of the denominators of ``values``.

    Raises :class:`NumberError` as soon as it passes ``max_bits`` bits (``None``:
    no limit), naming ``what`` the values are.
    """
    scale = 1
    for v in values:
        scale = scale * v.denominator // math.gcd(scale, v.denominator)
        if max_bits is not None and scale.bit_length() > max_bits:
            raise NumberError(
                f"{what} have denominators whose least common multiple has more than "
                f"{max_bits} bits (the limit, exact.MAX_SCALE_BITS): collcert scales them to "
                "integers for max-flow. Use fewer distinct denominators, e.g. express "
                "the numbers in a common unit"
            )
    return scale
