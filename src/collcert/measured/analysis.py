"""A run of nccl-tests set beside the certified optimum of the machine it ran on."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from collcert.importers import LogError, NcclTestsRun
from collcert.reference.model import Topology, fraction_str

from .figures import GB, Model, build_model, default_baselines
from .hint import hints
from .resolve import Resolved, resolve
from .result import FAR_BELOW, Measured, Series, SizeRow, Verdict

CUT_COLLECTIVES = ("allgather", "reduce-scatter", "allreduce", "broadcast", "reduce")


def measure(topology: Topology, run: NcclTestsRun, *, collective: str | None = None,
            ranks: Sequence[Any] | None = None, in_place: bool = False,
            alpha: Fraction | int = 0, baselines: Sequence[str] | None = None,
            hint: bool = True, progress: Callable[[str], None] | None = None,
            models: dict[Any, Model] | None = None) -> Measured:
    """``run`` on ``topology``: per size the measured algbw and busbw beside the certified
    optimum and the baselines (NCCL's by default) on the α-β model (``alpha`` µs per link
    where the topology gives none), the verdicts, and for a plateau far below the
    optimum the what-if hints. ``ranks``: the compute node of each rank. ``models``: a
    dict shared by the runs of one ``topology``, so that runs of the same test, ranks and
    sizes compute the optimum and the baselines once (a log of 20 identical runs took
    20 times one run's work)."""
    res = resolve(run, topology, collective, ranks)
    names = default_baselines() if baselines is None else tuple(baselines)
    place = "in-place" if in_place else "out-of-place"
    out = Measured(run.source, run.first_line, res.test, res.collective, res.ranks,
                   res.evidence, res.topology.name or "topology", res.topology.in_network_model(),
                   place, Fraction(alpha), [], run_info=run.to_json())
    models = {} if models is None else models
    sizes = sorted({r.size for r in run.rows if r.size > 0})
    for key, rows in _groups(run):
        root = key[2]
        root_node = _root_node(res, root, rows[0].line, run)
        model = None
        if res.collective is not None:
            mkey = (id(topology), tuple(map(str, res.nodes)), res.collective, root_node,
                    tuple(sizes), Fraction(alpha), names)
            if mkey not in models:
                if progress:
                    progress(f"model: {res.collective} on {out.topology}")
                models[mkey] = build_model(res.topology, res.collective, root_node, sizes,
                                           Fraction(alpha), names, progress)
            model = models[mkey]
        out.series.append(Series(key[0], key[1], root, root_node,
                                 [_size_row(r, in_place, model, run) for r in rows], model))
    _verdicts(out, run, res, progress if hint else None, hint)
    return out


def _groups(run: NcclTestsRun) -> list[tuple[tuple[Any, ...], list[Any]]]:
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for r in run.rows:
        groups.setdefault((r.dtype, r.redop, r.root), []).append(r)
    return list(groups.items())


def _root_node(res: Resolved, root: int | None, line: int, run: NcclTestsRun) -> Any:
    if root is None or root < 0:
        return None
    if root >= res.ranks:
        raise LogError(f"{run.where(line)}: root {root}, but the run has {res.ranks} ranks")
    return res.nodes[root]


def _size_row(row: Any, in_place: bool, model: Model | None, run: NcclTestsRun) -> SizeRow:
    r = row.result(in_place)
    if r is None:
        raise LogError(f"{run.where(row.line)}: no in-place column in this run; drop "
                       "--in-place")
    bound = Fraction(0)
    curves: dict[str, Fraction] = {}
    if model is not None and row.size > 0:
        bound = model.curves[0].algbw_at(row.size)
        curves = {c.name: c.algbw_at(row.size) for c in model.curves[1:]}
    return SizeRow(row.line, row.size, r.time.value, r.algbw.value, r.busbw.value, bound,
                   curves)


def _verdicts(out: Measured, run: NcclTestsRun, res: Resolved,
              progress: Callable[[str], None] | None, want_hints: bool) -> None:
    bad = run.corrupted(res.ranks)
    if bad:
        out.verdicts.append(Verdict(
            "corrupted", "the data was corrupted: nccl-tests found wrong results ("
            + "; ".join(bad[:3]) + (f"; {len(bad) - 3} more" if len(bad) > 3 else "")
            + "). Its rates measure a run that did not compute the collective; fix the "
            "machine (or the NCCL build) and measure again"))
    for s in out.series:
        if s.model is None:
            out.verdicts.append(Verdict("no-optimum", f"collcert has no certified optimum for "
                                        f"{out.test}_perf; the measured figures are shown alone"))
            continue
        above = _above(out, run, s)
        if above is not None:
            out.verdicts.append(above)
            continue
        faster = [r for r in s.rows if r.size > 0 and r.bound and r.algbw > r.bound]
        if faster:  # below the optimum, above its α-β bound: α is too large
            out.notes.append(
                f"note: at {len(faster)} size{'s' if len(faster) > 1 else ''} (first "
                f"{_bytes(faster[0].size)}, line {faster[0].line}) the measurement beats the "
                f"optimum's α-β bound: α = {fraction_str(out.alpha)} µs per link is more "
                "latency than this machine has")
        _below(out, s, res, progress, want_hints)


def _above(out: Measured, run: NcclTestsRun, s: Series) -> Verdict | None:
    """Exit 1 when a rate (either place) beats what no schedule of the model can."""
    m = s.model
    assert m is not None
    worst = None
    for row in run.rows:
        if (row.dtype, row.redop, row.root) != (s.dtype, s.redop, s.root):
            continue
        for name, r in (("out-of-place", row.out_of_place), ("in-place", row.in_place)):
            if r is not None and r.algbw.value > m.optimum and (
                    worst is None or r.algbw.value > worst[0]):
                worst = (r.algbw.value, row, name)
    if worst is None:
        return None
    value, row, name = worst
    share = (value / m.ceiling - 1) * 100
    kind = "" if m.optimum_kind == "certified" else f" ({m.optimum_kind})"
    head = (f"line {row.line}: {_g(value)} GB/s algbw at {_bytes(row.size)} ({name}) is above "
            f"the certified optimum {_num(m.optimum)} GB/s{kind}")
    if value <= m.ceiling:
        return Verdict("above-schedule", head + f", but not above {m.ceiling_kind}, "
                       f"{_num(m.ceiling)} GB/s: a schedule collcert did not find")
    return Verdict("above", head + f" by {float(share):.1f} %: the model is not the machine. "
                   + _reasons(out, m, value))


def _reasons(out: Measured, m: Model, value: Fraction) -> str:
    why = []
    if m.cut_set is not None and value > m.cut_set:
        why.append(f"it is even above the cut-set bound C = {_num(m.cut_set)} GB/s, which no "
                   "algorithm beats on this topology, in-network reduction included (Zhou & "
                   "Sun 2026, Thm 1): the topology's capacities are lower than the hardware's, "
                   "or the topology is not the machine's")
    else:
        if m.in_network:
            why.append("in-network reduction the topology does not declare (switches that add "
                       "beyond its reducing_switches, or faster than its reduction_rates)")
        elif out.in_network != "switches forward only":
            why.append(f"in-network reduction: the topology declares that {out.in_network}, "
                       "but this optimum is ForestColl's (switches forward and copy: "
                       "in_network=none, or a collective other than allreduce)")
        else:
            why.append("in-network reduction (NVLink SHARP / NVLS, InfiniBand SHARP / "
                       "CollNet), which the topology does not declare (reducing_switches, "
                       "docs/topology.md)")
        if m.cut_set is not None:
            why.append(f"it stays below the cut-set bound C = {_num(m.cut_set)} GB/s, which "
                       "in-network reduction can approach")
        why.append("capacities lower than the hardware's in the topology")
        why.append("a topology that is not the machine (other GPUs, more or faster NICs, "
                   "another rank order: --ranks)")
    return "Likely: " + "; ".join(why) + "."


def _below(out: Measured, s: Series, res: Resolved,
           progress: Callable[[str], None] | None, want_hints: bool) -> None:
    m = s.model
    peak = s.peak()
    assert m is not None
    if peak is None:
        return
    e = peak.algbw / m.ceiling
    text = (f"the plateau is {float(e):.2f} of the optimum ({_g(peak.algbw)} of "
            f"{_num(m.ceiling)} GB/s algbw, at {_bytes(peak.size)}, line {peak.line}): as if "
            f"every link ran at {float(e) * 100:.0f} % of its capacity, at most")
    if e >= FAR_BELOW:
        out.verdicts.append(Verdict("below", text))
        return
    out.verdicts.append(Verdict("far-below", text))
    if not want_hints or res.collective not in CUT_COLLECTIVES:
        return
    from collcert.reference.execution import bytes_per_unit

    gbps = bytes_per_unit(res.topology.unit) / GB
    collective = res.collective
    figure = "the certified optimum"
    if collective == "allreduce" and m.in_network:
        if m.cut_set is None or m.ceiling != m.cut_set or m.optimum != m.ceiling:
            out.notes.append("hint: not searched: the in-network optimum here is not the "
                             "cut-set bound, whose what-if the search follows")
            return
        collective, figure = "allreduce-cut", ("the in-network optimum (here the cut-set "
                                               "bound C)")
    elif collective == "allreduce":
        figure = "RS+AG's certified algbw (half of allgather's)"
    out.hint_figure = figure
    out.hints = hints(res.topology, collective, s.root_node, peak.algbw / gbps, progress)
    if not out.hints:
        out.notes.append("hint: one box: no NIC and no link between boxes to change; the "
                         "plateau's uniform efficiency above is the reading")


def _g(x: Fraction) -> str:
    return f"{float(x):.2f}"


def _num(x: Fraction) -> str:
    return fraction_str(x) if x.denominator == 1 else f"{fraction_str(x)} (≈{float(x):.2f})"


def _bytes(size: int) -> str:
    for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= div and size % div == 0:
            return f"{size // div} {unit}"
    return f"{size} B"
