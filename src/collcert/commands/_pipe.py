"""``collcert broadcast-steady --size L`` (PIPE, Legrand et al. 2003, §6) and ``--messages N``
(a finite series, §5.5): exact makespans, replayed by ``collcert.certify.broadcast.pipe``
before they are printed."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from collcert.reference.model import TopologyError, show

from ._common import Progress, duration_text, print_json, write_output


def _checked(verdict: Any, what: str) -> None:
    if not verdict.ok:
        raise RuntimeError(f"internal: the {what} did not replay: "
                           + "; ".join(verdict.all_reasons()[:3]))


def run_finite(args: argparse.Namespace, platform: Any, source: Any) -> int:
    """The ``--size`` / ``--messages`` modes (refusing the options they do not combine with)."""
    if args.dag or args.compare:
        raise TopologyError("--size and --messages use the SSB tree schedule; drop "
                            f"{'--dag' if args.dag else '--compare'}")
    if args.packets is not None and args.size is None:
        raise TopologyError("--packets P needs --size L (P packets of size L/P)")
    if args.size is not None and args.messages is not None:
        raise TopologyError("give --size L (one message cut into packets) or --messages N "
                            "(N unit messages), not both")
    if args.messages is not None:
        return _series(args, platform, source)
    return _pipe(args, platform, source)


def _series(args: argparse.Namespace, platform: Any, source: Any) -> int:
    from collcert.certify.broadcast import check_series_doc
    from collcert.reference.broadcast import finite_series

    n = args.messages
    if n < 1:
        raise TopologyError(f"--messages {n}: broadcast at least one message")
    started = time.monotonic()
    run = finite_series(platform, source, n, lp_progress=_lp_bar(args, platform))
    doc = run.to_json()
    _checked(check_series_doc(platform.to_json(), json.loads(json.dumps(doc))),
             "finite series")
    ph = run.phases()
    if args.output:
        write_output(args.output, json.dumps(doc, indent=1) + "\n")
    if args.json:  # the very document -o writes, which audit and check read
        print_json(doc)
        _json_note(started)
        return 0
    print(f"{n} broadcasts of a unit message from {run.steady.source} on "
          f"{platform.name or 'the platform'} (Legrand et al. 2003, §5.5; start-ups ignored)")
    print(f"  makespan {show(run.makespan)}; lower bound n·T* = {show(n * run.steady.T_star)} "
          f"(Lemma 7); ratio {show(run.makespan / (n * run.steady.T_star))}")
    print(f"  {run.batches} batch{'es' if run.batches != 1 else ''} of "
          f"{run.steady.schedule.messages_per_period} in {run.periods} periods of "
          f"{show(run.steady.schedule.period)}: {ph['initialisation']} initialisation, "
          f"{ph['steady']} steady, {ph['clean_up']} clean-up")
    if run.compacted is not None:
        mk = run.compacted[1]
        print(f"  compacted (same transfers, same order on every port, each as early as "
              f"possible): makespan {show(mk)}, ratio {show(mk / (n * run.steady.T_star))}")
    print("  replayed event by event by collcert.certify (one-port, causality, delivery, "
          "makespan)")
    return 0


ESTIMATE_SHOWN_FROM = 5.0
"""Predicted seconds of SSB from which the estimate is printed and the rounds shown."""


def lp_progress(args: argparse.Namespace, platform: Any) -> Progress:
    """The SSB LP's round bar; before a long solve (or with --progress), its estimate
    from the platform's size on stderr, and the bar shown even when stderr is a file."""
    import sys

    from collcert.reference.broadcast import check_ssb_size, ssb_seconds

    seconds = ssb_seconds(len(platform.nodes), len(platform.cost))
    long = not getattr(args, "dag", False) and seconds >= ESTIMATE_SHOWN_FROM
    if long:
        check_ssb_size(platform)  # a refusal (memory, time) before the estimate
    if long or args.progress:
        print(f"note: SSB by cut generation (Legrand et al. 2003, §5.2) on "
              f"{len(platform.nodes)} nodes and {len(platform.cost)} links: estimated "
              f"{duration_text(seconds)} from its size (measured on random platforms; the "
              "rounds of cuts a platform needs can make it several times longer); "
              "rounds follow", file=sys.stderr, flush=True)
    return Progress("broadcast-steady LP (rounds of cuts)", force=long or args.progress)


