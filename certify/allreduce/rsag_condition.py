"""Checker 10: when RS+AG is an optimal allreduce (Zhao & Krishnamurthy 2023, Thm 19).

Reads, against one ``collcert-topology/1`` dict:

- the RS+AG rate N·x*/2 as *proven* by :func:`collcert.certify.forestcoll.check_optimum`
  on the allreduce optimum certificate (its ``facts["algbw"]``; the caller runs that
  checker, which also refuses a topology that is not Eulerian, so B⁺(S) = B⁺(V − S)):
  it fixes 1/x* = max over S ⊉ V_c of |S ∩ V_c| / B⁺(S) exactly;
- the cut-set certificate (:func:`.rate.check_cut_set`): it proves C, the least
  B⁺(S) over S splitting V_c (bound (6));
- the ``allreduce-rsag-condition`` claim: ``a``, ``b``, ``condition`` and their
  witnesses.

From eq. (1), every splitting S has B⁺(S) ≥ max(|S ∩ V_c|, N − |S ∩ V_c|)·x*, so
C ≥ N·x*/2 and s_v := min_{S ∩ V_c = {v}} B⁺(S) ≥ (N − 1)·x* always. Hence

- (a) (some maximiser has N/2 compute nodes) ⟺ C = N·x*/2; checked from the proven
  C and x*, and the stated ``a_cut`` must have N/2 compute nodes and B⁺ = C;
- (b) (some maximiser misses only v', whose s_{v'} is the largest) ⟺ every
  s_v = (N − 1)·x*: when claimed, ``b_cuts`` gives for every compute v a set
  S_v ∩ V_c = {v} with B⁺(S_v) = (N − 1)·x* (an upper bound meeting the lower
  one); when denied, ``b_refutation`` is a flow from one v to V_c − {v}
  (conserved elsewhere, within capacities) of value > (N − 1)·x*, so s_v is
  larger (weak max-flow/min-cut duality). Its amounts are in 1/``multiplier`` units
  (the witness's own scale: any multiplier under which the flow fits is a witness), and
  its stated ``value`` must be the flow's net amount out of v.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Node, Verdict, frac_str, integer, number
from .rate import Graph, check_cut_set


def check_rsag_condition(topology: Mapping[str, Any], rsag_algbw: Fraction,
                         cut_cert: Mapping[str, Any], cert: Mapping[str, Any]) -> Verdict:
    """Check a Thm 19 decision; ``facts``: ``thm19_a``, ``thm19_b`` when ``ok``.

    ``rsag_algbw``: the RS+AG rate proven by ``check_optimum`` (never a reference figure).
    """
    v = Verdict("Thm 19 condition (RS+AG optimal)")
    g = Graph(topology)
    cs = check_cut_set(g, cut_cert)
    v.absorb(cs, "cut-set bound: ")
    if not v.ok:
        return v
    n = len(g.compute)
    inv_x = n / (2 * Fraction(rsag_algbw))
    c = cs.facts["cut_set_bound"]
    for key, proven in (("inv_x", inv_x), ("cut_set_bound", c)):
        if number(cert.get(key), key) != proven:
            v.fail(f"{key} is stated as {cert.get(key)}, but the certificates prove "
                   f"{frac_str(proven)}")
    a = 2 * inv_x * c == n
    if cert.get("a") is not a:
        v.fail(f"(a) is stated as {cert.get('a')!r}, but C = {frac_str(c)} and N/(2·(1/x*)) = "
               f"{frac_str(n / (2 * inv_x))}")
    if a:
        s = {g.node(x, "a_cut") for x in _list(cert.get("a_cut"), "a_cut")}
        inside = sum(1 for x in g.compute if x in s)
        if 2 * inside != n or g.out_capacity(s) != c:
            v.fail(f"a_cut holds {inside} of {n} compute nodes with B⁺ = "
                   f"{frac_str(g.out_capacity(s))}: not a maximiser with N/2 of them")
    need = (n - 1) / inv_x
    b = cert.get("b")
    if b is True:
        _check_b_cuts(g, cert.get("b_cuts"), need, v)
    elif b is False:
        _check_refutation(g, cert.get("b_refutation"), need, v)
    else:
        raise InputError("'b' must be true or false")
    label = "+".join(k for k, ok in (("a", a), ("b", b is True)) if ok) or None
    if cert.get("condition") != label:
        v.fail(f"condition is stated as {cert.get('condition')!r}, not {label!r}")
    if v.ok:
        v.facts.update(thm19_a=a, thm19_b=b is True)
    return v


def _list(raw: object, what: str) -> list[Any]:
    if not isinstance(raw, list):
        raise InputError(f"'{what}' must be an array")
    return raw


def _check_b_cuts(g: Graph, raw: object, need: Fraction, v: Verdict) -> None:
    seen: set[Node] = set()
    for item in _list(raw, "b_cuts"):
        if not isinstance(item, list) or len(item) != 2:
            raise InputError("b_cuts entries are [node, [nodes]]")
        x = g.node(item[0], "b_cuts node")
        s = {g.node(y, "b_cuts set") for y in _list(item[1], "b_cuts set")}
        if {y for y in g.compute if y in s} != {x}:
            v.fail(f"the b_cuts set of {x!r} must hold {x!r} and no other compute node")
        elif g.out_capacity(s) != need:
            v.fail(f"the b_cuts set of {x!r} has B⁺ = {frac_str(g.out_capacity(s))}, not "
                   f"(N−1)·x* = {frac_str(need)}")
        seen.add(x)
    for x in g.compute:
        if x not in seen:
            v.fail(f"(b) is claimed but b_cuts has no set for compute node {x!r}")


def _check_refutation(g: Graph, raw: object, need: Fraction, v: Verdict) -> None:
    if not isinstance(raw, Mapping):
        raise InputError("(b) is denied: 'b_refutation' must be an object")
    src = g.node(raw.get("source"), "b_refutation source")
    if src not in g.compute:
        v.fail(f"b_refutation source {src!r} is not a compute node")
        return
    m = integer(raw.get("multiplier", 1), "multiplier", 1)
    net = {x: 0 for x in g.nodes}
    on_arc: dict[tuple[Node, Node], int] = {}
    for item in _list(raw.get("flow"), "b_refutation flow"):
        if not isinstance(item, list) or len(item) != 3:
            raise InputError("b_refutation flow entries are [u, v, amount]")
        a, b = g.node(item[0], "flow"), g.node(item[1], "flow")
        amount = integer(item[2], "flow amount", 0)
        on_arc[(a, b)] = on_arc.get((a, b), 0) + amount
        net[a] += amount
        net[b] -= amount
    for (a, b), amount in on_arc.items():
        if amount > g.cap.get((a, b), Fraction(0)) * m:
            v.fail(f"b_refutation: {a!r} -> {b!r} carries more than its capacity")
    for x, bal in net.items():
        if x not in g.compute and bal:
            v.fail(f"b_refutation: the flow is not conserved at {x!r}")
    if "value" in raw and integer(raw["value"], "b_refutation value", 0) != net[src]:
        v.fail(f"b_refutation: its value is stated as {raw['value']}, but its flow leaves "
               f"{src!r} with {net[src]} (in 1/{m} units)")
    value = Fraction(net[src], m)
    if value <= need:
        v.fail(f"b_refutation: the flow from {src!r} carries {frac_str(value)}, not more than "
               f"(N−1)·x* = {frac_str(need)}")
