"""``collcert compare``: the optimum beside what clusters run today (NCCL's rings and trees,
the classic algorithms), each checked exactly, per message size in the α-β model.

See docs/baselines.md; the Python API is :func:`collcert.reference.baselines.compare`.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from fractions import Fraction
from typing import Any

from . import _sizes, _whatif
from ._common import (
    _refuse_input,
    add_json_option,
    add_progress_option,
    add_topology_argument,
    duration_text,
    load_topology,
    print_json,
    stage_lines,
)

COLLECTIVES = ("allgather", "reduce-scatter", "allreduce", "broadcast", "reduce")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from collcert.reference.baselines import BASELINES

    p = sub.add_parser(
        "compare",
        help="the optimum beside NCCL's ring and tree and the classic algorithms",
        description="Build NCCL's ring and double binary tree (channels ordered as NCCL's "
        "topology search orders them) and the classic algorithms (direct, recursive "
        "doubling/halving, Bruck, hierarchical) as ordinary collcert schedules, check each "
        "exactly as collcert audit does, and print one table: algbw, busbw, ratio to the "
        "certified optimum, and with --sizes the α-β time per message size and the fastest "
        "schedule at each size. Refuses (exit 1) if a baseline checks faster than the "
        "certified optimum. The model of NCCL: docs/baselines.md.")
    add_topology_argument(p, optional=False)
    p.add_argument("-c", "--collective", choices=COLLECTIVES, default="allgather",
                   help="the collective (default allgather)")
    p.add_argument("--root", metavar="NODE",
                   help="broadcast / reduce: the root (default: the first compute node)")
    p.add_argument("--channels", type=int, metavar="N",
                   help="NCCL ring/tree channels (default: as NCCL's search would choose, "
                   "the fewest reaching the best modelled ring bandwidth, at most 16)")
    p.add_argument("--baselines", metavar="LIST",
                   help=f"comma-separated baselines to build (default all: "
                   f"{','.join(BASELINES)}; direct only up to 724 GPUs, its N(N-1) walks "
                   "taking half the time above)")
    p.add_argument("--save-schedules", metavar="DIR",
                   help="write every baseline's schedule to DIR/NAME.json "
                   "(collcert-schedule/1: audit, draw, smoke and MSCCL export read them), "
                   "all of them once the comparison is done; files of those names already "
                   "in DIR are replaced only with --force")
    p.add_argument("--force", action="store_true",
                   help="--save-schedules: replace files of those names already in DIR "
                   "(never the command's own input)")
    add_json_option(p, '; algbw, busbw, ratios and times are exact "p/q" strings')
    add_progress_option(p, "say what is being computed")
    _sizes.add_size_arguments(p)
    _whatif.add_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from collcert.reference.baselines import (
        BASELINES,
        ComparisonRefused,
        compare,
        default_baselines,
    )
    from collcert.reference.model import CollcertError

    names = None if args.baselines is None else tuple(
        n.strip() for n in args.baselines.split(",") if n.strip())
    unknown = [n for n in names or BASELINES if n not in BASELINES]
    if unknown or names == ():
        raise CollcertError(f"--baselines {args.baselines!r}: unknown {', '.join(unknown) or '(none)'}; "
                            f"choose from {', '.join(BASELINES)}")
    if args.channels is not None and not 1 <= args.channels <= 64:
        raise CollcertError(f"--channels {args.channels}: give 1 to 64 channels")
    if args.root is not None and args.collective not in ("broadcast", "reduce"):
        raise CollcertError(f"--root applies to broadcast and reduce, not {args.collective}")
    topo = load_topology(args.topology)
    view = _sizes.wanted(args)
    if view:
        _sizes.check_unit(args, topo)
    sizes = _sizes._sizes(args) if view else []
    if sizes:  # nccl-tests' sizes: per-rank counts rounded to 16 bytes (--dtype)
        from collcert.perftable import DTYPES, nccl_size

        elt = DTYPES[args.dtype]
        sizes = [nccl_size(args.collective, topo.num_compute, s, elt)[0] for s in sizes]
        if not all(sizes):
            raise CollcertError("--sizes: a size rounds to 0 bytes on this many ranks (nccl-tests "
                                "rounds each rank's share to 16 bytes); start larger")
    saved = _saved_files(args, names or default_baselines(topo)[0])
    _check_outputs(args.save_schedules, args.plot, saved, args.force)
    _announce(args, topo, names)
    started = time.perf_counter()
    progress = stage_lines(args)
    healthy = None
    try:
        if _whatif.wanted(args):  # both machines, rows matched by name (docs/whatif.md)
            w = _changed_machine(args, topo)
            healthy = compare(topo, args.collective, args.root, channels=args.channels,
                              names=names, progress=_prefixed(progress, "healthy machine: "),
                              sizes=sizes if args.plot else [],  # the plot: before and after
                              alpha=_sizes._alpha(args) if args.plot else 0)
            topo = w.topology
        cmp = compare(topo, args.collective, args.root, sizes=sizes, alpha=_sizes._alpha(args),
                      channels=args.channels, names=names,
                      progress=_prefixed(progress, "changed machine: ") if healthy else progress)
    except ComparisonRefused as exc:
        print(f"REFUSED: {exc}")
        return 1
    took = time.perf_counter() - started
    block, cut = (None, None) if healthy is None else _whatif_block(args, w, healthy, cmp)
    if args.save_schedules:
        _save(args.save_schedules, cmp, saved)
    if args.plot:
        _plot(args.plot, topo, cmp, healthy, w if healthy is not None else None)
    if args.json:
        out = cmp.to_json()
        if block is not None:
            out["whatif"] = block
        out["seconds"] = round(took, 3)
        print_json(out)
    else:
        print("\n".join(text_report(cmp, took)))
        if block is not None:
            _print_whatif(w, block, cut, cmp)
        if args.plot:
            print(f"Plot written to {args.plot}.")
    return 0


SECONDS_PER_NL = 5.5e-6
"""CPU seconds of a comparison per (compute nodes × links), NCCL's ring and tree searches
dominating (they grow as N·L): dgx_h100_rails:128 35.7 s (N·L = 7.34M), dgx_h100:128
39.2 s (6.29M), both without the direct baseline; sparse machines take less
(torus:16x16x16 45 s, estimated 8 min)."""
SECONDS_PER_DIRECT_WALK = 23e-6
"""The direct baseline adds N(N−1) walks built, read and checked: dgx_h100_rails:128 with
it 60 s, without 35.7 s (1,047,552 walks)."""
ALLREDUCE_SECONDS_PER_NL = 9e-5
"""Allreduce adds LP (5) and its trees: dgx_a100:16 12.0 s, :32 38.4 s of CPU (N·L = 98k,
393k), against 2.3 s and 5.9 s for allgather."""
BYTES_BASE, BYTES_PER_NL = 60e6, 32.0  # allgather peak: dgx_h100_rails:128 293 MB (no direct)
BYTES_PER_DIRECT_WALK = 730.0  # the same with direct: 1056 MB
ALLREDUCE_BYTES_PER_NL = 620.0  # allreduce peak: dgx_a100:16 127 MB, :32 348 MB
ESTIMATE_SHOWN_FROM = 10.0  # seconds: below this only --progress prints the estimate


def compare_estimate(topo: Any, collective: str, machines: int = 1,
                     names: Any = None) -> tuple[float, float]:
    """(CPU seconds, peak bytes) of ``collcert compare`` on ``topo``, from its size alone
    (``machines``: 2 under --degrade/--fail, which compares both machines; ``names``: the
    baselines asked for, None: the default ones)."""
    from collcert.reference.baselines import default_baselines

    n = topo.num_compute
    nl = n * len(topo.capacity)
    ar = collective == "allreduce"
    walks = n * (n - 1) if "direct" in (names or default_baselines(topo)[0]) else 0
    per = SECONDS_PER_NL + (ALLREDUCE_SECONDS_PER_NL if ar else 0)
    return (machines * (per * nl + SECONDS_PER_DIRECT_WALK * walks),
            BYTES_BASE + (BYTES_PER_NL + (ALLREDUCE_BYTES_PER_NL if ar else 0)) * nl
            + BYTES_PER_DIRECT_WALK * walks)


def _announce(args: argparse.Namespace, topo: Any, names: Any = None) -> None:
    """The estimate on stderr before any work: always with --progress, else when long."""
    import sys

    from collcert.certify.model import human_bytes

    seconds, memory = compare_estimate(topo, args.collective, 2 if _whatif.wanted(args) else 1,
                                       names)
    if not args.progress and seconds < ESTIMATE_SHOWN_FROM:
        return
    print(f"compare: {topo.num_compute} GPUs, {len(topo.capacity)} links: estimated "
          f"{duration_text(seconds)} of CPU and {human_bytes(int(memory))} of memory "
          "(NCCL's ring and tree searches grow as GPUs × links"
          + ("; LP (5) and its trees for allreduce" if args.collective == "allreduce" else "")
          + "; wall time is longer on a busy machine; docs/limits.md)", file=sys.stderr,
          flush=True)


def _changed_machine(args: argparse.Namespace, topo: Any) -> Any:
    """The machine after --degrade/--fail; a disconnected one has nothing to compare."""
    from collcert.reference.model import CollcertError

    w = _whatif.apply(args, topo)
    if w.topology is None:
        raise CollcertError(w.disconnected_text(
            "every rate is 0 and no schedule runs; 'collcert optimum' with the same options "
            "names the cut"))
    return w


def _prefixed(progress: Any, prefix: str) -> Any:
    return None if progress is None else (lambda text: progress(prefix + text))


def _whatif_block(args: argparse.Namespace, w: Any, healthy: Any, cmp: Any,
                  ) -> tuple[dict[str, Any], Any]:
    """The what-if block: the optimum healthy and now, its loss and explaining cut (the
    optimum's bottleneck cut; allreduce: the cut-set bound's), and every row's loss."""
    from collcert.reference.model import fraction_str

    t = w.topology
    cut: frozenset[Any] | None
    if args.collective == "allreduce":
        from collcert.reference.allreduce import cut_set_bound

        cut = cut_set_bound(t).cut
    else:
        from collcert.reference.forestcoll import optimum

        root = None if cmp.root is None else t.lookup(str(cmp.root))
        cut = optimum(t, args.collective, root=root).cut
    block = _whatif.report(w, healthy.optimum, cmp.optimum, cut)
    block["figure"] = f"the optimum column ({cmp.optimum_kind})"
    before = {r.name: r.algbw for r in healthy.rows}
    block["rows"] = {r.name: {"healthy": fraction_str(before[r.name]),
                              "now": fraction_str(r.algbw),
                              "loss_percent": fraction_str(_whatif.loss_percent(
                                  before[r.name], r.algbw))}
                     for r in cmp.rows if r.name in before}
    why = dict(cmp.skipped)
    for r in healthy.rows:  # ran on the healthy machine, not on the changed one
        if r.name not in block["rows"]:
            block["rows"][r.name] = {"healthy": fraction_str(r.algbw), "now": None,
                                     "loss_percent": None,
                                     "not_applicable": why.get(r.name, "not built")}
    return block, cut


