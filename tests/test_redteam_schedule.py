"""Red-team regressions for the schedule and MSCCL checkers and the bounded readers.

Each test is an input that once fooled, crashed or exhausted a checker; the data is
built here (no large files).
"""

from __future__ import annotations

import gzip
import tracemalloc
from fractions import Fraction
from pathlib import Path

import pytest
from test_certify_msccl import HEAD, ring_allgather, step
from test_certify_schedule import complete_allgather

from collcert import platforms
from collcert.certify.execution import msccl
from collcert.certify.execution.msccl_sim import _Run
from collcert.certify.forestcoll import check_schedule
from collcert.certify.model import InputError, Topo, files


def test_gzip_bomb_stops_within_the_memory_budget(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    """A small gzip file that unpacks to far more than the memory budget can hold was
    decompressed up to the 512 MB cap whatever the budget (1 GB of memory for a 500 KB
    file under COLLCERT_MAX_MEMORY=100M); the read now stops at budget / 3."""
    bomb = tmp_path / "bomb.json.gz"
    with gzip.open(bomb, "wb") as fh:
        fh.write(b"[" + b" " * (8 << 20) + b"1]")
    assert bomb.stat().st_size < 100_000
    monkeypatch.setenv("COLLCERT_MAX_MEMORY", "6M")
    with pytest.raises(InputError, match=r"bomb.json.gz \(after decompression\): more than "
                       r"2097152 bytes.*COLLCERT_MAX_MEMORY=6M"):
        files.read_bytes(bomb, 512 << 20, text=True)
    plain = tmp_path / "big.json"
    plain.write_bytes(b"[" + b" " * (3 << 20) + b"1]")
    with pytest.raises(InputError, match="big.json: 3145731 bytes is more than collcert reads"):
        files.read_bytes(plain, 512 << 20, text=True)
    monkeypatch.setenv("COLLCERT_MAX_MEMORY", "1G")
    assert len(files.read_bytes(bomb, 512 << 20, text=True)) == (8 << 20) + 3


def test_msccl_work_is_capped_before_simulating(monkeypatch: pytest.MonkeyPatch) -> None:
    """Steps × cnt had no cap: 2 million steps of cnt 71 (within MAX_STEPS and the
    executor's 4096 elements per rank on 500 ranks) meant 284 million chunk reads and
    writes, many minutes of simulation. Σ cnt is now bounded while reading."""
    text = ring_allgather(4)
    assert msccl.simulate(msccl.read(text)).verdict.ok
    moved = sum(int(c) for c in text.split('cnt="')[1:] for c in [c.split('"')[0]])
    monkeypatch.setattr(msccl, "MAX_WORK", 2 * moved - 2)
    with pytest.raises(InputError, match=r"move more than \d+ chunks in all \(Σ cnt\)"):
        msccl.read(text)
    monkeypatch.setattr(msccl, "MAX_WORK", 2 * moved)
    assert msccl.simulate(msccl.read(text)).verdict.ok


def _reread(n_steps: int) -> str:
    """Two gpus; gpu g copies its input chunk to scratch once, then copies the same 71
    scratch chunks over and over (each copy reads them again), then does an allgather by
    one send and one receive."""
    out = [HEAD.format(name="reread", c=2, n=2, coll="allgather", inplace=0)]
    for g in range(2):
        out.append(f'<gpu id="{g}" i_chunks="1" o_chunks="2" s_chunks="142">')
        out.append('<tb id="0" send="-1" recv="-1" chan="0">')
        steps = [step(0, "cpy", "i", 0, "s", 0)]
        k = 1
        while k < 71:
            c = min(k, 71 - k)
            steps.append(step(len(steps), "cpy", "s", 0, "s", k, c))
            k += c
        while len(steps) < n_steps:
            steps.append(step(len(steps), "cpy", "s", 0, "s", 71, 71))
        steps.append(step(len(steps), "cpy", "i", 0, "o", g))
        out += steps + ["</tb>"]
        out.append(f'<tb id="1" send="{1 - g}" recv="{1 - g}" chan="0">'
                   + step(0, "s", "i", 0, "o", g) + step(1, "r", "i", 0, "o", 1 - g) + "</tb>")
        out.append("</gpu>")
    out.append("</algo>")
    return "\n".join(out)


def test_msccl_rereading_a_chunk_keeps_memory_bounded() -> None:
    """Every read of a chunk was remembered until the next write to it (for the race
    check): a chunk read a million times held a million entries. One entry per
    threadblock (its latest read) orders the same, so memory no longer grows with the
    number of reads."""
    prog = msccl.read(_reread(1200))
    sim = _Run(prog, False, msccl.simulate(prog).verdict)
    tracemalloc.start()
    try:
        for tb in prog.tbs:
            tb.pc = 0
        assert sim.run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    sim.postcondition()
    assert sim.v.ok, sim.v.reasons
    # 1200 × 71 remembered reads of s[0:71] took over 8 MB; now a few hundred KB
    assert peak < 3_000_000, peak


def _split_stars(k: int, a: int) -> dict[str, object]:
    """complete(3) allgather: each root's data in two trees of multiplicities a and k - a,
    a star and a chain, so a link carries a alone: the time's numbers are as large as a,
    k and the weights make them."""
    sched = complete_allgather(3)
    trees = []
    for star in sched["phases"][0]["trees"]:  # type: ignore[index]
        r = star["root"]
        o1, o2 = (v for v in range(3) if v != r)
        chain = [{"src": r, "dst": o1, "path": [r, o1]}, {"src": o1, "dst": o2, "path": [o1, o2]}]
        trees += [dict(star, multiplicity=a),
                  dict(star, multiplicity=k - a, edges=chain)]
    sched["phases"] = [{"collective": "allgather", "k": k, "trees": trees}]
    return sched


def test_schedule_numbers_too_long_to_print_are_bad_input() -> None:
    """A phase k, multiplicities and weights of a few thousand digits each (every one
    readable) made the exact time a fraction of over 4,300 digits: printing the
    bottleneck ended in Python's ValueError (exit 3, "internal error")."""
    topo = Topo(platforms.complete(3).to_json())
    small = check_schedule(topo, _split_stars(10**20 + 1, 10**19 + 7))
    assert small.ok and small.facts["time_per_unit"] > 0
    weighted = _split_stars(10**3990 + 1, 10**3989 + 7)
    weighted["weights"] = {"0": f"1/{10**3990 + 3}", "1": f"1/{10**3990 + 9}", "2": "1"}
    with pytest.raises(InputError, match="common denominator of the weights has more than"):
        check_schedule(topo, weighted)
    with pytest.raises(InputError, match=r"phase 0 \(allgather\): k has \d+ bits"):
        check_schedule(topo, _split_stars(10**3990 + 1, 10**3989 + 7))
    over = _split_stars(10**1000 + 1, 10**999)
    over["phases"][0]["trees"][0]["multiplicity"] = 10**3999  # type: ignore[index]
    v = check_schedule(topo, over)
    assert not v.ok and any("more than k" in r for r in v.reasons)
    v.to_json()  # every reason and fact prints


def test_the_lp_certificate_an_allreduce_schedule_carries_is_checked() -> None:
    """`schedule -c allreduce --method lp` embeds its LP (5) certificate; `collcert check`
    passed it unread, so a schedule could carry a false optimum. Now it is checked, its value
    is reported, and the trees' algbw may not exceed it."""
    import copy

    from collcert.reference.allreduce import lp_schedule

    t = platforms.torus((3, 3))
    doc = lp_schedule(t).to_json()
    topo = t.to_json()
    v = check_schedule(topo, doc)
    assert v.ok, v.all_reasons()
    assert v.facts["forestcoll_lp"] == v.facts["algbw"] == Fraction(9, 4)
    bad = copy.deepcopy(doc)
    bad["certificates"]["forestcoll_lp"]["value"] = "5/2"
    v = check_schedule(topo, bad)
    assert not v.ok and "LP (5) certificate" in " ".join(v.all_reasons())
    # a valid certificate of a smaller topology's LP (half the capacities) is refused by
    # the LP rebuilt from this one, and with no certificate the check still runs
    v = check_schedule(Topo(topo), doc)
    assert v.ok and v.facts["forestcoll_lp"] == Fraction(9, 4)
    half = lp_schedule(platforms.torus((3, 3), capacity=Fraction(1, 2))).to_json()
    mixed = copy.deepcopy(doc)
    mixed["certificates"]["forestcoll_lp"] = half["certificates"]["forestcoll_lp"]
    assert not check_schedule(topo, mixed).ok
