"""The independent reduction-schedule simulator (certify/reduction/simulate.py).

Hand-computed schedules check what it accepts and the makespan it finds;
one mutation per rule checks that it refuses, with a reason naming the culprit.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

import pytest

from collcert.certify.reduction import check_reduction
from collcert.reference.reduction import length_bounds as rb
from collcert.reference.reduction import schedule_document
from collcert.reference.reduction import trees as rt


def doc(parent: list[int | None], send: list[Any], d: Any = 1, c: Any = 1,
        **extra: Any) -> dict[str, Any]:
    return {"format": "collcert-reduction/1", "n": len(parent), "transfer": d, "compute": c,
            "parent": parent, "send_time": send, **extra}


def ok(data: dict[str, Any]) -> dict[str, Any]:
    verdict, _ = check_reduction(data)
    assert verdict.ok, verdict.reasons
    return verdict.facts


def refused(data: dict[str, Any], words: str) -> None:
    verdict, _ = check_reduction(data)
    assert not verdict.ok
    assert any(words in r for r in verdict.all_reasons()), verdict.reasons


# --- what it accepts, with makespans worked out by hand from the model


def test_single_machine() -> None:
    assert ok(doc([None], [None]))["makespan"] == 0


def test_pair() -> None:  # 2 sends at 0, arrives at d = 3, reduced by 3 + c = 5
    assert ok(doc([None, 1], [None, 0], 3, 2))["makespan"] == 5


def test_figure1_star_overlaps_receiving_and_reducing() -> None:
    # d = c = 1: receptions [0,1), [1,2), [2,3); reductions [1,2), [2,3), [3,4)
    facts = ok(doc([None, 1, 1, 1], [None, 2, 1, 0], operand_order=[1, 4, 3, 2]))
    assert facts["makespan"] == 4 and facts["reducers"] == 1
    assert facts["max_concurrent_transfers"] == 1 and facts["operand_order"] == "checked"


def test_reduction_waits_for_the_previous_one() -> None:
    # d = 1, c = 5: arrivals at 1 and 2; reductions [1,6), [6,11)
    assert ok(doc([None, 1, 1], [None, 0, 1], 1, 5))["makespan"] == 11


def test_chain_and_late_sends_are_fine() -> None:
    # 3 -> 2 -> 1, d = 2, c = 1: 3 sends at 0, 2 reduces [2,3), sends at 7 (late is allowed)
    assert ok(doc([None, 1, 2], [None, 7, 0], 2, 1))["makespan"] == 10


def test_non_overlap_model_delays_reductions_past_receptions() -> None:
    # d = c = 1, star of 3 with receptions [0,1), [1,2): overlap would reduce [1,2), [2,3)
    data = doc([None, 1, 1], [None, 0, 1])
    assert ok(data)["makespan"] == 3
    # without overlap the first reduction cannot run during the reception [1,2): [2,3), [3,4)
    assert ok({**data, "model": "non-overlap"})["makespan"] == 4


def test_exact_rational_dates() -> None:
    # arrivals at 1/3 and 2/3; reductions [1/3, 5/6) and [5/6, 4/3)
    facts = ok(doc([None, 1, 1], [None, "1/3", "0"], "1/3", "1/2"))
    assert facts["makespan"] == Fraction(4, 3)


def test_zero_transfer_cost_allows_simultaneous_arrivals_in_any_order() -> None:
    # d = 0: all three arrive at 0; operand order 1 3 2 4 needs 3 before 2: fine
    facts = ok(doc([None, 1, 1, 1], [None, 0, 0, 0], 0, 1, operand_order=[1, 3, 2, 4]))
    assert facts["makespan"] == 3 and facts["max_concurrent_transfers"] == 0


def test_simultaneous_arrivals_must_still_fit_next_to_each_other() -> None:
    # d = 0: 3 and 4 arrive at 0, 2 only at 1. In the order 1 3 2 4, operand 4 needs 2 beside
    # it first, so at time 0 machine 1 cannot join 4 to its run (it would need commutativity)
    refused(doc([None, 1, 1, 1], [None, 1, 0, 0], 0, 1, operand_order=[1, 3, 2, 4]),
            "not adjacent")
    ok(doc([None, 1, 1, 1], [None, 1, 0, 0], 0, 1, operand_order=[1, 3, 4, 2]))


def test_left_joins_are_allowed() -> None:
    # machine 1 holds operand 2 and receives operand 1 from machine 2: x2' (+) x1' on the left
    ok(doc([None, 1], [None, 0], operand_order=[2, 1]))


# --- what it refuses


def test_overlapping_receptions() -> None:
    refused(doc([None, 1, 1], [None, 0, "1/2"]), "one transfer at a time")


def test_sending_before_ready() -> None:
    refused(doc([None, 1, 2], [None, 1, 0]), "machine 2 sends at 1 but finishes its "
            "reductions only at 2")


def test_negative_date() -> None:
    refused(doc([None, 1], [None, -1]), "before time 0")


def test_cycle() -> None:
    refused(doc([None, 3, 2], [None, 0, 0]), "form a cycle")


def test_two_sinks_and_self_sends() -> None:
    refused(doc([None, None], [None, None]), "exactly one machine")
    refused(doc([None, 2], [None, 0]), "sends to itself")


def test_sink_with_a_date_and_machine_without() -> None:
    refused(doc([None, 1], [0, 0]), "must be null")
    refused(doc([None, 1, 1], [None, None, 0]), "only the sink has no send time")


def test_wrong_claims() -> None:
    refused(doc([None, 1], [None, 0], makespan="3"), "the simulation gives 2")
    refused(doc([None, 1], [None, 0], lower_bound="5/2"), "lower bound 5/2")
    refused(doc([None, 1, 2], [None, 5, 0], upper_bound="4"), "exceeds the claimed upper")


def test_limits() -> None:
    # 3 -> 1 and 4 -> 2 both during [0, 1); 2 reduces [1, 2) and sends at 2; 1 ends at 4
    two = doc([None, 1, 1, 2], [None, 2, 0, 0], 1, 1)
    facts = ok(two)
    assert facts["max_concurrent_transfers"] == 2 and facts["makespan"] == 4
    refused({**two, "max_transfers": 1}, "2 transfers are in flight at once")
    refused({**two, "max_reducers": 1}, "2 machines reduce but max_reducers = 1")


def test_non_adjacent_operands() -> None:
    refused(doc([None, 1, 1], [None, 0, 1], operand_order=[1, 3, 2]), "not adjacent")
    ok(doc([None, 1, 1], [None, 0, 1], operand_order=[2, 1, 3]))  # a left join, then a right one
    refused(doc([None, 1, 1], [None, 0, 1], operand_order=[1, 1, 3]), "twice")


@pytest.mark.parametrize("change,words", [
    ({"n": 0}, "at least 1"),
    ({"transfer": -1}, "non-negative"),
    ({"transfer": 0.1}, "binary float"),
    ({"compute": "nan"}, "compute"),
    ({"model": "magic"}, "model"),
    ({"parent": [None, 7]}, "not a machine"),
    ({"parent": [None, "1"]}, "machine number"),
    ({"send_time": [None]}, "has 1 entries"),
    ({"send_time": [None, "1e999999"]}, "send_time of machine 2"),
    ({"send_time": [None, "9" * 5000]}, "too long"),
    ({"format": "other/1"}, "format"),
    ({"max_transfers": 0}, "at least 1"),
])
def test_unreadable_input_is_refused_with_a_reason(change: dict[str, Any], words: str) -> None:
    data = {**doc([None, 1], [None, 0]), **change}
    refused(data, words)


# --- everything the reference emits passes, and a mutation of it fails


@pytest.mark.parametrize("kw", [{}, {"max_transfers": 2}, {"max_reducers": 3},
                                {"overlap": False}, {"strategy": "binomial"},
                                {"strategy": "fibonacci"}])
def test_reference_schedules_pass_and_mutations_fail(kw: dict[str, Any]) -> None:
    for n in (4, 9, 40):
        for d, c in [(1, 1), ("1/2", "1/3"), (3, 1), (0, 1), (1, 0)]:
            data = schedule_document(rt.solve(n, d, c, **kw))
            facts = ok(data)
            assert facts["makespan"] == Fraction(data["makespan"])
            bad = copy.deepcopy(data)
            reducers = [p for p in data["parent"] if p not in (None, 1)]
            if reducers:  # a reducer that sends at 0, before its reductions end
                bad["send_time"][reducers[0] - 1] = "0"
                refused(bad, f"machine {reducers[0]} sends at 0 but finishes")
            else:  # a star: claim one unit less
                bad["makespan"] = str(Fraction(data["makespan"]) - 1)
                refused(bad, "claims makespan")


def test_upper_bound_schedules_are_valid_and_reach_the_bound() -> None:
    for n in range(1, 30):
        for K in range(1, n + 1):
            for d, c in [(2, 1), (1, 3), (0, 1)]:
                parent, send = rb.step_schedule(n, d, c, K)
                data = doc([None if p < 0 else p + 1 for p in parent], send, d, c,
                           max_transfers=K)
                assert ok(data)["makespan"] == rb.transfers_upper(n, Fraction(d), c, K)
                parent, send = rb.reducers_schedule(n, d, c, K)
                data = doc([None if p < 0 else p + 1 for p in parent], send, d, c,
                           max_reducers=K)
                assert ok(data)["makespan"] == rb.reducers_upper(n, Fraction(d), c, K)
