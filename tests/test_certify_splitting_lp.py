"""Checker 3 (edge-splitting invariant) and checker 6 (exact LP certificates)."""

from __future__ import annotations

import copy
import math
from fractions import Fraction
from typing import Any

import pytest

import collcert
from collcert import platforms
from collcert.certify.forestcoll import check_splitting
from collcert.certify.model import InputError
from collcert.certify.solvers import check_lp
from collcert.reference.forestcoll import remove_switches
from collcert.reference.model import fraction_str


def split_cert(t: Any) -> dict[str, Any]:
    """G* of the allgather optimum (U, k of Zhao & Krishnamurthy 2023, Prop 3) by the reference's switch removal."""
    o = collcert.optimum(t)
    caps = {e: math.floor(o.U * c) for e, c in t.capacity.items()}
    r = remove_switches(t.compute_nodes, t.switch_nodes, caps, {c: o.k for c in t.compute_nodes})
    return {
        "gstar": {"U": fraction_str(o.U), "k": o.k,
                  "capacities": [[u, v, c] for (u, v), c in r.capacity.items()]},
        "routing": [{"src": u, "dst": v, "paths": [[list(p), n] for p, n in ps.items()]}
                    for (u, v), ps in r.paths.items()],
        "flows": [{"sink": s, "flow": [[a, b, x] for (a, b), x in f.items()]}
                  for s, f in r.flows.items()],
    }


@pytest.fixture(scope="module")
def two_box() -> tuple[Any, dict[str, Any]]:
    t = platforms.two_box_example()
    return t, split_cert(t)


def test_valid_splitting(two_box: tuple[Any, dict[str, Any]]) -> None:
    t, c = two_box
    v = check_splitting(t.to_json(), c)
    assert v.ok, v.all_reasons()


def test_gstar_unit_not_routed(two_box: tuple[Any, dict[str, Any]]) -> None:
    t, c = two_box
    c = copy.deepcopy(c)
    c["gstar"]["capacities"][0][2] += 1
    v = check_splitting(t.to_json(), c)
    assert not v.ok and "are routed through G" in v.reasons[0]


def test_routing_overloads_a_link(two_box: tuple[Any, dict[str, Any]]) -> None:
    t, c = two_box
    c = copy.deepcopy(c)
    c["routing"][0]["paths"][0][1] += 50
    v = check_splitting(t.to_json(), c)
    assert not v.ok and any("more than ⌊U·c⌋" in r for r in v.reasons)


def test_routing_walk_errors(two_box: tuple[Any, dict[str, Any]]) -> None:
    t, c = two_box
    c = copy.deepcopy(c)
    walk = c["routing"][0]["paths"][0][0]
    walk.insert(1, c["routing"][0]["dst"] if len(walk) > 2 else "c2.4")
    v = check_splitting(t.to_json(), c)
    assert not v.ok


def test_flow_too_small(two_box: tuple[Any, dict[str, Any]]) -> None:
    t, c = two_box
    c = copy.deepcopy(c)
    c["gstar"]["k"] += 1  # the same flows no longer reach N·k
    v = check_splitting(t.to_json(), c)
    assert not v.ok and "below Σ k_u" in " ".join(v.reasons)


# ------------------------------------------------------------------ LP certificates
# min x + y s.t. x + 2y ≥ 4, 3x + y ≥ 6: optimum at x = 8/5, y = 6/5, value 14/5;
# duals y1 = 2/5, y2 = 1/5 (y1 + 3 y2 = 1, 2 y1 + y2 = 1), 4·2/5 + 6·1/5 = 14/5.
LP = {"objective": {"x": 1, "y": 1},
      "rows": [{"name": "a", "coefs": {"x": 1, "y": 2}, "sense": ">=", "rhs": 4},
               {"name": "b", "coefs": {"x": 3, "y": 1}, "sense": ">=", "rhs": 6}]}


def test_lp_optimal_pair() -> None:
    v = check_lp(LP, {"x": "8/5", "y": "6/5"}, {"a": "2/5", "b": "1/5"})
    assert v.ok, v.all_reasons()
    assert v.facts["primal_objective"] == v.facts["dual_objective"] == Fraction(14, 5)


def test_lp_failures_are_specific() -> None:
    v = check_lp(LP, {"x": "1", "y": "1"}, {"a": "2/5", "b": "1/5"})
    assert not v.ok and "row a has left side 3 < 4" in v.reasons[0]
    v = check_lp(LP, {"x": "8/5", "y": "6/5"}, {"a": "-2/5", "b": "1/5"})
    assert not v.ok and "wrong sign" in v.reasons[0]
    v = check_lp(LP, {"x": "8/5", "y": "6/5"}, {"a": "1", "b": "1/5"})
    assert not v.ok and "the column of x" in " ".join(v.reasons)
    v = check_lp(LP, {"x": "2", "y": "2"}, {"a": "2/5", "b": "1/5"})
    assert not v.ok and "objectives differ: primal 4, dual 14/5" in v.reasons[0]
    v = check_lp(LP, {"x": "-1", "y": "5"}, {})
    assert not v.ok and "negative" in v.reasons[0]


def test_lp_equality_rows_and_free_variables() -> None:
    lp = {"objective": {"x": 1}, "free": ["x"],
          "rows": [{"name": "e", "coefs": {"x": 2}, "sense": "=", "rhs": "-3"}]}
    assert check_lp(lp, {"x": "-3/2"}, {"e": "1/2"}).ok
    assert not check_lp(lp, {"x": "-3/2"}, {"e": "1"}).ok
    with pytest.raises(InputError):
        check_lp({"objective": {}, "rows": [{"name": "r", "coefs": {}, "sense": "<"}]}, {}, {})
