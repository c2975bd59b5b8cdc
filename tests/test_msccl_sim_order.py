"""The MSCCL simulator's event-driven sweep runs the interleaving of the plain sweep.

The simulator visits, in program order, only the threadblocks whose readiness may have
changed (a flag they wait for grew, a message arrived, a slot freed). It must run exactly
what the plain loop (every unfinished threadblock each sweep, running as far as it can)
runs: same verdict, same reasons in the same order, same traffic. Checked on an exported
program and on mutations of it (dependencies, offsets, counts, step types changed), which
deadlock, race, overflow and fail postconditions in many ways.
"""

from __future__ import annotations

import random
import re

import pytest

from collcert import platforms, schedule
from collcert.certify.execution import msccl, msccl_sim
from collcert.certify.model import InputError, Verdict
from collcert.reference.execution import msccl_xml


class _Plain(msccl_sim._Run):
    """The loop before the event-driven one: sweep every unfinished threadblock."""

    def run(self) -> bool:
        self.never_released()
        if not self.v.ok:
            return False
        active = [tb for tb in self.prog.tbs if tb.ops]
        while active:
            moved, still = False, []
            for tb in active:
                while tb.pc < len(tb.ops) and self.blocker(tb, tb.ops[tb.pc]) is None:
                    self.execute(tb, tb.ops[tb.pc])
                    moved = True
                if tb.pc < len(tb.ops):
                    still.append(tb)
            active = still
            if not moved and active:
                stuck = "; ".join(self.stuck(tb) for tb in active[:3])
                self.fail(f"deadlock: no step can run; {stuck}"
                          + (f"; and {len(active) - 3} more" if len(active) > 3 else ""))
                break
        for (p, q, ch), left in self.queues.items():
            if left:
                self.fail(f"gpu {p} sends {len(left)} message(s) to gpu {q} on channel {ch} "
                          "that are never received")
        return True


def _outcome(text: str, inplace: bool, plain: bool) -> tuple[object, ...] | None:
    try:
        prog = msccl.read(text)
    except InputError:
        return None
    if prog.refusals:
        return None
    v = Verdict("sim")
    sim = (_Plain if plain else msccl_sim._Run)(prog, inplace, v)
    try:
        if sim.run():
            sim.postcondition()
    except msccl_sim._Stop:
        pass
    return v.ok, v.all_reasons(), sim.traffic, sorted(sim.store.items())


def _mutants(text: str, count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    starts = [m.start() for m in re.finditer(r"<step ", text)]
    out = []
    for _ in range(count):
        t = text
        for _ in range(rng.randint(1, 3)):
            i = rng.choice(starts)
            j = t.index("/>", i)
            attr, val = rng.choice([
                ("depid", str(rng.randint(-1, 3))), ("deps", str(rng.randint(-1, 6))),
                ("hasdep", str(rng.randint(0, 1))), ("srcoff", str(rng.randint(0, 3))),
                ("dstoff", str(rng.randint(0, 3))), ("cnt", str(rng.randint(1, 2))),
                ("type", rng.choice(["s", "r", "cpy", "re", "nop", "rrc", "rcs", "rrs"]))])
            t = t[:i] + re.sub(attr + r'="[^"]*"', f'{attr}="{val}"', t[i:j]) + t[j:]
        out.append(t)
    return out


@pytest.mark.parametrize("collective", ["allgather", "allreduce"])
def test_event_driven_sweep_runs_the_plain_sweeps_interleaving(collective: str) -> None:
    text = msccl_xml(schedule(platforms.dgx_a100(1), collective))
    compared = failing = 0
    for t in [text, *_mutants(text, 150, seed=len(collective))]:
        for inplace in (False, True):
            new = _outcome(t, inplace, plain=False)
            if new is None:
                continue
            assert new == _outcome(t, inplace, plain=True)
            compared += 1
            failing += not new[0]
    assert compared > 100 and failing > 30  # the mutants exercise the failure paths


@pytest.mark.parametrize("deps,hasdep,deadlock", [
    ("-1", "0", True),  # tb 0 never signals: even a wait for step -1 is never released
    ("0", "1", False),  # step 0 signals flag 0: released
    ("1", "1", True),  # only step 0 signals (flag 0 < 1): never released
])
def test_wait_never_released(deps: str, hasdep: str, deadlock: bool) -> None:
    from test_certify_msccl import ring_allgather

    text = ring_allgather(2)
    first = text.index('<step s="0"')
    text = text[:first] + text[first:].replace('hasdep="0"', f'hasdep="{hasdep}"', 1)
    last = text.index('<step s="2"')
    text = text[:last] + text[last:].replace('depid="-1" deps="-1"',
                                             f'depid="0" deps="{deps}"', 1)
    v = msccl_sim.run(msccl.read(text), False).verdict
    assert v.ok != deadlock
    if deadlock:
        assert f"waits for gpu 0 tb 0 step {deps}, which is never signalled" in v.reasons[0]
