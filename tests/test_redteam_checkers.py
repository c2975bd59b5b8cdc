"""Red-team regressions for the checkers of the newer papers: one-port steady broadcast,
reduction trees, automorphisms, the all-reduce certificates and their bundle.

Each test is an input that once fooled a checker, or made it hang, and the verdict it
must give now.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from collcert.certify import oneport_events
from collcert.certify.base import InputError
from collcert.certify.oneport import OnePortTopo

FIG1: dict[str, Any] = {
    "port_model": "one-port", "compute_nodes": ["s", "1", "2", "3", "4"],
    "links": [["s", "1", 1], ["s", "2", 1], ["1", "2", 1], ["1", "3", "1/2"],
    ["2", "1", 1], ["2", "4", "1/2"]]}


def _blocks(count: int, size: int) -> list[dict[str, int]]:
    return [{"lag": 0, "first": i * size, "count": size} for i in range(count)]


def _steps(m: int, *transfers: list[dict[str, Any]]) -> dict[str, Any]:
    """One step of 10⁶ time units per list of transfers."""
    big = 10 ** 6
    return {"period": str(len(transfers) * big), "messages_per_period": m,
            "steps": [{"start": str(i * big), "duration": str(big), "transfers": t}
                      for i, t in enumerate(transfers)]}


def test_duplicate_receipts_end_the_replay_before_the_causality_walk() -> None:
    # '1' gets K single messages, then forwards all K to '3' K times over: '3' receives
    # each message K times. The causality walk compared every forward with every receipt
    # (K² pieces: K = 3000, a 60 kB file, ran for minutes); now the duplicates end the
    # replay (the delivery check, which would name '2' and '4', is not reached either)
    k = 10
    doc = _steps(k, [{"src": "s", "dst": "1", "blocks": _blocks(k, 1)}],
                 [{"src": "1", "dst": "3", "blocks": [{"lag": 0, "first": 0, "count": k}] * k}])
    v = oneport_events.check_events(OnePortTopo(FIG1), "s", doc)
    assert not v.ok and len(v.reasons) == 3 * (k - 1)  # k − 1 overlaps in each of 3 batches
    assert all("'3' receives messages 0..9 of batch" in r for r in v.reasons)


def test_causality_work_is_counted_before_it_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    # no duplicates, but every forward block overlaps every received block: the pieces to
    # compare (forwards × receipts) grow faster than the blocks, so they are bounded too
    k = 100
    doc = _steps(k, [{"src": "s", "dst": "1", "blocks": _blocks(k, 1)}],
                 [{"src": "1", "dst": "3", "blocks": [{"lag": 0, "first": 0, "count": k}]}],
                 [{"src": "1", "dst": "2", "blocks": [{"lag": 0, "first": 0, "count": k}]}])
    monkeypatch.setattr(oneport_events, "MAX_REPLAYED_BLOCKS", 4 * k)  # 3·(k + 2) blocks pass
    with pytest.raises(InputError, match="too large to check"):
        oneport_events.check_events(OnePortTopo(FIG1), "s", doc)
    monkeypatch.setattr(oneport_events, "MAX_REPLAYED_BLOCKS", 10 * k)
    v = oneport_events.check_events(OnePortTopo(FIG1), "s", doc)
    assert not v.ok and any("'4' never receives" in r for r in v.reasons)


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))
