"""Switches that add: what a topology's switches may do with the data passing through them.

The ForestColl model (Zhao & Krishnamurthy 2023, §1; Zhao et al. 2026, §3) has
switches that only forward. Real switches do more:

* a **multicast switch** (``multicast_switches``, Zhao et al. 2026, §5.6) copies
  one stream it receives to several of its links;
* a **reducing switch** (``reducing_switches``) adds streams it receives on
  several links into one stream, and sends the streams it holds (sums included)
  to several links at once. NVLink SHARP (NVLS: NVSwitch 3 in DGX/HGX H100 and
  H200, the NVLink switches of B200 and GB200 NVL72) and InfiniBand SHARP
  (Quantum switches, NCCL's CollNet) both do, returning their sums by multicast;
  so a reducing switch is a multicast switch too. A switch that could add but
  not copy is not modelled.

A reducing switch may have a **reduction rate** (``reduction_rates``): the most
reduced data it outputs per unit of time, in the topology's bandwidth unit,
over all the reductions it performs (one output stream counted once, however
many inputs it adds). Without one, its links are its only limit.

These declarations change no ForestColl optimum or schedule (nor the content
hash, like ``multicast_switches`` and ``alpha``): they open the *in-network
model* of :mod:`collcert.reference.innetwork`, where allreduce schedules may add
at reducing switches. A compute node declared reducing, a rate on a switch that
is not declared reducing, or a rate that is 0, negative, NaN, infinite or absurd
is a :class:`~collcert.TopologyError` naming the node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from .errors import TopologyError
from .errors import node_name as _name
from .exact import NumberError, parse_number
from .links import Node

__all__ = ["check_reducing", "in_network_text"]


def check_reducing(reducing: Iterable[Node], rates: Mapping[Any, Any] | None,
                   kinds: Mapping[Node, str]) -> tuple[frozenset[Node], dict[Node, Fraction]]:
    """``(reducing switches, their reduction rates)`` after checking both.

    ``rates`` maps a reducing switch, or its string form (JSON object keys are
    strings), to an exact positive rate."""
    found = tuple(reducing)
    for w in found:
        _require_switch(w, kinds, "reducing switch")
    chosen = frozenset(found)
    by_text = {str(v): v for v in kinds}
    out: dict[Node, Fraction] = {}
    for key, value in (rates or {}).items():
        w = key if key in kinds else by_text.get(str(key), key)
        if w not in chosen:
            if w in kinds and kinds[w] == "switch":
                raise TopologyError(
                    f"switch {_name(w)} has a reduction rate but is not declared reducing: "
                    "list it under reducing_switches too, or drop its rate")
            _require_switch(w, kinds, "a reduction rate's node")
        out[w] = _rate(w, value)
    return chosen, out


def _require_switch(w: Node, kinds: Mapping[Node, str], what: str) -> None:
    if w in kinds and kinds[w] == "compute":
        raise TopologyError(
            f"{what} {_name(w)} is a compute node: only switches are declared reducing (a "
            "compute node adds the data it receives in every model already); remove it from "
            "reducing_switches")
    if w not in kinds:
        raise TopologyError(f"{what} {_name(w)} is not a declared switch node: list it under "
                            "switch_nodes too")


def _rate(w: Node, value: Any) -> Fraction:
    """A reduction rate: exact, positive, of sane size."""
    try:
        rate = parse_number(value)
    except (NumberError, ValueError, TypeError) as exc:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "…"
        reason = str(exc) if isinstance(exc, NumberError) else f"{shown} is not a number"
        raise TopologyError(f"reducing switch {_name(w)}: its reduction rate is not a usable "
                            f"number ({reason}); give an exact positive rate such as "
                            "\"900\" or \"1/3\", or drop it (no limit but the links)") from None
    if rate <= 0:
        raise TopologyError(f"reducing switch {_name(w)} has reduction rate {rate}: a rate "
                            "must be positive; drop it to leave the switch limited by its "
                            "links only, or remove the switch from reducing_switches")
    return rate


def in_network_text(reducing: Iterable[Node], multicast: Iterable[Node],
                    rates: Mapping[Node, Fraction] | None = None) -> str:
    """The in-network model in words: which switches add (with their rates) and which
    only copy; ``"switches forward only"`` when none does more."""
    from .exact import fraction_str

    red = sorted(reducing, key=str)
    copy = sorted(set(multicast) - set(red), key=str)
    rates = rates or {}
    parts = []
    if red:
        shown = [str(w) + (f" (at most {fraction_str(rates[w])})" if w in rates else "")
                 for w in red[:4]]
        more = f" and {len(red) - 4} more" if len(red) > 4 else ""
        verb = "adds and copies" if len(red) == 1 else "add and copy"
        parts.append(f"{', '.join(shown)}{more} {verb}")
    if copy:
        more = f" and {len(copy) - 4} more" if len(copy) > 4 else ""
        parts.append(f"{', '.join(map(str, copy[:4]))}{more} cop{'ies' if len(copy) == 1 else 'y'}")
    return "; ".join(parts) if parts else "switches forward only"
