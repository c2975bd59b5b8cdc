"""``collcert broadcast-steady``: optimal steady-state broadcast under the one-port model.

Also the hooks by which ``collcert audit`` and ``collcert draw`` handle a
``collcert-steady-broadcast/1`` schedule (:func:`audit_hook`, :func:`draw_hook`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from typing import Any

from collcert.reference.model import ScheduleError, TopologyError

from ._common import Progress, print_json, read_stdin

FORMAT = "collcert-steady-broadcast/1"
BUILTINS = "fig1, fig5 (Legrand et al. 2003, Figs. 1 and 5), random:P[,SEED[,DEGREE]]"
_RANDOM = re.compile(r"^random:(\d+)(?:,(\d+))?(?:,(\d+))?$")
MAX_SCHEDULE_BYTES = 256 * 1024 * 1024


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
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (the schedule file, plus timings); exact "
                   '"p/q" strings')
    p.add_argument("-o", "--output", metavar="FILE",
                   help=f"write the schedule ({FORMAT}) to FILE")
    p.add_argument("--progress", action="store_true",
                   help="show progress even when stderr is not a terminal")
    p.set_defaults(func=run)


def load_platform(spec: str) -> Any:
    """A one-port platform from a file, stdin ('-') or a built-in name."""
    from collcert.reference.broadcast import OnePortPlatform
    from collcert.reference.broadcast import steady as sb

    if spec == "-":
        text = read_stdin("a one-port platform (JSON)")  # bounded, binary data refused
        if text.lstrip()[:1] != "{":
            raise TopologyError("stdin: not a one-port platform (a JSON object; "
                                "docs/steady-broadcast.md)" if text.strip() else
                                "stdin is empty: pipe a one-port platform JSON into the "
                                "command (docs/steady-broadcast.md)")
        return OnePortPlatform.from_json(text)
    if spec in ("fig1", "fig5"):
        return sb.paper_fig1() if spec == "fig1" else sb.paper_fig5()
    m = _RANDOM.match(spec)
    if m and not os.path.exists(spec):
        nodes, seed, degree = int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 3)
        if nodes > 2000:
            raise TopologyError(f"{spec}: at most 2000 nodes")
        return sb.random_platform(nodes, seed, degree)
    if not os.path.exists(spec) and not spec.endswith(".json") and "/" not in spec:
        raise TopologyError(f"{spec!r} is neither a platform file nor a built-in platform "
                            f"({BUILTINS})")
    return OnePortPlatform.from_json(spec)


def run(args: argparse.Namespace) -> int:
    from collcert.reference.broadcast import steady_broadcast
    from collcert.reference.model import fraction_str, show

    if args.output and os.path.isdir(args.output):
        raise ScheduleError(f"-o {args.output}: is a directory; give a file name")
    platform = load_platform(args.topology)
    source = args.source if args.source is not None else platform.nodes[0]
    progress = Progress("broadcast-steady LP", force=args.progress)
    started = time.monotonic()
    result = steady_broadcast(platform, source, dag=args.dag,
                              progress=lambda d, t, note: progress(d, t, note))
    compare = _compare(platform, result.source, result.throughput, args) if args.compare else None
    elapsed = time.monotonic() - started
    doc = result.to_json()
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                json.dump(doc, fh, indent=1)
                fh.write("\n")
        except OSError as exc:
            raise ScheduleError(f"cannot write {args.output}: {exc.strerror}") from None
    if args.json:
        out = dict(doc)
        if compare is not None:
            out["compare"] = {k: ({"skipped": v} if k.endswith("_skipped") else
                                  {"throughput": fraction_str(v[0]),
                                   "links": [[a, b] for a, b in v[1]]})
                              for k, v in compare.items()}
        out["seconds"] = {k: round(v, 3) for k, v in result.seconds.items()}
        out["seconds"]["total"] = round(elapsed, 3)
        print_json(out)
        return 0
    print(result.summary())
    if compare is not None:
        print("  comparison (Legrand et al. 2003, §3.1): best throughput using only")
        for k, label in (("tree", "one broadcast tree (eq. (1))"),
                         ("dag", "a DAG (SSBPDAG, §4.1)"), ("graph", "the whole graph (SSB)")):
            if k in compare:
                tp, edges = compare[k]
                links = " ".join(f"{u}->{v}" for u, v in edges)
                print(f"    {label}: {show(tp)}" + (f"   [{links}]" if k != "graph" else ""))
            elif f"{k}_skipped" in compare:
                print(f"    {label}: not searched ({compare[f'{k}_skipped']})")
    if args.output:
        print(f"  schedule written to {args.output} (check it: collcert audit "
              f"{args.topology} {args.output})")
    print(f"  time: {elapsed:.2f} s")
    return 0


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


# ------------------------------------------------------------------ hooks
def _steady_doc(path: str | None) -> dict[str, Any] | None:
    """The parsed schedule when ``path`` is a collcert-steady-broadcast/1 JSON file."""
    if not path or path == "-" or not os.path.isfile(path):
        return None
    from collcert.certify.forestcoll import load_json
    from collcert.certify.model import InputError, read_text

    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
        if FORMAT.encode() not in head and b"collcert-steady-broadcast" not in head:
            return None
        # bounded reading and a parse that must fit in memory (certify.files, readers)
        doc = load_json(read_text(path, MAX_SCHEDULE_BYTES), path)
    except OSError as exc:
        raise ScheduleError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except InputError as exc:
        raise ScheduleError(f"{exc} (a {FORMAT} file)") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return None
    return doc


def _platform_dict(spec: str) -> dict[str, Any]:
    return dict(load_platform(spec).to_json())


def audit_hook(args: argparse.Namespace) -> int | None:
    """``collcert audit PLATFORM FILE`` for a steady-state broadcast schedule; None if
    FILE is another kind of schedule."""
    doc = _steady_doc(getattr(args, "schedule", None))
    if doc is None:
        return None
    from collcert.certify.broadcast import check_steady_broadcast
    from collcert.certify.model import InputError

    try:
        verdict = check_steady_broadcast(_platform_dict(args.topology), doc)
    except InputError as exc:
        raise ScheduleError(f"{args.schedule}: {exc}") from None
    if getattr(args, "json", False):
        out = verdict.to_json()
        out.update({"valid": verdict.ok, "format": FORMAT})
        print_json(out)
    else:
        print(audit_summary(verdict, args.schedule))
    return 0 if verdict.ok else 1


def audit_summary(verdict: Any, path: str) -> str:
    from collcert.certify.model import frac_str

    f = verdict.facts
    if not verdict.ok:
        lines = [f"INVALID steady-state broadcast schedule {path}:"]
        lines += [f"  - {r}" for r in verdict.all_reasons()]
        return "\n".join(lines)
    return "\n".join([
        f"VALID steady-state broadcast schedule {path} (one-port model, Legrand et al. 2003)",
        f"  throughput {frac_str(f['throughput'])} message{_s(f['throughput'] != 1)} per time "
        "unit = 1/T*, "
        f"T* = {frac_str(f['T_star'])}: optimal (LP dual bound {frac_str(f['bound'])}; no "
        "schedule does better, Lemma 7)",
        f"  replayed {f['periods_replayed']} periods of {frac_str(f['period'])} with "
        f"{f['messages_per_period']} message{_s(f['messages_per_period'] != 1)} each: no node sends or receives twice at once, "
        "every message forwarded after it arrived, every node gets every message once",
        f"  measured steady-state throughput {frac_str(f['measured_throughput'])}; first batch "
        f"complete after {frac_str(f['latency'])}",
        ("  packing: " + (f"{f['trees']} weighted tree{_s(f['trees'] != 1)} (spanning, Σλ = N, load ≤ N·n), "
                          if f.get("method") == "trees" else "DAG heights rising along every "
                          "used link, loads = N·n, ")
         + f"{f['matchings']} matching{_s(f['matchings'] != 1)} (Σμ = N·T*)"),
    ])


def _s(plural: bool) -> str:
    return "s" if plural else ""


def draw_hook(args: argparse.Namespace) -> bool:
    """``collcert draw PLATFORM FILE -o OUT`` for a steady-state broadcast schedule."""
    doc = _steady_doc(getattr(args, "schedule", None))
    if doc is None:
        return False
    from collcert.drawing.steady_broadcast import draw_steady

    platform = load_platform(args.topology)
    draw_steady(platform, doc, args.output)
    print(f"Drew the trees and one period of {args.schedule} to {args.output}.")
    return True