def _print_whatif(w: Any, block: dict[str, Any], cut: Any, cmp: Any) -> None:
    from fractions import Fraction as F

    print()
    _whatif.print_report(w, F(block["healthy_algbw"]), cmp.optimum, cut, figure="optimum")
    width = max(len(r.label) for r in cmp.rows)
    print(f"  {'schedule':<{width}}  {'healthy':>12}  {'now':>12}  {'loss %':>8}")
    for r in cmp.rows:
        row = block["rows"].get(r.name)
        if row is not None:
            print(f"  {r.label:<{width}}  {float(F(row['healthy'])):>12.4f}  "
                  f"{float(r.algbw):>12.4f}  {float(F(row['loss_percent'])):>8.3f}")
    now = {r.name for r in cmp.rows}
    for name, row in block["rows"].items():
        if name not in now:
            print(f"  {name}: {float(F(row['healthy'])):.4f} on the healthy machine; not "
                  f"applicable now: {row['not_applicable']}")
    print(f"  (algbw in {cmp.unit}; exact figures in --json)")


def _saved_files(args: argparse.Namespace, names: Any) -> list[str]:
    """The files --save-schedules may write: DIR/NAME.json for the optimum, LP (5)'s trees
    (allreduce) and every baseline asked for."""
    if not args.save_schedules:
        return []
    rows = ["optimum", *(["lp5"] if args.collective == "allreduce" else []), *names]
    return [os.path.join(args.save_schedules, f"{n}.json") for n in rows]


