"""``collcert reduce-tree``: optimal associative reduction trees (Canon & Antoniu, RR-7898)."""

from __future__ import annotations

import argparse
import json
import sys
from fractions import Fraction
from typing import Any

from collcert.reference.model import fraction_str, parse_number, show
from collcert.reference.reduction import STRATEGIES, ReductionError, solve

from ._common import print_json, write_output
from ._reduction_file import read_reduction_file

_EPILOG = """\
The model (Canon & Antoniu, "Scheduling Associative Reductions with Homogeneous
Costs when Overlapping Communications and Computations", INRIA RR-7898): n machines
hold one element each at time 0; sending an element costs D, reducing two costs C;
a machine receives while it computes (unless --non-overlapping), takes part in one
transfer at a time, and sends its result once, after its reductions. Machine 1 is
the sink. Algorithms: 1 (optimal, Thm 4), 2 (at most K concurrent transfers,
Thm 7), 3 (at most K reducers, Thm 9); strategies: binomial (Thm 18), Fibonacci
(Thm 19). Every schedule is re-checked by an independent simulator
(collcert.certify.reduction) before it is printed.

examples:
  collcert reduce-tree 8 --transfer 2 --compute 1
  collcert reduce-tree 1000 --transfer 1/2 --compute 1/3 --max-transfers 4 --json
  collcert reduce-tree 20 --transfer 1 --compute 1 -o tree.json
  collcert draw tree.json -o tree.png             # the tree and a Gantt chart (n <= 256)
  collcert reduce-tree --check tree.json          # check any collcert-reduction/1 file
  collcert reduce-tree 10000 --figure2 fig2.png   # the approximation ratios (Figure 2)

exit status: 0 success / valid, 1 an invalid schedule (--check), 2 bad input."""

MAX_TEXT_TREE = 64


def _count(text: str) -> int:
    try:
        value = parse_number(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value.denominator != 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    return int(value)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "reduce-tree",
        help="optimal associative reduction tree for n elements (transfer and compute costs)",
        description="Build the optimal reduction tree and transfer dates for N elements when\n"
        "each transfer costs D and each reduction costs C, with the bounds on the optimum;\n"
        "or check a reduction schedule file; or draw the approximation ratios of the\n"
        "binomial and Fibonacci strategies (Figure 2).",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("n", nargs="?", type=_count, metavar="N",
                   help="number of elements (machines), at least 1")
    p.add_argument("--transfer", "-d", metavar="D",
                   help="cost of one transfer: an integer, decimal or ratio such as 1/2")
    p.add_argument("--compute", "-c", metavar="C", help="cost of one reduction")
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--max-transfers", type=_count, metavar="K",
                       help="at most K transfers in flight at once (Algorithm 2)")
    limit.add_argument("--max-reducers", type=_count, metavar="K",
                       help="at most K machines reduce (Algorithm 3)")
    p.add_argument("--non-overlapping", action="store_true",
                   help="a machine cannot receive while it computes: k elements cost k(D+C)")
    p.add_argument("--strategy", default="optimal", choices=STRATEGIES,
                   help="optimal (default), binomial (Algorithm 1 with min(D,C) = 0) or "
                   "fibonacci (Algorithm 1 with D = C), measured under the real costs")
    p.add_argument("--json", action="store_true",
                   help="print the collcert-reduction/1 document (exact \"p/q\" strings)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the collcert-reduction/1 document (docs/reduction-trees.md)")
    p.add_argument("--check", metavar="FILE",
                   help="check a collcert-reduction/1 file with the independent simulator")
    p.add_argument("--figure2", metavar="PICTURE",
                   help="draw the approximation ratios of the binomial and Fibonacci "
                   "strategies for 2 ≤ n ≤ N (default 10000) and against C/D (.png or .svg)")
    p.set_defaults(func=run)


def _cost(text: str | None, option: str) -> Fraction:
    if text is None:
        raise ReductionError(f"give {option}: the cost of one "
                             f"{'transfer' if 'transfer' in option else 'reduction'}")
    try:
        value = parse_number(text)
    except ValueError as exc:
        raise ReductionError(f"{option} {text}: {exc}") from None
    if value < 0:
        raise ReductionError(f"{option} {text}: costs must be non-negative")
    return value


SECONDS_PER_MACHINE = 3e-5
"""Time per machine of solving, dating and checking a tree (27.6 s at N = 1 million, 474 MB,
with /usr/bin/time -v on a loaded 2-core machine): a planning figure, never a result."""
ANNOUNCE_FROM = 1_000_000


