"""Upper bounds on the in-network allreduce rate, checked by recounting.

``cut`` (Zhou & Sun 2026, Thm 1): S holds a compute node and misses one; the
rate is at most B⁺(S), for any schedule whatever the switches do.

``partition`` (docs/in-network.md): disjoint parts S_1 … S_k, k ≥ 2, each with a
compute node, holding together every compute node and, on side ``in``, every
reducing switch (where streams may meet), on side ``out`` every reducing or
multicast switch (where streams may be copied). Each structure sends 2(k−1)
streams into parts (``in``) or out of parts (``out``): the reduce tree joins
the k parts with at least k−1 edges between them, and each part without the
root is entered (left) by the broadcast (reduce) tree. So
rate ≤ Σ_i B⁻(S_i) / (2(k−1)) (``in``), Σ_i B⁺(S_i) / (2(k−1)) (``out``).

``dual`` (the in-network LP's dual): link lengths y ≥ 0 and switch prices z ≥ 0
under which every structure costs at least 1; then any schedule's rate is at
most Σ b_e y_e + Σ ρ_w z_w. "Every structure" is checked by
:mod:`.pricing`, which finds the cheapest one root by root.

``box-dual``: link lengths y and boxes; the least cost of any structure is counted
box by box (:mod:`.boxdual`), for machines too large to price.

Partition bounds count a switch that adds either way (SHARP or NVLS) as one that
may merge streams: an NVLS structure loads every link at least as much as the
SHARP structure with the same trees, so bounds of the SHARP model hold for NVLS.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Node, Topo, Verdict, frac_str, number
from .boxdual import check_box_dual, read_lengths
from .pricing import MAX_SUBSETS, cheapest_cost, subsets_needed


def _node_list(topo: Topo, raw: object, where: str) -> list[Node]:
    if not isinstance(raw, list):
        raise InputError(f"{where} must be an array of node ids")
    return [topo.node(x, f"{where} entry") for x in raw]


def check_cut(topo: Topo, upper: Mapping[str, Any], v: Verdict) -> Fraction | None:
    side = set(_node_list(topo, upper.get("cut"), "upper.cut"))
    inside = side & topo.compute_set
    if not inside or inside == topo.compute_set:
        v.fail("upper.cut must hold a compute node and miss one")
        return None
    return topo.out_capacity(side)


def check_partition(topo: Topo, upper: Mapping[str, Any], v: Verdict) -> Fraction | None:
    raw, side = upper.get("parts"), upper.get("side")
    if side not in ("in", "out") or not isinstance(raw, list) or len(raw) < 2:
        raise InputError("upper: a partition has side 'in' or 'out' and at least two parts")
    where: dict[Node, int] = {}
    for i, part in enumerate(raw):
        nodes = _node_list(topo, part, f"upper.parts[{i}]")
        if not set(nodes) & topo.compute_set:
            v.fail(f"upper.parts[{i}] holds no compute node")
        for x in nodes:
            if x in where:
                v.fail(f"node {x!r} is in two parts")
            where[x] = i
    held = topo.compute_set | topo.reducing | (topo.multicast if side == "out" else frozenset())
    missing = sorted((x for x in held if x not in where), key=str)
    if missing:
        v.fail(f"node {missing[0]!r} is in no part, but on side {side!r} every compute node "
               f"and every switch that {'adds' if side == 'in' else 'adds or copies'} must be")
    if not v.ok:
        return None
    total = Fraction(0)
    for (a, b), c in topo.cap.items():
        head, tail = (b, a) if side == "in" else (a, b)
        if head in where and where.get(tail) != where[head]:
            total += c
    return total / (2 * (len(raw) - 1))


def check_dual(topo: Topo, upper: Mapping[str, Any], v: Verdict) -> Fraction | None:
    need = subsets_needed(topo)
    if need > MAX_SUBSETS:
        raise InputError(f"upper: a dual certificate needs the checker to price every root "
                         f"over {need:,} subsets of switches, more than {MAX_SUBSETS:,}; "
                         "collcert writes duals for small machines only")
    y = read_lengths(topo, upper.get("y") or [])
    z: dict[Node, Fraction] = {}
    for i, rec in enumerate(upper.get("z") or []):
        if not isinstance(rec, list) or len(rec) != 2:
            raise InputError(f"upper.z[{i}] must be [switch, price]")
        w = topo.node(rec[0], f"upper.z[{i}]")
        if w not in topo.reduction_rate or w in z:
            raise InputError(f"upper.z[{i}]: {w!r} has no reduction rate, or is listed twice")
        z[w] = number(rec[1], f"upper.z[{i}] price")
    if any(x < 0 for x in [*y.values(), *z.values()]):
        v.fail("upper: a dual length or price is negative")
        return None
    least = cheapest_cost(topo, y, z)
    if least is not None and least < 1:
        v.fail(f"upper: a structure costs {frac_str(least)} < 1 under the dual: it is not "
               "dual feasible")
        return None
    return (sum((topo.cap[e] * c for e, c in y.items()), Fraction(0))
            + sum((topo.reduction_rate[w] * c for w, c in z.items()), Fraction(0)))


def check_upper(topo: Topo, upper: object, v: Verdict) -> Fraction | None:
    if not isinstance(upper, Mapping):
        raise InputError("upper must be an object")
    kind = upper.get("kind")
    checks = {"cut": check_cut, "partition": check_partition, "dual": check_dual,
              "box-dual": check_box_dual}
    if kind not in checks:
        raise InputError(f"upper.kind {str(kind)[:20]!r} is not cut, partition, dual or "
                         "box-dual")
    value = checks[kind](topo, upper, v)
    if value is not None and number(upper.get("value"), "upper.value") != value:
        v.fail(f"upper.value is {upper.get('value')}, but the {kind} proves {frac_str(value)}")
    return value
