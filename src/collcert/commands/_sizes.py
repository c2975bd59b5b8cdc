"""``--sizes``, ``--plot``, ``--alpha``: the α-β view shared by ``optimum`` and ``audit``.

See :mod:`collcert.perftable` (the nccl-tests table) and
:mod:`collcert.reference.execution.alphabeta` (the model). Each command adds the options
with :func:`add_size_arguments` and calls :func:`optimum_view` or
:func:`audit_view` after its own output.
"""

from __future__ import annotations

import argparse
import os
from fractions import Fraction
from typing import Any

from collcert.perftable import DTYPES, SizeError, format_table, parse_sizes, table_rows
from collcert.reference.execution import (
    AlphaBeta,
    Latency,
    bytes_per_unit,
    latency_lower_bound,
    link_alphas,
    msccl_latency,
    mscclpp_latency,
    tree_schedule_latency,
)
from collcert.reference.model import Topology, fraction_str, parse_number, show


def add_size_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "latency-bandwidth view (docs/alpha-beta.md)",
        "time(M) = M / algbw + L: the exact bandwidth term plus a latency term L, the "
        "α of the links on the critical route (tree height, sequential MSCCL steps)")
    g.add_argument("--sizes", metavar="MIN:MAX[:F]",
                   help="print an nccl-tests-style table (size count type redop root time "
                   "algbw busbw) for message sizes MIN, MIN·F, … ≤ MAX, e.g. 1K:8G "
                   "(nccl-tests -b 1K -e 8G -f 2; K, M, G are binary; F defaults to 2), "
                   "or a list 1M,64M")
    g.add_argument("--stepfactor", type=_stepfactor, metavar="F",
                   help="factor between sizes (nccl-tests -f; default 2); shows the table")
    g.add_argument("--alpha", type=_alpha_arg, metavar="US",
                   help="latency α in microseconds of every link whose topology entry has no "
                   "'alpha' of its own (exact: 2, 0.5, 1/3; default 0); shows the table")
    g.add_argument("--dtype", default="float", choices=sorted(DTYPES), metavar="TYPE",
                   help="element type for the count column (default float, 4 bytes)")
    g.add_argument("--plot", metavar="FILE",
                   help="draw algbw against size, log-log, to FILE (.png/.svg/.pdf); "
                   "sizes default to 1K:8G")


def wanted(args: argparse.Namespace) -> bool:
    """Whether to show the α-β view: --sizes or --plot, or an option that only it uses
    (--alpha, --stepfactor: never silently ignored)."""
    return any(getattr(args, k, None) is not None for k in ("sizes", "plot", "alpha",
                                                             "stepfactor"))


def check_unit(args: argparse.Namespace, topo: Topology) -> None:
    """With --sizes/--plot, refuse a topology unit that is not a data rate, sizes that
    cannot be read and a --plot name of the wrong kind before any work (and so before the
    bandwidth result is printed)."""
    if wanted(args):
        bytes_per_unit(topo.unit)
        _sizes(args)
        if args.plot:
            from collcert.drawing import check_output

            check_output(os.fspath(args.plot))


def _alpha_arg(text: str) -> Fraction:
    """argparse ``type=`` of --alpha: checked when the command line is read, so a bad
    value stops the command before any long computation."""
    try:
        return _alpha_value(text)
    except SizeError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--alpha ")) from None


def _alpha_value(text: str | Fraction) -> Fraction:
    try:
        a = parse_number(text)
    except ValueError as exc:
        raise SizeError(f"--alpha {text!r}: {exc} (microseconds)") from None
    if a < 0 or a > 10**9:
        raise SizeError(f"--alpha {text}: a latency in microseconds from 0 to 10^9")
    return a


def _stepfactor(text: str) -> int:
    t = text.strip()
    if not t.isdigit() or len(t) > 7 or not 2 <= int(t) <= 1 << 20:
        raise argparse.ArgumentTypeError(f"{t[:30]!r}: the factor between sizes must be an "
                                         "integer from 2 to 1048576 (nccl-tests -f)")
    return int(t)


def _alpha(args: argparse.Namespace) -> Fraction:
    return Fraction(0) if args.alpha is None else _alpha_value(args.alpha)


