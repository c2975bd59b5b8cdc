"""Checker 2 (part): every figure an optimum certificate states is one its witnesses prove.

:func:`.optimum.check_optimum` proves the optimum (Zhao & Krishnamurthy 2023, eq. (1),
(5), Thm 5, 13, 14; allreduce bounds (6), (7), App. B, and Thm 19 of Zhao et al. 2026,
App. G as ForestColl states it). This module then compares each field the certificate
states with what was proven, and fails naming the field on any difference; a field this
checker does not know fails too, so that a certificate cannot state a figure nobody
checks (issue 22, item 5). Fields and what they are compared with:

``format``, ``kind``, ``collective``, ``topology`` (hash), ``num_compute``, ``root``,
``weights``, ``cut``, ``flows``, ``automorphisms``, ``inv_x``, ``U``, ``fixed_k``,
``bound6_cut``, ``bound7_cuts``, ``algbw``, ``k``, ``rsag_time_per_unit``,
``bound6_time_per_unit``, ``bound7_time_per_unit``: read and checked by
:mod:`.optimum` itself. Here: ``unit`` (the topology's), ``time_per_unit``
(1/algbw), ``cut_capacity`` (B⁺ of the cut), ``flows_on`` (reduce-scatter: the
transposed topology), ``k`` = ``fixed_k`` and ``floored_eulerian`` (fixed k),
``bound7_node``, ``lower_bound_time_per_unit``, ``rsag_proven_optimal`` and
``thm19_condition`` (allreduce), and each flow's ``value``. ``topology_name`` and
``seconds`` (what `collcert optimum` adds: a label and its wall time) are provenance,
not figures about the machine, and are not compared.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Node, Topo, Verdict, frac_str, integer, number

# the file's label and how long `collcert optimum` took: not figures about the machine
PROVENANCE = {"topology_name", "seconds"}
COMMON = {"format", "kind", "collective", "topology", "unit", "num_compute", "algbw",
          "time_per_unit", "cut", "flows", "automorphisms"} | PROVENANCE
KNOWN = {
    "allgather": COMMON | {"inv_x", "k", "U", "weights"},
    "reduce-scatter": COMMON | {"inv_x", "k", "U", "weights", "flows_on"},
    "fixed-k": COMMON | {"fixed_k", "k", "U", "floored_eulerian", "flows_on"},
    "broadcast": COMMON | {"root", "cut_capacity"},
    "reduce": COMMON | {"root", "cut_capacity"},
    "allreduce": COMMON | {"inv_x", "k", "U", "rsag_time_per_unit", "bound6_time_per_unit",
                           "bound6_cut", "bound7_time_per_unit", "bound7_node", "bound7_cuts",
                           "lower_bound_time_per_unit", "thm19_condition",
                           "rsag_proven_optimal"},
}


def check_stated(topo: Topo, cert: Mapping[str, Any], facts: Mapping[str, Any]) -> Verdict:
    """Compare every field ``cert`` states with the proven ``facts`` of checker 2."""
    v = Verdict("stated figures")
    coll = str(cert.get("collective"))
    variant = "fixed-k" if cert.get("fixed_k") is not None else coll
    for key in sorted(set(cert) - KNOWN.get(variant, COMMON), key=str):
        v.fail(f"field {key!r}: the certificate states {_short(cert[key])}, which no checker "
               f"of a {variant} optimum certificate proves; remove it")
    if cert.get("kind", "optimum") != "optimum":
        v.fail(f"field 'kind': {cert.get('kind')!r}, but this is an optimum certificate")
    unit = cert.get("unit")
    if unit is not None and topo.unit and unit != topo.unit:
        v.fail(f"field 'unit': the certificate says {unit!r}; the topology's unit is "
               f"{topo.unit!r}")
    _same(v, cert, "time_per_unit", 1 / facts["algbw"], "1/algbw")
    on = cert.get("flows_on")
    if "flows_on" in cert and (coll != "reduce-scatter" or on != "transposed topology"):
        v.fail(f"field 'flows_on': {on!r}; a {coll} certificate's flows are "
               + ("on the 'transposed topology'" if coll == "reduce-scatter"
                  else "on the topology itself (leave the field out)"))
    if "cut_capacity" in cert:
        cut = topo.node_set(cert.get("cut"), "certificate cut")
        _same(v, cert, "cut_capacity", topo.out_capacity(cut), "B⁺(cut)")
    if variant == "fixed-k":
        _fixed_k(v, topo, cert)
    if coll == "allreduce":
        _allreduce(v, topo, cert, facts)
    return v


def stated_flow_value(v: Verdict, label: str, rec: Mapping[str, Any], value: int) -> None:
    """A flow record's ``value`` (in 1/multiplier units), if stated, is its real value."""
    if "value" in rec and integer(rec["value"], f"{label} value", 0) != value:
        v.fail(f"{label}: field 'value' says {rec['value']}, the flow's arcs carry {value} "
               "(in 1/multiplier units)")


