"""``collcert measured TOPOLOGY LOG…``: nccl-tests results beside the certified optimum of
the machine they ran on (docs/measured.md).

Exit 0: read and compared; 1: the data was corrupted (``#wrong`` not 0) or a measured
rate beats the certified optimum (the model is not the machine); 2: bad input (a log
line that is not nccl-tests output, ranks that do not match the topology)."""

from __future__ import annotations

import argparse
import os
from fractions import Fraction
from typing import Any

from ._common import (
    add_json_option,
    add_progress_option,
    add_topology_argument,
    load_topology,
    print_json,
    read_ranks,
    stage_lines,
)

COLLECTIVES = ("allreduce", "allgather", "reduce-scatter", "broadcast", "reduce", "alltoall",
               "sendrecv")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "measured",
        help="nccl-tests results beside the certified optimum and NCCL's algorithms",
        description="Read nccl-tests output (all_reduce_perf, all_gather_perf, ...: every "
        "column set, launcher tags, NCCL INFO lines) and set each run beside the topology's "
        "certified optimum and NCCL's ring and tree on the α-β model: per size the measured "
        "algbw and busbw, the fraction of the optimum, where bandwidth dominates. Exit 1 when "
        "the data was corrupted (#wrong) or a rate beats the optimum (the model is not the "
        "machine); far below it, which single what-if change would explain the gap (a hint). "
        "docs/measured.md.")
    add_topology_argument(p, optional=False)
    p.add_argument("logs", nargs="+", metavar="LOG", help="nccl-tests output files")
    p.add_argument("-c", "--collective", choices=COLLECTIVES,
                   help="the test, when the log does not say (nccl-tests 2.17+ prints it)")
    p.add_argument("--ranks", metavar="FILE",
                   help="the compute node of each rank, one per line (rank 0 first) or a JSON "
                   "array; fewer than the topology's: the others are left out (--fail)")
    p.add_argument("--run", type=int, metavar="N",
                   help="only the N-th run (1 = the first, counting every LOG in order)")
    p.add_argument("--in-place", action="store_true",
                   help="compare the in-place columns (default: out-of-place)")
    p.add_argument("--alpha", metavar="US",
                   help="latency α in µs of every link without its own 'alpha' (exact; "
                   "default 0: bandwidth only)")
    p.add_argument("--baselines", metavar="LIST",
                   help="baselines to draw beside the optimum (default: NCCL's, every "
                   "'nccl-…' of the registry; 'all'; 'none')")
    p.add_argument("--no-hint", action="store_true",
                   help="skip the what-if hints for a plateau far below the optimum")
    p.add_argument("--plot", metavar="FILE", help="draw measured algbw, the optimum and the "
                   "baselines against size, log-log (.png/.svg/.pdf)")
    p.add_argument("--busbw", action="store_true", help="plot busbw instead of algbw")
    add_json_option(p, '; exact figures as "p/q" strings')
    add_progress_option(p, "say what is being computed")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from collcert.importers import read_nccl_tests
    from collcert.measured import measure

    from . import _sizes

    alpha = _sizes._alpha_value(args.alpha) if args.alpha is not None else Fraction(0)
    baselines = _baselines(args.baselines)
    if args.plot:
        from collcert.drawing import check_output

        check_output(os.fspath(args.plot))
    if args.run is not None and args.run < 1:
        from collcert.reference.model import CollcertError

        raise CollcertError(f"--run {args.run}: runs are counted from 1")
    ranks = read_ranks(args.ranks) if args.ranks else None
    logs = [read_nccl_tests(path) for path in args.logs]
    runs = _pick([r for log in logs for r in log.runs], args.run)
    _log_notes(logs)
    topo = load_topology(args.topology)
    _announce(args, topo, runs)
    progress = stage_lines(args)
    models: dict[Any, Any] = {}  # runs of one test and sizes share the optimum's work
    results = [measure(topo, r, collective=args.collective, ranks=ranks,
                       in_place=args.in_place, alpha=alpha, baselines=baselines,
                       hint=not args.no_hint, progress=progress, models=models) for r in runs]
    if args.plot:
        _plot(args.plot, results, args.busbw)
    if args.json:
        print_json({"runs": [m.to_json() for m in results],
                    "exit_code": max(m.exit_code for m in results)})
    else:
        from ._measured_text import report

        for i, m in enumerate(results):
            if i:
                print()
            print("\n".join(report(m)))
        if args.plot:
            print(f"Plot written to {args.plot}.")
    return max(m.exit_code for m in results)


