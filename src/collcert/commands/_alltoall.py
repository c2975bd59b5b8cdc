"""``collcert optimum -c alltoall``: the maximum concurrent flow, exact, with its proof."""

from __future__ import annotations

import argparse
import time
from types import SimpleNamespace
from typing import Any

from collcert.certify.alltoall import check_alltoall_optimum
from collcert.reference.alltoall import alltoall_optimum
from collcert.reference.model import ScheduleError, fraction_str, show

from . import _sizes, _whatif
from ._common import load_topology, print_json


def run(args: argparse.Namespace) -> int:
    if args.root is not None or args.fixed_k is not None:
        raise ScheduleError("alltoall has no root and no trees: drop --root / --fixed-k")
    topo = load_topology(args.topology)
    _sizes.check_unit(args, topo)

    def solve(t: Any) -> tuple[Any, dict[str, Any]]:
        opt = alltoall_optimum(t, symmetry=False if args.no_symmetry else None)
        cert = opt.certificate()
        verdict = check_alltoall_optimum(t.to_json(), cert)
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


def _view(opt: Any) -> SimpleNamespace:
    """What the α-β view reads of an optimum: the alltoall's certified time per unit."""
    return SimpleNamespace(collective="alltoall", time_per_unit=opt.time_per_unit,
                           root=None, fixed_k=None, extra={})
