"""Alltoall: the optimum (maximum concurrent flow, exact LP), its checker, MSCCL programs.

Expected optima are derived by hand (each test says how), not taken from the code.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path

import pytest

from collcert import Topology, platforms
from collcert.auditing import audit
from collcert.certify.alltoall import check_alltoall_optimum
from collcert.certify.dispatch import check_certificate
from collcert.cli import main
from collcert.reference.alltoall import alltoall_optimum

BOX4 = Path(__file__).parent / "data" / "formats" / "box4_topology.json"


@pytest.mark.parametrize("topology, lam", [
    # complete digraph, unit links: a pair's flow uses ≥ 1 unit of capacity per unit sent,
    # N(N-1) pairs and N(N-1) units of capacity: λ ≤ 1, met by the direct links
    (lambda: platforms.complete(4), Fraction(1)),
    (lambda: platforms.complete(5), Fraction(1)),
    # 4-ring, unit links both ways: 8 pairs at distance 1, 4 at distance 2 need 16λ of the
    # 8 units of capacity, λ ≤ 1/2; splitting the far pairs over both ways meets it
    (lambda: platforms.ring(4), Fraction(1, 2)),
    # 4 GPUs on a switch, 300 each way: each GPU's up-link carries its 3 pairs: λ = 100
    (lambda: Topology.from_json(BOX4), Fraction(100)),
    # 2 DGX A100 boxes: 8 NICs of 25 GB/s leave a box, and the 8·8 pairs from one box to
    # the other must cross: λ ≤ 200/64 = 25/8 (inside a box NVSwitch is far faster)
    (lambda: platforms.dgx_a100(2), Fraction(25, 8)),
])
def test_alltoall_optimum_matches_hand_derivations(topology, lam: Fraction) -> None:  # type: ignore[no-untyped-def]
    t = topology()
    opt = alltoall_optimum(t)
    assert opt.lam == lam
    assert opt.algbw == t.num_compute * lam and opt.time_per_unit == 1 / (t.num_compute * lam)
    cert = json.loads(json.dumps(opt.certificate()))
    v = check_alltoall_optimum(t.to_json(), cert)
    assert v.ok, v.reasons
    assert v.facts["algbw"] == opt.algbw


def test_the_checker_refuses_a_wrong_certificate() -> None:
    t = platforms.ring(4)
    cert = json.loads(json.dumps(alltoall_optimum(t).certificate()))
    # a larger λ than the flows deliver
    bad = copy.deepcopy(cert)
    bad["primal"]["lambda"] = "1"
    v = check_alltoall_optimum(t.to_json(), bad)
    assert not v.ok and any("primal" in r for r in v.reasons)
    # a claimed algbw the LP does not prove
    bad = copy.deepcopy(cert)
    bad["algbw"] = "3"
    assert "claims algbw 3" in " ".join(check_alltoall_optimum(t.to_json(), bad).reasons)
    # a cut that does not meet λ
    bad = copy.deepcopy(cert)
    bad["cut"] = [0]
    assert "not λ = 1/2" in " ".join(check_alltoall_optimum(t.to_json(), bad).reasons)


def test_a_certificate_of_another_lp_cannot_pass() -> None:
    # the ring's certificate (its own LP, primal and dual are consistent) is no proof for
    # the complete graph: the checker rebuilds the LP from the topology it is given
    ring = json.loads(json.dumps(alltoall_optimum(platforms.ring(4)).certificate()))
    del ring["topology"]  # without the hash check, the LP comparison must catch it
    v = check_alltoall_optimum(platforms.complete(4).to_json(), ring)
    assert not v.ok and "not the alltoall LP of this topology" in v.reasons[0]
    # and a genuine LP certificate of it passes as a generic LP, but says nothing more
    kind, generic = check_certificate(platforms.complete(4).to_json(),
                                      {k: ring[k] for k in ("lp", "primal", "dual")})
    assert kind == "lp" and generic.ok


def alltoall_allpairs(n: int, b: int = 1, inplace: bool = False,
                      wrong: tuple[int, int] | None = None) -> str:
    """All-pairs alltoall, b chunks per block (C = n·b): the threadblock for peer p sends
    input block p to p, then receives p's block for us into output block p; a local
    threadblock copies block g (not needed in place, where output = input)."""
    c = n * b
    out = [f'<algo name="a2a" proto="Simple" nchannels="1" nchunksperloop="{c}" ngpus="{n}" '
           f'coll="alltoall" inplace="{int(inplace)}">']

    def st(s: int, kind: str, sb: str, so: int, db: str, do: int) -> str:
        return (f'<step s="{s}" type="{kind}" srcbuf="{sb}" srcoff="{so}" dstbuf="{db}" '
                f'dstoff="{do}" cnt="1" depid="-1" deps="-1" hasdep="0"/>')

    ob = "i" if inplace else "o"
    for g in range(n):
        out.append(f'<gpu id="{g}" i_chunks="{c}" o_chunks="{0 if inplace else c}" '
                   's_chunks="0">')
        peers = [p for p in range(n) if p != g]
        for t, p in enumerate(peers):
            send = [st(k, "s", "i", p * b + k, ob, 0) for k in range(b)]
            if wrong == (g, p):
                send[0] = st(0, "s", "i", g * b, ob, 0)
            recv = [st(b + k, "r", ob, 0, ob, p * b + k) for k in range(b)]
            out.append(f'<tb id="{t}" send="{p}" recv="{p}" chan="0">' + "".join(send + recv)
                       + "</tb>")
        if not inplace:
            out.append(f'<tb id="{n - 1}" send="-1" recv="-1" chan="0">'
                       + "".join(st(k, "cpy", "i", g * b + k, "o", g * b + k) for k in range(b))
                       + "</tb>")
        out.append("</gpu>")
    out.append("</algo>")
    return "\n".join(out)


@pytest.mark.parametrize("inplace", [False, True])
def test_msccl_alltoall_program_audits_at_the_optimum(inplace: bool) -> None:
    # complete(4): each pair sends its block of M/4 over its own unit link: time 1/4 per
    # unit, algbw 4, the optimum (λ = 1)
    r = audit(platforms.complete(4), alltoall_allpairs(4, 2, inplace), "msccl-xml")
    assert r.valid, r.reasons
    assert r.collective == "alltoall" and r.algbw == 4 and r.optimum_algbw == 4
    assert r.ratio == 1 and r.bound_algbw == 4


def test_msccl_alltoall_with_a_wrong_block_is_invalid() -> None:
    r = audit(platforms.complete(4), alltoall_allpairs(4, 1, wrong=(0, 2)), "msccl-xml")
    assert not r.valid
    assert "gpu 2 output chunk 0 should hold rank 0's input chunk 2" in " ".join(r.reasons)


def test_msccl_alltoall_through_a_switch() -> None:
    # box4: every GPU sends 3 blocks of M/4 out through its 300 link: time 3/4/300 = 1/400,
    # algbw 400 = 4·λ with λ = 100: optimal
    r = audit(Topology.from_json(BOX4), alltoall_allpairs(4), "msccl-xml")
    assert r.valid and r.algbw == 400 and r.ratio == 1


def test_optimum_command_and_claims(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["optimum", "ring:4", "-c", "alltoall", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["algbw"] == "2" and "cut" in out and "lp" not in out
    xml = tmp_path / "a2a.xml"
    xml.write_text(alltoall_allpairs(4))
    assert main(["audit", "ring:4", str(xml), "--claim-algbw", "3", "--json"]) == 1
    claim = json.loads(capsys.readouterr().out)["claim"]
    assert claim["refuted"] and "beats the certified optimum" in claim["reasons"][0]
    assert "2·2 ordered pairs" in claim["reasons"][0]