def _check_outputs(folder: str | None, plot: str | None, saved: list[str] | None = None,
                   force: bool = False) -> None:
    """Refuse before any work a --save-schedules that is a file, one that would write over
    an input file, or (without --force) over files already there, and a --plot whose
    folder does not exist (all were found only after the comparison, some after files
    were written)."""
    from collcert.reference.model import CollcertError

    if folder is not None and os.path.exists(folder) and not os.path.isdir(folder):
        raise CollcertError(f"--save-schedules {folder}: this is a file; name a folder (it is "
                            "made if missing) to write every baseline's schedule into")
    for path in saved or ():
        _refuse_input(path, "--save-schedules")
    there = [os.path.basename(p) for p in saved or () if os.path.lexists(p)]
    if there and not force:
        raise CollcertError(
            f"--save-schedules {folder}: {len(there)} of the files it writes are there "
            f"already ({', '.join(there)}); add --force to replace them, or name another "
            "folder")
    parent = os.path.dirname(os.path.abspath(plot)) if plot else ""
    if plot and not os.path.isdir(parent):
        raise CollcertError(f"--plot {plot}: the folder {parent} does not exist; make it "
                            "first or name another place")


def _save(folder: str, cmp: Any, saved: list[str]) -> None:
    """Every row's schedule into ``folder``, all or nothing (checked again now)."""
    from collcert.reference.model import CollcertError, write_files

    texts = {os.path.join(folder, f"{row.name}.json"): json.dumps(row.document) + "\n"
             for row in cmp.rows if row.document is not None}
    unplanned = sorted(set(texts) - set(saved))
    if unplanned:
        raise RuntimeError(f"internal: --save-schedules would write {unplanned[0]}, not "
                           "checked before the comparison")
    for path in texts:
        _refuse_input(path, "--save-schedules")
    try:
        os.makedirs(folder, exist_ok=True)
        write_files(texts)
    except OSError as exc:
        raise CollcertError(f"--save-schedules {folder}: cannot write there: "
                            f"{exc.strerror}") from None


