"""``collcert optimum``: the certified optimum of a collective on a topology."""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from fractions import Fraction

from collcert.reference.forestcoll import COLLECTIVES, Optimum, optimum
from collcert.reference.model import Topology, TopologyError, without_symmetry

from . import _capabilities, _sizes, _whatif
from ._common import (
    Progress,
    add_json_option,
    add_progress_option,
    add_topology_argument,
    load_topology,
    print_json,
    write_output,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "optimum",
        help="exact optimal throughput of a collective, with its witness cut",
        description="Compute the exact optimal algorithm bandwidth (algbw = data size / time) "
        "of a collective on a topology (Zhao & Krishnamurthy 2023, eq. (1), App. A-B; Zhao et al. 2026), with the "
        "bottleneck cut that proves it. Numbers are exact fractions.",
    )
    add_topology_argument(p)
    p.add_argument("--collective", "-c", default="allgather",
                   choices=(*COLLECTIVES, "alltoall"),
                   help="collective whose optimum to compute (default: allgather); "
                   "broadcast and reduce need --root; alltoall is a maximum concurrent flow "
                   "(exact LP)")
    p.add_argument("--root", help="root compute node (broadcast, reduce)")
    p.add_argument("--fixed-k", type=int, metavar="K",
                   help="best time with K trees per compute node (Zhao & Krishnamurthy 2023, §2.4)")
    add_json_option(p)
    p.add_argument("--certificate", action="store_true",
                   help="print the JSON object with the flow witnesses (large; implies --json)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the --json (or --certificate) document to FILE instead of "
                   "standard output, once the command has succeeded: a failure leaves FILE "
                   "as it was (a shell's '> FILE' empties it first); implies --json")
    p.add_argument("--engine", default="auto", choices=("auto", "ortools", "exact"),
                   help="max-flow engine (default: ortools when capacities fit in int64)")
    add_progress_option(p)
    p.add_argument("--no-symmetry", action="store_true",
                   help="one max-flow per compute node, not one per orbit of the topology's "
                   "box symmetry (by default used from 64 compute nodes on; the certificate "
                   "then carries the automorphism, docs/optimum.md); for -c alltoall, the "
                   "full LP with one commodity per compute node, not one per orbit")
    p.add_argument("--method", default="all",
                   choices=("all", "rsag-weighted", "bidirected-tree"),
                   help="-c allreduce only: all (default) every allreduce rate as one chain; "
                   "rsag-weighted: only weighted RS+AG (reduce-scatter, then allgather, with "
                   "the best unequal shards), its shards and certificate (docs/allreduce.md); "
                   "bidirected-tree: the closed form of Zhou & Sun 2026, Thm 3, R* = min β, "
                   "for a bi-directed tree of compute nodes (anything else: exit 2)")
    _sizes.add_size_arguments(p)
    _whatif.add_arguments(p)
    _capabilities.add_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.output is None:
        return _run(args)
    if args.output == "-":
        raise TopologyError("-o -: leave -o out to print the document on standard output")
    args.json = True
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        code = _run(args)
    if code == 0:
        write_output(args.output, text.getvalue())
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text.getvalue())
    return code


def _run(args: argparse.Namespace) -> int:
    if _whatif.wanted(args) and _sizes.wanted(args) and args.collective != "allreduce":
        raise TopologyError("--degrade/--fail compare the changed machine's optimum with the "
                            "healthy one; the α-β view (--sizes, --plot, --alpha) is not drawn "
                            "for it: drop them, or the what-if options")
    if args.method != "all" and args.collective != "allreduce":
        raise TopologyError(f"--method {args.method} applies to -c allreduce only")
    if args.certificate and _sizes.wanted(args):  # 'collcert check' refuses what it cannot prove
        raise TopologyError("--certificate writes only what 'collcert check' proves; the α-β "
                            "view (--sizes, --plot, --alpha, --stepfactor) is not part of it: "
                            "ask for it in a second run, or with --json instead of --certificate")
    _capabilities.refuse_for(args, args.collective)  # switches that add (issue 30)
    if args.collective == "alltoall":  # a multicommodity flow LP, not trees
        from . import _alltoall

        return _alltoall.run(args)
    if args.collective == "allreduce":  # every allreduce rate, any directed graph
        from . import _allreduce

        return _allreduce.run(args)
    with without_symmetry() if args.no_symmetry else contextlib.nullcontext():
        loaded = load_topology(args.topology)  # refused before the build: a witness a node
    topo = _capabilities.apply(args, loaded, args.collective)
    _sizes.check_unit(args, topo)
    if _whatif.wanted(args):
        return _run_whatif(args, topo)
    model = _capabilities.model_line(topo, args.collective)
    root = None if args.root is None else topo.lookup(args.root)
    started = time.monotonic()
    progress = Progress(f"optimum {args.collective}", force=args.progress)
    opt = optimum(topo, args.collective, root=root, fixed_k=args.fixed_k, engine=args.engine,
                  progress=progress, symmetry=False if args.no_symmetry else None)
    elapsed = time.monotonic() - started
    if args.json or args.certificate:
        out = opt.certificate() if args.certificate else opt.to_json()
        out["topology_name"] = topo.name
        out["seconds"] = round(elapsed, 3)  # wall time: informative, not a result
        if model is not None and not args.certificate:
            out["model"] = model
        if _sizes.wanted(args):
            out["sizes"] = _sizes.optimum_view(args, topo, opt)
        print_json(out)
    else:
        print(opt.summary())
        if model is not None:
            print(f"  {model}")
        print(f"  time: {elapsed:.2f} s")
        if _sizes.wanted(args):
            _sizes.optimum_view(args, topo, opt)
    return 0


def _optimum(args: argparse.Namespace, topo: Topology, label: str) -> Optimum:
    root = None if args.root is None else topo.lookup(args.root)
    if root is not None and root not in topo.index:
        raise TopologyError(f"--root {args.root!r} is not a node of the {label} machine"
                            + (" (it is given to --fail)" if label == "changed" else ""))
    progress = Progress(f"optimum {args.collective} ({label})", force=args.progress)
    return optimum(topo, args.collective, root=root, fixed_k=args.fixed_k, engine=args.engine,
                   progress=progress, symmetry=False if args.no_symmetry else None)


def _run_whatif(args: argparse.Namespace, topo: Topology) -> int:
    """--degrade/--fail: the changed machine's optimum against the healthy one."""
    started = time.monotonic()
    w = _whatif.apply(args, topo)
    healthy = _optimum(args, topo, "healthy")
    if w.topology is None:  # disconnected: rate 0, proven by the cut no link leaves
        opt, now, cut = None, Fraction(0), w.cut
    else:
        opt = _optimum(args, w.topology, "changed")
        now, cut = opt.algbw, opt.cut
    elapsed = time.monotonic() - started
    report = _whatif.report(w, healthy.algbw, now, cut)
    if args.certificate:  # only what 'collcert check ... --degrade/--fail' proves
        cert = None if opt is None else {**opt.certificate(),
                                         "topology_name": opt.topology.name}
        return _whatif.print_certificate(cert, lambda: _whatif.print_report(
            w, healthy.algbw, now, cut), w)
    if args.json:
        return _whatif.print_json_result(None if opt is None else {
            **opt.to_json(), "topology_name": opt.topology.name}, report, elapsed)
    if opt is not None:
        print(opt.summary())
    _whatif.print_report(w, healthy.algbw, now, cut)
    print(f"  time: {elapsed:.2f} s (both optima)")
    return 0
