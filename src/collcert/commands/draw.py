"""``collcert draw``: pictures of a topology, its bottleneck cut, a schedule's trees and loads.

A thin command: the pictures are made by :mod:`collcert.drawing`.
"""

from __future__ import annotations

import argparse
import os

from . import _whatif, _whatif_machine
from ._common import ONE_PORT_NAMES, add_topology_argument, load_topology


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "draw",
        help="draw a topology with its bottleneck cut, one tree of a schedule, or all link loads",
        description="Draw a topology (GPUs as circles, switches as squares, boxes grouped, "
        "rings as rings, tori as grids, link width by capacity) with the certified bottleneck "
        "cut S*: its nodes shaded, the links the bound counts in red with their capacities, "
        "and a caption saying what the cut proves. Given a schedule (collcert JSON or "
        "ForestColl XML), draw one of its trees (--tree: its paths on the network beside the "
        "tree itself) or all trees as a heat map of link loads (--loads). Topologies with "
        "more than 256 GPUs are drawn one node per box (--detail). The schedule is checked "
        "as 'collcert audit' checks it; one made for another topology is refused. Two other "
        "kinds of file are drawn too: a steady-state broadcast schedule (collcert draw PLATFORM "
        "FILE: its trees and one period as a Gantt chart, docs/steady-broadcast.md) and a "
        "reduction schedule given alone (collcert draw tree.json: the tree and a Gantt chart, "
        "docs/reduction-trees.md).",
        epilog="Examples: collcert draw dgx_a100:2 -o cut.png; collcert schedule mi250:2 -o "
        "s.json && collcert draw mi250:2 s.json --loads -o loads.png; collcert draw "
        "dgx_a100:128 -o big.png. Needs matplotlib: pip install 'collcert[draw]'. "
        "Exit codes: 0 drawn, 2 bad input (unreadable or foreign schedule, matplotlib "
        "missing), 3 internal error.",
    )
    add_topology_argument(p, optional=False)
    p.add_argument("schedule", nargs="?", metavar="SCHEDULE",
                   help="a schedule file (collcert JSON from 'collcert schedule -o', "
                   "ForestColl tree XML, or a steady-state broadcast schedule from 'collcert "
                   "broadcast-steady -o') whose trees to draw (optional)")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output picture; the extension picks the format (.png, .svg, .pdf)")
    view = p.add_mutually_exclusive_group()
    view.add_argument("--tree", type=int, metavar="I",
                      help="draw tree I of the schedule, counting from 0 over all phases "
                      "(default with a schedule: tree 0)")
    view.add_argument("--loads", action="store_true",
                      help="draw every link's load over all trees as a heat map")
    p.add_argument("--collective", "-c", default=None,
                   choices=("allgather", "reduce-scatter", "broadcast", "reduce"),
                   help="whose bottleneck cut to show (default: the schedule's collective, "
                   "else allgather); broadcast and reduce need --root")
    p.add_argument("--root", help="root compute node (broadcast, reduce)")
    p.add_argument("--no-cut", action="store_true", help="do not compute or show the cut")
    p.add_argument("--detail", choices=("auto", "full", "boxes"), default="auto",
                   help="full: every node; boxes: one node per box; auto (default): boxes "
                   "above 256 GPUs")
    _whatif.add_arguments(p)  # draw on the changed machine (a schedule's what-if is read)
    p.set_defaults(func=run)


def _refuse_pipe(path: str | None) -> None:
    """A pipelined (finite) broadcast schedule is not drawn: say so by name."""
    if not path or path == "-" or not os.path.isfile(path):
        return
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if b'"collcert-pipe-broadcast/1"' in head:
        from collcert.drawing import DrawError

        raise DrawError(f"{path}: a pipelined broadcast schedule (collcert-pipe-broadcast/1), "
                        "which collcert does not draw; 'collcert audit PLATFORM FILE' checks "
                        "it, and 'collcert broadcast-steady PLATFORM -o FILE' (without --size) "
                        "writes the steady-state schedule that draw pictures")


def run(args: argparse.Namespace) -> int:
    # Other schedule kinds (steady-state broadcast, reduction trees) dispatch here, before
    # the tree-schedule picture below.
    from .broadcast_steady import draw_hook  # one-port steady-state broadcast (Legrand et al. 2003)

    _refuse_pipe(args.schedule)

    if draw_hook(args):
        return 0
    from ._reduction_draw import draw_file  # reduction trees (Canon & Antoniu 2012)
    from ._reduction_file import is_reduction_file

    if is_reduction_file(args.topology):
        return draw_file(args.topology, args.output)
    from collcert.drawing import (
        check_output,
        cut_info,
        draw_network,
        read_schedule_for_drawing,
        require_matplotlib,
    )

    check_output(args.output)
    require_matplotlib()
    if args.schedule is None and str(args.topology).split(":", 1)[0] in ONE_PORT_NAMES \
            and not os.path.exists(str(args.topology)):
        from collcert.drawing import DrawError

        raise DrawError(f"{args.topology} is a one-port platform: draw it with a steady-state "
                        f"broadcast schedule, 'collcert broadcast-steady {args.topology} -o "
                        f"bs.json' then 'collcert draw {args.topology} bs.json -o "
                        f"{args.output}' (docs/steady-broadcast.md)")
    if args.schedule and args.schedule != "-" and not os.path.lexists(args.schedule):
        from collcert.drawing import DrawError  # before the topology (fig1 only fits fig1's)

        raise DrawError(f"{args.schedule}: no such file")
    t, note = _whatif_machine.judged_machine(args, load_topology(args.topology),
                                             args.schedule, "draw")
    if note:
        print(note)
    schedule = read_schedule_for_drawing(t, args.schedule) if args.schedule else None
    if schedule is None and (args.tree is not None or args.loads):
        from collcert.drawing import DrawError

        raise DrawError(f"{'--tree' if args.tree is not None else '--loads'} needs a "
                        "SCHEDULE file after the topology")
    tree = args.tree if args.tree is not None else (0 if schedule and not args.loads else None)
    coll = args.collective or (schedule.collective if schedule else "allgather")
    root = None
    if args.root is not None:
        root = t.lookup(args.root)
    elif schedule is not None and coll in ("broadcast", "reduce"):
        root = schedule.root
    cut = None if args.no_cut else cut_info(t, coll, root)
    name = t.name or "topology"
    if schedule is None:
        title = f"{name}: the bottleneck cut of {cut.collective}" if cut else name
    elif tree is not None:
        tr = schedule.trees[tree] if 0 <= tree < len(schedule.trees) else None
        title = (f"{name}: tree {tree} of {len(schedule.trees)} ({args.schedule}), root "
                 f"{tr.root}" if tr else name)
    else:
        title = f"{name}: link loads of {args.schedule} ({schedule.collective}, " \
                f"{len(schedule.trees)} trees)"
    what = draw_network(t, args.output, cut=cut, schedule=schedule, tree=tree,
                        loads=args.loads, detail=args.detail, title=title)
    for note in schedule.notes if schedule else []:
        print(note)
    print(f"Drew {what} of {name} to {args.output}.")
    return 0