def _sizes(args: argparse.Namespace) -> list[int]:
    if args.stepfactor is not None and args.stepfactor < 2:
        raise SizeError(f"--stepfactor {args.stepfactor}: it must be an integer ≥ 2")
    return parse_sizes(args.sizes or "1K:8G", args.stepfactor)


def _alpha_note(topo: Topology, default: Fraction) -> str:
    own = len(topo.alpha)
    total = len(topo.capacity)
    if own == total:
        return "α per link from the topology"
    if own:
        return (f"α from the topology on {own} of {total} links, {fraction_str(default)} µs "
                "(--alpha) on the others")
    if default:
        return f"α = {fraction_str(default)} µs on every link (--alpha)"
    return "α = 0: bandwidth only (give --alpha US or per-link 'alpha' for latency)"


def _latency_line(lat: Latency) -> str:
    if not lat.latency:
        return "0 µs"
    return f"{show(lat.latency)} µs along {lat.hops} links" + (f", {lat.what}" if lat.what
                                                                  else "")


def _emit(args: argparse.Namespace, topo: Topology, collective: str, root: Any,
          model: AlphaBeta | None, bound: AlphaBeta, title: str, label: str,
          comments: list[str]) -> dict[str, Any]:
    sizes = _sizes(args)
    n = topo.num_compute
    root_rank = -1 if root is None else topo.compute_nodes.index(root)
    main = model or bound
    rows = table_rows(collective, n, sizes, args.dtype, root_rank, main,
                      bound if model is not None else None)
    out: dict[str, Any] = {"collective": collective, "ranks": n, "dtype": args.dtype,
                           "alpha_default_us": fraction_str(_alpha(args)),
                           "time_per_unit": fraction_str(main.time_per_unit),
                           "unit_bytes": fraction_str(main.unit_bytes),
                           "latency": main.latency.to_json(),
                           "rows": [r.to_json() for r in rows]}
    if model is not None:
        out["bound"] = {"time_per_unit": fraction_str(bound.time_per_unit),
                        "latency": bound.latency.to_json()}
    if (args.sizes or not args.plot) and not args.json:  # --alpha alone: the default table
        print(format_table(rows, comments, with_bound=model is not None))
    if args.plot:
        from collcert.drawing import Series, plot_algbw

        marks = [r.size for r in rows]
        series = []
        if model is not None:
            series.append(Series(label, model, marks))
        series.append(Series("upper bound: certified bandwidth optimum"
                             + (" + latency bound" if bound.latency.latency else ""),
                             bound, marks, bound=True))
        plot_algbw(args.plot, series, title, note="; ".join(c for c in comments[1:3] if c))
        out["plot"] = os.fspath(args.plot)
        if not args.json:
            print(f"Plot written to {args.plot}.")
    return out


def optimum_view(args: argparse.Namespace, topo: Topology, opt: Any) -> dict[str, Any]:
    """Table / plot of the optimum's bound: time ≥ M·T* + D (T*: certified time per
    unit; allreduce: its proven lower bound; D: the latency lower bound)."""
    default = _alpha(args)
    alpha = link_alphas(topo, default)
    unit_bytes = bytes_per_unit(topo.unit)
    t_star = opt.time_per_unit
    what = "certified optimum"
    if opt.collective == "allreduce":
        t_star = opt.extra.get("lower_bound_time_per_unit", t_star)
        what = "the proven allreduce lower bound, Zhao & Krishnamurthy 2023, App. B"
    if getattr(opt, "fixed_k", None) is not None:
        what = f"best time with k = {opt.fixed_k} trees per node"
    lat = latency_lower_bound(topo, opt.collective, alpha, opt.root)
    bound = AlphaBeta(t_star, lat, unit_bytes)
    name = topo.name or "topology"
    comments = [f"collcert α-β bound: {opt.collective} on {name}, {topo.num_compute} ranks",
                f"time(M) ≥ M / B + D: B = {show(1 / t_star)} {topo.unit} ({what}); "
                f"D = {_latency_line(lat)}",
                _alpha_note(topo, default),
                "algbw and busbw below are upper bounds: no schedule does better"
                + (" that routes data (trees, rings); network coding may: collcert optimum -c "
                   "allreduce gives its cut-set bound" if opt.collective == "allreduce" else "")]
    return _emit(args, topo, opt.collective, opt.root, None, bound,
                 f"{opt.collective} on {name}: best possible algbw", "bound", comments)


