"""MSCCL algorithm XML: reading, chunk-by-chunk simulation, postconditions, hostile input."""

from __future__ import annotations

import pytest

from collcert.certify.execution import msccl, msccl_sim
from collcert.certify.model import InputError

HEAD = ('<algo name="{name}" nchunksperloop="{c}" nchannels="1" proto="Simple" ngpus="{n}" '
        'coll="{coll}" inplace="{inplace}">')


def step(s: int, kind: str, sb: str = "i", so: int = 0, db: str = "o", do: int = 0,
         cnt: int = 1, depid: int = -1, deps: int = -1, hasdep: int = 0) -> str:
    return (f'<step s="{s}" type="{kind}" srcbuf="{sb}" srcoff="{so}" dstbuf="{db}" '
            f'dstoff="{do}" cnt="{cnt}" depid="{depid}" deps="{deps}" hasdep="{hasdep}"/>')


def ring_allgather(n: int, inplace: bool = False, skip: tuple[int, int] | None = None) -> str:
    """Ring allgather: gpu g forwards chunk g-j to g+1 at round j (rcs = receive-copy-send)."""
    out = [HEAD.format(name="ring", c=n, n=n, coll="allgather", inplace=int(inplace))]
    for g in range(n):
        out.append(f'<gpu id="{g}" i_chunks="1" o_chunks="{n}" s_chunks="0">')
        out.append(f'<tb id="0" send="{(g + 1) % n}" recv="{(g - 1) % n}" chan="0">')
        steps = [] if inplace else [("cpy", "i", 0, "o", g)]
        steps.append(("s", "o", g, "o", g))
        for j in range(1, n - 1):
            c = (g - j) % n
            if skip != (g, j):
                steps.append(("rcs", "o", c, "o", c))
        c = (g - n + 1) % n
        steps.append(("r", "o", c, "o", c))
        out += [step(i, k, sb, so, db, do) for i, (k, sb, so, db, do) in enumerate(steps)]
        out.append("</tb></gpu>")
    out.append("</algo>")
    return "\n".join(out)


def allpairs_allreduce(n: int, drop_reduce: int | None = None, twice: int | None = None) -> str:
    """All-pairs allreduce: every gpu g reduces chunk g from all peers (via scratch), then
    sends the reduced chunk to every peer. Threadblock i talks to the i-th peer; threadblock
    n-1 reduces, each reduce waiting on the receive that filled its scratch chunk (which
    signals: hasdep="1"), and its last reduce signals the senders. Each ordered pair
    exchanges 2 chunks of 1/n: on complete(n), time 2/n."""
    out = [HEAD.format(name="allpairs", c=n, n=n, coll="allreduce", inplace=0)]
    for g in range(n):
        out.append(f'<gpu id="{g}" i_chunks="{n}" o_chunks="{n}" s_chunks="{n}">')
        peers = [p for p in range(n) if p != g]
        red = [("cpy", "i", g, -1, -1)]
        for i, p in enumerate(peers):
            if p == drop_reduce:
                continue
            red.append(("re", "s", p, i, 1))
            if p == twice:
                red.append(("re", "s", p, i, 1))
        last = len(red) - 1
        for i, p in enumerate(peers):
            out.append(f'<tb id="{i}" send="{p}" recv="{p}" chan="0">')
            out.append(step(0, "s", "i", p, "o", 0))
            out.append(step(1, "r", "i", 0, "s", p, hasdep=1))
            out.append(step(2, "s", "o", g, "o", 0, depid=n - 1, deps=last))
            out.append(step(3, "r", "i", 0, "o", p))
            out.append("</tb>")
        out.append(f'<tb id="{n - 1}" send="-1" recv="-1" chan="0">')
        out += [step(j, k, sb, so, "o", g, depid=d, deps=ds, hasdep=int(j == last))
                for j, (k, sb, so, d, ds) in enumerate(red)]
        out.append("</tb></gpu>")
    out.append("</algo>")
    return "\n".join(out)


def run(text: str) -> msccl.Result:
    return msccl.simulate(msccl.read(text))


