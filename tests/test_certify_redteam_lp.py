"""Red-team tests of the LP-based and all-reduce checkers (issue: red team 1).

Each test builds a wrong certificate that a checker once accepted (or one that
it must refuse for the same reason), usually by editing a real one, and
asserts the specific reason it is now refused; where useful the honest
certificate is shown to pass beside it.
"""

from __future__ import annotations

from typing import Any

from collcert.certify.allreduce import check_cut_set

LINE = {"compute_nodes": ["a", "b", "c"],
        "links": [["a", "b", 1], ["b", "a", 1], ["b", "c", 5], ["c", "b", 5]]}


def test_cut_set_flow_listing_an_arc_twice_does_not_double_its_capacity() -> None:
    # a - b - c with a <-> b of capacity 1: C = 1 (cut {a}). The cut {a, b} has B⁺ = 5;
    # flows of value 5 exist only by listing a -> b (capacity 1) five times.
    def cert(times: int, value: int, cut: list[str]) -> dict[str, Any]:
        return {"kind": "allreduce-cut-set", "value": value, "cut": cut, "flows": [
            {"source": "a", "sink": "b", "flow": [["a", "b", 1]] * times},
            {"source": "b", "sink": "a", "flow": [["b", "a", 1]] * times},
            {"source": "a", "sink": "c", "flow": [["a", "b", 1]] * times + [["b", "c", times]]},
            {"source": "c", "sink": "a", "flow": [["c", "b", times]] + [["b", "a", 1]] * times},
        ]}

    v = check_cut_set(LINE, cert(5, 5, ["a", "b"]))
    assert not v.ok
    assert any("'a' -> 'b' carries 5 over capacity 1" in r for r in v.reasons), v.reasons
    assert check_cut_set(LINE, cert(1, 1, ["a"])).ok
