"""MSCCL programs judged by the executor's rules (Azure/msccl-executor-nccl).

The programs are written here the way the MSCCLang compiler writes them (in-place
buffers, extra dependencies on ``nop`` steps, chains of ``re`` steps the executor
fuses, ``hasdep`` only on the steps someone waits for, several channels, LL),
then broken one rule at a time. Expected verdicts follow from the executor's
source as docs/auditing.md describes it, not from collcert's output.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from collcert import platforms
from collcert.auditing import audit
from collcert.certify.execution import msccl, msccl_sim


def st(s: int, kind: str, sb: str = "i", so: int = 0, db: str = "i", do: int = 0,
       depid: int = -1, deps: int = -1, hasdep: int = 0, cnt: int = 1) -> str:
    return (f'<step s="{s}" type="{kind}" srcbuf="{sb}" srcoff="{so}" dstbuf="{db}" '
            f'dstoff="{do}" cnt="{cnt}" depid="{depid}" deps="{deps}" hasdep="{hasdep}"/>')


def allpairs_inplace(n: int = 4, *, proto: str = "Simple", nchannels: int = 2,
                     last_signals: bool = True, wait_on: int | None = None,
                     nop_without_dep: bool = False, drop_own_dep: bool = False) -> str:
    """In-place all-pairs allreduce, one chunk per rank (C = n), as MSCCLang compiles it.

    gpu g: threadblock i (i < n-1) talks to peer p_i on channel (g + p_i) mod nchannels (both
    ends must use the same channel): it sends
    i[p_i], receives the peer's copy of chunk g into s[i] (signalling), later sends the
    reduced i[g] (waiting for the reducer) and receives the reduced chunk p_i into i[p_i].
    Threadblock n-1 reduces: nops carry its waits on threadblocks 0..n-3, the first re
    carries the wait on n-2, and the n-1 re steps into i[g] are fused by the executor
    into one transmission; the last (XML step 2n-4 = the flag the kernel sets) signals.
    ``wait_on`` makes the senders wait on another step of the reducer instead.
    """
    last = 2 * n - 4  # n-2 nops, then n-1 re steps
    wait = last if wait_on is None else wait_on
    out = [f'<algo name="ap" proto="{proto}" nchannels="{nchannels}" nchunksperloop="{n}" '
           f'ngpus="{n}" coll="allreduce" inplace="1">']
    for g in range(n):
        peers = [p for p in range(n) if p != g]
        out.append(f'<gpu id="{g}" i_chunks="{n}" o_chunks="0" s_chunks="{n - 1}">')
        for i, p in enumerate(peers):
            out.append(f'<tb id="{i}" send="{p}" recv="{p}" chan="{(g + p) % nchannels}">'
                       + st(0, "s", "i", p, "i", p) + st(1, "r", "s", i, "s", i, hasdep=1)
                       + st(2, "s", "i", g, "i", g, depid=n - 1, deps=wait)
                       + st(3, "r", "i", p, "i", p) + "</tb>")
        red = []
        for i in range(n - 2):
            dep = (-1, -1) if nop_without_dep and i == 0 else (i, 1)
            red.append(st(len(red), "nop", "i", -1, "o", -1, *dep))
        for i in range(n - 1):
            dep = (n - 2, 1) if i == 0 and not drop_own_dep else (-1, -1)
            red.append(st(len(red), "re", "s", i, "i", g, *dep,
                          hasdep=int(last_signals and i == n - 2)))
        out.append(f'<tb id="{n - 1}" send="-1" recv="-1" chan="0">' + "".join(red) + "</tb>")
        out.append("</gpu>")
    out.append("</algo>")
    return "\n".join(out)


def check(text: str) -> msccl_sim.Result:
    return msccl_sim.run(msccl.read(text))


def reasons(text: str) -> str:
    return " ".join(check(text).verdict.all_reasons())


@pytest.mark.parametrize("proto", ["Simple", "LL", "LL128"])
def test_compiler_style_inplace_allreduce_is_valid(proto: str) -> None:
    res = check(allpairs_inplace(4, proto=proto))
    assert res.verdict.ok, res.verdict.reasons
    assert res.verdict.facts["modes"] == ["in-place"]
    # every ordered pair exchanges 2 chunks of M/4
    assert res.traffic == {(p, q): 2 for p in range(4) for q in range(4) if p != q}


def test_nops_and_fused_reductions_compile_as_the_executor_does() -> None:
    prog = msccl.read(allpairs_inplace(4))
    red = next(tb for tb in prog.tbs if tb.gpu == 0 and tb.tbid == 3)
    assert len(red.ops) == 1  # 2 nops and 3 re steps: one transmission
    op = red.ops[0]
    assert op.waits == [(0, 1), (1, 1), (2, 1)] and op.reductions == [0, 1, 2]
    assert op.flag == 4 and op.signals  # the kernel's step counter after the fused reduce


def test_monotone_flags_release_waits_on_earlier_steps() -> None:
    # the senders wait on step 2 (the first re, which never signals itself): the flag the
    # fused transmission sets (4) is >= 2, so the wait is released
    res = check(allpairs_inplace(4, wait_on=2))
    assert res.verdict.ok, res.verdict.reasons


def test_dependency_never_signalled_is_a_deadlock_naming_the_step() -> None:
    text = reasons(allpairs_inplace(4, last_signals=False))
    assert "deadlock" in text
    assert ("gpu 0 tb 0 step 2 (line 3) waits for gpu 0 tb 3 step 4, which is never "
            "signalled") in text


def test_nop_without_dependency_shifts_the_step_counter() -> None:
    # the kernel counts one step per dependency; a nop that carries none is not counted,
    # so the fused reduce sets flag 3 and waits on step 4 are never released
    prog = msccl.read(allpairs_inplace(4, nop_without_dep=True))
    red = next(tb for tb in prog.tbs if tb.gpu == 0 and tb.tbid == 3)
    assert red.ops[0].flag == 3
    text = reasons(allpairs_inplace(4, nop_without_dep=True))
    assert "waits for gpu 0 tb 3 step 4, which is never signalled" in text
    assert "step 4 of tb 3 signals, but the kernel's step counter is then only 3" in text


def test_nop_dependencies_before_a_step_without_its_own_are_refused() -> None:
    text = reasons(allpairs_inplace(4, drop_own_dep=True))
    assert "executor refuses" in text and "follows nop dependencies" in text


def test_channel_beyond_nchannels_is_refused() -> None:
    text = allpairs_inplace(4).replace('nchannels="2"', 'nchannels="1"', 1)
    assert "declares nchannels=1" in reasons(text)


def test_in_place_program_run_out_of_place_reads_empty_output() -> None:
    # outofplace="1" too: the executor may pick it for out-of-place calls, where o_chunks=0
    # leaves nowhere for the result (and reads of i hold only the input): both are checked
    text = allpairs_inplace(4).replace('inplace="1"', 'inplace="1" outofplace="1"', 1)
    res = check(text)
    assert not res.verdict.ok
    assert res.verdict.facts["modes"] == ["in-place", "out-of-place"]
    assert all(r.startswith("out-of-place: ") for r in res.verdict.reasons)


def test_cyclic_waits_deadlock() -> None:
    # two threadblocks of gpu 0 each wait for the other's first step before running it
    def gpu(g: int) -> str:
        return (f'<gpu id="{g}" i_chunks="1" o_chunks="2" s_chunks="0">'
                f'<tb id="0" send="{1 - g}" recv="-1" chan="0">'
                + st(0, "s", "i", 0, "o", 0, depid=1, deps=0, hasdep=1) + "</tb>"
                f'<tb id="1" send="-1" recv="{1 - g}" chan="0">'
                + st(0, "r", "o", 1 - g, "o", 1 - g, depid=0, deps=0, hasdep=1)
                + "</tb>"
                '<tb id="2" send="-1" recv="-1" chan="0">' + st(0, "cpy", "i", 0, "o", g)
                + "</tb></gpu>")

    text = ('<algo name="cyc" nchunksperloop="2" ngpus="2" coll="allgather" inplace="0">'
            + gpu(0) + gpu(1) + "</algo>")
    out = reasons(text)
    assert "deadlock: no step can run" in out
    assert "gpu 0 tb 0 step 0 (line 1) waits for gpu 0 tb 1 step 0" in out


def test_receive_that_no_send_matches_and_send_never_received() -> None:
    # gpu 1 receives twice from gpu 0, which sends once: the second receive waits forever
    def prog(extra_recv: bool, extra_send: bool) -> str:
        g0 = ('<gpu id="0" i_chunks="1" o_chunks="2" s_chunks="0">'
              '<tb id="0" send="1" recv="1" chan="0">' + st(0, "s", "i", 0, "o", 0)
              + (st(1, "s", "i", 0, "o", 0) if extra_send else "")
              + st(2 if extra_send else 1, "r", "o", 1, "o", 1) + "</tb>"
              '<tb id="1" send="-1" recv="-1" chan="0">' + st(0, "cpy", "i", 0, "o", 0)
              + "</tb></gpu>")
        g1 = ('<gpu id="1" i_chunks="1" o_chunks="2" s_chunks="0">'
              '<tb id="0" send="0" recv="0" chan="0">' + st(0, "s", "i", 0, "o", 0)
              + st(1, "r", "o", 0, "o", 0)
              + (st(2, "r", "o", 0, "o", 0) if extra_recv else "") + "</tb>"
              '<tb id="1" send="-1" recv="-1" chan="0">' + st(0, "cpy", "i", 0, "o", 1)
              + "</tb></gpu>")
        return ('<algo name="m" nchunksperloop="2" ngpus="2" coll="allgather" inplace="0">'
                + g0 + g1 + "</algo>")

    assert check(prog(False, False)).verdict.ok
    out = reasons(prog(True, False))
    assert "deadlock" in out and "gpu 1 tb 0 step 2" in out
    assert "waits to receive from gpu 0 on channel 0" in out
    out = reasons(prog(False, True))
    assert "gpu 0 sends 1 message(s) to gpu 1 on channel 0 that are never received" in out


@pytest.mark.parametrize("edit, needle", [
    (('<tb id="1" ', '<tb id="7" '), "threadblock 1 is missing"),
    (('cnt="1"', 'cnt="72"'), "cnt < 72"),
    (('hasdep="1"', 'hasdep="2"'), "hasdep=2"),
    (('proto="Simple"', 'proto="LL64"'), "proto='LL64'"),
    (('send="1" recv="1" chan="1"', 'send="0" recv="1" chan="1"'), "its own gpu"),
])
def test_what_the_executor_refuses(edit: tuple[str, str], needle: str) -> None:
    text = allpairs_inplace(4).replace(*edit, 1)
    assert text != allpairs_inplace(4)
    res = check(text)
    assert not res.verdict.ok
    assert "the MSCCL executor refuses the program" in res.verdict.reasons[0]
    assert needle in " ".join(res.verdict.reasons)


def test_audit_of_the_compiler_style_program_on_a_dgx_a100_box() -> None:
    # 8 GPUs on one NVSwitch, 300 each way: all-pairs allreduce sends 2·7 chunks of M/8 out
    # of each GPU, time 14/8/300 = 7/1200 per unit, algbw 1200/7 (= RS+AG: ratio 1)
    r = audit(platforms.dgx_a100(1), allpairs_inplace(8), fmt="msccl-xml")
    assert r.valid, r.reasons
    assert r.algbw == Fraction(1200, 7) and r.ratio == 1


def ring_reducescatter_inplace(n: int = 3, inplace: str = "1") -> str:
    """In-place ring reduce-scatter, one chunk per rank (C = n), as MSCCLang writes it.

    In place, rank r's output (C/N = 1 chunk) is its input chunk r, so the program declares
    o_chunks="0" and addresses the input only. Chunk c starts at rank c+1 (send), is
    reduced and forwarded by ranks c+2 … c-1 (rrs), and ends reduced into i[c] of rank c
    (rrc); rank r plays the three roles for chunks r-1, r-2 … r+1 and r.
    """
    out = [f'<algo name="rs" proto="Simple" nchannels="1" nchunksperloop="{n}" ngpus="{n}" '
           f'coll="reducescatter" inplace="{inplace}">']
    for r in range(n):
        steps = [st(0, "s", "i", (r - 1) % n, "i", (r - 1) % n)]
        for k in range(2, n):  # chunk r-k arrives from r-1, has r's share added, moves on
            steps.append(st(len(steps), "rrs", "i", (r - k) % n, "i", (r - k) % n))
        steps.append(st(len(steps), "rrc", "i", r, "i", r))
        out.append(f'<gpu id="{r}" i_chunks="{n}" o_chunks="0" s_chunks="0">'
                   f'<tb id="0" send="{(r + 1) % n}" recv="{(r - 1) % n}" chan="0">'
                   + "".join(steps) + "</tb></gpu>")
    out.append("</algo>")
    return "\n".join(out)


@pytest.mark.parametrize("n", [3, 4])
def test_in_place_reduce_scatter_output_is_the_input_slice(n: int) -> None:
    # the executor's in-place reduce-scatter passes output = input + r·(C/N): rank r's
    # result is its own input chunk r, which the ring reduces into last
    res = check(ring_reducescatter_inplace(n))
    assert res.verdict.ok, res.verdict.reasons
    assert res.verdict.facts["modes"] == ["in-place"]
    # out of place the same program leaves the (undeclared) output buffer empty
    text = " ".join(check(ring_reducescatter_inplace(n, inplace="0")).verdict.all_reasons())
    assert "output chunk 0 should be the sum of chunk" in text or "o_chunks" in text


def test_only_a_step_with_hasdep_sets_the_flag() -> None:
    # gpu g: tb 1 copies its chunk to s[0] (step 0, no hasdep), then s[0] to s[1] (step 1,
    # hasdep="1", after waiting for tb 2, so that the two steps run at different times);
    # tb 0 waits for tb 1 step 0 and sends s[1]. The kernel sets tb 1's flag only after
    # step 1 (to 1 ≥ 0), so the send runs after s[1] is written: valid. Were step 0 to
    # signal, the wait would be released before s[1] holds anything.
    def gpu(g: int, hasdep0: int) -> str:
        return (f'<gpu id="{g}" i_chunks="0" o_chunks="2" s_chunks="3">'
                f'<tb id="0" send="{1 - g}" recv="{1 - g}" chan="0">'
                + st(0, "s", "s", 1, "s", 1, depid=1, deps=0)
                + st(1, "r", "o", 1 - g, "o", 1 - g) + "</tb>"
                '<tb id="1" send="-1" recv="-1" chan="0">'
                + st(0, "cpy", "o", g, "s", 0, hasdep=hasdep0)
                + st(1, "cpy", "s", 0, "s", 1, depid=2, deps=0, hasdep=1) + "</tb>"
                '<tb id="2" send="-1" recv="-1" chan="0">'
                + st(0, "cpy", "o", g, "s", 2, hasdep=1) + "</tb></gpu>")

    def prog(hasdep0: int) -> str:
        return ('<algo name="h" nchunksperloop="2" ngpus="2" coll="allgather" inplace="1">'
                + gpu(0, hasdep0) + gpu(1, hasdep0) + "</algo>")

    res = check(prog(0))
    assert res.verdict.ok, res.verdict.reasons
    # when step 0 does signal (hasdep="1"), the send may run before step 1
    assert "gpu 0 tb 0 step 0" in reasons(prog(1)) and "s[1]" in reasons(prog(1))


def _reducer(steps: list[str]) -> msccl.Program:
    """Two gpus whose threadblock 0 holds ``steps`` (local reductions into i, from s)."""
    gpus = "".join(f'<gpu id="{g}" i_chunks="1" o_chunks="0" s_chunks="40">'
                   '<tb id="0" send="-1" recv="-1" chan="0">' + "".join(steps) + "</tb></gpu>"
                   for g in range(2))
    return msccl.read('<algo name="f" proto="Simple" nchannels="1" nchunksperloop="1" '
                      f'ngpus="2" coll="allreduce" inplace="1">{gpus}</algo>')


def test_reduction_fusion_stops_at_hasdep_and_at_the_running_count_of_16() -> None:
    # msccl_parser.cc: a re continues the previous one (same dst buffer/offset and src
    # buffer, no dependency) unless that one had hasdep or the threadblock's running count
    # of reductions just reached MSCCL_MAX_REDUCE_FUSION = 16
    ops = _reducer([st(0, "re", "s", 0, "i", 0, hasdep=1), st(1, "re", "s", 1, "i", 0)])
    assert [op.reductions for op in ops.tbs[0].ops] == [[0], [1]]
    ops = _reducer([st(j, "re", "s", j, "i", 0) for j in range(17)])
    assert [len(op.reductions) for op in ops.tbs[0].ops] == [16, 1] and not ops.refusals
    # the count is never reset: past 16 nothing stops a group, and 17 fused reductions
    # overflow the kernel's srcs[MSCCL_MAX_REDUCE_FUSION + 1]
    steps = [st(j, "re", "s", j, "i", 0, hasdep=1) for j in range(16)]
    steps += [st(16 + j, "re", "s", 16 + j, "i", 0) for j in range(17)]
    ops = _reducer(steps)
    assert [len(op.reductions) for op in ops.tbs[0].ops] == [1] * 16 + [17]
    assert any("fuses more than 16 reductions" in r for r in ops.refusals)