@pytest.mark.parametrize("inplace", [False, True])
def test_ring_allgather_is_correct(inplace: bool) -> None:
    r = run(ring_allgather(5, inplace))
    assert r.verdict.ok, r.verdict.all_reasons()
    assert r.traffic == {(g, (g + 1) % 5): 4 for g in range(5)}


def test_ring_allgather_with_a_missing_forward() -> None:
    r = run(ring_allgather(4, skip=(1, 1)))
    assert not r.verdict.ok
    text = " ".join(r.verdict.all_reasons())
    assert "deadlock" in text or "never received" in text
    assert "should hold rank" in text


def test_allpairs_allreduce() -> None:
    r = run(allpairs_allreduce(4))
    assert r.verdict.ok, r.verdict.all_reasons()
    assert r.traffic == {(p, q): 2 for p in range(4) for q in range(4) if p != q}


def test_allreduce_missing_and_double_contributions() -> None:
    r = run(allpairs_allreduce(4, drop_reduce=2))
    assert not r.verdict.ok
    assert "lacks rank 2's contribution" in " ".join(r.verdict.all_reasons())
    r = run(allpairs_allreduce(4, twice=3))
    assert not r.verdict.ok
    assert "reduces the contribution of rank 3 chunk 0 twice" in " ".join(r.verdict.reasons)


def test_read_before_write_and_out_of_bounds() -> None:
    text = ring_allgather(3).replace('type="cpy" srcbuf="i" srcoff="0"',
                                     'type="cpy" srcbuf="s" srcoff="0"', 1)
    r = run(text)
    assert not r.verdict.ok and "outside gpu 0's s buffer" in r.verdict.reasons[0]


@pytest.mark.parametrize("text, needle", [
    ('<algo coll="gather" ngpus="2" nchunksperloop="2"/>', "not supported"),
    ('<algo coll="allgather" ngpus="2" nchunksperloop="2"><gpu id="0"/></algo>',
     "have no <gpu>"),
    ('<algo coll="allgather" ngpus="2" nchunksperloop="x"/>', "not an integer"),
    ('<algo coll="allgather" ngpus="2" nchunksperloop="2"><gpu id="0"><tb id="0" send="1" '
     'recv="-1"><step s="0" type="zz"/></tb></gpu></algo>', "unknown step type"),
    ('<!DOCTYPE a [<!ENTITY x "y">]><algo/>', "DOCTYPE"),
    ('<algo coll="allgather"', "not well-formed"),
])
def test_unreadable_programs(text: str, needle: str) -> None:
    with pytest.raises(InputError, match=needle):
        msccl.simulate(msccl.read(text))


def send_all_then_receive(m: int) -> str:
    """2-GPU allgather, one threadblock each: send all m own chunks, then receive the m of
    the other gpu. Both gpus send first, so the connection must buffer all m messages."""
    out = [HEAD.format(name="eager", c=2 * m, n=2, coll="allgather", inplace=0)]
    for g in range(2):
        out.append(f'<gpu id="{g}" i_chunks="{m}" o_chunks="{2 * m}" s_chunks="0">')
        out.append(f'<tb id="0" send="{1 - g}" recv="{1 - g}" chan="0">')
        steps = [step(0, "cpy", "i", 0, "o", g * m, cnt=m)]
        steps += [step(1 + j, "s", "i", j, "o", g * m + j) for j in range(m)]
        steps += [step(1 + m + j, "r", "o", (1 - g) * m + j, "o", (1 - g) * m + j)
                  for j in range(m)]
        out += steps
        out.append("</tb></gpu>")
    out.append("</algo>")
    return "\n".join(out)


def test_a_connection_buffers_eight_messages() -> None:
    """The executor's connections have NCCL_STEPS = 8 slots: both gpus sending 8 messages
    before receiving runs; 9 would block both senders forever on the hardware."""
    assert msccl_sim.SLOTS == 8
    r = run(send_all_then_receive(8))
    assert r.verdict.ok, r.verdict.all_reasons()
    r = run(send_all_then_receive(9))
    assert not r.verdict.ok
    text = " ".join(r.verdict.all_reasons())
    assert "deadlock" in text and "8 buffer slots" in text and "gpu 0 tb 0 step 9" in text
