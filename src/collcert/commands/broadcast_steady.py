"""``collcert broadcast-steady``: optimal steady-state broadcast under the one-port model.

Also what ``collcert audit`` and ``collcert draw`` need for a
``collcert-steady-broadcast/1`` schedule: its platform from the command line
(:func:`load_platform`; the audit itself is ``collcert.auditing.audit_steady``)
and the picture (:func:`draw_hook`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from typing import Any

from collcert.auditing import STEADY_FORMAT, document_kind, steady_document
from collcert.reference.model import ScheduleError, TopologyError

from ._common import (
    Progress,
    add_json_option,
    add_progress_option,
    print_json,
    read_stdin,
    write_output,
)

BUILTINS = ("fig1, fig5 (Legrand et al. 2003, Figs. 1 and 5; fig1:startup=B gives every link "
            "the start-up B for --size), random:P[,SEED[,DEGREE]]")
_RANDOM = re.compile(r"^random:(\d+)(?:,(\d+))?(?:,(\d+))?$")
_STARTUP = re.compile(r"^(fig1|fig5):startup=(.+)$")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "broadcast-steady",
        help="best throughput of a series of broadcasts under the one-port model, with a "
        "periodic schedule reaching it (Legrand et al. 2003)",
        description="Steady-state broadcast (Legrand, Beaumont, Marchal, Robert, 'Optimizing "
        "the steady-state throughput of Broadcasts on heterogeneous platforms'): the source "
        "sends an endless series of unit messages to every other node; each link has a cost "
        "(time per message) and each node sends to one neighbour and receives from one "
        "neighbour at a time. Prints the best throughput TP = 1/T* (exact; the LP dual proves "
        "that no schedule, periodic or not, does better), and a periodic schedule that "
        "reaches it: weighted broadcast trees and the matchings of one period (or, with "
        "--dag, the height-based DAG schedule). The schedule file (-o) is checked by "
        "'collcert audit PLATFORM FILE', which replays it event by event.",
        epilog="Examples: collcert broadcast-steady fig1 --source s --compare; collcert "
        "broadcast-steady platform.json -s p0 -o sched.json && collcert audit platform.json "
        "sched.json; collcert draw platform.json sched.json -o period.png. Platform files: "
        "docs/steady-broadcast.md. Exit codes: 0 success, 2 bad input (bad costs, unknown "
        "source, unreachable nodes, a cycle with --dag), 3 internal error.",
    )
    p.add_argument("topology", metavar="PLATFORM",
                   help=f"one-port platform JSON file ('port_model': 'one-port', a 'cost' per "
                   f"link), '-' for stdin, or a built-in: {BUILTINS}")
    p.add_argument("--source", "-s", metavar="S",
                   help="the broadcasting node (default: the first node of the file)")
    p.add_argument("--dag", action="store_true",
                   help="the platform is a DAG: solve SSBPDAG (Legrand et al. 2003, §4.1) and build the "
                   "height-based schedule of §4.3 (refused when the platform has a cycle)")
    p.add_argument("--compare", action="store_true",
                   help="also find the best single tree (eq. (1)) and the best DAG by "
                   "exhaustive search (small platforms: at most 8 nodes for the DAG)")
    p.add_argument("--size", metavar="L",
                   help="PIPE (Legrand et al. 2003, §6): broadcast ONE message of size L "
                   "(exact, > 0) cut into packets, each costing startup + size·cost on a link; "
                   "prints the makespan with the paper's ν = ⌈√L⌉ packets and with the best "
                   "packet count found by search, the lower bound L·T* and their ratio "
                   "(Thm 8: it tends to 1); the result is replayed by collcert.certify")
    p.add_argument("--packets", type=int, metavar="P",
                   help="with --size: also try P packets of size L/P")
    p.add_argument("--messages", type=int, metavar="N",
                   help="a finite series (§5.5): the exact makespan of N unit messages sent by "
                   "the periodic schedule (initialisation, steady periods, clean-up), "
                   "replayed by collcert.certify")
    add_json_option(p, ': the document -o writes, which audit and check read (the schedule '
                    'file; with --size the collcert-pipe-broadcast/1, with --messages the '
                    'collcert-series-broadcast/1 document); exact "p/q" strings; the time '
                    'and --compare\'s comparison go to stderr')
    p.add_argument("-o", "--output", metavar="FILE",
                   help=f"write the schedule ({STEADY_FORMAT}) to FILE")
    add_progress_option(p, "show progress")
    p.set_defaults(func=run)


def load_platform(spec: str, doc: dict[str, Any] | None = None, name: str = "") -> Any:
    """A one-port platform from a file, stdin ('-') or a built-in name. ``doc``: the
    schedule (file ``name``) it is for, so that a refusal says which platform that wants;
    a schedule given where the platform goes is refused saying what it is."""
    try:
        return _load_platform(spec)
    except _IsSchedule:
        raise
    except TopologyError as exc:
        if doc is None:
            raise
        raise TopologyError(f"{exc}. {name or 'The schedule'} is {document_kind(doc)}: "
                            f"{wanted_platform(doc, name)}") from None


class _IsSchedule(TopologyError):
    """The platform argument is a schedule file: its message says what it is."""


def wanted_platform(doc: dict[str, Any], name: str) -> str:
    """Which platform argument a schedule wants: a built-in whose hash is the one the
    document carries, or the platform file it was made for (its name)."""
    got = doc.get("topology_name")
    label = repr(got[:80]) if isinstance(got, str) and got else "its platform"
    for spec in _candidates(got):
        try:
            if _load_platform(spec).content_hash() == doc.get("topology"):
                return f"it was made for {label}: run 'collcert audit {spec} {name or 'FILE'}'"
        except (TopologyError, ValueError):
            continue
    return (f"it was made for {label} (a platform file, 'topology' "
            f"{str(doc.get('topology'))[:19]}…): give that file as the platform")


def _candidates(name: object) -> list[str]:
    """Built-in platform arguments that could have the name ``name``."""
    if not isinstance(name, str):
        return []
    m = re.fullmatch(r"Legrand et al\. 2003, Fig\. ([15])(?:, start-up (.+) on every link)?",
                     name)
    if m:
        return [f"fig{m.group(1)}" + (f":startup={m.group(2)}" if m.group(2) else "")]
    m = re.fullmatch(r"random:(\d{1,4}),(\d{1,20})", name)
    return [f"random:{m.group(1)},{m.group(2)}"] if m and int(m.group(1)) <= 2000 else []


def _load_platform(spec: str) -> Any:
    from collcert.reference.broadcast import (
        OnePortPlatform,
        paper_fig1,
        paper_fig5,
        random_platform,
    )

    if spec == "-":
        text = read_stdin("a one-port platform (JSON)")  # bounded, binary data refused
        if text.lstrip()[:1] != "{":
            raise TopologyError("stdin: not a one-port platform (a JSON object; "
                                "docs/steady-broadcast.md)" if text.strip() else
                                "stdin is empty: pipe a one-port platform JSON into the "
                                "command (docs/steady-broadcast.md)")
        return OnePortPlatform.from_json(text)
    if spec in ("fig1", "fig5"):
        return paper_fig1() if spec == "fig1" else paper_fig5()
    m = _STARTUP.match(spec)
    if m and not os.path.exists(spec):  # fig1:startup=β: the same platform, β on every link
        base = (paper_fig1() if m.group(1) == "fig1" else paper_fig5()).to_json()
        base["name"] = f"{base['name']}, start-up {m.group(2)} on every link"
        for link in base["links"]:
            link["startup"] = m.group(2)
        try:
            return OnePortPlatform.from_json(base)
        except TopologyError as exc:
            raise TopologyError(f"{spec}: {str(exc).split(': ', 2)[-1]}") from None
    m = _RANDOM.match(spec)
    if m and not os.path.exists(spec):
        nodes, seed, degree = int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 3)
        if nodes > 2000:
            raise TopologyError(f"{spec}: at most 2000 nodes")
        return random_platform(nodes, seed, degree)
    if not os.path.exists(spec) and not spec.endswith(".json") and "/" not in spec:
        raise TopologyError(f"{spec!r} is neither a platform file nor a built-in platform "
                            f"({BUILTINS})")
    doc = steady_document(spec)
    if doc is not None:  # a schedule where the platform goes
        raise _IsSchedule(f"{spec} is {document_kind(doc)}, not a platform; "
                            f"{wanted_platform(doc, spec)}")
    return OnePortPlatform.from_json(spec)


def run(args: argparse.Namespace) -> int:
    from collcert.reference.broadcast import steady_broadcast

    if args.output and os.path.isdir(args.output):
        raise ScheduleError(f"-o {args.output}: is a directory; give a file name")
    platform = load_platform(args.topology)
    source = args.source if args.source is not None else platform.nodes[0]
    if args.size is not None or args.messages is not None or args.packets is not None:
        from ._pipe import run_finite

        return run_finite(args, platform, source)
    from ._pipe import lp_progress

    progress = lp_progress(args, platform)
    started = time.monotonic()
    result = steady_broadcast(platform, source, dag=args.dag,
                              progress=lambda d, t, note: progress(d, t, note))
    compare = _compare(platform, result.source, result.throughput, args) if args.compare else None
    elapsed = time.monotonic() - started
    doc = result.to_json()
    if args.output:
        write_output(args.output, json.dumps(doc, indent=1) + "\n")
    if args.json:  # the very document -o writes, which audit and check read (issue 33 row 4)
        print_json(doc)
        if compare is not None:
            _print_compare(compare, sys.stderr)
        print(f"  time: {elapsed:.2f} s", file=sys.stderr)
        return 0
    print(result.summary())
    if compare is not None:
        _print_compare(compare, sys.stdout)
    if args.output:
        print(f"  schedule written to {args.output} (check it: collcert audit "
              f"{args.topology} {args.output})")
    print(f"  time: {elapsed:.2f} s")
    return 0


def _print_compare(compare: dict[str, Any], out: Any) -> None:
    """--compare's lines: the best throughput with one tree, a DAG, the whole graph."""
    from collcert.reference.model import show

    print("  comparison (Legrand et al. 2003, §3.1): best throughput using only", file=out)
    for k, label in (("tree", "one broadcast tree (eq. (1))"),
                     ("dag", "a DAG (SSBPDAG, §4.1)"), ("graph", "the whole graph (SSB)")):
        if k in compare:
            tp, edges = compare[k]
            links = " ".join(f"{u}->{v}" for u, v in edges)
            print(f"    {label}: {show(tp)}" + (f"   [{links}]" if k != "graph" else ""),
                  file=out)
        elif f"{k}_skipped" in compare:
            print(f"    {label}: not searched ({compare[f'{k}_skipped']})", file=out)


