"""Properties of the optimum on random topologies (bounded hypothesis budget), and proof
that the property checks can fail.

A failing property is shrunk with collcert.fuzz.shrink and saved under
golden/regressions/ (or $COLLCERT_REGRESSIONS) before the test fails; see
collcert.fuzz.properties.require.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings

from collcert import optimum, platforms
from collcert.fuzz import brute
from collcert.fuzz import properties as props
from collcert.fuzz import strategies as cst
from collcert.fuzz.generators import RandomSource, cycle_union

CI = settings(max_examples=25, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])

SMALL = cst.topologies(max_nodes=7, capacities="small")
MIXED = cst.topologies(max_nodes=8)


@CI
@given(SMALL)
def test_optimum_equals_enumeration(t) -> None:
    props.require("brute", t)


@CI
@given(MIXED)
def test_optimum_equals_enumeration_mixed_capacities(t) -> None:
    props.require("brute", t)


@CI
@given(MIXED)
def test_reduce_scatter_is_allgather_on_transpose(t) -> None:
    props.require("transpose", t)


@CI
@given(cst.topologies(max_nodes=6, capacities="small"))
def test_fixed_k_bounds_and_enumeration(t) -> None:
    props.require("fixed_k", t)


@settings(max_examples=10, deadline=None, derandomize=True)
@given(cst.topologies(max_nodes=6, capacities="huge"))
def test_fixed_k_with_huge_capacities(t) -> None:
    props.require("fixed_k", t)


@CI
@given(MIXED)
def test_scaling_capacities_scales_algbw(t) -> None:
    props.require("scaling", t)


@CI
@given(MIXED)
def test_relabelling_changes_nothing(t) -> None:
    props.require("relabel", t)


@CI
@given(SMALL)
def test_broadcast_and_allreduce_equal_enumeration(t) -> None:
    props.require("broadcast", t)
    props.require("allreduce", t)


@CI
@given(SMALL)
def test_optimum_certificates_check_out(t) -> None:
    props.require("certificate", t)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(cst.topologies(max_nodes=7, capacities="small") | cst.topologies(max_nodes=7))
def test_emitted_schedules_are_certified_at_the_optimum(t) -> None:
    props.require("schedule", t)


# ----------------------------------------------------------------- known values
def test_enumeration_reproduces_the_verified_values() -> None:
    # two_box_example: 1/x* = 1, broadcast algbw 4 (Zhao & Krishnamurthy 2023, Fig. 1, digest "Worked values")
    t = platforms.two_box_example()
    assert brute.allgather_inv_x(t)[0] == 1
    assert brute.broadcast_algbw(t, t.compute_nodes[0]) == 4
    assert brute.fixed_k_u(t, 1)[0] == 1


def test_least_u_for_cut_by_hand() -> None:
    # caps 2 and 3, need 3: U=1/2 gives 1+1=2, U=2/3 gives 1+2=3 -> 2/3
    assert brute.least_u_for_cut([Fraction(2), Fraction(3)], 3) == Fraction(2, 3)
    # one link of capacity 1/3 (real units), need 2 -> U = 6
    assert brute.least_u_for_cut([Fraction(1, 3)], 2) == 6
    assert brute.least_u_for_cut([Fraction(5)], 0) == 0


# ------------------------------------------------- the checks themselves can fail
def _wrong(field: str, factor: Fraction):
    real = optimum

    def fake(t, collective="allgather", **kw):
        opt = real(t, collective, **kw)
        setattr(opt, field, getattr(opt, field) * factor)
        return opt

    return fake


@pytest.mark.parametrize("name,field", [
    ("brute", "inv_x"), ("transpose", "algbw"), ("fixed_k", "U"), ("scaling", "algbw"),
    ("broadcast", "algbw"),
])
def test_properties_detect_a_wrong_optimum(monkeypatch, name: str, field: str) -> None:
    t = cycle_union(RandomSource(4), min_compute=4, max_compute=4, capacities="small")
    assert props.check(name, t) is None
    calls = {"n": 0}
    real = _wrong(field, Fraction(101, 100))
    honest = optimum

    def sometimes_wrong(t, collective="allgather", **kw):
        calls["n"] += 1  # lie on every other call: consistent lies would cancel out
        return (real if calls["n"] % 2 == 1 else honest)(t, collective, **kw)

    monkeypatch.setattr(props, "optimum", sometimes_wrong)
    assert props.check(name, t) is not None


def test_relabel_detects_an_order_dependent_optimum(monkeypatch) -> None:
    t = cycle_union(RandomSource(4), min_compute=4, max_compute=4, capacities="small")
    honest = optimum

    def order_dependent(t, collective="allgather", **kw):
        opt = honest(t, collective, **kw)
        if str(t.compute_nodes[0]).startswith("n"):
            opt.algbw += 1
        return opt

    monkeypatch.setattr(props, "optimum", order_dependent)
    assert "relabelling" in (props.check("relabel", t) or "")


def test_require_shrinks_and_saves_a_failure(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("COLLCERT_REGRESSIONS", str(tmp_path))
    honest = optimum

    def bad_with_many_nodes(t, collective="allgather", **kw):
        opt = honest(t, collective, **kw)
        if t.num_compute >= 3 and opt.inv_x is not None:
            opt.inv_x += 1
        return opt

    monkeypatch.setattr(props, "optimum", bad_with_many_nodes)
    monkeypatch.setattr(props, "_saved", set())
    t = cycle_union(RandomSource(9), min_compute=6, max_compute=6, capacities="wide")
    with pytest.raises(props.PropertyFailure, match="saved as"):
        props.require("brute", t)
    saved = list(tmp_path.glob("brute-*.json"))
    assert len(saved) == 1
    from collcert import Topology

    small = Topology.from_json(str(saved[0]))
    assert small.num_compute == 3  # the smallest topology that still fails
    assert "collcert fuzz check --property brute --replay" in (tmp_path / "README.md").read_text()


# ------------------------------------------------------------------ the CLI
def test_cli_check_passes_on_random_topologies(capsys) -> None:
    from collcert.cli import main

    rc = main(["fuzz", "check", "--count", "6", "--seed", "4", "--switches", "--max-nodes",
               "6", "--property", "brute", "--property", "relabel", "--no-save", "--json"])
    import json

    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["ok"] and data["cases"] == 6
    assert data["properties"] == ["brute", "relabel"]
    assert data["skipped"] == 0  # every case is small enough for enumeration


def test_cli_check_says_when_checks_were_skipped(capsys) -> None:
    """Topologies too large for enumeration skip 'brute': the summary must say so
    instead of a bare "all hold"."""
    from collcert.cli import main

    rc = main(["fuzz", "check", "--count", "3", "--seed", "2", "--switches", "--max-nodes",
               "16", "--property", "brute", "--no-save"])
    out = capsys.readouterr().out
    assert rc == 0 and "checks skipped" in out and "enumeration too slow" in out


def test_cli_check_reports_shrinks_and_saves(monkeypatch, tmp_path, capsys) -> None:
    from collcert.cli import main

    honest = optimum

    def bad(t, collective="allgather", **kw):
        opt = honest(t, collective, **kw)
        if len(t.capacity) >= 5:
            opt.inv_x = (opt.inv_x or 0) * 2
        return opt

    monkeypatch.setattr(props, "optimum", bad)
    rc = main(["fuzz", "check", "--count", "3", "--seed", "1", "--max-nodes", "7",
               "--property", "brute", "--save-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 1 and "property brute FAILED" in out and "saved as" in out
    saved = list(tmp_path.glob("brute-*.json"))
    assert saved
    from collcert import Topology

    for path in saved:  # shrunk to (nearly) the smallest failing size: 5 links
        small = Topology.from_json(str(path))
        assert 5 <= len(small.capacity) <= 6 and small.num_compute <= 3
    assert main(["fuzz", "check", "--property", "nope", "--count", "1"]) == 2
