"""Auditing schedules: is it correct, how fast is it, how far from the optimum?

``audit(topology, schedule)`` reads a schedule (collcert JSON, ForestColl tree
XML or MSCCL algorithm XML), checks it with the independent checkers of
``collcert.certify``, computes its exact time and algbw on the topology, and
compares it with the certified optimum (computed by ``collcert.reference``;
its certificate is checked by ``collcert.certify`` before it is used).

MSCCL programs name no paths: their traffic is routed by ``collcert.auditing.routing``
(direct links, else a certified minimum-congestion multicommodity flow). A
steady-state broadcast schedule goes to ``collcert.auditing.steady``, on its
one-port platform.

Importing this module does not import ``collcert.reference`` (``collcert
check`` runs without it); the reference code is imported where it is used.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from collcert.certify.execution import msccl as msccl_mod
from collcert.certify.execution import msccl_sim, mscclpp, mscclpp_sim
from collcert.certify.forestcoll import check_schedule, forestcoll_xml, read_schedule, schedule_json
from collcert.certify.model import InputError, Topo, Verdict, load_json
from collcert.certify.model import frac_str as fraction_str

from . import loadability
from .bounds import OptimumInfo
from .optimum import certified_optimum
from .report import AuditReport
from .routing import route
from .steady import (
    STEADY,
    STEADY_FORMAT,
    SteadyBroadcastReport,
    audit_steady,
    is_platform,
    steady_schedule,
)
from .switches import reduction_time, switch_traffic

if TYPE_CHECKING:
    from collcert.reference.broadcast import OnePortPlatform
    from collcert.reference.model import Topology

FORMATS = ("json", "forestcoll-xml", "msccl-xml", "mscclpp-json")
MAX_FILE_BYTES = 512 * 1024 * 1024


def is_mscclpp_head(head: str) -> bool:
    """Whether a JSON text (its first 4096 characters) is an MSCCL++ execution plan
    (docs/mscclpp.md): a "gpus" array, "threadblocks" or "collective", and no collcert
    "format" ("threadblocks" may come after the head: a plan whose first GPU lists many
    channels, as collcert's NVLS export of 128 ranks does, was taken for a collcert
    schedule). ``collcert audit`` and ``collcert smoke`` both detect plans by it."""
    import re

    return (re.search(r'"gpus"\s*:\s*\[', head) is not None
            and ('"threadblocks"' in head or '"collective"' in head)
            and re.search(r'"format"\s*:\s*"collcert-', head) is None)


def _detect(text: str) -> str:
    from collcert.reference.model import ScheduleError

    head = text.lstrip()[:4096]
    if head.startswith(("{", "[")):
        return "mscclpp-json" if is_mscclpp_head(head) else "json"
    if head.startswith("<"):
        import re

        m = re.search(r"<algo\b[^>]*>", head)
        if m and ("ngpus=" in m.group(0) or "nchunksperloop=" in m.group(0)):
            return "msccl-xml"
        return "forestcoll-xml"
    raise ScheduleError("cannot tell the schedule's format: it is neither JSON nor XML; "
                        "pass --format json|forestcoll-xml|msccl-xml|mscclpp-json")


def rank_nodes(topology: Topology, ranks: Sequence[Any] | str | os.PathLike[str] | None,
               ) -> list[Any]:
    """The compute node each rank of an MSCCL program runs on: ``ranks`` lists them (or
    names a file of node ids, one a line or a JSON array); None: rank i is the i-th
    compute node. Raises :class:`~collcert.ScheduleError` for an unknown or repeated node."""
    from collcert.reference.model import ScheduleError

    if ranks is None:
        return list(topology.compute_nodes)
    if isinstance(ranks, str | os.PathLike):
        from collcert.reference.model import read_text

        # bounded, binary and non-UTF-8 files refused with a message (exit 2), never cut
        text = read_text(ranks, f"ranks file {os.fspath(ranks)}", limit=16 * 1024 * 1024,
                         what="a ranks file (one node id per line, or a JSON array)")
        if text.lstrip().startswith("["):
            try:
                items = load_json(text, str(ranks))
            except InputError as exc:
                raise ScheduleError(str(exc)) from None
            if not isinstance(items, list):
                raise ScheduleError(f"{ranks}: expected a JSON array of node ids")
        else:
            items = [line.strip() for line in text.splitlines() if line.strip()]
    else:
        items = list(ranks)
    by_text = {str(v): v for v in topology.nodes}
    out = []
    for i, r in enumerate(items):
        # exact types only: true == 1 and 1.0 == 1 would otherwise name node 1
        node = r if type(r) in (str, int) and r in topology.index else by_text.get(str(r))
        if node is None or not topology.is_compute(node):
            raise ScheduleError(f"ranks entry {i} names {r!r}, which is not a compute node of "
                                "the topology")
        out.append(node)
    if len(set(out)) != len(out):
        raise ScheduleError("the ranks list names a compute node twice")
    return out


def audit(
    topology: Topology | OnePortPlatform,
    schedule: Mapping[str, Any] | str | bytes,
    fmt: str | None = None,
    ranks: Sequence[Any] | str | os.PathLike[str] | None = None,
    *,
    check_optimum_certificate: bool = True,
    runtime: str | None = None,
) -> AuditReport:
    """Audit ``schedule`` (a dict, or the text of a file) on ``topology``.

    MSCCL XML (and MSCCL++ plans with a registered profile): the report lists what
    every runtime does with the file (``report.runtimes``, docs/runtimes.md); with
    ``runtime``, a file that runtime does not load is INVALID (:mod:`.loadability`).

    Returns an :class:`AuditReport`. Raises :class:`~collcert.ScheduleError`
    when the schedule cannot be read at all (malformed, hostile or absurd
    input, references to nodes the topology does not have).

    A steady-state broadcast schedule (``collcert-steady-broadcast/1``, recognised
    by its content) is audited on its one-port platform, given as ``topology``
    (a ``OnePortPlatform`` or its JSON): the report is a
    :class:`~collcert.auditing.steady.SteadyBroadcastReport`.
    """
    from collcert.reference.model import ScheduleError, Topology

    if not isinstance(topology, Topology) and not is_platform(topology):
        raise TypeError("audit() needs a collcert.Topology (or, for a steady-state broadcast "
                        "schedule, its one-port platform)")
    if fmt is not None and fmt not in (*FORMATS, STEADY):
        raise ScheduleError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)} "
                            f"(or {STEADY})")
    if isinstance(schedule, bytes):
        try:
            schedule = schedule.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ScheduleError(f"the schedule is not UTF-8 text (byte {exc.start})") from None
    if not isinstance(schedule, str | Mapping):
        raise ScheduleError(f"a schedule is a dict or text, not {type(schedule).__name__}")
    steady = steady_schedule(schedule) if fmt in (None, "json", STEADY) else None
    if steady is not None or fmt == STEADY or not isinstance(topology, Topology):
        return _audit_steady(topology, steady, ranks)
    if isinstance(schedule, str):
        fmt = fmt or _detect(schedule)
    else:
        if fmt not in (None, "json"):
            raise ScheduleError(f"a dict schedule is collcert JSON, not {fmt}")
        fmt = "json"
    if runtime is not None and fmt not in loadability.FORMATS:
        raise ScheduleError(f"--runtime judges MSCCL XML and MSCCL++ plans, not a {fmt} "
                            "schedule (no runtime reads it): drop --runtime")
    data: Any = schedule if isinstance(schedule, Mapping) else None
    try:
        topo = Topo(topology.to_json())
        if fmt == "msccl-xml":
            assert isinstance(schedule, str)
            return loadability.attach(_audit_msccl(
                topology, topo, schedule, ranks, check_optimum_certificate), schedule, fmt,
                runtime)
        if fmt == "mscclpp-json":
            assert isinstance(schedule, str)
            return loadability.attach(_audit_mscclpp(
                topology, topo, schedule, ranks, check_optimum_certificate), schedule, fmt,
                runtime)
        if isinstance(schedule, str):
            data = (schedule_json(schedule, orbits=True) if fmt == "json" else
                    forestcoll_xml(schedule, node_ids=[str(v) for v in topo.nodes]))
        else:
            data = schedule
        report = _audit_trees(topology, topo, data, fmt, check_optimum_certificate)
        if ranks is not None:
            report.notes.append("ranks were ignored: tree schedules name their nodes")
        return report
    except InputError as exc:
        raise ScheduleError(str(exc) + made_for(topology, data)) from None


def _audit_steady(platform: Any, doc: Mapping[str, Any] | None, ranks: Any,
                  ) -> SteadyBroadcastReport:
    """A steady-state broadcast schedule, which only its one-port platform can audit."""
    from collcert.reference.model import ScheduleError

    if doc is None:
        raise ScheduleError(f"a one-port platform audits only steady-state broadcast "
                            f"schedules ({STEADY_FORMAT}, docs/steady-broadcast.md); this "
                            "schedule is not one")
    if not is_platform(platform):
        raise ScheduleError(f"a {STEADY_FORMAT} schedule is audited on its one-port platform "
                            "(a OnePortPlatform or its JSON, docs/steady-broadcast.md), not "
                            "on a Topology")
    report = audit_steady(platform, doc)
    if ranks is not None:
        report.notes.append("ranks were ignored: a steady-state broadcast schedule names "
                            "its nodes")
    return report


def made_for(topology: Topology, data: Any) -> str:
    """A hint when a collcert JSON schedule records another topology than the one given."""
    if not isinstance(data, Mapping):
        return ""
    digest, name = data.get("topology"), data.get("topology_name")
    if not isinstance(digest, str) or digest == topology.content_hash():
        return ""
    made = repr(name[:60]) if isinstance(name, str) else "another topology"
    given = repr(topology.name[:60]) if topology.name else "the topology given"
    return f" (this schedule was made for {made}, {digest[:19]}…, not for {given})"


def audit_file(
    topology: Topology | OnePortPlatform,
    path: str | os.PathLike[str],
    fmt: str | None = None,
    ranks: Sequence[Any] | str | os.PathLike[str] | None = None,
    runtime: str | None = None,
) -> AuditReport:
    """Audit the schedule file at ``path`` (format detected when ``fmt`` is None);
    ``topology``, ``runtime`` and the report as in :func:`audit`."""
    from collcert.reference.forestcoll import read_text
    from collcert.reference.model import ScheduleError

    p = os.fspath(path)
    try:
        size = os.path.getsize(p)
        if size > MAX_FILE_BYTES:
            raise ScheduleError(f"{p}: {size} bytes is more than collcert audits "
                                f"({MAX_FILE_BYTES})")
    except FileNotFoundError:
        raise ScheduleError(f"{p}: no such file") from None
    except OSError:
        pass  # read_text names the problem
    text = read_text(p, MAX_FILE_BYTES)  # gzip recognised by its magic bytes, size capped
    try:
        report = audit(topology, text, fmt, ranks, runtime=runtime)
    except ScheduleError as exc:
        raise ScheduleError(f"{p}: {exc}") from None
    if isinstance(report, SteadyBroadcastReport):
        report.name = p  # its summary names the file, as collcert audit prints it
    return report


# --------------------------------------------------------------------------- #
# tree schedules (collcert JSON, ForestColl XML)
# --------------------------------------------------------------------------- #
def _audit_trees(topology: Topology, topo: Topo, data: Any, fmt: str,
                 check_opt: bool) -> AuditReport:
    sched = read_schedule(topo, data, orbits=True)  # a symmetric file: checked by orbits
    verdict = check_schedule(topo, sched)
    notes = list(verdict.facts.get("notes", []))
    if "checked_by_orbits" in verdict.facts:
        notes.append("a symmetric file, checked by orbits without writing it out: "
                     + verdict.facts["checked_by_orbits"])
    weights = None
    if sched.weights is not None:
        weights = [sched.weights[c] for c in topo.compute]
    opt = certified_optimum(topology, topo, sched.collective, sched.root, weights, check_opt)
    notes += opt.notes
    own = verdict.facts.get("certified_optimum_algbw")
    if own is not None and opt.algbw is not None and own != opt.algbw and verdict.ok:
        notes.append(f"the schedule's own optimum certificate proves algbw {fraction_str(own)} "
                     "best for its setting (for example a fixed number of trees k)")
    if topology.multicast_switches and opt.algbw is not None:
        notes.append("the optimum assumes no in-network multicast; with multicast switches "
                     "a schedule may exceed it (Zhao et al. 2026, §5.6)")
    report = _report(verdict, sched.collective, fmt, topology.unit, opt, notes,
                     "paths given by the schedule", multicast=bool(topology.multicast_switches))
    report.bottleneck = list(verdict.facts.get("bottleneck", []))
    report.proven_time_per_unit = report.time_per_unit  # the paths are given: no other way
    return report


def _report(verdict: Verdict, collective: str, fmt: str, unit: str, opt: OptimumInfo,
            notes: list[str], routing: str, extra_checks: Sequence[Verdict] = (),
            multicast: bool = False) -> AuditReport:
    opt_bw, lower, opt_verdict = opt.algbw, opt.lower, opt.verdict
    valid = verdict.ok
    time = verdict.facts.get("time_per_unit") if valid else None
    algbw = 1 / time if time else None
    ratio = algbw / opt_bw if algbw is not None and opt_bw else None
    if collective == "allreduce" and opt_bw is not None and lower is not None:
        notes.append(f"allreduce: the proven lower bound on the time is {fraction_str(lower)} "
                     + (f"({opt.witness})" if opt.witness.startswith("the in-network") else
                        "(Zhao & Krishnamurthy 2023, bounds (6), (7))"))
    if ratio is not None and ratio > 1 and collective != "allreduce" and opt.bound:
        # without in-network multicast no valid schedule beats a certified optimum
        raise RuntimeError(f"internal: a schedule judged valid runs at {fraction_str(ratio)} × "
                           "the certified optimum; a checker or the optimum is wrong")
    if (collective == "allreduce" and time is not None and lower is not None and time < lower
            and opt.bound):
        raise RuntimeError(f"internal: an allreduce judged valid takes {fraction_str(time)} per "
                           f"unit, below the certified lower bound {fraction_str(lower)}; a "
                           "checker or the bound is wrong")
    checks = [verdict.to_json()] + [c.to_json() for c in extra_checks]
    if opt_verdict is not None:
        checks.append(opt_verdict.to_json())
    for c in checks:
        c.get("facts", {}).pop("notes", None)
    return AuditReport(valid, verdict.all_reasons(), algbw, time, opt_bw, ratio, routing, fmt,
                       collective, unit, notes, checks, lower, bound_algbw=opt.bound,
                       bound_witness=opt.witness, multicast=multicast,
                       optimum_kind=opt.kind)


# --------------------------------------------------------------------------- #
# MSCCL programs
# --------------------------------------------------------------------------- #
def _audit_msccl(topology: Topology, topo: Topo, text: str, ranks: Any,
                 check_opt: bool) -> AuditReport:
    from collcert.reference.model import ScheduleError

    prog = msccl_mod.read(text)
    nodes = rank_nodes(topology, ranks)
    if prog.ngpus != len(nodes):
        raise ScheduleError(
            f"the MSCCL program has ngpus={prog.ngpus} but {len(nodes)} ranks are mapped to "
            f"compute nodes ({'--ranks' if ranks is not None else 'the topology has'} "
            f"{len(nodes)}); pass --ranks with one compute node per rank")
    res = msccl_sim.run(prog)
    verdict = res.verdict
    demands: dict[tuple[Any, Any], Fraction] = {}
    for (p, q), chunks in res.traffic.items():
        if p != q:
            key = (nodes[p], nodes[q])
            demands[key] = demands.get(key, Fraction(0)) + Fraction(chunks, prog.nchunks)
    notes: list[str] = list(verdict.facts.get("notes", []))
    modes = verdict.facts.get("modes")
    if modes:
        marks = f'inplace="{int(prog.inplace)}"' + (
            "" if prog.outofplace is None else f' outofplace="{int(prog.outofplace)}"')
        notes.append(f"calls: checked as {' and '.join(modes)} calls, those the executor may "
                     f"run it for ({marks}; docs/auditing.md)")
    extra: list[Verdict] = []
    if len(nodes) != topology.num_compute:
        notes.append("the program uses only some compute nodes; the optimum is for all")
    routing, lower, bottleneck = _timed(topology, demands, verdict, notes, extra, "program")
    prog_root = getattr(prog, "root", None)
    root = None if prog_root is None else nodes[prog_root]  # broadcast, reduce
    opt = certified_optimum(topology, topo, prog.collective, root, None, check_opt)
    notes += opt.notes
    if len(nodes) != topology.num_compute:
        opt.bound = None  # a collective on fewer ranks is another problem
    notes.append("bandwidth model: time = max over links of traffic / capacity; step "
                 "dependencies and latency are not modelled")
    if prog.proto in ("LL", "LL128"):
        share = "half of each 8-byte line" if prog.proto == "LL" else "120 of each 128 bytes"
        wire = Fraction(2) if prog.proto == "LL" else Fraction(128, 120)
        t = verdict.facts.get("time_per_unit")
        counted = ("" if not isinstance(t, Fraction) or t <= 0 else
                   f": with the flags counted, time per unit {fraction_str(t * wire)}, algbw "
                   f"{fraction_str(1 / (t * wire))} {topology.unit}")
        notes.append(f"protocol {prog.proto}: data fills only {share} on the wire (the rest "
                     f"are flags); the time above counts data only{counted}")
    report = _report(verdict, prog.collective, "msccl-xml", topology.unit, opt, notes,
                     routing, extra, multicast=bool(topology.multicast_switches))
    if report.valid:
        report.proven_time_per_unit = lower
        report.bottleneck = [bottleneck + (" (and no routing of this traffic is faster)"
                                           if lower == report.time_per_unit else "")]
    return report


# --------------------------------------------------------------------------- #
# MSCCL++ execution plans (docs/mscclpp.md)
# --------------------------------------------------------------------------- #
MSCCLPP_SECONDS_PER_UNIT = 2e-7  # CPU s; NVLS exports of 64, 72, 128 ranks: 1.6-1.8e-7
MSCCLPP_BYTES_PER_UNIT = 8  # 128 ranks: 784 MB peak for 232 million units (3.1 each)


def check_mscclpp_size(plan: mscclpp.Plan) -> None:
    """The simulation's cost from the plan's counts, before it runs (it was silent for
    2 minutes on an NVLS export of 128 ranks): the cells' contributions (every cell of an
    allreduce tracks which ranks' data it holds) and the threads' clocks (each op's
    threads join clocks as wide as all threads); announced from 5 s, refused beyond the
    budgets (docs/limits.md)."""
    from collcert.reference.model import check_budget

    adds = plan.ngpus if plan.collective in ("allreduce", "reduce-scatter", "reduce") else 1
    contributions = sum(sum(c.values()) for c in plan.chunks) * plan.grain * adds
    ops = sum(len(block) for block in plan.tbs.values())
    threads = sum(1 + max([max(len(op.channels), len(op.sems)) for op in block] + [0])
                  for block in plan.tbs.values())
    units = contributions + ops * threads
    check_budget(f"MSCCL++ plan of {plan.ngpus} ranks", 64 * 2**20
                 + MSCCLPP_BYTES_PER_UNIT * units,
                 f"simulating {len(plan.tbs)} threadblocks ({ops} ops, about {threads} "
                 f"threads) over {contributions} cell contributions",
                 seconds=MSCCLPP_SECONDS_PER_UNIT * units,
                 action="audit a smaller plan (fewer ranks or threadblocks)")


def _audit_mscclpp(topology: Topology, topo: Topo, text: str, ranks: Any,
                   check_opt: bool) -> AuditReport:
    """An MSCCL++ plan: read and run by ``certify.execution.mscclpp_sim``; its traffic,
    in shares of the collective's size M, routed and timed as an MSCCL program's."""
    from collcert.reference.model import ScheduleError

    plan = mscclpp.read(text)
    nodes = rank_nodes(topology, ranks)
    if plan.ngpus != len(nodes):
        raise ScheduleError(
            f"the MSCCL++ plan has {plan.ngpus} gpus but {len(nodes)} ranks are mapped to "
            f"compute nodes ({'--ranks' if ranks is not None else 'the topology has'} "
            f"{len(nodes)}); pass --ranks with one compute node per rank")
    check_mscclpp_size(plan)
    res = mscclpp_sim.run(plan)
    verdict = res.verdict
    cells = plan.unit() * plan.grain
    demands: dict[tuple[Any, Any], Fraction] = {}
    for (p, q), n in res.traffic.items():
        key = (nodes[p], nodes[q])
        demands[key] = demands.get(key, Fraction(0)) + Fraction(n, cells)
    notes: list[str] = list(verdict.facts.get("notes", []))
    notes.append(f"calls: checked as an {'in-place' if plan.inplace else 'out-of-place'} "
                 f"call (\"inplace\": {str(plan.inplace).lower()})")
    added = switch_traffic(topo, nodes, verdict, demands, cells, notes)  # NVLS: GPU<->switch
    extra: list[Verdict] = []
    if len(nodes) != topology.num_compute:
        notes.append("the plan uses only some compute nodes; the optimum is for all")
    routing, lower, bottleneck = _timed(topology, demands, verdict, notes, extra, "plan")
    lower, bottleneck = reduction_time(topology, added, verdict, notes, lower, bottleneck)
    root = None if plan.root is None else nodes[plan.root]
    opt = certified_optimum(topology, topo, plan.collective, root, None, check_opt)
    notes += opt.notes
    if len(nodes) != topology.num_compute:
        opt.bound = None
    notes.append("bandwidth model: time = max over links of traffic / capacity; signals, "
                 "barriers and latency are not timed")
    t = verdict.facts.get("time_per_unit")
    if plan.protocol == "LL" and isinstance(t, Fraction) and t > 0:
        notes.append(f"protocol LL: every packet carries as many flag bytes as data bytes; the "
                     f"time above counts data only: with the flags, time per unit "
                     f"{fraction_str(2 * t)}, algbw {fraction_str(1 / (2 * t))} {topology.unit}")
    report = _report(verdict, plan.collective, "mscclpp-json", topology.unit, opt, notes,
                     routing, extra, multicast=bool(topology.multicast_switches))
    if report.valid:
        report.proven_time_per_unit = lower
        report.bottleneck = [bottleneck + (" (and no routing of this traffic is faster)"
                                           if lower == report.time_per_unit else "")]
    return report

def _timed(topology: Topology, demands: dict[Any, Fraction], verdict: Verdict,
           notes: list[str], extra: list[Verdict], what: str,
           ) -> tuple[str, Fraction | None, str]:
    """Route a program's (or plan's) traffic between ranks on ``topology`` and put its
    exact time per unit into ``verdict``: (routing, proven lower bound, bottleneck)."""
    if not demands:
        if verdict.ok:  # else it was not run (refused by the executor) or its run failed
            verdict.fail(f"the {what} moves no data between ranks")
        return "none", None, ""
    time, lower, routing, lp_verdict, bottleneck = route(topology, demands)
    if lp_verdict is not None:
        extra.append(lp_verdict)
    verdict.facts["time_per_unit"] = time
    if lower is not None and lower != time:
        notes.append(f"routing: certified only between {fraction_str(lower)} and "
                     f"{fraction_str(time)} (time per unit); the time shown is achievable")
    return routing, lower, bottleneck