def _compare(platform: Any, source: Any, graph_tp: Any, args: argparse.Namespace,
             ) -> dict[str, Any]:
    from collcert.reference.broadcast import MAX_DAG_NODES, best_dag, best_tree

    out: dict[str, Any] = {}
    try:
        out["tree"] = best_tree(platform, source)
    except TopologyError as exc:  # the search is capped: say so, keep the rest
        out["tree_skipped"] = str(exc)
    if len(platform.nodes) <= MAX_DAG_NODES:
        bar = Progress("best DAG", force=args.progress)
        out["dag"] = best_dag(platform, source, progress=lambda d, t, note: bar(d, t, note))
    else:
        out["dag_skipped"] = (f"the best-DAG search is limited to {MAX_DAG_NODES} nodes; this "
                              f"platform has {len(platform.nodes)}")
    out["graph"] = (graph_tp, list(platform.cost))
    return out


# ------------------------------------------------------------------ drawing
def draw_hook(args: argparse.Namespace) -> bool:
    """``collcert draw PLATFORM FILE -o OUT`` for a steady-state broadcast schedule."""
    doc = steady_document(getattr(args, "schedule", None))
    if doc is None:
        return False
    from collcert.drawing import draw_steady

    platform = load_platform(args.topology, doc, args.schedule)
    draw_steady(platform, doc, args.output)
    print(f"Drew the trees and one period of {args.schedule} to {args.output}.")
    return True
