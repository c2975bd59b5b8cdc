"""What a picture shows, computed exactly before anything is drawn.

* :func:`cut_info` — the bottleneck cut S*: its links in the direction the
  bound counts, their total capacity, and a sentence that says what the cut
  proves;
* :func:`read_schedule_for_drawing` — a schedule file (collcert JSON or
  ForestColl XML) checked by ``collcert.certify`` exactly as ``collcert audit``
  checks it (a schedule for another topology is refused, naming the link), with
  every tree and each link's exact load.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from collcert.reference.model import Link, Node, ScheduleError, Topology, fraction_str, show


@dataclass
class CutInfo:
    collective: str
    nodes: frozenset[Node]
    links: list[Link]  # the links whose capacity the bound counts
    total: Fraction  # their capacity
    algbw: Fraction  # the bound they prove (certified optimum)
    text: str  # what the cut proves, for a caption


def cut_info(t: Topology, collective: str, root: Node | None = None) -> CutInfo | None:
    """The certified optimum's witness cut, explained (None if it has none)."""
    from collcert.reference.forestcoll import optimum

    base = "allgather" if collective == "allreduce" else collective
    opt = optimum(t, base, root=root)
    if not opt.cut:
        return None
    s = opt.cut
    leaving = [e for e in t.capacity if e[0] in s and e[1] not in s]
    entering = [e for e in t.capacity if e[1] in s and e[0] not in s]
    inside = sum(1 for v in t.compute_nodes if v in s)
    n = t.num_compute
    out_cap = sum((t.capacity[e] for e in leaving), Fraction(0))
    in_cap = sum((t.capacity[e] for e in entering), Fraction(0))
    unit = t.unit
    if base in ("allgather", "reduce-scatter"):
        # allgather: the data of the GPUs in S* must leave S*; reduce-scatter is the same
        # on the transposed network: whichever direction gives the certified ratio
        # allgather: S*'s data must leave S*; reduce-scatter (allgather on the reversed
        # network): the other GPUs' contributions to S*'s shards must enter it
        first, second = ((leaving, out_cap), (entering, in_cap))
        if base == "reduce-scatter":
            first, second = second, first
        links, cap = first
        if inside and Fraction(n * cap, inside) != opt.algbw and (
                Fraction(n * second[1], inside) == opt.algbw):
            links, cap = second
        verb = "leave" if links is leaving else "enter"
        what = ("of the data" if links is leaving else
                "of the data (contributions to the shards of S*)")
        text = (f"Bottleneck cut S* (shaded): {inside} of {n} GPUs. Only {show(cap)} {unit} "
                f"{verb} S*, over {_links(links)}, yet {inside}/{n} {what} must cross "
                f"them: time ≥ ({inside}/{n})·M / {fraction_str(cap)}, so algbw ≤ "
                f"{show(opt.algbw)} {unit}, the certified optimum of {base}.")
    else:
        links, cap = leaving, out_cap
        if out_cap != opt.algbw and in_cap == opt.algbw:
            links, cap = entering, in_cap
        what = "from the root" if base == "broadcast" else "toward the root"
        text = (f"Bottleneck cut S* (shaded) separates the root from a GPU: all of M must "
                f"cross it {what} over {show(cap)} {unit} ({_links(links)}), so algbw ≤ "
                f"{show(opt.algbw)} {unit}, the certified optimum of {base}.")
    return CutInfo(base, s, links, cap, opt.algbw, text)


def _links(links: list[Link]) -> str:
    shown = ", ".join(f"{u} → {v}" for u, v in links[:4])
    more = f" and {len(links) - 4} more" if len(links) > 4 else ""
    return f"{len(links)} link{'s' if len(links) != 1 else ''} ({shown}{more})"


@dataclass
class DrawnTree:
    phase: int
    collective: str
    root: Node
    multiplicity: int
    k: int
    direction: str
    edges: list[tuple[Node, Node, list[Node]]]  # (src, dst, path)


