"""The one-port event checker (certify/oneport*.py): it accepts what it should and catches
each kind of wrong schedule, certificate and hostile input.

The paper's own Fig. 2 schedule is encoded from its table (Legrand et al. 2003, §3.1.1): as
printed, P1 receives from Ps and P2 at the same odd steps (the digest's
finding); the digest's corrected schedule is accepted.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest

from collcert.certify.broadcast.oneport import OnePortTopo
from collcert.certify.broadcast.oneport_events import check_events, check_steady_broadcast
from collcert.certify.model import InputError
from collcert.reference.broadcast import paper_fig1, random_platform, steady_broadcast

FIG1 = json.loads(json.dumps(paper_fig1().to_json()))


def block(lag: int, first: int, count: int) -> dict[str, int]:
    return {"lag": lag, "first": first, "count": count}


def tr(src: str, dst: str, *blocks: dict[str, int]) -> dict[str, Any]:
    return {"src": src, "dst": dst, "blocks": list(blocks)}


def period(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> dict[str, Any]:
    """Two unit steps, two messages per period (batch b = messages m_{2b+1}, m_{2b+2})."""
    return {"period": "2", "messages_per_period": "2",
            "steps": [{"start": "0", "duration": "1", "transfers": a},
                      {"start": "1", "duration": "1", "transfers": b}]}


def test_fig2_as_printed_breaks_the_receive_port() -> None:
    # odd columns: Ps->P1 m_odd, P2->P1 m_even (received the step before), P1->P3 two msgs;
    # even columns: Ps->P2 m_even, P1->P2 m_odd (just received), P2->P4 two msgs
    doc = period([tr("s", "1", block(0, 0, 1)), tr("2", "1", block(1, 1, 1)),
                  tr("1", "3", block(2, 0, 2))],
                 [tr("s", "2", block(0, 1, 1)), tr("1", "2", block(0, 0, 1)),
                  tr("2", "4", block(1, 0, 2))])
    v = check_events(OnePortTopo(FIG1), "s", doc)
    assert not v.ok
    text = " ".join(v.reasons)
    assert "'1' receives twice at once" in text and "'2' receives twice at once" in text


def test_fig2_corrected_by_the_digest_is_valid() -> None:
    # odd steps s->1, 1->2, 2->4 (two msgs); even steps s->2, 2->1, 1->3 (two msgs)
    doc = period([tr("s", "1", block(0, 0, 1)), tr("1", "2", block(1, 0, 1)),
                  tr("2", "4", block(2, 0, 2))],
                 [tr("s", "2", block(0, 1, 1)), tr("2", "1", block(1, 1, 1)),
                  tr("1", "3", block(2, 0, 2))])
    v = check_events(OnePortTopo(FIG1), "s", doc)
    assert v.ok, v.reasons
    assert v.facts["measured_throughput"] == 1 and v.facts["warmup_periods"] == 2


def test_forwarding_in_the_same_period_is_checked_by_time() -> None:
    # 1 forwards message 0 in step B of the period in which it arrived (step A): fine
    ok = period([tr("s", "1", block(0, 0, 2))], [tr("1", "2", block(0, 0, 2))])
    two = {**FIG1, "compute_nodes": ["s", "1", "2"],
           "links": [{"src": "s", "dst": "1", "cost": "1/2"}, {"src": "1", "dst": "2",
                                                              "cost": "1/2"}]}
    assert check_events(OnePortTopo(two), "s", ok).ok
    # ... but not in step A itself, while it is still arriving
    bad = period([tr("s", "1", block(0, 0, 2)), tr("1", "2", block(0, 0, 2))], [])
    v = check_events(OnePortTopo(two), "s", bad)
    assert not v.ok and "before it arrives" in " ".join(v.reasons)


@pytest.fixture(scope="module")
def fig1_doc() -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(steady_broadcast(paper_fig1(), "s").to_json()))
    return out


@pytest.fixture(scope="module")
def random_case() -> tuple[dict[str, Any], dict[str, Any]]:
    p = random_platform(10, 5)
    doc = json.loads(json.dumps(steady_broadcast(p, "p0").to_json()))
    return json.loads(json.dumps(p.to_json())), doc


def test_generated_files_are_valid(fig1_doc: dict[str, Any],
                                   random_case: tuple[dict[str, Any], dict[str, Any]]) -> None:
    assert check_steady_broadcast(FIG1, fig1_doc).ok
    topo, doc = random_case
    v = check_steady_broadcast(topo, doc)
    assert v.ok, v.all_reasons()
    assert v.facts["T_star"] == Fraction(doc["T_star"])


def _first_forward(doc: dict[str, Any], source: str) -> dict[str, Any]:
    for st in doc["steps"]:
        for t in st["transfers"]:
            if t["src"] != source:
                b: dict[str, Any] = t["blocks"][0]
                return b
    raise AssertionError("no forwarding transfer")


Mutation = Callable[[dict[str, Any]], None]
MUTATIONS: dict[str, tuple[Mutation, str]] = {
    "forward too early": (lambda d: _first_forward(d, d["source"]).update(lag=0),
                          "before it arrives|never receives"),
    "drop a transfer": (lambda d: d["steps"][0]["transfers"].pop(), "never receives"),
    "claim more": (lambda d: d.update(throughput="2"), "not 1/T"),
    "stretch the period": (lambda d: d["steps"][-1].update(
        duration=str(Fraction(d["steps"][-1]["duration"]) + 1)), "period"),
    "cut weight up": (lambda d: d["lp"]["dual"]["cuts"][0].update(
        weight=str(Fraction(d["lp"]["dual"]["cuts"][0]["weight"]) * 2)), "dual"),
    # still a feasible dual, but it proves less than the claimed T*: the optimality claim falls
    "cut weights halved": (lambda d: [c.update(weight=str(Fraction(c["weight"]) / 2))
                                      for c in d["lp"]["dual"]["cuts"]], "differs from T\\*"),
    "prices zeroed": (lambda d: d["lp"]["dual"].update(send={}, recv={}),
                      "cuts entered by"),
    "prices over 1": (lambda d: d["lp"]["dual"]["send"].update(
        {k: str(Fraction(v) * 2) for k, v in d["lp"]["dual"]["send"].items()}), "add up to"),
    "cut holds the source": (lambda d: d["lp"]["dual"]["cuts"][0]["nodes"].append(d["source"]),
                             "without the source"),
    "T* down": (lambda d: d["lp"].update(T_star=str(Fraction(d["lp"]["T_star"]) / 2)),
                "busy|T\\*"),
    "flow lost": (lambda d: d["lp"]["x"][0]["flow"].pop(), "net inflow"),
    "tree weight": (lambda d: d["trees"][0].update(weight=d["trees"][0]["weight"] + 1),
                    "add up to"),
    "tree edge lost": (lambda d: d["trees"][0]["edges"].pop(), "does not reach"),
    "not a matching": (lambda d: d["matchings"][0]["edges"].append(
        next(e for m in d["matchings"][1:] for e in m["edges"]
             if e[0] == d["matchings"][0]["edges"][0][0])), "not a matching|twice"),
    "loads off": (lambda d: d["packing"]["loads"][0].__setitem__(2, d["packing"]["loads"][0][2]
                                                                  + 1), "loads|receives"),
    "duplicate delivery": (lambda d: d["steps"][0]["transfers"][0]["blocks"].append(
        dict(d["steps"][0]["transfers"][0]["blocks"][0])), "twice|after its step"),
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_each_mutation_is_caught(name: str, fig1_doc: dict[str, Any]) -> None:
    import re

    mutate, pattern = MUTATIONS[name]
    doc = copy.deepcopy(fig1_doc)
    mutate(doc)
    v = check_steady_broadcast(FIG1, doc)
    assert not v.ok, name
    assert re.search(pattern, " ".join(v.all_reasons())), v.all_reasons()


def test_other_platform_is_refused(fig1_doc: dict[str, Any]) -> None:
    other = copy.deepcopy(FIG1)
    other["links"][0]["cost"] = "1/2"
    v = check_steady_broadcast(other, fig1_doc)
    assert not v.ok and "made for another platform" in " ".join(v.all_reasons())


@pytest.mark.parametrize("hostile, words", [
    (lambda d: d["steps"][0]["transfers"][0]["blocks"][0].update(lag=10**9), "lag"),
    (lambda d: d.update(steps="many"), "must be an array"),
    (lambda d: d["steps"][0]["transfers"][0].update(dst="nowhere"), "not a node"),
    (lambda d: d["steps"][0]["transfers"][0]["blocks"][0].update(count=0.5), "integer"),
    (lambda d: d.update(messages_per_period=True), "boolean|integer"),
    (lambda d: d["lp"]["n"].append(["s", "3", "1"]), "not a link"),
    (lambda d: d.update(format="other"), "not a collcert-steady-broadcast"),
])
def test_hostile_input_is_an_input_error(hostile: Mutation, words: str,
                                         fig1_doc: dict[str, Any]) -> None:
    doc = copy.deepcopy(fig1_doc)
    hostile(doc)
    with pytest.raises(InputError, match=words):
        check_steady_broadcast(FIG1, doc)


def test_huge_counts_are_checked_per_block_not_per_message() -> None:
    big = 10**30  # a block of 10^30 messages: the replay is per block, not per message
    two = {"port_model": "one-port", "compute_nodes": ["s", "1", "2"],
           "links": [["s", "1", "1"], ["1", "2", "1"]]}
    doc = {"period": str(big), "messages_per_period": str(big),
           "steps": [{"start": "0", "duration": str(big),
                      "transfers": [tr("s", "1", block(0, 0, big)),
                                    tr("1", "2", block(1, 0, big))]}]}
    v = check_events(OnePortTopo(two), "s", doc)
    assert v.ok and v.facts["measured_throughput"] == 1