def _same(v: Verdict, cert: Mapping[str, Any], key: str, proven: Fraction, what: str) -> None:
    if key in cert and number(cert[key], f"certificate {key}") != proven:
        v.fail(f"field {key!r}: the certificate states {cert[key]}, but {what} is "
               f"{frac_str(proven)}")


def _fixed_k(v: Verdict, topo: Topo, cert: Mapping[str, Any]) -> None:
    k = integer(cert.get("fixed_k"), "certificate fixed_k", 1)
    if "k" in cert and integer(cert["k"], "certificate k", 1) != k:
        v.fail(f"field 'k': {cert['k']}, but a fixed-k certificate's k is fixed_k = {k}")
    if "floored_eulerian" in cert:
        u = number(cert.get("U"), "certificate U")
        balance: dict[Node, int] = {w: 0 for w in topo.nodes}
        for (a, b), c in topo.cap.items():
            f = math.floor(u * c)
            balance[a] += f
            balance[b] -= f
        truth = all(x == 0 for x in balance.values())
        if cert["floored_eulerian"] is not truth:
            v.fail(f"field 'floored_eulerian': {cert['floored_eulerian']!r}, but the "
                   f"capacities ⌊U·c_e⌋ are {'' if truth else 'not '}Eulerian")


def _allreduce(v: Verdict, topo: Topo, cert: Mapping[str, Any],
               facts: Mapping[str, Any]) -> None:
    rsag = 1 / facts["algbw"]
    lower = facts.get("lower_bound_time_per_unit", Fraction(0))
    _same(v, cert, "lower_bound_time_per_unit", lower, "the larger of bounds (6) and (7)")
    if "rsag_proven_optimal" in cert and cert["rsag_proven_optimal"] is not (lower == rsag):
        v.fail(f"field 'rsag_proven_optimal': {cert['rsag_proven_optimal']!r}, but the proven "
               f"lower bound {frac_str(lower)} {'equals' if lower == rsag else 'is below'} "
               f"the RS+AG time {frac_str(rsag)}")
    cuts7 = cert.get("bound7_cuts")
    outs: dict[Node, Fraction] = {}
    if isinstance(cuts7, Mapping):
        for key, s in cuts7.items():
            outs[topo.compute_node(key, "bound7_cuts key")] = topo.out_capacity(
                topo.node_set(s, f"bound7_cuts[{key}]"))
    best = max(outs.values(), default=None)
    if "bound7_node" in cert:
        node = _node(topo, cert["bound7_node"])
        if node is None or best is None or outs.get(node) != best:
            v.fail(f"field 'bound7_node': {cert['bound7_node']!r} is not a compute node whose "
                   "bound (7) cut has the largest B⁺(S_v)")
    if "thm19_condition" in cert:
        cut = topo.node_set(cert.get("cut"), "certificate cut")
        inside = sum(1 for c in topo.compute if c in cut)
        outside = [c for c in topo.compute if c not in cut]
        truth = None
        if 2 * inside == topo.n:
            truth = "a"
        elif len(outside) == 1 and best is not None and outs.get(outside[0]) == best:
            truth = "b"
        if cert["thm19_condition"] != truth:
            v.fail(f"field 'thm19_condition': {cert['thm19_condition']!r}, but with the "
                   f"certificate's cuts it is {truth!r} ('a': the bottleneck cut holds half "
                   "the compute nodes; 'b': all but one v', whose bound (7) cut is the "
                   "largest; null: neither)")


def _node(topo: Topo, raw: Any) -> Node | None:
    """The compute node ``raw`` names (also by its string form, as JSON keys are)."""
    try:
        return topo.compute_node(raw, "bound7_node")
    except InputError:
        for c in topo.compute:
            if str(c) == str(raw):
                return c
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
