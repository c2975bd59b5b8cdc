"""Refuting reported speeds: ``collcert audit --claim-algbw`` / ``--claim-time --size``."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from collcert import platforms
from collcert.auditing.claims import parse_claim, rate_of
from collcert.certify.model import InputError
from collcert.cli import main

FORMATS = Path(__file__).parent / "data" / "formats"
COMPLETE4 = str(FORMATS / "complete4_topology.json")
RING_AG = str(FORMATS / "msccl-tools_allgather_ring_4gpu_inplace.xml")
RING_AR = str(FORMATS / "msccl-tools_allreduce_ring_4gpu_inplace.xml")


@pytest.mark.parametrize("algbw, time, size, unit, want", [
    ("400", None, None, "GB/s", Fraction(400)),
    ("400GB/s", None, None, "GB/s", Fraction(400)),
    ("3.2TB/s", None, None, "GB/s", Fraction(3200)),
    ("800Gbit/s", None, None, "GB/s", Fraction(100)),
    ("5/2", None, None, "", Fraction(5, 2)),
    (None, "2.5ms", "1GB", "GB/s", Fraction(400)),
    (None, "1s", "1GiB", "GB/s", Fraction(2**30, 10**9)),
    (None, "25us", "1MB", "MB/s", Fraction(40000)),
    (None, "2", "7", "whatever", Fraction(7, 2)),  # plain numbers: the topology's units
])
def test_claims_are_read_exactly(algbw: str | None, time: str | None, size: str | None,
                                 unit: str, want: Fraction) -> None:
    got = parse_claim(algbw, time, size, unit)
    assert got is not None and got[0] == want


@pytest.mark.parametrize("algbw, time, size, unit, needle", [
    (None, "2.5ms", None, "GB/s", "needs --size"),
    ("1", "1", "1", "GB/s", "not both"),
    (None, "2.5ms", "7", "GB/s", "both with units"),
    (None, "2.5ms", "1GB", "links", "not a data rate"),
    ("400furlongs", None, None, "GB/s", "cannot convert"),
    ("-3", None, None, "GB/s", "must be positive"),
    ("fast", None, None, "GB/s", "not a number"),
    ("1e99999", None, None, "GB/s", "write an integer"),
])
def test_unreadable_claims(algbw: str | None, time: str | None, size: str | None, unit: str,
                           needle: str) -> None:
    with pytest.raises(InputError) as exc:
        parse_claim(algbw, time, size, unit)
    assert needle in str(exc.value)


def test_rate_units() -> None:
    assert rate_of("GB/s") == 10**9 and rate_of("GiB/ms") == 2**30 * 1000
    assert rate_of("links") is None and rate_of("GB") is None


def _audit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    code = main(["audit", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_synthesizer_claim_beating_the_dgx_allgather_optimum_is_refuted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A DGX A100 box: 8 GPUs, each linked to the NVSwitch at 300 GB/s each way. In an
    # allgather of M bytes every GPU must receive the 7/8·M it does not hold through its one
    # 300 GB/s link, so no schedule takes less than 7M/2400 s: algbw ≤ 2400/7 ≈ 342.9 GB/s.
    # A report of "1 GB in 2.5 ms" (400 GB/s) is impossible, whatever schedule it came from.
    sched = tmp_path / "ag.json"
    assert main(["schedule", "dgx_a100:1", "-o", str(sched)]) == 0
    capsys.readouterr()
    code, out = _audit(capsys, "dgx_a100:1", str(sched), "--claim-time", "2.5ms",
                       "--size", "1GB")
    claim = out["claim"]
    assert code == 1 and isinstance(claim, dict) and claim["refuted"] is True
    assert claim["algbw"] == "400"
    text = " ".join(claim["reasons"])
    assert "beats the certified optimum" in text and "2400/7" in text
    assert "(7 of 8) has egress B⁺(S) = 300" in text  # the cut that proves it
    # the same schedule reported at 340 GB/s is not refuted
    code, out = _audit(capsys, "dgx_a100:1", str(sched), "--claim-algbw", "340GB/s")
    assert code == 0 and out["claim"]["refuted"] is False  # type: ignore[index]


def test_claim_beating_the_schedule_names_its_bottleneck(
        capsys: pytest.CaptureFixture[str]) -> None:
    # the msccl-tools ring allgather on the complete 4-GPU digraph sends 3 chunks of M/4 over
    # each ring link of capacity 1: time 3/4, algbw 4/3; the optimum is 4 (all links busy)
    code, out = _audit(capsys, COMPLETE4, RING_AG, "--claim-algbw", "2")
    claim = out["claim"]
    assert code == 1 and isinstance(claim, dict) and claim["refuted"]
    (reason,) = claim["reasons"]
    assert "beats the schedule itself" in reason and "4/3" in reason
    assert "carries 3/4 per unit of data at capacity 1" in reason
    code, out = _audit(capsys, COMPLETE4, RING_AG, "--claim-algbw", "5")
    assert code == 1 and len(out["claim"]["reasons"]) == 2  # type: ignore[index]
    code, out = _audit(capsys, COMPLETE4, RING_AG, "--claim-algbw", "4/3")
    assert code == 0 and not out["claim"]["refuted"]  # type: ignore[index]


def test_allreduce_claim_against_the_proven_lower_bound(
        capsys: pytest.CaptureFixture[str]) -> None:
    # complete 4-GPU digraph, unit links: ForestColl's bound (7) (App. B) with the single-
    # node cuts, each of egress 3, gives time ≥ 2(N-1)/(N·3) = 2·3/(4·3) = 1/2, i.e. algbw ≤
    # 2; the ring reaches 2/3 (2·3 chunks of M/4 per link)
    code, out = _audit(capsys, COMPLETE4, RING_AR, "--claim-algbw", "3")
    assert code == 1
    text = " ".join(out["claim"]["reasons"])  # type: ignore[index]
    assert "beats the certified optimum" in text and "lower bounds" in text
    assert "exceeds algbw 2 " in text


def test_claim_on_an_invalid_schedule(capsys: pytest.CaptureFixture[str],
                                      tmp_path: Path) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text(Path(RING_AG).read_text().replace('inplace="1"', 'inplace="0"'))
    code, out = _audit(capsys, COMPLETE4, str(bad), "--claim-algbw", "1")
    assert code == 1 and out["verdict"] == "INVALID"
    assert "INVALID" in " ".join(out["claim"]["notes"])  # type: ignore[index]


def test_bad_claim_exits_2_before_auditing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", COMPLETE4, RING_AG, "--claim-time", "3"]) == 2
    assert "needs --size" in capsys.readouterr().err


def test_no_bound_for_a_program_on_some_of_the_gpus() -> None:
    # an allgather among 4 of the 8 GPUs is another collective: the 8-GPU optimum bounds
    # nothing about it
    from collcert.auditing import audit, judge

    t = platforms.dgx_a100(1)
    r = audit(t, Path(RING_AG).read_text(), ranks=list(t.compute_nodes[:4]))
    assert r.valid and r.bound_algbw is None
    assert not judge(r, Fraction(400), "x").refuted  # 4 GPUs: 400 GB/s is the ring's algbw
    r = audit(t, _ring8(), "msccl-xml")
    assert r.bound_algbw == Fraction(2400, 7)
    assert judge(r, Fraction(2400, 7), "x").refuted is False


def _ring8() -> str:
    from test_certify_msccl import ring_allgather

    return ring_allgather(8)
