"""Holes the red team found in the day's new features (issues 29, 30, 32), each pinned by
the smallest input that showed it: the command-line path it broke, and what it does now."""

from __future__ import annotations

from pathlib import Path

from collcert.certify.execution import mscclpp
from collcert.smoke import load_plan
from collcert.smoke.mscclppplan import _orders

DATA = Path(__file__).resolve().parent / "data" / "mscclpp"


def test_smoke_seed_draws_the_mscclpp_thread_orders() -> None:
    """`collcert smoke PLAN --seed S` used seed 0 for an MSCCL++ plan's random thread
    orders whatever S was: the seed now reaches them, and the note names it."""
    text = (DATA / "allgather_2gpu.json").read_text()
    pp = mscclpp.read(text)
    a = [order for name, order in _orders(pp, 8, 1) if name.startswith("random")]
    b = [order for name, order in _orders(pp, 8, 2) if name.startswith("random")]
    assert len(a) == 4 and a != b
    plan = load_plan(text, "mscclpp-json", seed=12345)[0]
    assert any("seed 12345" in note for note in plan.notes), plan.notes
