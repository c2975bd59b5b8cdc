"""``collcert audit``: check a schedule, compute its exact time, compare with the optimum."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from collcert.auditing import (
    FORMATS,
    audit,
    audit_file,
    audit_steady,
    judge,
    parse_claim,
    steady_document,
)
from collcert.reference.model import ScheduleError

from . import _runtime, _sizes, _whatif, _whatif_machine
from ._common import (
    add_json_option,
    add_topology_argument,
    announce_estimates,
    load_topology,
    print_json,
    print_result,
    read_ranks,
    read_stdin,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "audit",
        help="check a schedule (collcert JSON, ForestColl XML, MSCCL XML) and rate it",
        description="Audit a collective schedule on a topology: check that it is correct "
        "(every node ends up with the data the collective promises: trees span all GPUs, "
        "multiplicities add up, paths follow real links; MSCCL programs are simulated chunk by "
        "chunk), compute its exact time and algbw (algbw = data size / time, bandwidth model: "
        "the busiest link decides), and compare it with the certified optimum. The checks are "
        "done by collcert.certify, small exact checkers independent of the code that builds "
        "schedules. Prints VALID or INVALID with reasons.",
        epilog="Exit codes: 0 VALID (and the claim, if any, not refuted), 1 INVALID or claim "
        "refuted, 2 unreadable input (malformed or hostile file, "
        "unknown nodes, absurd sizes), 3 internal error. Example: collcert audit dgx_a100:2 "
        "ag.json; collcert audit ring:8 ring.xml --format msccl-xml --json",
    )
    add_topology_argument(p, optional=False)
    p.add_argument("schedule", metavar="SCHEDULE",
                   help="the schedule file: collcert JSON (docs/schedule-format.md), ForestColl "
                   "tree XML, or an MSCCL algorithm XML; '-' reads it from stdin")
    p.add_argument("--format", "-f", choices=FORMATS, default=None,
                   help="the schedule's format (default: detected from the file: JSON, or XML "
                   "whose <algo> has ngpus= is MSCCL, other XML is ForestColl; JSON whose "
                   "\"gpus\" hold \"threadblocks\" is an MSCCL++ plan, docs/mscclpp.md)")
    p.add_argument("--ranks", metavar="FILE",
                   help="MSCCL and MSCCL++ only: which compute node runs each rank, one node id per line "
                   "or a JSON array (default: rank i is the i-th compute node of the topology)")
    _runtime.add_argument(p, audit=True)
    add_json_option(p, '; algbw, time_per_unit and ratio are exact "p/q" strings; "runtimes" '
                    "lists what each runtime does with an MSCCL file")
    _sizes.add_size_arguments(p)
    g = p.add_argument_group(
        "claims (docs/auditing.md#claims)",
        "refute a reported speed: exit 1 with the reason when the claim beats the schedule's "
        "own bandwidth-model time (its busiest link) or the certified optimum (its cut). "
        "Exact numbers; plain numbers are in the topology's units, or give units: 400GB/s, "
        "1GiB, 2.5ms")
    g.add_argument("--claim-algbw", metavar="X",
                   help="claimed algbw (data size / time), e.g. 400 or 400GB/s")
    g.add_argument("--claim-time", metavar="T",
                   help="claimed time for data size --size, e.g. 2.5ms")
    g.add_argument("--size", "--claim-size", dest="claim_size", metavar="M",
                   help="the data size the claimed time is for (nccl-tests' size: allgather "
                   "the whole output, reduce-scatter the whole input), e.g. 1GB")
    _whatif.add_arguments(p)  # audit on the changed machine (docs/whatif.md)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    doc = steady_document(args.schedule)  # recognised by its content, before the topology
    if doc is not None:
        if args.runtime is not None:
            raise ScheduleError("--runtime judges MSCCL XML and MSCCL++ plans, not a "
                                "steady-state broadcast schedule: drop --runtime")
        return _audit_steady(args, doc)
    if args.schedule != "-" and not os.path.lexists(args.schedule):
        # before the topology: a one-port platform name (fig1) is only known for
        # steady-state broadcast schedules, which are recognised by their content
        raise ScheduleError(f"{args.schedule}: no such file")
    if args.topology == "-" and args.schedule == "-":
        raise ScheduleError("TOPOLOGY and SCHEDULE cannot both be '-' (stdin): give one of "
                            "them as a file")
    topo, hint = _whatif_machine.judged_machine(  # allreduce: any directed graph
        args, load_topology(args.topology, strict=False), args.schedule, "audit")
    _sizes.check_unit(args, topo)
    claim = parse_claim(args.claim_algbw, args.claim_time, args.claim_size, topo.unit)
    ranks = None if args.ranks is None else read_ranks(args.ranks)  # missing file: exit 2
    with announce_estimates("audit"):  # a long simulation says so first
        if args.schedule == "-":
            try:
                report = audit(topo, read_stdin("a schedule"), args.format, ranks,
                               runtime=args.runtime)
            except ScheduleError as exc:
                raise ScheduleError(f"stdin: {exc}") from None
        else:
            report = audit_file(topo, args.schedule, args.format, ranks,
                                runtime=args.runtime)
    verdict = None if claim is None else judge(report, *claim)
    if args.json:
        out = report.to_json()
        out["topology_name"] = topo.name
        if verdict is not None:
            out["claim"] = verdict.to_json()
        if _sizes.wanted(args):
            out["sizes"] = _sizes.audit_view(args, topo, report)
        print_json(out)
    else:
        print(report.summary())
        if verdict is not None:
            print(verdict.summary(topo.unit))
        if _sizes.wanted(args):
            print()
            _sizes.audit_view(args, topo, report)
        if hint:  # built for a changed machine: how to audit it there
            print(hint)
        sys.stdout.flush()
    return 0 if report.valid and not (verdict and verdict.refuted) else 1


def _audit_steady(args: argparse.Namespace, doc: dict[str, Any]) -> int:
    """A steady-state broadcast schedule, audited on the one-port platform TOPOLOGY names
    (a file, or fig1, fig5, random:P: those of ``collcert broadcast-steady``)."""
    from .broadcast_steady import load_platform

    report = audit_steady(load_platform(args.topology, doc, args.schedule), doc,
                          name=args.schedule)
    print_result(args, report)
    return 0 if report.valid else 1
