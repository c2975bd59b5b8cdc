"""Switches that add: what a topology's switches may do with the data passing through them.

The ForestColl model (Zhao & Krishnamurthy 2023, §1; Zhao et al. 2026, §3) has
switches that only forward. Real switches do more, in two ways that differ in
where a sum can go:

* a **multicast switch** (``multicast_switches``, Zhao et al. 2026, §5.6) copies
  one stream it receives to several of its links;
* a **SHARP switch** (``reducing_switches``: InfiniBand SHARP on Quantum switches,
  NCCL's CollNet) adds streams it receives on several links into one stream it
  holds itself, and sends the streams it holds (sums included) to several links
  at once: its aggregation tree's root multicasts the result. A SHARP switch copies
  too; a switch that could add but not copy is not modelled;
* an **NVLS switch** (``nvls_switches``: NVLink SHARP of NVSwitch 3 in DGX/HGX H100
  and H200, the NVLink switches of B200 and GB200 NVL72) adds only for one of its
  *member* GPUs (a compute node linked to it both ways): ``multimem.ld_reduce``,
  issued by a member, reads the range from every member of a multicast group that
  holds the issuer, adds in the switch and returns the sum into the issuer's
  registers (its own share goes up and the sum comes down its link); and it copies
  only what a member stores: ``multimem.st`` sends the issuer's range up once and the
  switch writes it to every member of the group, the issuer included
  (MSCCL++ ``execution_kernel.hpp``:523-620, ``switch_channel.cc``:296; NCCL
  ``all_reduce.h`` runNvls). An NVLS switch never holds a sum for itself. It
  forwards as any switch.

A switch adding either way may have a **reduction rate** (``reduction_rates``):
the most reduced data it outputs per unit of time, in the topology's bandwidth
unit, over all the reductions it performs (one output stream counted once, however
many inputs it adds). Without one, its links are its only limit.

These declarations change no ForestColl optimum or schedule (nor the content
hash, like ``multicast_switches`` and ``alpha``): they open the *in-network
model* of :mod:`collcert.reference.innetwork`, where allreduce schedules may add
at these switches. A compute node declared adding, a switch declared both SHARP
and NVLS (or NVLS and multicast), a rate on a switch that adds neither way, or a
rate that is 0, negative, NaN, infinite or absurd is a
:class:`~collcert.TopologyError` naming the node.

In :class:`~collcert.Topology`, ``reducing_switches`` holds every switch that adds,
either way, and ``nvls_switches`` those of them that add the NVLS way; a file lists
them apart (``reducing_switches``: SHARP, ``nvls_switches``: NVLS), so a file written
before NVLS switches were modelled reads as it did.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from .errors import TopologyError
from .errors import node_name as _name
from .exact import NumberError, parse_number
from .links import Node

__all__ = ["check_one_way", "check_reducing", "in_network_text"]


def check_reducing(reducing: Iterable[Node], rates: Mapping[Any, Any] | None,
                   kinds: Mapping[Node, str], nvls: Iterable[Node] = (),
                   multicast: Iterable[Node] = (),
                   ) -> tuple[frozenset[Node], frozenset[Node], dict[Node, Fraction]]:
    """``(switches that add, those that add the NVLS way, their reduction rates)`` after
    checking all three.

    ``reducing`` lists switches that add (the SHARP way unless also in ``nvls``), ``nvls``
    switches that add the NVLS way (see the module docstring); ``rates`` maps a switch
    that adds, or its string form (JSON object keys are strings), to an exact positive
    rate. ``multicast``: the multicast switches, which an NVLS switch may not be."""
    found = tuple(reducing)
    for w in found:
        _require_switch(w, kinds, "reducing switch", "reducing_switches")
    nv = tuple(nvls)
    for w in nv:
        _require_switch(w, kinds, "NVLS switch", "nvls_switches")
    both = sorted((w for w in set(nv) & set(multicast)), key=str)
    if both:
        raise TopologyError(
            f"switch {_name(both[0])} is declared both an NVLS switch (it copies only what a "
            "member GPU stores, multimem.st) and a multicast switch (it copies any stream): "
            "keep it in one of nvls_switches and multicast_switches")
    chosen = frozenset(found) | frozenset(nv)
    by_text = {str(v): v for v in kinds}
    out: dict[Node, Fraction] = {}
    for key, value in (rates or {}).items():
        w = key if key in kinds else by_text.get(str(key), key)
        if w not in chosen:
            if w in kinds and kinds[w] == "switch":
                raise TopologyError(
                    f"switch {_name(w)} has a reduction rate but is not declared to add: "
                    "list it under reducing_switches (SHARP) or nvls_switches (NVLink "
                    "SHARP) too, or drop its rate")
            _require_switch(w, kinds, "a reduction rate's node", "reduction_rates")
        out[w] = _rate(w, value)
    return chosen, frozenset(nv), out


def check_one_way(sharp: Iterable[Node], nvls: Iterable[Node]) -> None:
    """A declaration (a file, a graph's attributes, the options of one run) names a
    switch under one way of adding only."""
    both = sorted(set(sharp) & set(nvls), key=str)
    if both:
        raise TopologyError(
            f"switch {_name(both[0])} is declared both a SHARP switch (reducing_switches: it "
            "adds and multicasts its own sums) and an NVLS switch (nvls_switches: it adds "
            "only into a member GPU and copies only what a member stores); a switch adds "
            "one way: keep it in one list (docs/topology.md#switches-that-add)")


def _require_switch(w: Node, kinds: Mapping[Node, str], what: str, key: str) -> None:
    if w in kinds and kinds[w] == "compute":
        raise TopologyError(
            f"{what} {_name(w)} is a compute node: only switches are declared to add (a "
            "compute node adds the data it receives in every model already); remove it from "
            f"{key}")
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
                            "links only, or remove the switch from reducing_switches or "
                            "nvls_switches")
    return rate


def in_network_text(reducing: Iterable[Node], multicast: Iterable[Node],
                    rates: Mapping[Node, Fraction] | None = None,
                    nvls: Iterable[Node] = ()) -> str:
    """The in-network model in words: which switches add, which way (with their rates),
    and which only copy; ``"switches forward only"`` when none does more. ``reducing``:
    every switch that adds; ``nvls``: those that add the NVLS way."""
    from .exact import fraction_str

    nv = set(nvls)
    rates = rates or {}

    def listed(group: list[Node]) -> str:
        shown = [str(w) + (f" (at most {fraction_str(rates[w])})" if w in rates else "")
                 for w in group[:4]]
        return ", ".join(shown) + (f" and {len(group) - 4} more" if len(group) > 4 else "")
    sharp = sorted(set(reducing) - nv, key=str)
    by_nvls = sorted(set(reducing) & nv, key=str)
    copy = sorted(set(multicast) - set(reducing), key=str)
    parts = []
    if by_nvls:
        one = len(by_nvls) == 1
        parts.append(f"NVLS: {listed(by_nvls)} "
                     + ("reduces to a member GPU and multicasts from one" if one else
                        "reduce to a member GPU and multicast from one"))
    if sharp:
        one = len(sharp) == 1
        parts.append(f"SHARP: {listed(sharp)} "
                     + ("adds and multicasts its sums" if one else
                        "add and multicast their sums"))
    if copy:
        parts.append(f"{listed(copy)} cop{'ies' if len(copy) == 1 else 'y'}")
    return "; ".join(parts) if parts else "switches forward only"