def _num(x: Fraction) -> str:
    from collcert.reference.model import fraction_str

    text = fraction_str(x)
    return text if x.denominator == 1 else f"{text} (≈{float(x):.2f})"


def text_report(cmp: Any, took: float) -> list[str]:
    """The comparison in words and tables."""
    way = "from" if cmp.collective == "broadcast" else "to"
    root = f" {way} {cmp.root}" if cmp.root is not None else ""
    model = "" if cmp.model == "routing" else f" [{cmp.model}]"
    lines = [f"{cmp.collective}{root} on {cmp.topology} ({cmp.ranks} GPUs): optimum algbw "
             f"{_num(cmp.optimum)} {cmp.unit} ({cmp.optimum_kind}){model}; took {took:.1f} s",
             ""]
    width = max(len(r.label) for r in cmp.rows)
    lines.append(f"{'schedule':<{width}}  {'algbw':>22}  {'busbw':>9}  {'ratio':>6}  "
                 f"{'optimum/it':>10}")
    for r in cmp.rows:
        inv = "" if not r.ratio else f"{float(1 / r.ratio):.3f}"
        lines.append(f"{r.label:<{width}}  {_num(r.algbw):>22}  {float(r.busbw):>9.2f}  "
                     f"{float(r.ratio or 0):>6.3f}  {inv:>10}")
    lines.append(f"(algbw, busbw in {cmp.unit}; ratio = algbw / optimum, exact in --json)")
    for name, why in cmp.skipped:
        lines.append(f"not applicable: {name}: {why}")
    for note in cmp.notes + [f"{r.name}: {n}" for r in cmp.rows for n in r.notes]:
        lines.append(f"note: {note}")
    if cmp.sizes:
        lines += [""] + _size_table(cmp)
    return lines


