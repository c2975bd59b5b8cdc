"""Red-team regressions for the checkers of the newer papers: one-port steady broadcast,
reduction trees, automorphisms, the all-reduce certificates and their bundle.

Each test is an input that once fooled a checker, or made it hang, and the verdict it
must give now.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from typing import Any

import pytest

from collcert.certify.allreduce import rate as allreduce_rate
from collcert.certify.broadcast import oneport_events
from collcert.certify.broadcast.oneport import OnePortTopo, check_lp, check_packing
from collcert.certify.dispatch import check_certificate
from collcert.certify.model import InputError
from collcert.certify.reduction import simulate as reduction_schedule

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


class _Counting(list):  # type: ignore[type-arg]
    """A list that counts the items its iterators hand out."""

    handed = 0

    def __iter__(self) -> Any:
        for item in super().__iter__():
            _Counting.handed += 1
            yield item


class _CountingDict(dict):  # type: ignore[type-arg]
    handed = 0

    def __iter__(self) -> Any:
        for key in super().__iter__():
            _CountingDict.handed += 1
            yield key


def _ring(p: int) -> OnePortTopo:
    nodes = [f"n{i}" for i in range(p)]
    return OnePortTopo({"port_model": "one-port", "compute_nodes": nodes,
                        "links": [[nodes[i], nodes[(i + 1) % p], 1] for i in range(p)]})


def test_the_lp_check_does_not_scan_the_platform_per_flow_or_per_cut() -> None:
    # a flow x_i per destination swept every node of the platform, and each dual cut
    # every link: P tiny flows (150 kB for P = 5000) took a minute, P² Fraction tests
    p = 60
    topo = _ring(p)
    topo.nodes, topo.cost = _Counting(topo.nodes), _CountingDict(topo.cost)
    _Counting.handed = _CountingDict.handed = 0
    lp = {"T_star": "1", "n": [], "x": [{"dest": f"n{i}", "flow": []} for i in range(1, p)],
          "dual": {"cuts": [{"nodes": ["n1"], "weight": "0"}] * p}}
    v = check_lp(topo, "n0", lp)
    assert not v.ok and "the flow to 'n1' has net inflow 0 at 'n0', not -1" in v.reasons[0]
    assert _Counting.handed <= 3 * p  # the port loads and the missing destinations
    assert _CountingDict.handed <= 2 * p  # the links listed once for the cut loads


def test_a_tree_that_misses_nodes_is_not_rescanned_against_every_node() -> None:
    p = 60
    topo = _ring(p)
    topo.nodes = _Counting(topo.nodes)
    _Counting.handed = 0
    doc = {"method": "trees", "packing": {"N": p, "loads": [], "tick": "1"},
           "trees": [{"weight": 1, "edges": [["n0", "n1"]]}] * p, "matchings": []}
    v = check_packing(topo, "n0", doc, Fraction(1), {})
    assert "trees[0] does not reach 'n2', 'n3', 'n4', 'n5', 'n6' from the source" in v.reasons[0]
    assert _Counting.handed <= 10 * p  # 7 nodes looked at per tree, not p


@pytest.fixture(scope="module")
def torus_bundle() -> tuple[dict[str, Any], dict[str, Any]]:
    from collcert import platforms
    from collcert.reference.allreduce import allreduce_rate

    topo = platforms.torus((3, 3))
    return _json(topo.to_json()), _json(allreduce_rate(topo).to_json(certificates=True))


GENERIC_LP = {"kind": "lp", "lp": {"sense": "max", "objective": {"x": 1}, "rows": [
    {"name": "r", "coefs": {"x": 1}, "sense": "<=", "rhs": 100}]},
    "primal": {"x": 100}, "dual": {"r": 1}}


def _tamper_bundle(name: str, cert: dict[str, Any]) -> None:
    subs = cert["certificates"]
    if name == "generic lp as mac_bc_lp":  # a valid LP about nothing: once printed
        subs["mac_bc_lp"] = GENERIC_LP  # "mac_bc_lp.primal_objective = 100", exit 0
    elif name == "allgather optimum as rsag":
        subs["rsag"] = {**subs["rsag"], "collective": "allgather"}
    elif name == "headline mac_bc_lp":
        cert["mac_bc_lp"] = "5"
    elif name == "headline without its certificate":
        del subs["forestcoll_lp"]
    elif name == "top-level algbw":
        cert["algbw"] = "5"
    elif name == "chain rate":
        cert["chain"][0]["rate"] = "5"
    elif name == "bound7_algbw":
        cert["bound7_algbw"] = "5"


BUNDLE_TAMPERING = {
    "generic lp as mac_bc_lp": "certificates['mac_bc_lp'] is a lp certificate, not the "
                               "allreduce-mac-bc-lp",
    "allgather optimum as rsag": "certificates['rsag'] is a allgather optimum certificate",
    "headline mac_bc_lp": "the bundle claims mac_bc_lp = 5, its certificate 'mac_bc_lp' "
                          "proves 9/4",
    "headline without its certificate": "the bundle claims forestcoll_lp = 9/4 but no valid "
                                        "certificate 'forestcoll_lp'",
    "top-level algbw": "field 'algbw': 5, but the best rate its certificates reach is 9/4",
    "chain rate": "chain[0] does not repeat a value the bundle claims",
    "bound7_algbw": "bound7_algbw is not 1 / bound7_time_per_unit",
}


@pytest.mark.parametrize("name", sorted(BUNDLE_TAMPERING))
def test_a_bundle_proves_its_own_claims(name: str,
                                        torus_bundle: tuple[dict[str, Any], dict[str, Any]],
                                        ) -> None:
    topo, cert = torus_bundle
    assert check_certificate(topo, cert)[1].ok
    bad = _json(cert)
    _tamper_bundle(name, bad)
    kind, v = check_certificate(topo, bad)
    assert kind == "bundle" and not v.ok
    assert any(BUNDLE_TAMPERING[name] in r for r in v.reasons), v.reasons


def test_reduction_dates_over_many_denominators_are_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # every date over its own prime: the common denominator grows with n, and each date
    # scaled to it (a 358 kB file, n = 20000, took 24 s and 1.7 GB); now bounded
    primes = [p for p in range(2, 400) if all(p % q for q in range(2, p))][:60]
    n = len(primes) + 1
    doc = {"format": "collcert-reduction/1", "n": n, "transfer": "1", "compute": "1",
           "parent": [None] + [1] * (n - 1),
           "send_time": [None] + [f"{10 * i * p}/{p}" for i, p in enumerate(primes)]}
    monkeypatch.setattr(reduction_schedule, "MAX_DATE_BITS", 10_000)
    verdict, sim = reduction_schedule.check_reduction(doc)
    assert sim is None and "too large to check exactly" in verdict.reasons[0]
    doc["send_time"] = [None] + [str(10 * i) for i in range(n - 1)]  # the same dates, whole
    verdict, sim = reduction_schedule.check_reduction(doc)
    assert sim is not None and verdict.ok, verdict.reasons


def _complete(k: int) -> dict[str, Any]:
    return {"compute_nodes": list(range(k)),
            "links": [[a, b, 1] for a in range(k) for b in range(k) if a != b]}


def _prime_prices(k: int) -> list[list[Any]]:
    primes = [p for p in range(2, 2000) if all(p % q for q in range(2, p))]
    pairs = [(a, b) for a in range(k) for b in range(k) if a != b]
    return [[a, b, f"1/{p}"] for (a, b), p in zip(pairs, primes)]


def test_mac_bc_prices_over_many_denominators_are_bounded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # prices 1/2, 1/3, 1/5, … made every arc weight an integer over their lcm: on
    # complete:256 (65280 links, a 2 MB certificate) some 10 GB of weights
    cert = {"value": "0", "columns": [], "dual": _prime_prices(12)}
    v = allreduce_rate.check_mac_bc_lp(_complete(12), cert)
    # the cheapest network costs a fraction of ~700 digits: named in decimals
    assert not v.ok and "cost as little as 0." in v.reasons[0] and len(v.reasons[0]) < 200
    monkeypatch.setattr(allreduce_rate, "MAX_PRICE_BITS", 132 * 100)
    with pytest.raises(InputError, match="too large to check exactly"):
        allreduce_rate.check_mac_bc_lp(_complete(12), cert)


def test_topology_capacities_of_unbounded_common_denominator_are_refused() -> None:
    """certify.base.Topo scaled capacities to their common denominator without a bound: a
    topology dict given straight to a checker with capacities 1/p over many primes p made
    an integer of tens of thousands of bits per link. Now refused past MAX_SCALE_BITS."""
    from collcert.certify.model import base

    primes = [p for p in range(2, 20000) if all(p % q for q in range(2, int(p**0.5) + 1))]
    n = 50
    links = [{"src": i, "dst": (i + 1) % n, "capacity": f"1/{primes[i]}"} for i in range(n)]
    ok = base.Topo({"compute_nodes": list(range(n)), "links": links})
    assert ok.scale == math.prod(primes[:n])
    many = 600
    links = [{"src": i, "dst": (i + 1) % many, "capacity": f"1/{primes[i]}"}
             for i in range(many)]
    with pytest.raises(base.InputError, match="common denominator passes 4096 bits"):
        base.Topo({"compute_nodes": list(range(many)), "links": links})
