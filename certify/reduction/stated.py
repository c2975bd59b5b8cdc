"""The figures a reduction schedule states beside its tree, compared (issue 22, item 5).

:mod:`.simulate` replays the tree and dates (Canon & Antoniu 2012, §3) and compares
``makespan``. This module compares the rest, each failure naming its field:

* ``lower_bound``, ``upper_bound`` and every entry of ``bounds`` (kind, value, name,
  formula): this checker recomputes the bounds that apply to the problem stated (n, d,
  c, the model, ``max_transfers`` or ``max_reducers``) from its own formulas — Lemma 5
  (⌈log2 n⌉·max(d, c)), Prop 6 (⌈log2 n⌉·(d + c)) and the derived bounds of
  docs/reduction-trees.md for K transfers and K reducers — and requires the list to be
  exactly those, ``lower_bound`` their greatest lower and ``upper_bound`` their least
  upper value;
* ``tree`` (``depth``, ``max_in_degree``, ``reducers``) and ``sink``: from ``parent``;
* ``strategy``: one of optimal, binomial, fibonacci;
* ``check``, the writer's own verdict: ``ok`` true, no reasons, and every fact equal to
  this checker's.

``algorithm`` and ``notes`` are prose about how the file was made (not compared); any
other field fails as one no checker proves.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Verdict, frac_str, number

KNOWN = {"format", "n", "transfer", "compute", "model", "max_transfers", "max_reducers",
         "strategy", "algorithm", "makespan", "lower_bound", "upper_bound", "bounds", "tree",
         "sink", "parent", "send_time", "operand_order", "notes", "check"}
STRATEGIES = ("optimal", "binomial", "fibonacci")
Bound = tuple[str, Fraction, str, str]  # kind, value, name, formula


def _clog(n: int) -> int:
    return (n - 1).bit_length()


def _flog(n: int) -> int:
    return n.bit_length() - 1


def _up(a: int, b: int) -> int:
    return -(-a // b)


def _star(n: int, d: Fraction, c: Fraction, k: int) -> Fraction:
    """K reducers: m = ⌈(n − K)/K⌉ elements each into K reducers, then a binomial tree."""
    m = _up(n - k, k)
    star = d + (m - 1) * max(d, c) + c if m > 0 else Fraction(0)
    return star + _clog(k) * (d + c)


def _steps(n: int, k: int) -> int:
    """K transfers: ⌊log2 K⌋ + 1 doubling steps to 2p holders, then K new ones a step."""
    p = 1 << _flog(k)
    return _clog(n) if n <= 2 * p else _flog(k) + 1 + _up(n - 2 * p, k)


def applicable(n: int, d: Fraction, c: Fraction, model: str, transfers: int | None,
               reducers: int | None) -> list[Bound]:
    """The bounds on the optimum of the problem stated (this checker's own formulas)."""
    mx, dc = max(d, c), d + c
    prop6 = ("upper", _clog(n) * dc, "Prop 6", "⌈log2 n⌉·(d + c)")
    if model == "non-overlap":
        return [("lower", _clog(n) * dc, "Lemma 5 with d' = 0, c' = d + c",
                 "⌈log2 n⌉·(d + c): without overlap k elements cost k(d + c)"), prop6]
    out: list[Bound] = [("lower", _clog(n) * mx, "Lemma 5", "⌈log2 n⌉·max(d, c)")]
    if transfers is not None:
        k = transfers
        out += [("lower", _up(n - 1, k) * d + c if n > 1 else Fraction(0),
                 "K transfers [derived]", "⌈(n − 1)/K⌉·d + c"),
                ("upper", _steps(n, k) * dc, "corrected Prop 8 [derived]",
                 "(⌊log2 K⌋ + 1 + max(0, ⌈(n − 2p)/K⌉))·(d + c), p = 2^⌊log2 K⌋")]
    elif reducers is not None:
        k = reducers
        m = _up(n - 1, k)
        star = _star(n, d, c, k)
        out += [("lower", d + (m - 1) * mx + c if n > 1 else Fraction(0),
                 "K reducers [derived]", "d + (⌈(n − 1)/K⌉ − 1)·max(d, c) + c"),
                ("upper", min(star, prop6[1]) if 2 * k >= n else star,
                 "star then binomial [derived]",
                 "d + (m − 1)·max(d, c) + c + ⌈log2 K⌉·(d + c), m = ⌈(n − K)/K⌉")]
    else:
        out.append(prop6)
    return out


def check_stated(data: Mapping[str, Any], v: Verdict, parent: list[int], sink: int) -> None:
    """Compare the stated fields (module docstring); ``parent``: 0-based, −1 the sink."""
    for key in sorted(set(data) - KNOWN, key=str):
        v.fail(f"field {key!r}: no checker of a reduction schedule proves it")
    if data.get("strategy", "optimal") not in STRATEGIES:
        v.fail(f"field 'strategy': {data.get('strategy')!r}; one of {', '.join(STRATEGIES)}")
    _bounds(data, v)
    if "sink" in data and data["sink"] != sink + 1:
        v.fail(f"field 'sink': {data['sink']!r}; the machine with no parent is {sink + 1}")
    degree: dict[int, int] = {}
    for p in parent:
        if p >= 0:
            degree[p] = degree.get(p, 0) + 1
    shape = {"depth": v.facts.get("depth"), "reducers": v.facts.get("reducers"),
             "max_in_degree": max(degree.values(), default=0)}
    _object(data, "tree", v, shape)
    _own_check(data, v)


def _bounds(data: Mapping[str, Any], v: Verdict) -> None:
    n = data.get("n")
    d, c = number(data.get("transfer"), "transfer"), number(data.get("compute"), "compute")
    limits = [data.get(k) for k in ("max_transfers", "max_reducers")]
    if not isinstance(n, int) or not all(x is None or isinstance(x, int) for x in limits):
        return  # the simulator has refused them already
    mine = applicable(n, d, c, str(data.get("model", "overlap")), *limits)
    best = {"lower_bound": max(b[1] for b in mine if b[0] == "lower"),
            "upper_bound": min(b[1] for b in mine if b[0] == "upper")}
    for key, value in best.items():
        if data.get(key) is not None and number(data[key], key) != value:
            v.fail(f"field {key!r}: {data[key]}, but the bounds of this problem give "
                   f"{frac_str(value)}")
    stated = data.get("bounds")
    if stated is None:
        return
    if not isinstance(stated, list):
        raise InputError("'bounds' must be a list of {kind, value, name, formula}")
    want = {b[2]: b for b in mine}
    seen: set[str] = set()
    for i, b in enumerate(stated):
        if not isinstance(b, Mapping):
            raise InputError(f"bounds[{i}] must be an object {{kind, value, name, formula}}")
        name = str(b.get("name"))
        if name not in want or name in seen:
            v.fail(f"field 'bounds[{i}].name': {b.get('name')!r} is not a bound of this "
                   f"problem, or listed twice (they are: {', '.join(want)})")
            continue
        seen.add(name)
        kind, value, _, formula = want[name]
        missing = [k for k in ("kind", "value", "name", "formula") if k not in b]
        if missing:
            v.fail(f"field 'bounds[{i}]': no {missing[0]!r}")
        _object(stated, i, v, {"kind": kind, "value": value, "name": None,
                               "formula": formula}, where="bounds")
    for name in want:
        if name not in seen:
            v.fail(f"field 'bounds': {name!r} applies to this problem and is not listed")


def _object(parent: Any, key: Any, v: Verdict, expect: Mapping[str, Any],
            where: str = "") -> None:
    """Every key of ``parent[key]`` known and equal to ``expect`` (numbers exactly; None:
    a label, not compared)."""
    label = f"{where}[{key}]" if where else str(key)
    obj = parent[key] if isinstance(parent, list) else parent.get(key)
    if obj is None:
        return
    if not isinstance(obj, Mapping):
        raise InputError(f"'{label}' must be an object")
    for k, x in obj.items():
        want = expect.get(k, ...)
        if want is ...:
            v.fail(f"field '{label}.{k}': no checker of a reduction schedule proves it")
        elif want is not None and not (_num(x) == want if isinstance(want, Fraction | int)
                                       and not isinstance(x, bool) else x == want):
            shown = frac_str(want) if isinstance(want, Fraction) else repr(want)
            v.fail(f"field '{label}.{k}': {x!r}, but this checker finds {shown}")


def _own_check(data: Mapping[str, Any], v: Verdict) -> None:
    """``check``: the writer's verdict, which must be this checker's."""
    own = data.get("check")
    if own is None:
        return
    if not isinstance(own, Mapping):
        raise InputError("'check' must be an object {check, ok, reasons, facts}")
    facts = own.get("facts", {})
    if not isinstance(facts, Mapping):
        raise InputError("'check.facts' must be an object")
    for k in sorted(set(own) - {"check", "ok", "reasons", "facts"}, key=str):
        v.fail(f"field 'check.{k}': no checker of a reduction schedule proves it")
    if own.get("check", v.check) != v.check or own.get("ok") is not True or own.get("reasons"):
        v.fail(f"field 'check': the file states {own.get('check')!r} ok={own.get('ok')!r} "
               f"reasons={own.get('reasons')!r}; this checker's verdict is {v.check!r}, "
               "ok, no reasons")
    for k, x in facts.items():
        mine = v.facts.get(k)
        same = (str(x) == mine if isinstance(mine, str) else
                mine is not None and _num(x) == mine)
        if not same:
            v.fail(f"field 'check.facts.{k}': {x!r}, but this checker finds "
                   f"{frac_str(mine) if isinstance(mine, (int, Fraction)) else mine!r}")
    for k in ("makespan", "reducers", "max_concurrent_transfers", "n", "depth"):
        if facts and k not in facts:
            v.fail(f"field 'check.facts': {k!r} is missing")


def _num(x: Any) -> Fraction | None:
    try:
        return number(x, "fact")
    except InputError:
        return None