def _size_table(cmp: Any) -> list[str]:
    from collcert.reference.model import fraction_str

    names = [_shown(cmp, r.name) for r in cmp.rows]
    w = max(10, max(len(n) for n in names) + 1,  # a space between columns, always
            *(len(f"{float(t):.2f}") + 1 for r in cmp.rows for t in r.times_us))
    out = [f"# α-β model (docs/alpha-beta.md): time in µs per message size; α = "
           f"{fraction_str(cmp.alpha)} µs per link where the topology gives none",
           "# latency (µs): " + ", ".join(f"{_shown(cmp, r.name)} {float(r.latency_us):g}"
                                          for r in cmp.rows),
           f"{'size (B)':>12}" + "".join(f"{n:>{w}}" for n in names) + "   fastest"]
    for i, size in enumerate(cmp.sizes):
        cells = "".join(f"{float(r.times_us[i]):>{w}.2f}" for r in cmp.rows)
        out.append(f"{size:>12}{cells}   {_shown(cmp, cmp.best[i])}")
    return out


def _shown(cmp: Any, name: str) -> str:
    """A row's name in the size table: ForestColl's schedule is not the optimum where the
    optimum is the in-network model's (switches that add), so it is 'forestcoll' there."""
    return "forestcoll" if name == "optimum" and cmp.model.startswith("in-network") else name


def _plot(path: str, topo: Any, cmp: Any, healthy: Any = None, w: Any = None) -> None:
    """The comparison's algbw against size; with a what-if, the healthy machine's curves
    too (dotted, the same colours), so the plot shows before and after."""
    from collcert.drawing import CompareSeries, plot_comparison
    from collcert.reference.execution import AlphaBeta, Latency, bytes_per_unit

    unit = bytes_per_unit(topo.unit)

    def series(rows: Any) -> list[Any]:
        return [CompareSeries(r.name, r.label, r.kind,
                              AlphaBeta(1 / r.algbw, Latency(r.latency_us, r.hops), unit))
                for r in rows if r.algbw]

    title = (f"{cmp.collective} on {cmp.topology} ({cmp.ranks} GPUs): the optimum and what "
             "clusters run today")
    if w is not None:
        title = (f"{cmp.collective} on {healthy.topology} ({healthy.ranks} GPUs) after "
                 f"{'; '.join(w.changes)} (solid), and healthy (dotted)")
    note = ("collcert compare, α-β model: time(M) = M / algbw + L, algbw exact on the bandwidth "
            f"model, L the α's of the deepest route (α = {float(cmp.alpha):g} µs per link). "
            "NCCL's ring and tree as modelled in docs/baselines.md, not measured.")
    if all(not r.latency_us for r in cmp.rows):
        note += (" No latency (α = 0, and no link gives one): every schedule's algbw is the "
                 "same at every size, flat lines; --alpha US draws the latency term.")
    plot_comparison(path, series(cmp.rows), cmp.sizes, cmp.best, title, note,
                    before=series(healthy.rows) if w is not None else ())
