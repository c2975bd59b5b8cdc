"""Properties every correct implementation satisfies, as plain functions on a topology.

Each property takes a :class:`collcert.Topology` and raises
:class:`~collcert.fuzz.outcomes.PropertyFailure` (an ``AssertionError``) naming
what differed, or :class:`~collcert.fuzz.outcomes.Skipped` when it does not
apply; it returns normally otherwise. They are used by the test suite under hypothesis,
by ``collcert fuzz check`` on seeded random topologies, and by the shrinker
(a property is a failure predicate: see :func:`fails`).

The properties (Zhao & Krishnamurthy 2023):

``brute``          the optimum equals exhaustive cut enumeration (eq. (1));
``transpose``      reduce-scatter equals allgather on the transposed topology;
``fixed_k``        U*/k ≥ 1/x*, the Thm 15 bound U*/k ≤ 1/x* + 1/(k·min c_e),
                   U*/k = 1/x* at the optimal k, and U* equals enumeration (k ≤ 3);
``scaling``        multiplying every capacity by c multiplies algbw by c;
``relabel``        renaming and reordering nodes changes nothing;
``broadcast``      the broadcast optimum equals enumeration of (5);
``allreduce``      the allreduce bounds (6), (7) equal enumeration;
``certificate``    ``collcert.certify`` accepts the optimum's certificate and
                   proves the same algbw;
``schedule``       ``collcert.schedule`` emits a schedule that ``collcert.audit``
                   accepts at the optimum.
``allreduce_rate`` the allreduce rate certificates check and their chain holds
                   (:mod:`collcert.fuzz.allreduce`; opt-in there: the §5.7
                   hypothesis of Zhao et al. 2026, ``allreduce_hypothesis``, ``rsag_lp``,
                   ``rsag_weighted_lp``).
``mscclpp_export`` (opt-in) every MSCCL++ export keeps the executor's thread rules and
                   audits VALID at the rate it states (:mod:`collcert.fuzz.mscclpp_export`).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from collcert.reference.forestcoll import optimum
from collcert.reference.model import Topology, fraction_str

from . import allreduce as _ar
from . import brute
from . import mscclpp_export as _pp
from .outcomes import PropertyFailure, Skipped

BRUTE_MAX_NODES = 10
"""Enumeration-based properties only run on topologies with at most this many nodes."""


def _expect(cond: bool, message: str) -> None:
    if not cond:
        raise PropertyFailure(message)


def _small(t: Topology) -> None:
    if len(t.nodes) > BRUTE_MAX_NODES:
        raise Skipped(f"{len(t.nodes)} nodes > {BRUTE_MAX_NODES}: enumeration too slow")


def prop_brute(t: Topology) -> None:
    _small(t)
    opt = optimum(t)
    inv_x, cut = brute.allgather_inv_x(t)
    _expect(opt.inv_x == inv_x,
            f"allgather 1/x*: optimum says {fraction_str(opt.inv_x or 0)}, enumeration finds "
            f"{fraction_str(inv_x)} at S = {sorted(map(str, cut))}")
    assert opt.cut is not None
    inside = sum(1 for v in opt.cut if t.is_compute(v))
    _expect(0 < inside < t.num_compute and Fraction(inside) / t.out_capacity(opt.cut) == inv_x,
            f"the optimum's witness cut {sorted(map(str, opt.cut))} does not attain 1/x*")
    _expect(opt.algbw == t.num_compute / inv_x, "algbw is not N·x*")


def prop_transpose(t: Topology) -> None:
    rs = optimum(t, "reduce-scatter")
    ag_t = optimum(t.transpose(), "allgather")
    _expect(rs.algbw == ag_t.algbw,
            f"reduce-scatter algbw {fraction_str(rs.algbw)} differs from allgather on the "
            f"transposed topology {fraction_str(ag_t.algbw)}")
    # Eulerian: B⁺(S) = B⁻(S), so both equal allgather on t itself
    ag = optimum(t, "allgather")
    _expect(ag.algbw == rs.algbw,
            f"allgather {fraction_str(ag.algbw)} != reduce-scatter {fraction_str(rs.algbw)} "
            "on an Eulerian topology")


def prop_fixed_k(t: Topology) -> None:
    base = optimum(t)
    assert base.inv_x is not None and base.k is not None and base.U is not None
    min_cap = min(t.capacity.values())
    ks = [1, 2, 3]
    if base.k <= 64:
        ks.append(base.k)
    for k in ks:
        fk = optimum(t, fixed_k=k)
        assert fk.U is not None
        ratio = fk.U / k
        _expect(ratio >= base.inv_x,
                f"fixed k={k}: U*/k = {fraction_str(ratio)} < 1/x* = {fraction_str(base.inv_x)}")
        bound = base.inv_x + 1 / (k * min_cap)
        _expect(ratio <= bound,
                f"fixed k={k}: U*/k = {fraction_str(ratio)} exceeds the Thm 15 bound "
                f"1/x* + 1/(k·min c) = {fraction_str(bound)}")
        _expect(fk.algbw <= base.algbw,
                f"fixed k={k}: algbw {fraction_str(fk.algbw)} beats the optimum")
        if k == base.k:
            _expect(ratio == base.inv_x and fk.U == base.U,
                    f"at the optimal k={k}: U* = {fraction_str(fk.U)}, expected U = "
                    f"{fraction_str(base.U)} (U*/k = 1/x*)")
        if k <= 3 and len(t.nodes) <= BRUTE_MAX_NODES:
            u_brute, cut = brute.fixed_k_u(t, k)
            _expect(fk.U == u_brute,
                    f"fixed k={k}: U* = {fraction_str(fk.U)} but enumeration of "
                    f"Σ⌊U·c_e⌋ ≥ k·|S∩V_c| gives {fraction_str(u_brute)} "
                    f"(S = {sorted(map(str, cut))})")


SCALES = (Fraction(3, 7), Fraction(5), Fraction(2**40 + 1, 3))


def prop_scaling(t: Topology) -> None:
    base = optimum(t)
    for c in SCALES:
        scaled = optimum(t.scaled(c))
        _expect(scaled.algbw == c * base.algbw,
                f"scaling capacities by {fraction_str(c)}: algbw {fraction_str(scaled.algbw)}, "
                f"expected {fraction_str(c * base.algbw)}")
        _expect(scaled.k == base.k, f"scaling by {fraction_str(c)} changed k "
                f"from {base.k} to {scaled.k}")


def relabelled(t: Topology, rotate: int = 1) -> tuple[Topology, dict[Any, Any]]:
    """t with every node renamed (``n<i>``) and the compute order rotated."""
    nodes = list(t.nodes)
    perm = nodes[rotate % len(nodes):] + nodes[:rotate % len(nodes)]
    names = {v: f"n{len(nodes) - i}" for i, v in enumerate(perm)}
    comp = list(t.compute_nodes)
    r = rotate % len(comp)
    comp = comp[r:] + comp[:r]
    new = Topology([names[v] for v in comp],
                   [(names[u], names[v], c) for (u, v), c in reversed(t.capacity.items())],
                   [names[v] for v in reversed(t.switch_nodes)], name=t.name, unit=t.unit)
    return new, names


def prop_relabel(t: Topology) -> None:
    base = optimum(t)
    for rot in (1, 2):
        new, names = relabelled(t, rot)
        other = optimum(new)
        _expect((other.algbw, other.inv_x, other.k, other.U) ==
                (base.algbw, base.inv_x, base.k, base.U),
                f"relabelling nodes (rotation {rot}) changed the optimum: algbw "
                f"{fraction_str(base.algbw)} -> {fraction_str(other.algbw)}")
        assert other.cut is not None
        back = {v: u for u, v in names.items()}
        cut = frozenset(back[v] for v in other.cut)
        inside = sum(1 for v in cut if t.is_compute(v))
        _expect(Fraction(inside) / t.out_capacity(cut) == base.inv_x,
                "the relabelled witness cut does not attain 1/x* on the original")


def prop_broadcast(t: Topology) -> None:
    _small(t)
    for root in t.compute_nodes[:2]:
        got = optimum(t, "broadcast", root=root).algbw
        want = brute.broadcast_algbw(t, root)
        _expect(got == want, f"broadcast from {root!r}: optimum {fraction_str(got)}, "
                f"enumeration {fraction_str(want)}")


def prop_allreduce(t: Topology) -> None:
    _small(t)
    opt = optimum(t, "allreduce")
    b6, b7 = brute.allreduce_bounds(t)
    _expect(opt.extra["bound6_time_per_unit"] == b6,
            f"allreduce bound (6): {fraction_str(opt.extra['bound6_time_per_unit'])} vs "
            f"enumeration {fraction_str(b6)}")
    _expect(opt.extra["bound7_time_per_unit"] == b7,
            f"allreduce bound (7): {fraction_str(opt.extra['bound7_time_per_unit'])} vs "
            f"enumeration {fraction_str(b7)}")
    _expect(opt.time_per_unit >= max(b6, b7), "the RS+AG time beats a lower bound")


def prop_certificate(t: Topology) -> None:
    from collcert.certify.forestcoll import check_optimum

    topo = t.to_json()
    cases: list[tuple[str, dict[str, Any]]] = [
        ("allgather", {}), ("reduce-scatter", {}), ("allgather", {"fixed_k": 2}),
        ("broadcast", {"root": t.compute_nodes[0]}), ("reduce", {"root": t.compute_nodes[-1]}),
        ("allreduce", {}),
    ]
    for coll, kw in cases:
        opt = optimum(t, coll, **kw)
        verdict = check_optimum(topo, opt.certificate())
        label = coll + "".join(f" {k}={v}" for k, v in kw.items())
        _expect(verdict.ok, f"certify rejects the {label} certificate: "
                f"{'; '.join(map(str, verdict.all_reasons()))}")
        proved = verdict.facts.get("algbw")
        _expect(proved is not None and Fraction(proved) == opt.algbw,
                f"certify proves algbw {proved} for {label}, the reference "
                f"claims {fraction_str(opt.algbw)}")


SCHEDULE_CASES: tuple[tuple[str, bool], ...] = (
    ("allgather", False), ("reduce-scatter", False), ("broadcast", True), ("allreduce", False),
)


def prop_schedule(t: Topology) -> None:
    """collcert's own schedules are certified by the audit and reach the optimum.

    Switch removal (Zhao & Krishnamurthy 2023, §2.2) must keep the optimum: an allgather schedule built
    on the switch-free graph and mapped back must have algbw exactly N·x*.
    """
    import json
    import os
    import tempfile

    from collcert.auditing import audit_file
    from collcert.reference.forestcoll import schedule

    for coll, rooted in SCHEDULE_CASES:
        root = t.compute_nodes[0] if rooted else None
        opt = optimum(t, coll, root=root)
        sched = schedule(t, coll, root=root)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "schedule.json")
            with open(path, "w", encoding="utf-8") as fh:
                json.dump(sched.to_json(), fh)
            report = audit_file(t, path, "json")
        _expect(bool(report.valid), f"{coll}: collcert.audit rejects collcert's own schedule: "
                f"{'; '.join(map(str, report.reasons))}")
        _expect(report.algbw is not None and Fraction(report.algbw) == opt.algbw,
                f"{coll}: the emitted schedule reaches algbw {report.algbw}, the optimum is "
                f"{fraction_str(opt.algbw)} (switch removal must keep the optimum)")


PROPERTIES: dict[str, Callable[[Topology], None]] = {
    "brute": prop_brute,
    "transpose": prop_transpose,
    "fixed_k": prop_fixed_k,
    "scaling": prop_scaling,
    "relabel": prop_relabel,
    "broadcast": prop_broadcast,
    "allreduce": prop_allreduce,
    "certificate": prop_certificate,
    "schedule": prop_schedule,
    "allreduce_rate": _ar.prop_allreduce_rate,
}

OPT_IN: dict[str, Callable[[Topology], None]] = {
    "allreduce_hypothesis": _ar.prop_allreduce_hypothesis,
    "rsag_lp": _ar.prop_rsag_lp,
    "rsag_weighted_lp": _ar.prop_rsag_weighted_lp,
    "mscclpp_export": _pp.prop_mscclpp_export,
}
"""Checked only when asked for by name: open questions, where failures are findings
(Zhao et al. 2026, §5.7's hypothesis; see collcert.fuzz.allreduce)."""


def check(name: str, t: Topology, *, skipped: list[str] | None = None) -> str | None:
    """None when property ``name`` holds (or is skipped), else the failure message.

    Errors other than :class:`PropertyFailure` are failures too (a crash of
    the code under test), reported with their type. When the property does
    not apply (:class:`Skipped`), the reason is appended to ``skipped``.
    """
    try:
        (PROPERTIES.get(name) or OPT_IN[name])(t)
    except Skipped as exc:
        if skipped is not None:
            skipped.append(str(exc))
        return None
    except PropertyFailure as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - a crash is a failure of the property
        return f"{type(exc).__name__}: {exc}"
    return None


def fails(name: str) -> Callable[[Topology], bool]:
    """The failure predicate of property ``name``, for :func:`collcert.fuzz.shrink.shrink`."""
    return lambda t: check(name, t) is not None


class KnownOpen(PropertyFailure):
    """A failure matching a known, not yet fixed problem (see golden/regressions/README.md)."""


_saved: set[str] = set()


def require(name: str, t: Topology, *, known_open: tuple[str, ...] = ()) -> None:
    """Assert property ``name`` on ``t``; on failure shrink ``t``, save it, and raise.

    The first failure of each property in a process is shrunk
    (:func:`collcert.fuzz.shrink.shrink`) and saved under
    ``$COLLCERT_REGRESSIONS`` or ``golden/regressions`` with a reproducer
    command; :class:`PropertyFailure` is raised with the path. A message
    containing one of ``known_open`` raises :class:`KnownOpen` without saving.
    """
    from .shrink import save_regression, shrink

    message = check(name, t)
    if message is None:
        return
    if any(k in message for k in known_open):
        raise KnownOpen(message)
    if name not in _saved:
        _saved.add(name)
        small = shrink(t, fails(name), max_calls=300, time_limit=60)
        small_message = check(name, small) or message
        path = save_regression(small, f"{name}: {small_message}"[:300],
                               f"collcert fuzz check --property {name} --replay {{file}}")
        message += f" (shrunk to {small!r}: {small_message}; saved as {path})"
    raise PropertyFailure(message)