def _announce(n: int) -> None:
    """Before a long solve: the time and memory it will take, on stderr (exit 2 if they do
    not fit the budgets, docs/limits.md)."""
    from collcert.reference.model import check_budget
    from collcert.reference.reduction import trees

    seconds = SECONDS_PER_MACHINE * n
    check_budget(f"n = {n}", trees.BYTES_PER_MACHINE * n, f"a reduction schedule of {n} machines",
                 seconds=seconds, action="try a smaller n")
    if n >= ANNOUNCE_FROM:
        minutes = f"{seconds / 60:.0f} minutes" if seconds >= 120 else f"{seconds:.0f} s"
        print(f"reduce-tree: {n} machines: about {minutes} and "
              f"{trees.BYTES_PER_MACHINE * n / 1e9:.1f} GB of memory (docs/limits.md)",
              file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    if args.check:
        return _check_file(args)
    if args.figure2:
        from ._reduction_draw import draw_figure2

        marks = None
        if args.transfer is not None and args.compute is not None:
            marks = (_cost(args.transfer, "--transfer"), _cost(args.compute, "--compute"))
        draw_figure2(args.figure2, args.n or 10000, marks)
        print(f"wrote {args.figure2}")
        return 0
    if args.n is None:
        raise ReductionError("give N, the number of elements (or --check FILE, --figure2 PNG)")
    d, c = _cost(args.transfer, "--transfer"), _cost(args.compute, "--compute")
    _announce(args.n)
    sched = solve(args.n, d, c, strategy=args.strategy, max_transfers=args.max_transfers,
                  max_reducers=args.max_reducers, overlap=not args.non_overlapping)
    from collcert.certify.reduction import check_reduction
    from collcert.reference.reduction import schedule_document

    doc = schedule_document(sched)
    verdict, _ = check_reduction(doc)
    if not verdict.ok or verdict.facts.get("makespan") != sched.makespan:
        raise RuntimeError("the simulator refutes collcert's own schedule: "
                           + "; ".join(verdict.all_reasons()[:3]))
    doc["check"] = verdict.to_json()
    if args.strategy != "optimal":
        best = solve(args.n, d, c).makespan
        doc["optimum"] = fraction_str(best)
    if args.output:
        write_output(args.output, json.dumps(doc) + "\n")
    if args.json:
        print_json(doc)
    else:
        _print_text(doc, verdict.facts, sched.parent)
        if args.output:
            from ._reduction_draw import MAX_DRAWN

            hint = (f"draw it: collcert draw {args.output} -o tree.png" if args.n <= MAX_DRAWN
                    else f"check it: collcert reduce-tree --check {args.output}")
            print(f"wrote {args.output} ({hint})")
    return 0


def _print_text(doc: dict[str, Any], facts: dict[str, Any], parent: list[int]) -> None:
    n = doc["n"]
    model = ("transfers overlap reductions" if doc["model"] == "overlap"
             else "transfers and reductions do not overlap")
    limit = (f", at most {doc['max_transfers']} transfers in flight" if doc["max_transfers"]
             else f", at most {doc['max_reducers']} reducers" if doc["max_reducers"] else "")
    print(f"reduce {n} element{'s' * (n != 1)}: transfer d = {doc['transfer']}, compute "
          f"c = {doc['compute']}, {model}{limit}")
    print(f"  schedule     {doc['algorithm']}")
    print(f"  makespan     {show(Fraction(doc['makespan']))}")
    if "optimum" in doc:
        opt = Fraction(doc["optimum"])
        ratio = Fraction(doc["makespan"]) / opt if opt else Fraction(1)
        print(f"  optimum      {show(opt)} (Algorithm 1); ratio {show(ratio)}")
    for b in doc["bounds"]:
        print(f"  {b['kind']} bound  {show(Fraction(b['value'])):<20} {b['name']}: "
              f"{b['formula']}")
    t = doc["tree"]
    print(f"  tree         depth {t['depth']}, at most {_n(t['max_in_degree'], 'sender')} per "
          f"machine, {_n(t['reducers'], 'reducer')}, at most "
          f"{_n(facts['max_concurrent_transfers'], 'transfer')} in flight")
    print(f"  checked      the independent simulator recomputes makespan "
          f"{fraction_str(facts['makespan'])} from the tree and dates, and the operand "
          "order (non-commutative)")
    if n > MAX_TEXT_TREE:
        print(f"  (the tree of {n} machines is in --json / -o FILE)")
        return
    print("tree (machine <- its senders, each with the date its transfer starts):")
    kids: dict[int, list[int]] = {}
    order = doc["operand_order"]
    rank = {m - 1: j for j, m in enumerate(order)}
    for i, p in enumerate(parent):
        if p >= 0:
            kids.setdefault(p, []).append(i)
    lines: list[str] = []

    def walk(v: int, prefix: str, last: bool, top: bool) -> None:
        when = "sink" if top else f"sends at {doc['send_time'][v]}"
        branch = "" if top else ("└─ " if last else "├─ ")
        lines.append(f"{prefix}{branch}{v + 1}  ({when})")
        ks = sorted(kids.get(v, []), key=rank.__getitem__)
        inner = prefix + ("" if top else ("   " if last else "│  "))
        for j, k in enumerate(ks):
            walk(k, inner, j == len(ks) - 1, False)

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * MAX_TEXT_TREE))
    walk(0, "  ", True, True)
    print("\n".join(lines))
    print(f"operand order of the result: {' '.join(map(str, order))}")


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def _check_file(args: argparse.Namespace) -> int:
    from collcert.certify.reduction import check_reduction

    data = read_reduction_file(args.check)
    verdict, sim = check_reduction(data)
    if sim is None:  # unreadable (wrong types, lengths, numbers): exit 2, not INVALID
        raise ReductionError(f"{args.check}: " + "; ".join(verdict.all_reasons()))
    if args.json:
        print_json(verdict.to_json())
    else:
        print(f"{args.check}: {'VALID' if verdict.ok else 'INVALID'} reduction schedule")
        if verdict.ok:
            f = verdict.facts
            print(f"  makespan {fraction_str(f['makespan'])} (recomputed from the tree and "
                  f"dates); {f['reducers']} reducers; at most {f['max_concurrent_transfers']} "
                  f"transfers in flight; depth {f['depth']}; operand order: "
                  f"{f['operand_order']}")
        for r in verdict.all_reasons():
            print(f"  - {r}")
    return 0 if verdict.ok else 1
