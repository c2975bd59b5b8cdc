"""``collcert optimum -c allreduce|alltoall --degrade/--fail``: the rate of the machine
after a fault against the healthy one, the loss in percent (exact) and the cut that
explains it (docs/whatif.md).

Both machines are solved in full and every certificate is checked by
``collcert.certify`` (the commands' own checks), so each figure is as proven as without
the what-if options. Any directed graph is accepted, as these collectives accept it: a
one-direction change may leave a node sending more than it receives.

* allreduce: the figure is the best rate reached by trees (the largest of LP (5), R_LP,
  weighted RS+AG, RS+AG and, where switches add, the in-network schedule, as the
  report's top-level ``algbw``); the cut-set bound C, an upper bound even with
  network coding, is compared too, and its cut S (``B⁺(S) = C``) is the explaining cut.
* alltoall: the maximum concurrent flow's algbw; the cut is the bottleneck cut whose
  bound B⁺(S)/(|S∩V_c|·|V_c∖S|) meets λ, where one is found (else the LP's dual proves it).

A failure that disconnects the machine is an answer, not an error: every rate is 0 and
the set S that no link leaves is the cut.
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction
from typing import Any

from collcert.reference.model import Topology, decimal_str, fraction_str, show

from . import _whatif


def best_tree_rate(report: Any) -> Fraction:
    """The largest allreduce rate reached by trees, the in-network schedule's included
    where switches add (0 when none applies): the report's top-level figure."""
    best = report.best()
    return Fraction(0) if best is None else Fraction(best[1])


def allreduce(args: argparse.Namespace, topo: Topology, solve: Any) -> int:
    """``optimum -c allreduce --degrade/--fail``; ``solve(topology, label)`` gives the
    checked :class:`AllreduceRate` and the names of the checks that ran."""
    started = time.monotonic()
    w = _whatif.apply(args, topo, strict=False)
    healthy, _ = solve(topo, "healthy")
    now = checked = None
    if w.topology is not None:
        now, checked = solve(w.topology, "changed")
    h_best, h_cut = best_tree_rate(healthy), healthy.cut_set.value
    n_best = Fraction(0) if now is None else best_tree_rate(now)
    n_cut = Fraction(0) if now is None else now.cut_set.value
    cut = w.cut if now is None else now.cut_set.cut
    elapsed = time.monotonic() - started
    block = _whatif.report(w, h_best, n_best, cut)
    block["figure"] = "the best allreduce rate reached by trees"
    block["cut_set_bound"] = {"healthy": fraction_str(h_cut), "now": fraction_str(n_cut),
                              "loss_percent": fraction_str(_whatif.loss_percent(h_cut, n_cut))}
    if args.certificate:  # only what 'collcert check ... --degrade/--fail' proves
        cert = None if now is None else {**now.to_json(certificates=True),
                                          "checked_by_certify": checked,
                                          "topology_name": now.topology.name}
        return _whatif.print_certificate(cert, lambda: _print_allreduce(
            w, h_best, n_best, h_cut, n_cut, cut, topo.unit), w)
    if args.json:
        return _whatif.print_json_result(None if now is None else {
            **now.to_json(), "checked_by_certify": checked,
            "topology_name": now.topology.name}, block, elapsed)
    if now is not None:
        print(now.summary())
    _print_allreduce(w, h_best, n_best, h_cut, n_cut, cut, topo.unit)
    print(f"  time: {elapsed:.2f} s (both machines, every certificate checked)")
    return 0


def _print_allreduce(w: Any, h_best: Fraction, n_best: Fraction, h_cut: Fraction,
                     n_cut: Fraction, cut: Any, unit: str) -> None:
    _whatif.print_report(w, h_best, n_best, cut, figure="rate (best by trees)")
    loss = _whatif.loss_percent(h_cut, n_cut)
    print(f"  cut-set bound C: {show(h_cut)} → {show(n_cut)} {unit}, a loss of "
          f"{fraction_str(loss)} % (≈ {decimal_str(loss, 4)} %); the cut S above is C's "
          "witness (B⁺(S) = C)")


def alltoall(args: argparse.Namespace, topo: Topology, solve: Any) -> int:
    """``optimum -c alltoall --degrade/--fail``; ``solve(topology)`` gives the checked
    alltoall optimum and its certificate."""
    started = time.monotonic()
    w = _whatif.apply(args, topo, strict=False)
    healthy, _ = solve(topo)
    now = cert = None
    if w.topology is not None:
        now, cert = solve(w.topology)
    n_algbw = Fraction(0) if now is None else now.algbw
    cut = w.cut if now is None else now.cut
    elapsed = time.monotonic() - started
    block = _whatif.report(w, healthy.algbw, n_algbw, cut)
    block["figure"] = "the alltoall algbw (maximum concurrent flow)"
    if now is not None:
        block["bottleneck"] = now.witness()
    if args.certificate:  # only what 'collcert check ... --degrade/--fail' proves
        full = None if now is None or cert is None else {
            **cert, "topology_name": now.topology.name, "witness": now.witness()}
        return _whatif.print_certificate(full, lambda: _whatif.print_report(
            w, healthy.algbw, n_algbw, cut), w)
    if args.json:
        return _whatif.print_json_result(None if now is None or cert is None else {
            **{k: v for k, v in cert.items()
               if k not in ("lp", "primal", "dual", "flows", "lengths", "automorphisms")},
            "topology_name": now.topology.name}, block, elapsed)
    if now is not None:
        print(f"alltoall on {now.topology.name} ({now.topology.num_compute} compute nodes): "
              f"algbw {show(now.algbw)} {topo.unit}; certificate checked by "
              "collcert.certify.alltoall")
    _whatif.print_report(w, healthy.algbw, n_algbw, cut)
    if now is not None:
        print(f"  bottleneck: {now.witness()}")
    print(f"  time: {elapsed:.2f} s (both machines, both certificates checked)")
    return 0