@dataclass
class DrawnSchedule:
    collective: str
    trees: list[DrawnTree]
    time_per_unit: Fraction
    loads: dict[Link, Fraction]  # data per unit of M over the whole schedule, per link
    busy: dict[Link, Fraction]  # Σ_phases load/capacity / time: share of the time busy
    notes: list[str] = field(default_factory=list)
    root: Node | None = None


def read_schedule_for_drawing(t: Topology, path: str) -> DrawnSchedule:
    """Read, check (as ``collcert audit`` does) and measure a tree schedule file."""
    from collcert.certify.forestcoll import (
        DIRECTION,
        check_schedule,
        forestcoll_xml,
        read_schedule,
        schedule_json,
    )
    from collcert.certify.model import InputError, Topo, read_text

    try:
        text = read_text(path, 512 * 1024 * 1024)  # gzip by its magic bytes, size capped
    except InputError as exc:
        raise ScheduleError(str(exc)) from None
    head = text.lstrip()[:4096]
    data = None
    try:
        topo = Topo(t.to_json())
        if head.startswith("{"):
            data = schedule_json(text, path)
        elif head.startswith("<"):
            import re

            m = re.search(r"<algo\b[^>]*>", head, re.IGNORECASE)
            if m and ("ngpus=" in m.group(0) or "nchunksperloop=" in m.group(0)):
                raise ScheduleError(f"{path} is an MSCCL program: draw shows tree schedules "
                                    "(collcert JSON, ForestColl XML); audit it with "
                                    "'collcert audit'")
            data = forestcoll_xml(text, origin=path, node_ids=[str(v) for v in t.nodes])
        else:
            raise ScheduleError(f"{path}: neither a JSON nor an XML schedule")
        sched = read_schedule(topo, data)
        verdict = check_schedule(topo, sched, certificates=False)
    except InputError as exc:
        from collcert.auditing import made_for

        msg = str(exc) if str(exc).startswith(f"{path}:") else f"{path}: {exc}"
        raise ScheduleError(f"{msg}{made_for(t, data)}") from None
    if not verdict.ok:
        reasons = verdict.all_reasons()
        raise ScheduleError(
            f"{path} does not fit this topology ({len(reasons)} problem"
            f"{'s' if len(reasons) != 1 else ''}): " + "; ".join(reasons[:3])
            + ("; …" if len(reasons) > 3 else "")
            + ". Draw it with the topology it was made for ('collcert audit' lists every "
            "problem)")
    time = verdict.facts["time_per_unit"]
    trees: list[DrawnTree] = []
    loads: dict[Link, Fraction] = {}
    busy_time: dict[Link, Fraction] = {}
    weights = sched.weights
    w_sum = sum(weights.values(), Fraction(0)) if weights else Fraction(t.num_compute)
    for p_i, phase in enumerate(sched.phases):
        phase_load: dict[Link, Fraction] = {}
        for tree in phase.trees:
            share = Fraction(tree.multiplicity, phase.k)
            if sched.root is None:  # every root's shard: 1/N of M (weighted: w/Σw)
                share *= (weights[tree.root] if weights else 1) / w_sum
            for e in tree.edges:
                for a, b in zip(e.path, e.path[1:]):
                    phase_load[(a, b)] = phase_load.get((a, b), Fraction(0)) + share
            trees.append(DrawnTree(p_i, phase.collective, tree.root, tree.multiplicity,
                                   phase.k, DIRECTION[phase.collective],
                                   [(e.src, e.dst, list(e.path)) for e in tree.edges]))
        for hop, x in phase_load.items():
            h = (hop[0], hop[1])
            loads[h] = loads.get(h, Fraction(0)) + x
            busy_time[h] = busy_time.get(h, Fraction(0)) + x / t.capacity[h]
    busy = {h: x / time for h, x in busy_time.items()}
    if busy and max(busy.values()) > 1:  # pragma: no cover - the checker computed the time
        raise RuntimeError("internal: a link is busier than the schedule's time allows")
    return DrawnSchedule(sched.collective, trees, time, loads, busy, list(sched.notes),
                         sched.root)