def audit_view(args: argparse.Namespace, topo: Topology, report: Any) -> dict[str, Any] | None:
    """Table / plot of an audited schedule: time = M·T + L, beside the bound."""
    if not report.valid or report.time_per_unit is None:
        if not args.json:
            print("No size table: the schedule is INVALID.")
        return None
    default = _alpha(args)
    alpha = link_alphas(topo, default)
    unit_bytes = bytes_per_unit(topo.unit)
    lat, root = schedule_latency(topo, args.schedule, report.format, args.ranks, alpha)
    model = AlphaBeta(report.time_per_unit, lat, unit_bytes)
    t_star = report.lower_bound_time_per_unit if report.collective == "allreduce" else None
    if t_star is None and report.optimum_algbw:
        t_star = 1 / report.optimum_algbw
    lb = latency_lower_bound(topo, report.collective, alpha, root)
    bound = AlphaBeta(t_star if t_star is not None else report.time_per_unit, lb, unit_bytes)
    name = topo.name or "topology"
    sched = os.path.basename(args.schedule)
    comments = [f"collcert α-β model: {report.collective} schedule {sched} ({report.format}) "
                f"on {name}, {topo.num_compute} ranks",
                f"time(M) = M / B + L: B = {show(1 / report.time_per_unit)} {topo.unit} "
                f"(the audited algbw, exact); L = {_latency_line(lat)}",
                _alpha_note(topo, default),
                f"%bound: algbw as a percentage of the best possible at that size (bound: "
                f"{'?' if t_star is None else show(1 / t_star)} {topo.unit}, latency "
                f"{show(lb.latency)} µs)"]
    return _emit(args, topo, report.collective, root, model, bound,
                 f"{report.collective} on {name}: {sched} vs. the bound", f"schedule {sched}",
                 comments)


def schedule_latency(topo: Topology, path: str, fmt: str, ranks: Any,
                     alpha: dict[Any, Fraction]) -> tuple[Latency, Any]:
    """(latency term, root or None) of the schedule file at ``path`` (already audited)."""
    from collcert.certify.model import InputError, read_text
    from collcert.reference.model import ScheduleError

    try:
        text = read_text(path, 512 * 1024 * 1024)  # gzip by its magic bytes, size capped
    except InputError as exc:
        raise ScheduleError(str(exc)) from None
    try:
        if fmt == "mscclpp-json":
            return _mscclpp_latency(topo, text, ranks, alpha)
        if fmt == "msccl-xml":
            from collcert.auditing import rank_nodes
            from collcert.certify.execution import msccl

            prog = msccl.read(text)
            return msccl_latency(topo, prog, rank_nodes(topo, ranks), alpha), None
        from collcert.certify.forestcoll import forestcoll_xml, schedule_json

        data = (schedule_json(text) if fmt == "json"
                else forestcoll_xml(text, node_ids=[str(v) for v in topo.nodes]))
        sched = read_tree_schedule(topo, data)
    except InputError as exc:
        raise ScheduleError(str(exc)) from None
    return tree_schedule_latency(topo, sched.phases, alpha), sched.root


def _mscclpp_latency(topo: Topology, text: str, ranks: Any,
                     alpha: dict[Any, Fraction]) -> tuple[Latency, Any]:
    """The latency term of an MSCCL++ plan (already audited VALID) and its root (broadcast,
    reduce): the longest chain of remote hops (docs/alpha-beta.md)."""
    from collcert.auditing import rank_nodes
    from collcert.certify.execution import mscclpp

    plan = mscclpp.read(text)
    nodes = rank_nodes(topo, ranks)
    root = None if plan.root is None else nodes[plan.root]
    return mscclpp_latency(topo, plan, nodes, alpha), root


def read_tree_schedule(topo: Topology, data: Any) -> Any:
    """A collcert-schedule/1 dict read by ``collcert.certify`` (trees with node paths)."""
    from collcert.certify.forestcoll import read_schedule
    from collcert.certify.model import Topo

    return read_schedule(Topo(topo.to_json()), data)
