"""``collcert schedule -c allreduce --format mscclpp-json`` on a machine where one
NVLink switch that adds joins every GPU: the MSCCL++ plan that adds in the switch
(NVLS: multimem load-reduce and store; :mod:`collcert.reference.execution.mscclpp_nvls`,
docs/mscclpp.md "Export: adding in the switch").

``--method in-network`` asks for it (the model ``collcert optimum`` names
``[in-network: …]``); without ``--method`` it is written instead of ForestColl's trees
when it is faster (dgx_h100:1: 400 against 1800/7), with a note, as the default export
is the fastest program the runtime runs. It is checked against the ``mscclpp`` runtime
profile before it is written, and ``--check`` audits it (VALID, at the rate stated).
"""

from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from collcert.reference.model import ScheduleError, fraction_str, show

from . import _runtime, _whatif
from ._common import print_json, write_output

if TYPE_CHECKING:
    from collcert.reference.forestcoll import Schedule
    from collcert.reference.model import Topology

METHOD = "in-network"


def default_applies(args: argparse.Namespace, s: Schedule) -> bool:
    """Without ``--method``: whether the NVLS plan replaces ForestColl's export (an
    allreduce plan over memory channels, no option that shapes the trees, and faster)."""
    from collcert.reference.execution import nvls_rate, nvls_switch

    if (getattr(args, "method_given", True) or args.format != "mscclpp-json"
            or args.collective != "allreduce" or args.fixed_k is not None or args.weights
            or args.routes != "auto" or args.mscclpp_channel != "memory"
            or _whatif.wanted(args) or args.symmetric):
        return False
    w = nvls_switch(s.topology)
    return w is not None and nvls_rate(s.topology, w) > s.algbw


def run(args: argparse.Namespace, topo: Topology, instead: Schedule | None = None) -> int:
    """Write the NVLS plan (``instead``: the ForestColl schedule it replaces)."""
    from collcert.reference.execution import nvls_mscclpp_json, nvls_rate, nvls_switch

    _refuse_options(args)
    started = time.monotonic()
    w = nvls_switch(topo)
    text = nvls_mscclpp_json(topo, inplace=args.in_place)  # ScheduleError: why there is none
    assert w is not None
    rate = nvls_rate(topo, w)
    loads = _runtime.judge(text, "mscclpp-json", args.runtime or "mscclpp")
    if loads is not None and not loads.ok:
        raise RuntimeError(f"internal: the MSCCL++ executor would refuse the NVLS plan: "
                           f"{loads.message}")
    checked = _check(topo, text, rate) if args.check else None
    if args.output:
        write_output(args.output, text, dash_is_stdout=True)
    best = _in_network(topo)
    out = sys.stderr if args.output == "-" else sys.stdout
    if instead is not None:
        print(f"note: the MSCCL++ plan that adds in {w} (NVLS) runs at {show(rate)} "
              f"{topo.unit}, ForestColl's trees (switches forward) at {show(instead.algbw)}: "
              "the NVLS plan is written; --method forestcoll writes the trees", file=sys.stderr)
    summary = _summary(topo, w, rate, best, instead, checked, args,
                       time.monotonic() - started)
    if args.json:
        print_json(summary, out)
    else:
        _print_text(topo, w, rate, best, instead, checked, args, out)
    return 0


def _refuse_options(args: argparse.Namespace) -> None:
    """What the NVLS plan cannot honour is refused (exit 2), never ignored."""
    if args.format != "mscclpp-json":
        raise ScheduleError(f"--method {METHOD} writes an MSCCL++ plan with switch (NVLS) "
                            f"channels: add --format mscclpp-json (not {args.format})")
    if args.collective != "allreduce":
        raise ScheduleError(f"--method {METHOD} is for allreduce: switches that add change no "
                            f"other optimum (docs/in-network.md), so -c {args.collective} keeps "
                            "ForestColl's trees: drop --method")
    given = [flag for flag, on in (("--fixed-k", args.fixed_k is not None),
                                   ("--weights", bool(args.weights)),
                                   ("--routes", args.routes != "auto"),
                                   ("--mscclpp-channel port", args.mscclpp_channel == "port"),
                                   ("--symmetric", args.symmetric),
                                   ("--degrade/--fail", _whatif.wanted(args))) if on]
    if given:
        raise ScheduleError(f"--method {METHOD} writes one plan (multimem ops through the switch, "
                            f"memory channels for the handshakes): {', '.join(given)} does not "
                            "apply to it; drop it")