def _log_notes(logs: list[Any]) -> None:
    """What the reader passed over that a reader of the report should know: runs that
    stopped before their table, NCCL's warnings."""
    import sys

    for log in logs:
        for text in log.dropped:
            print(f"note: {text}", file=sys.stderr)
        if log.warnings:
            more = f" ({len(log.warnings)} shown of the first)" if len(log.warnings) > 1 else ""
            print(f"note: {log.source}: NCCL warned{more}: {log.warnings[0]}", file=sys.stderr)


ROW_SECONDS = 0.001  # a table row's α-β figures and checks: 7.1 s for 7,600 rows (load 4)


def _announce(args: argparse.Namespace, topo: Any, runs: list[Any]) -> None:
    """The comparison's estimated cost on stderr before any work (as ``collcert compare``
    says it): always with --progress, else from 10 s on."""
    import sys

    from collcert.certify.model import human_bytes

    from ._common import duration_text
    from .compare import ESTIMATE_SHOWN_FROM, compare_estimate

    # one comparison per test and set of sizes (runs that share them share it: measure's
    # models), and about a millisecond per table row (its α-β figures and checks)
    kinds = {("allreduce" if r.test == "all_reduce" or args.collective == "allreduce"
              else "allgather", tuple(sorted({row.size for row in r.rows}))) for r in runs}
    rows = sum(len(r.rows) for r in runs)
    seconds = sum(compare_estimate(topo, c)[0] for c, _ in kinds) + rows * ROW_SECONDS
    memory = max(compare_estimate(topo, c)[1] for c, _ in kinds)
    if args.progress or seconds >= ESTIMATE_SHOWN_FROM:
        what = "the optimum and the baselines" + (
            f" ({len(kinds)} comparisons, one per test and set of sizes of the "
            f"{len(runs)} runs)" if len(kinds) > 1 else "") + f", {rows} rows"
        print(f"measured: {topo.num_compute} GPUs, {len(topo.capacity)} links: {what}, "
              f"estimated {duration_text(seconds)} of CPU and "
              f"{human_bytes(int(memory))} of memory (as collcert compare; docs/limits.md)",
              file=sys.stderr, flush=True)


def _baselines(text: str | None) -> tuple[str, ...] | None:
    from collcert.reference.baselines import BASELINES
    from collcert.reference.model import CollcertError

    if text is None:
        return None
    if text.strip() == "all":
        return tuple(BASELINES)
    if text.strip() == "none":
        return ()
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in BASELINES]
    if unknown or not names:
        raise CollcertError(f"--baselines {text[:60]!r}: unknown {', '.join(unknown) or '(none)'}; "
                            f"choose from {', '.join(BASELINES)}, or all, none")
    return names


def _pick(runs: list[Any], n: int | None) -> list[Any]:
    if n is None:
        return runs
    if n > len(runs):
        from collcert.reference.model import CollcertError

        raise CollcertError(f"--run {n}: the logs hold {len(runs)} run"
                            f"{'' if len(runs) == 1 else 's'}")
    return [runs[n - 1]]


def _plot(path: str, results: list[Any], busbw: bool) -> None:
    from collcert.drawing import MeasuredLine, ModelLine, plot_measured
    from collcert.perftable import busbw_factor

    measured: list[Any] = []
    models: list[Any] = []
    titles: list[str] = []
    for m in results:
        for s in m.series:
            tag = f"{m.test}_perf {s.dtype}" + (f" root {s.root}" if s.root is not None
                                                and s.root >= 0 else "")
            key = "busbw" if busbw else "algbw"
            ceiling = s.model.ceiling if s.model is not None else None
            above = [(r.size, r.busbw if busbw else r.algbw) for r in s.rows
                     if ceiling is not None and r.algbw > ceiling]
            measured.append(MeasuredLine(f"measured {key} ({m.place}): {tag}, "
                                         f"{os.path.basename(m.source)} line {m.first_line}",
                                         [(r.size, r.busbw if busbw else r.algbw)
                                          for r in s.rows], above))
            if s.model is not None and not models:
                f = busbw_factor(m.collective, m.ranks) if busbw else Fraction(1)
                for c in s.model.curves:
                    models.append(ModelLine(c.label + (" (model)" if c.kind != "bound" else ""),
                                            lambda x, c=c, f=f: c.algbw_at(x) * f,
                                            c.algbw * f, bound=c.kind == "bound"))
            titles.append(f"{m.test}_perf, {m.ranks} ranks on {m.topology}")
    note = ("collcert measured: measured figures as nccl-tests printed them; the optimum "
            "(certified) and the baselines on the α-β model, time(M) = M / algbw + L "
            f"(α = {float(results[0].alpha):g} µs per link); docs/measured.md")
    plot_measured(path, measured, models, "; ".join(dict.fromkeys(titles)),
                  f"{'busbw' if busbw else 'algbw'} (GB/s)", note)
