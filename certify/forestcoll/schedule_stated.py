"""Checker 5 (part): the figures a schedule file states beside its trees, compared.

:mod:`.schedule` proves the time of a pipeline of spanning trees (Zhao &
Krishnamurthy 2023, §2; Zhao et al. 2026, §5) and compares ``claimed`` and each
phase's ``time_per_unit``. This module compares the rest (issue 22, item 5), each
failure naming its field:

* ``unit``: the topology's unit, when the topology states one;
* ``routes``: ``"runtime"`` (the only value) holds when every tree edge between GPUs
  with a direct link takes that link (``collcert schedule --routes runtime``);
* a G* certificate's ``U`` is its phase's (the phase's own ``U`` is the scale
  of that G*; rewriting a schedule into an equivalent one, trees split or reordered,
  keeps it, so it is not compared with the time, and neither is a tree's ``index``, a
  label); G*'s ``k`` is the supply its flows are checked with (a broadcast or reduce
  G* takes the root's supply from the phase's k instead, and ignores it);
* each tree's ``height``: GPU hops from the root to the deepest node;
* ``generator``: ``target_time_per_unit`` and, for allreduce,
  ``lower_bound_time_per_unit`` and ``rsag_proven_optimal`` are what the embedded
  optimum certificate proves. The rest of ``generator`` (``tool``, ``options``,
  ``seconds``, ``multicast_saved``) says how the file was made and is not a claim about
  the schedule (an equivalent rewrite, trees split, keeps it).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Node, Topo, Verdict, frac_str, number
from .schedule_read import Phase, Schedule
from .trees import Tree


def check_schedule_stated(topo: Topo, sched: Schedule, facts: Mapping[str, Any],
                          certificates: bool = True) -> Verdict:
    """Compare what ``sched`` states with the proven ``facts`` of checker 5; without
    ``certificates`` (the caller skips them) the generator's optimum figures, which only
    the embedded optimum certificate proves, are not compared."""
    v = Verdict("stated figures")
    unit = sched.stated.get("unit")
    if unit is not None and topo.unit and unit != topo.unit:
        v.fail(f"field 'unit': the schedule says {unit!r}; the topology's unit is "
               f"{topo.unit!r}")
    routes = sched.stated.get("routes")
    if routes is not None and routes != "runtime":
        v.fail(f"field 'routes': {routes!r}; the only value is 'runtime' (every GPU pair on "
               "the route the runtime gives it)")
    elif routes == "runtime":
        _runtime_routes(v, topo, sched)
    many = len(sched.phases) > 1
    for phase in sched.phases:
        _phase(v, sched, phase, f"{phase.label}: " if many else "")
    gen = sched.stated.get("generator")
    if isinstance(gen, Mapping) and certificates:
        _generator(v, sched, gen, facts)
    return v


def _phase(v: Verdict, sched: Schedule, phase: Phase, where: str) -> None:
    certs = phase.certificates or (sched.certificates if len(sched.phases) == 1 else {})
    gstar = certs.get("gstar") if isinstance(certs, Mapping) else None
    if isinstance(certs, Mapping) and certs.get("on", "transposed") != "transposed":
        v.fail(f"{where}field 'certificates.on': {certs['on']!r}; the only value is "
               "'transposed' (a G* built on the transposed topology), or leave it out")
    if isinstance(gstar, Mapping):
        if phase.U is not None and gstar.get("U") is not None and number(
                gstar["U"], "gstar U") != phase.U:
            v.fail(f"{where}field 'certificates.gstar.U': {gstar['U']}, not the phase's U "
                   f"{frac_str(phase.U)}")
    for tree in phase.trees:
        if "height" in tree.extra:
            h = _height(tree)
            if h is not None and tree.extra["height"] != h:
                v.fail(f"{where}{tree.label}: field 'height' is {tree.extra['height']!r}, "
                       f"the tree's deepest node is {h} hops from the root")


def _runtime_routes(v: Verdict, topo: Topo, sched: Schedule) -> None:
    """``routes: runtime``: a linked GPU pair sends only over its direct link (paths have
    only switches inside, so an unlinked pair goes through switches anyway)."""
    bad = 0
    for phase in sched.phases:
        for tree in phase.trees:
            for e in tree.edges:
                if (e.src, e.dst) in topo.cap and list(e.path) != [e.src, e.dst]:
                    if bad < 3:
                        v.fail(f"field 'routes': 'runtime', but {tree.label} sends from "
                               f"{e.src!r} to {e.dst!r} through {list(e.path)[1:-1]!r}, not "
                               "over their direct link")
                    bad += 1
    if bad > 3:
        v.fail(f"field 'routes': … and {bad - 3} more tree edges off the runtime's route")


def _height(tree: Tree) -> int | None:
    """Edges on the longest root-to-leaf path (None if the edges are not a tree)."""
    out = tree.direction == "out"
    children: dict[Node, list[Node]] = {}
    for e in tree.edges:
        parent, child = (e.src, e.dst) if out else (e.dst, e.src)
        children.setdefault(parent, []).append(child)
    depth = {tree.root: 0}
    stack = [tree.root]
    while stack:
        u = stack.pop()
        for w in children.get(u, ()):
            if w in depth:
                return None
            depth[w] = depth[u] + 1
            stack.append(w)
    return max(depth.values())


def _generator(v: Verdict, sched: Schedule, gen: Mapping[str, Any],
               facts: Mapping[str, Any]) -> None:
    opt = sched.certificates.get("optimum")
    proven = {"target_time_per_unit": facts.get("certified_optimum_time_per_unit"),
              "lower_bound_time_per_unit": facts.get("certified_lower_bound_time_per_unit")}
    for key, value in proven.items():
        if gen.get(key) is None:
            continue
        if value is None:
            v.fail(f"field 'generator.{key}': {gen[key]}, but no valid embedded optimum "
                   "certificate proves it")
        elif _number(gen[key], key) != value:
            v.fail(f"field 'generator.{key}': {gen[key]}, but the embedded optimum "
                   f"certificate proves {frac_str(value)}")
    if gen.get("rsag_proven_optimal") is not None:
        truth = isinstance(opt, Mapping) and facts.get("certified_proven_optimal") is True
        if _number(gen["rsag_proven_optimal"], "rsag_proven_optimal") != int(truth):
            v.fail(f"field 'generator.rsag_proven_optimal': {gen['rsag_proven_optimal']}, but "
                   f"the embedded optimum certificate proves {'1' if truth else '0'}")


def _number(raw: Any, key: str) -> Fraction:
    if isinstance(raw, bool):
        return Fraction(int(raw))
    try:
        return number(raw, f"generator {key}")
    except InputError:
        raise InputError(f"generator {key}: {raw!r} is not a number") from None