def _lp_bar(args: argparse.Namespace, platform: Any) -> Any:
    """The SSB LP's estimate and rounds (:func:`lp_progress`)."""
    bar = lp_progress(args, platform)
    return lambda d, t, note: bar(d, t, note)


def _pipe(args: argparse.Namespace, platform: Any, source: Any) -> int:
    from collcert.certify.broadcast import check_pipe
    from collcert.reference.broadcast import pipe_broadcast

    started = time.monotonic()
    bar = Progress("PIPE packet counts", force=args.progress)
    res = pipe_broadcast(platform, source, args.size, packets=args.packets,
                         progress=lambda d, t: bar(d, t), lp_progress=_lp_bar(args, platform))
    doc = res.to_json()
    verdict = check_pipe(platform.to_json(), json.loads(json.dumps(doc)))
    _checked(verdict, "PIPE result")
    if args.output:
        write_output(args.output, json.dumps(doc, indent=1) + "\n")
    if args.json:  # the very document -o writes, which audit and check read
        print_json(doc)
        _json_note(started)
        return 0
    for line in _summary(res, doc):
        print(line)
    print(f"  time: {time.monotonic() - started:.2f} s")
    return 0


def _json_note(started: float) -> None:
    """With --json, what is not part of the document (how long, who replayed it) goes to
    stderr, so that stdout is the file audit and check read (issue 33 row 4)."""
    import sys

    print(f"replayed event by event by collcert.certify; time: "
          f"{time.monotonic() - started:.2f} s", file=sys.stderr)


def _summary(res: Any, doc: dict[str, Any]) -> list[str]:
    bound = res.lower_bound
    betas = len(res.platform.startup)
    lines = [f"PIPE: one message of size L = {show(res.size)} from {res.source} on "
             f"{res.platform.name or 'the platform'} (Legrand et al. 2003, §6), packets "
             f"costing β + size·c; start-ups on {betas} link{'s' if betas != 1 else ''}, "
             f"w = max β/c = {doc['slack_w']}",
             f"  lower bound L·T* = {show(bound)} (T* = {show(res.unit.T_star)} per unit, "
             "SSB without start-ups: no schedule is faster, Lemma 7)"]
    for label, run in (("paper's ν = ⌈√L⌉", res.paper), ("best found", res.best)):
        ph = run.run.phases()
        lines.append(f"  {label}: {run.packets} packet{'s' if run.packets != 1 else ''} of "
                     f"{show(run.size)}: makespan {show(run.makespan)}, ratio "
                     f"{show(run.makespan / bound)}")
        lines.append(f"      stretch s = {show(run.scale)}, {run.run.batches} batch"
                     f"{'es' if run.run.batches != 1 else ''}; periods: "
                     f"{ph['initialisation']} initialisation, {ph['steady']} steady, "
                     f"{ph['clean_up']} clean-up")
        if run.run.compacted is not None:
            mk = run.run.compacted[1]
            lines.append(f"      compacted (each transfer as early as possible, same order "
                         f"on every port): makespan {show(mk)}, ratio {show(mk / bound)}")
    s = doc["searched"]
    lines.append(f"  search: {s['counts']} packet counts from {s['least']} to {s['most']} "
                 "(the best is a local minimum among them, not proven optimal)")
    lines.append("  Thm 8: the ratio tends to 1 as L grows; replayed event by event by "
                 "collcert.certify (one-port, causality, delivery, makespan, bound)")
    return lines