def _check(topo: Topology, text: str, rate: Fraction) -> dict[str, Any]:
    """--check: the audit (collcert.certify's simulator, the switch's links) must find the
    plan VALID at ``rate``; else exit 3."""
    from collcert.auditing import audit

    report = audit(topo, text, "mscclpp-json")
    if not report.valid or report.algbw != rate:
        raise RuntimeError("internal: the NVLS plan does not audit as written: "
                           + "; ".join(report.reasons[:3] or [f"algbw {report.algbw}"]))
    return {"verdict": "VALID", "algbw": fraction_str(report.algbw)}


def _in_network(topo: Topology) -> Any:
    """The in-network optimum (certified), or None when it cannot be had here."""
    from collcert.certify.innetwork import check_in_network
    from collcert.reference.innetwork import in_network_rate
    from collcert.reference.model import CollcertError

    try:
        r = in_network_rate(topo)
    except CollcertError:
        return None
    if r is None or not check_in_network(topo.to_json(), r.certificate()).ok:
        return None
    return r


def _summary(topo: Topology, w: Any, rate: Fraction, best: Any, instead: Schedule | None,
             checked: dict[str, Any] | None, args: argparse.Namespace,
             elapsed: float) -> dict[str, Any]:
    n = topo.num_compute
    return {"collective": "allreduce", "method": METHOD, "topology": topo.content_hash(),
            "topology_name": topo.name, "unit": topo.unit, "switch": str(w),
            "algbw": fraction_str(rate), "time_per_unit": fraction_str(1 / rate),
            "link_share_each_way": fraction_str(Fraction(n + 1, n)),
            "in_network_optimum": None if best is None else best.to_json(),
            "ratio_to_in_network": None if best is None or not best.exact else
            fraction_str(rate / best.lower),
            "forestcoll_algbw": None if instead is None else fraction_str(instead.algbw),
            "inplace": bool(args.in_place), "output": args.output, "format": "mscclpp-json",
            "check": checked, "seconds": round(elapsed, 3)}


def _print_text(topo: Topology, w: Any, rate: Fraction, best: Any, instead: Schedule | None,
                checked: dict[str, Any] | None, args: argparse.Namespace, out: Any) -> None:
    n = topo.num_compute
    head = (f"allreduce on {topo.name or 'the topology'} ({n} compute nodes): MSCCL++ plan "
            f"that adds in switch {w} (NVLS: multimem load-reduce, then store), algbw "
            f"{show(rate)} {topo.unit}, time per unit {show(1 / rate)}; every GPU link carries "
            f"{fraction_str(Fraction(n + 1, n))} of M each way")
    lines = [head]
    if best is not None and best.exact and rate == best.lower:
        lines.append(f"  the in-network optimum {show(best.lower)} [{best.model}]: reached (a "
                     "multimem load-reduce returns the sum to the GPU that issued it, which "
                     "stores it back through the switch; no schedule does better there, "
                     "docs/in-network.md)")
    elif best is not None and best.exact:
        lines.append(f"  {fraction_str(rate / best.lower)} of the in-network optimum "
                     f"{show(best.lower)} [{best.model}]: that optimum adds in the switch and "
                     "multicasts the sum from it; a multimem load-reduce returns the sum to the "
                     "GPU that issued it, which stores it back through the switch "
                     "(docs/mscclpp.md)")
    if instead is not None:
        lines.append(f"  ForestColl's trees (switches forward) reach {show(instead.algbw)}; "
                     "--method forestcoll writes them")
    if checked is not None:
        lines.append(f"  checked: the audit finds it VALID at algbw {checked['algbw']}")
    if args.output and args.output != "-":
        lines.append(f"Schedule written to {args.output} (mscclpp-json).")
    print("\n".join(lines), file=out)
