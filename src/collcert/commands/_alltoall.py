"""``collcert optimum -c alltoall``: the maximum concurrent flow, exact, with its proof."""

from __future__ import annotations

import argparse
import sys
import time
from types import SimpleNamespace
from typing import Any

from collcert.certify.alltoall import check_alltoall_optimum
from collcert.reference.alltoall import alltoall_optimum
from collcert.reference.model import ScheduleError, fraction_str, show

from . import _sizes, _whatif
from ._common import duration_text, load_topology, print_json

ESTIMATE_SHOWN_FROM = 10.0
"""Predicted seconds of the LP from which its size and estimate are shown before the
solve, and its stages after (always with --progress)."""


def run(args: argparse.Namespace) -> int:
    if args.root is not None or args.fixed_k is not None:
        raise ScheduleError("alltoall has no root and no trees: drop --root / --fixed-k")
    topo = load_topology(args.topology)
    _sizes.check_unit(args, topo)

    def solve(t: Any) -> tuple[Any, dict[str, Any]]:
        stages = _Stages(t.name or "the topology", bool(getattr(args, "progress", False)))
        opt = alltoall_optimum(t, symmetry=False if args.no_symmetry else None,
                               notice=stages.notice)
        cert = opt.certificate()
        stages.checking()
        verdict = check_alltoall_optimum(t.to_json(), cert)
        stages.done()
        if not verdict.ok:  # the independent checker must agree before anything is reported
            raise RuntimeError("the alltoall certificate did not check: "
                               + "; ".join(verdict.all_reasons()[:3]))
        return opt, cert

    if _whatif.wanted(args):  # the machine after --degrade/--fail against the healthy one
        from . import _whatif_rates

        if _sizes.wanted(args):
            raise ScheduleError("--degrade/--fail with -c alltoall compare the changed "
                                "machine's algbw with the healthy one; drop --sizes, --plot "
                                "and --alpha, or the what-if options")
        return _whatif_rates.alltoall(args, topo, solve)
    started = time.monotonic()
    opt, cert = solve(topo)
    elapsed = time.monotonic() - started
    if args.json or args.certificate:
        out = cert if args.certificate else {
            k: v for k, v in cert.items()
            if k not in ("lp", "primal", "dual", "flows", "lengths", "automorphisms")}
        out["topology_name"] = topo.name
        out["witness"] = opt.witness()
        out["seconds"] = round(elapsed, 3)  # wall time: informative, not a result
        if _sizes.wanted(args):
            out["sizes"] = _sizes.optimum_view(args, topo, _view(opt))
        print_json(out)
    else:
        unit = topo.unit
        print(f"alltoall on {topo.name or 'the topology'} ({topo.num_compute} compute nodes)")
        print(f"  algbw          = {show(opt.algbw)} {unit}  (M = each node's send buffer)")
        print(f"  time per unit  = {show(opt.time_per_unit)} ({unit})^-1")
        print(f"  λ (per pair)   = {fraction_str(opt.lam)} {unit}: every ordered pair at once "
              "(maximum concurrent flow)")
        print(f"  proof          : {opt.witness()}")
        lp = f"{opt.result.stats.get('rows')} rows × {opt.result.stats.get('columns')} columns"
        if opt.sym is not None:
            orb = opt.sym.orbits
            print(f"  LP             : {lp}, one commodity per orbit ({len(orb.reps)} orbit(s) of "
                  f"compute nodes under {len(opt.sym.gens)} automorphisms), solved exactly; "
                  "flows and link lengths checked by collcert.certify.alltoall")
        else:
            print(f"  LP             : {lp}, solved exactly, certificate checked by "
                  "collcert.certify.alltoall")
        print(f"  time: {elapsed:.2f} s")
        if _sizes.wanted(args):  # --sizes, --plot: never silently ignored
            _sizes.optimum_view(args, topo, _view(opt))
    return 0


class _Stages:
    """``alltoall: ...`` lines on stderr: the LP and its estimate before a long solve
    (issue: torus:20x20 --fail 0.0 ran 5 min silently), then its stages and times."""

    def __init__(self, name: str, progress: bool) -> None:
        self.name, self.progress, self.shown = name, progress, False
        self.since = time.monotonic()

    def notice(self, what: str, seconds: float) -> None:
        self.shown = self.progress or seconds >= ESTIMATE_SHOWN_FROM
        self.since = time.monotonic()
        if self.shown:
            print(f"alltoall on {self.name}: solving {what} exactly: estimated "
                  f"{duration_text(seconds)} (fitted on tori, the hardest family measured; "
                  "docs/limits.md) ...", file=sys.stderr, flush=True)

    def checking(self) -> None:
        if self.shown:
            print(f"alltoall on {self.name}: LP solved in {time.monotonic() - self.since:.1f} s;"
                  " checking the certificate (collcert.certify.alltoall) ...",
                  file=sys.stderr, flush=True)
        self.since = time.monotonic()

    def done(self) -> None:
        if self.shown:
            print(f"alltoall on {self.name}: certificate checked in "
                  f"{time.monotonic() - self.since:.1f} s", file=sys.stderr, flush=True)


def _view(opt: Any) -> SimpleNamespace:
    """What the α-β view reads of an optimum: the alltoall's certified time per unit."""
    return SimpleNamespace(collective="alltoall", time_per_unit=opt.time_per_unit,
                           root=None, fixed_k=None, extra={})
