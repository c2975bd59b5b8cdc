"""``collcert schedule``: build a bandwidth-optimal tree schedule and write it."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, TextIO

from collcert.reference.forestcoll import (
    COLLECTIVES,
    Schedule,
    SymmetryFailed,
    peak_memory_mb,
    render,
    schedule,
    write_schedule,
)
from collcert.reference.model import ScheduleError, TopologyError, fraction_str

from . import _near, _runtime, _whatif, _whatif_machine
from ._common import (
    Progress,
    add_progress_option,
    add_topology_argument,
    announce_estimates,
    load_topology,
    print_json,
    write_output,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "schedule",
        help="build an optimal tree schedule (ForestColl) and write it as JSON or XML",
        description="Build a bandwidth-optimal pipeline schedule of spanning trees for a "
        "collective (Zhao & Krishnamurthy 2023, §2, Zhao et al. 2026, §5): compute the certified optimum, remove the "
        "switches by edge splitting, pack the trees in batches and map every tree edge back "
        "to its path through the switches. The schedule reaches the optimum exactly (or the "
        "best time for --fixed-k) and carries certificates that 'collcert audit' checks. "
        "Output format: docs/schedule-format.md (collcert-schedule/1) or the ForestColl "
        "tree XML. A summary paragraph is printed at the end.",
        epilog="Examples: collcert schedule dgx_a100:2 -o ag.json; "
        "collcert schedule mi250:2 --fixed-k 3 --format forestcoll-xml -o ag.xml; "
        "collcert schedule topo.json -c broadcast --root gpu0 -o bc.json",
    )
    add_topology_argument(p)
    p.add_argument("--collective", "-c", default="allgather", choices=(*COLLECTIVES, "alltoall"),
                   help="collective to schedule (default: allgather); allreduce is a "
                   "reduce-scatter phase followed by an allgather phase")
    p.add_argument("--root", help="root compute node (broadcast, reduce)")
    p.add_argument("--fixed-k", type=int, metavar="K",
                   help="use exactly K trees per compute node: the best schedule with K trees "
                   "(Zhao & Krishnamurthy 2023, §2.4) instead of the optimal k")
    p.add_argument("--weights", metavar="W1,W2,...",
                   help="non-uniform allgather/reduce-scatter: relative shard size of each "
                   "compute node, in compute-node order (e.g. 1,2,1,2)")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="write the schedule here ('-' for stdout); without it only the "
                   "summary is printed")
    p.add_argument("--format", default="json", choices=("json", "forestcoll-xml", "msccl-xml",
                                                          "mscclpp-json"),
                   help="file format (default: json, collcert-schedule/1); msccl-xml: an MSCCL "
                   "algorithm program for the MSCCL runtime (allgather, reduce-scatter, "
                   "allreduce), correct for in-place and out-of-place calls (docs/smoke.md); "
                   "with --method lp, nchunksperloop is what the exact shares need (exit 2 "
                   "where that exceeds the executor: never rounded); mscclpp-json: an MSCCL++ "
                   "execution plan (allgather, reduce-scatter, allreduce, broadcast, reduce; "
                   "docs/mscclpp.md)")
    p.add_argument("--routes", default="auto", choices=("auto", "forestcoll", "any", "runtime"),
                   help="auto (default): ForestColl's trees, except for an msccl-xml or "
                   "mscclpp-json program of allgather, reduce-scatter or allreduce that would "
                   "run slower than the certified optimum under the runtime's routes (a runtime "
                   "sends a linked GPU pair's data over its direct link): then the runtime-routes "
                   "schedule is written, and a note says so; forestcoll (or any): ForestColl's "
                   "trees, whose paths may send a pair's data through switches; runtime: every "
                   "ordered GPU pair uses only the route an "
                   "MSCCL-style runtime gives it (the direct link where there is one, else "
                   "through switches), at the certified optimum under that constraint, "
                   "printed beside ForestColl's (allgather, reduce-scatter, allreduce as reduce-scatter "
                   "then allgather; json, msccl-xml or mscclpp-json; --progress shows the "
                   "rounds of cut generation; docs/schedules.md)")
    p.add_argument("--strict", action="store_true",
                   help="msccl-xml, mscclpp-json: refuse (exit 1, nothing written) an export "
                   "that would run "
                   "slower than the schedule; without it the export is written with a warning "
                   "that names the exported rate and the GPU pair and link responsible "
                   "(a runtime sends all of a linked pair's traffic over the direct link)")
    p.add_argument("--msccl-channels", type=int, metavar="C",
                   help="msccl-xml: spread the trees over C channels (default: the fewest that "
                   "keep every threadblock within the runtime's 64 steps)")
    p.add_argument("--in-place", action="store_true",
                   help="mscclpp-json: a plan for in-place calls (the input inside the output, "
                   "as the executor's callers pass it); msccl-xml --runtime microsoft-msccl: "
                   "a program for in-place calls (that runtime selects a program for one kind "
                   "of call only); default: out-of-place")
    _runtime.add_argument(p, audit=False)
    p.add_argument("--mscclpp-channel", choices=("memory", "port"), default=None,
                   help="mscclpp-json: memory channels (GPUs that share memory, CUDA IPC; the "
                   "default) or port channels (through the proxy: any GPUs, InfiniBand between "
                   "machines)")
    p.add_argument("--no-certificates", action="store_true",
                   help="leave out the G*, routing and flow certificates (smaller file)")
    p.add_argument("--no-multicast", action="store_true",
                   help="do not post-process for multicast-capable switches (Zhao et al. 2026, §5.6)")
    p.add_argument("--json", action="store_true",
                   help="print the summary as one JSON object (exact numbers as \"p/q\")")
    p.add_argument("--engine", default="auto", choices=("auto", "ortools", "exact"),
                   help="max-flow engine (default: ortools when capacities fit in int64)")
    add_progress_option(p, "show the progress bar")
    p.add_argument("--check", action="store_true",
                   help="check the schedule with the independent checkers of collcert.certify "
                   "before writing it (exit 3 if they reject it); --json reports the time")
    p.add_argument("--expanded", action="store_true",
                   help="write every tree edge as {src, dst, path} instead of the compact walk "
                   "table (docs/schedule-format.md; for readers of the older form)")
    p.add_argument("--method", default=None,
                   choices=("forestcoll", "lp", "rsag-weighted", "in-network"),
                   help="forestcoll (default): ForestColl's trees (allreduce: reduce-scatter, "
                   "then allgather); lp: allreduce only, reduce and broadcast trees from the "
                   "exact optimum of ForestColl's allreduce LP (5), run at the same time "
                   "(docs/allreduce.md); json or msccl-xml; rsag-weighted: allreduce only, "
                   "reduce-scatter then allgather with the best unequal shards (json); "
                   "in-network: allreduce only, --format mscclpp-json: the plan that adds in "
                   "the NVLink switch joining every GPU (NVLS multimem load-reduce and store; "
                   "docs/mscclpp.md), which the default writes instead of ForestColl's trees "
                   "where it is faster (dgx_h100:1)")
    p.add_argument("--symmetric", action="store_true",
                   help="json: write a symmetric file: the trees of one root per orbit of the "
                   "machine's box symmetry and the verified generator whose images give "
                   "every other root's trees, never written out (docs/schedules.md); "
                   "'collcert check' and 'collcert audit' check it by orbits. Written "
                   "anyway, with a note, when the full file would hold more tree edges than "
                   "collcert audits (dgx_a100:1024 and up). Needs a schedule built by orbits "
                   "(allgather, reduce-scatter, allreduce on a machine of identical boxes)")
    p.add_argument("--no-symmetry", action="store_true",
                   help="do not build by orbits of the topology's box symmetry (the general "
                   "algorithms of Zhao & Krishnamurthy 2023 only; slower on large machines, same optimum)")
    _whatif.add_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    args.method_given = args.method is not None  # without it, NVLS may replace the trees
    args.method = args.method or "forestcoll"
    if args.strict and args.format not in ("msccl-xml", "mscclpp-json"):  # never ignored
        raise TopologyError(f"--strict refuses a runtime program slower than its schedule; it "
                            f"applies to --format msccl-xml and mscclpp-json, not {args.format}")
    _check_export_options(args)
    if _whatif.wanted(args) and args.method in ("lp", "rsag-weighted"):  # never ignored
        raise ScheduleError(f"--degrade/--fail build on the changed machine with the default "
                            f"--method, not with --method {args.method}; drop one of them "
                            "(collcert optimum -c allreduce --degrade/--fail compares every "
                            "allreduce rate)")
    if args.symmetric and (_whatif.wanted(args) or args.no_symmetry):  # before any work
        raise ScheduleError(
            "--symmetric writes the trees of one root per orbit of the machine's own box "
            "symmetry; " + ("with --no-symmetry there is none" if args.no_symmetry else
                            "a machine changed by --degrade/--fail lacks it (its schedule is "
                            "borrowed from a symmetrized machine, docs/whatif.md)")
            + ", so the schedule is written in full: drop --symmetric")
    if args.method == "lp":  # allreduce from LP (5): collcert/commands/_allreduce_lp.py
        from . import _allreduce_lp

        return _allreduce_lp.run(args)
    if args.method == "rsag-weighted":  # collcert/commands/_allreduce.py
        from . import _allreduce

        return _allreduce.run_schedule(args)
    if args.method == "in-network":  # the NVLS plan: collcert/commands/_nvls.py
        from . import _nvls

        return _nvls.run(args, load_topology(args.topology))
    topo = load_topology(args.topology)
    healthy, sym = None, None
    if _whatif.wanted(args):  # the machine after --degrade/--fail (docs/whatif.md)
        healthy, topo = topo, _whatif.schedule_topology(args, topo)
    elif args.routes != "runtime" and _near.wanted(args, topo):  # a changed copy, from the file
        sym, healthy = _near.healthy_for(args, topo)
    _near.refuse_symmetric_early(args, topo)  # before any work where it cannot hold
    if args.routes == "runtime":
        from . import _runtime_routes

        return _runtime_routes.run(args, topo, _StageBars(args.progress),
                                   _estimate_notice(args)) or 0
    if args.collective == "alltoall":
        return _alltoall(args, topo)
    weights = None
    if args.weights:
        weights = [w.strip() for w in args.weights.split(",")]
    if args.fixed_k is not None and args.fixed_k < 1:
        raise ScheduleError(f"--fixed-k must be a positive integer, got {args.fixed_k}")
    progress = _StageBars(args.progress)
    started = time.monotonic()
    try:
        s = schedule(topo, args.collective, root=args.root, fixed_k=args.fixed_k,
                     weights=weights, multicast=not args.no_multicast, engine=args.engine,
                     progress=progress, symmetry=False if args.no_symmetry else sym,
                     healthy=healthy, estimate=_estimate_notice(args),
                     orbits_only=args.symmetric)
    except SymmetryFailed as exc:  # --symmetric: refused before the general algorithms
        raise ScheduleError(_near.stuck_message(exc, time.monotonic() - started)) from None
    if _whatif.wanted(args):  # draw/smoke judge the file on the machine it was built for
        s.extra[_whatif_machine.KEY] = _whatif_machine.record(args)
    stages = [{"stage": k, "seconds": round(v, 3),
               "peak_memory_mb": round(s.memory.get(k, 0.0), 1)} for k, v in s.timings.items()]
    args.symmetric_file = _symmetric_file(s, args)
    if args.check:
        _check(s, args, stages, progress)
    from . import _nvls

    if _nvls.default_applies(args, s):  # one NVLink switch that adds: its plan is faster
        return _nvls.run(args, topo, instead=s)
    slower = _slower_than_runtime_routes(s, args)
    if slower is not None:  # --routes auto: the runtime-routes program, when it is faster
        from . import _runtime_routes

        done = _runtime_routes.run(args, topo, None, None, instead=slower)
        if done is not None:
            return done
    try:
        with announce_estimates("schedule", args.progress):  # a long export says so first
            _write(s, args, stages, progress)
    except _slow_export() as exc:
        print(f"collcert schedule: refused (--strict): {exc}", file=sys.stderr)
        return 1
    elapsed = time.monotonic() - started
    out = sys.stderr if args.output == "-" else sys.stdout
    if args.json:
        print_json(_summary(s, args, stages, elapsed), out)
    else:
        _print_text(s, args, stages, out)
    return 0


def _slower_than_runtime_routes(s: Schedule, args: argparse.Namespace) -> Any:
    """--routes auto: the export's rate when a program of ``s`` for a runtime would run
    slower than ``s`` (a linked pair's data on its direct link, docs/schedules.md), and the
    runtime-routes schedule may do better; None otherwise."""
    if (args.routes != "auto" or args.format not in ("msccl-xml", "mscclpp-json")
            or args.collective not in ("allgather", "reduce-scatter", "allreduce")
            or args.fixed_k is not None or args.weights):
        return None
    from collcert.reference.execution import export_rate

    rate = export_rate(s, s.topology)
    return rate if rate.slower else None


def _check_export_options(args: argparse.Namespace) -> None:
    """Options of one export format are refused with another (never silently ignored,
    as --strict): exit 2 before any work."""
    args.runtime = _runtime.resolve(args, args.format)
    _runtime.check_in_place(args, args.format, args.runtime)
    wants = {"--mscclpp-channel": ("mscclpp-json", args.mscclpp_channel is not None),
             "--msccl-channels": ("msccl-xml", args.msccl_channels is not None)}
    for flag, (fmt, given) in wants.items():
        if given and args.format != fmt:
            raise ScheduleError(f"{flag} applies to --format {fmt} only, not {args.format}: "
                                f"add --format {fmt}, or drop {flag}")
    args.mscclpp_channel = args.mscclpp_channel or "memory"


def _alltoall(args: argparse.Namespace, topo: Any) -> int:
    """-c alltoall: an MSCCL program of the maximum concurrent flow (the certified
    alltoall optimum, docs/auditing.md#alltoall); msccl-xml only."""
    from collcert.reference.execution import alltoall_msccl_xml

    if args.format != "msccl-xml":
        raise ScheduleError("-c alltoall writes an MSCCL program only: add --format msccl-xml "
                            "(the optimum itself: collcert optimum -c alltoall)")
    text, algbw = alltoall_msccl_xml(topo, args.msccl_channels, runtime=args.runtime)
    from collcert.auditing import audit  # audited before it is written (issue 22)

    got = audit(topo, text, check_optimum_certificate=False).algbw
    if got is None or got < algbw:
        why = (f"the exported program audits at algbw {fraction_str(got)} {topo.unit}, below "
               f"the flow's {fraction_str(algbw)} (the runtime sends a linked pair's traffic "
               "over its direct link; collcert audit names the busiest link)"
               if got is not None else "the exported program does not audit VALID")
        if args.strict:
            print(f"collcert schedule: refused (--strict): {why}", file=sys.stderr)
            return 1
        print(f"warning: {why}", file=sys.stderr)
    if args.output:
        write_output(args.output, text, dash_is_stdout=True)
    out = sys.stderr if args.output == "-" else sys.stdout
    print(f"alltoall on {topo.name or 'topology'}: an MSCCL program of the maximum concurrent "
          f"flow, algbw {fraction_str(algbw)} {topo.unit} (the certified optimum; each pair's "
          "block split over the flow's paths, relayed by the compute nodes on them)", file=out)
    if args.output and args.output != "-":
        print(f"Schedule written to {args.output} (msccl-xml).", file=out)
    return 0


def _slow_export() -> type[Exception]:
    from collcert.reference.execution import SlowExportError

    return SlowExportError


def _symmetric_file(s: Schedule, args: argparse.Namespace) -> bool:
    """Whether to write (and check) the symmetric form (docs/schedules.md): asked for with
    --symmetric, or the only form collcert can audit (a note says so)."""
    from collcert.certify.forestcoll import MAX_EDGES

    big = s.expanded_edges > MAX_EDGES
    if args.symmetric:
        if args.format != "json":
            raise ScheduleError(f"--symmetric writes collcert JSON (collcert-schedule/1 with a "
                                f"'symmetry' block), not {args.format}; drop --format or "
                                "--symmetric")
        if not s.symmetric:
            raise ScheduleError(s.why_not_symmetric())
        return True
    if big and args.format != "json" and (args.output or args.check):
        raise ScheduleError(f"a {args.format} file of this schedule would hold its "
                            f"{s.expanded_edges} tree edges, more than collcert audits "
                            f"({MAX_EDGES}); write it as collcert JSON (--format json: a "
                            "symmetric file, docs/schedules.md)")
    if big and args.format == "json" and s.symmetric and (args.output or args.check):
        done = "written" if args.output else "checked"
        print(f"note: {done} as a symmetric file (docs/schedules.md): the full file would "
              f"list {s.expanded_edges} tree edges, more than collcert audits ({MAX_EDGES}); "
              "'collcert audit' and 'collcert check' check it by orbits", file=sys.stderr)
        return True
    return False


class _StageBars:
    """``progress(stage, done, total)`` for schedule(): a bar per stage, numbered as
    the stages start; each shows its time left."""

    def __init__(self, force: bool) -> None:
        self.force = force
        self.bars: dict[str, Progress] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage not in self.bars:
            self.bars[stage] = Progress(f"[{len(self.bars) + 1}] {stage}", force=self.force)
        self.bars[stage](done, total)


def _write(s: Schedule, args: argparse.Namespace, stages: list[dict[str, Any]],
           progress: _StageBars) -> None:
    """The schedule to -o in --format (stdout for '-'); the writing stage timed."""
    t_write = time.monotonic()
    if args.format == "mscclpp-json":
        from collcert.reference.execution import SlowExportError, export_rate, mscclpp_json

        rate = export_rate(s, s.topology)  # a plan names ranks, as an MSCCL program does
        args.export_rate = rate
        if rate.slower and args.strict:
            raise SlowExportError(rate)
        if rate.slower or rate.multicast:
            print(f"warning: {rate.message()}", file=sys.stderr)
        text = mscclpp_json(s, inplace=args.in_place, channel=args.mscclpp_channel,
                            strict=False)
        if args.output:
            write_output(args.output, text, dash_is_stdout=True)
    elif args.format == "msccl-xml":
        from collcert.reference.execution import SlowExportError, export_rate, msccl_xml

        rate = export_rate(s, s.topology)  # audited before anything is written
        args.export_rate = rate
        if rate.slower and args.strict:
            raise SlowExportError(rate)
        if rate.slower or rate.multicast:
            print(f"warning: {rate.message()}", file=sys.stderr)
        text = msccl_xml(s, channels=args.msccl_channels, strict=False, runtime=args.runtime,
                         inplace=args.in_place)
        args.runtime_verdict = _runtime.judge(text, args.format, args.runtime)
        if args.output:
            write_output(args.output, text, dash_is_stdout=True)
    elif args.output == "-":
        sys.stdout.write(render(s, args.format, certificates=not args.no_certificates,
                                compact=not args.expanded, symmetric=args.symmetric_file))
    elif args.output:
        progress("writing", 0, 1)
        write_schedule(s, args.output, args.format, certificates=not args.no_certificates,
                       compact=not args.expanded, symmetric=args.symmetric_file)
        progress("writing", 1, 1)
    if args.output:
        stages.append({"stage": "writing", "seconds": round(time.monotonic() - t_write, 3),
                       "peak_memory_mb": round(peak_memory_mb(), 1)})


def _summary(s: Schedule, args: argparse.Namespace, stages: list[dict[str, Any]],
             elapsed: float) -> dict[str, Any]:
    """--json: the summary as one object, exact numbers as "p/q"."""
    topo = s.topology
    summary = {
        "collective": s.collective,
        "topology": topo.content_hash(),
        "topology_name": topo.name,
        "unit": topo.unit,
        "algbw": fraction_str(s.algbw),
        "time_per_unit": fraction_str(s.time_per_unit),
        "optimum_time_per_unit": fraction_str(s.extra["target_time_per_unit"]),
        "optimal": s.time_per_unit == s.extra["target_time_per_unit"],
        "phases": [{"collective": p.collective, "k": p.k, "U": fraction_str(p.U),
                    "trees": len(p.trees)} for p in s.phases],
        "trees": s.tree_count,
        "symmetric_file": args.symmetric_file,
        "max_height": s.max_height,
        "multicast_saved": fraction_str(s.multicast_saved),
        "output": args.output,
        "format": args.format,
        "seconds": round(elapsed, 3),
        "stages": stages,
        "peak_memory_mb": round(peak_memory_mb(), 1),
        "symmetry": [p.stats.get("symmetry") for p in s.phases],
        "general_path_estimates": [e.to_json() for e in getattr(args, "estimates", [])],
        "general_path_measured": [
            {key: p.stats[key] for key in ("pairs", "maxflows", "aux_maxflows",
                                           "packing_placed", "packing_maxflows",
                                           "packing_rejected", "packing_bounded", "batches")}
            for p in s.phases if "packing_placed" in p.stats],
    }
    verdict = getattr(args, "runtime_verdict", None)
    if verdict is not None:
        summary["runtime"] = verdict.to_json()
    rate = getattr(args, "export_rate", None)
    if rate is not None:
        summary["export"] = {"algbw": fraction_str(1 / rate.export_time),
                             "time_per_unit": fraction_str(rate.export_time),
                             "at_schedule_rate": not rate.slower,
                             "pair": None if rate.pair is None else list(rate.pair),
                             "message": rate.message()}
    if s.collective == "allreduce":
        summary["lower_bound_time_per_unit"] = fraction_str(s.extra["lower_bound_time_per_unit"])
    return summary


def _print_text(s: Schedule, args: argparse.Namespace, stages: list[dict[str, Any]],
                out: TextIO) -> None:
    """The summary paragraph, the --check verdict and where the schedule went."""
    print(s.summary(), file=out)
    checked = next((st for st in stages if st["stage"] == "checking"), None)
    if checked is not None:
        what = "trees, paths, loads, exact time" + ("" if args.no_certificates
                                                    else ", certificates")
        print(f"Checked by collcert.certify ({what}) in {checked['seconds']:.2f} s: valid, "
              "same time.", file=out)
    if args.output and args.output != "-":
        what = args.format
        if args.symmetric_file:
            sym = s.symmetry_block()
            reps = len(sym["representatives"])
            gens = (f"the {len(sym['generators'])} generators of a group of order "
                    f"{sym['order']} ({' × '.join(map(str, sym['orders']))})"
                    if "orders" in sym else f"the generator of a group of order {sym['order']}")
            what += (f", symmetric: the trees of {reps} representative "
                     f"root{'s' if reps != 1 else ''} and {gens}")
        print(f"Schedule written to {args.output} ({what}).", file=out)
        verdict = getattr(args, "runtime_verdict", None)
        if verdict is not None:
            print(f"Runtime {verdict.describe()}.", file=out)
    elif not args.output:
        print("Use -o FILE to save the schedule.", file=out)


def _check(s: Schedule, args: argparse.Namespace, stages: list[dict[str, Any]],
           progress: _StageBars) -> None:
    """--check: the emitted document through collcert.certify (no reference code)."""
    from collcert.certify.forestcoll import check_schedule
    from collcert.certify.model import Topo

    t0 = time.monotonic()
    progress("checking (collcert.certify)", 0, 1)
    doc = s.to_json(certificates=not args.no_certificates, compact=not args.expanded,
                    symmetric=args.symmetric_file)  # a symmetric file: checked by orbits
    verdict = check_schedule(Topo(s.topology.to_json()), doc)
    progress("checking (collcert.certify)", 1, 1)
    stages.append({"stage": "checking", "seconds": round(time.monotonic() - t0, 3),
                   "peak_memory_mb": round(peak_memory_mb(), 1)})
    if not verdict.ok or verdict.facts.get("time_per_unit") != s.time_per_unit:
        raise RuntimeError("internal: collcert.certify rejects the schedule just built: "
                           + "; ".join(verdict.all_reasons()[:3]))


def _estimate_notice(args: argparse.Namespace) -> Any:
    """``estimate=`` of schedule(): the general path's estimate, printed on stderr
    before it starts when it is long (or with --progress) and kept for --json."""
    args.estimates = []

    def notice(est: Any) -> None:
        args.estimates.append(est)
        if est.worth_announcing or args.progress:
            print(f"collcert schedule: {est.describe()}", file=sys.stderr, flush=True)

    return notice
