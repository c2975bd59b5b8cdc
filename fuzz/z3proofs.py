"""Brute-force proofs with Z3, independent of max-flow and of the reference's algorithms.

Every claim is checked by asking Z3 two questions over 0/1 variables
``in_S[v]`` (one per node) or over explicit tree variables:

* **cuts** (Zhao & Krishnamurthy 2023, eq. (1)): is there a cut S ⊉ V_c with |S ∩ V_c| / B⁺(S) greater
  than the claimed 1/x*? (must be UNSAT) — and one reaching it? (must be SAT;
  together: the maximum is exactly the claim);
* **fixed k** (Zhao & Krishnamurthy 2023, Thm 5, 13): do k spanning out-trees per compute node exist
  with at most ⌊U·c_e⌋ of them on each link e? (SAT at the claimed U*) — and
  with ⌈U·c_e⌉ − 1, i.e. any U just below U*? (UNSAT). A tree is a set of
  links carrying one unit of flow from its root to every other compute node;
* **allreduce** (Zhao & Krishnamurthy 2023, App. B): the cut-set bounds (6) and (7) — no cut below
  the claimed minimum (UNSAT), one at most at it (SAT);
* **broadcast** (Zhao & Krishnamurthy 2023, (5)): the same for cuts separating the root.

Z3 decides linear integer arithmetic exactly, so big capacities (2**70) are
fine; the cost grows with the number of nodes (cuts) and with N·k·|E|
(trees). See :data:`PRACTICAL` and ``benchmarks/prove_scaling.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from collcert.reference.model import Topology, fraction_str

Node = Hashable

PRACTICAL = {
    "cut": "cut proofs (allgather, allreduce, broadcast): under 0.3 s up to ~100 nodes and "
           "~400 links, ~1 s for dgx_a100:8 (138 nodes), ~20 s for dgx_a100:16 (274 nodes) "
           "or dense random graphs of 80 nodes / 2000 links",
    "trees": "tree proofs (fixed k): about N·k·|links| 0/1 variables; ~1 s for 8 nodes, "
             "dgx_a100:2 with k = 1 takes 2 s and k = 2 17 s, mi250:2 (176 links) or "
             "dgx_a100:2 with k = 4 exceed 2 minutes; the UNSAT half varies most",
}


@dataclass
class Step:
    """One Z3 question, what the claim needs, what Z3 said, and how long it took."""

    name: str
    question: str
    expected: str  # "sat" or "unsat"
    result: str = "unknown"  # "sat", "unsat" or "unknown" (timeout)
    seconds: float = 0.0
    detail: str = ""
    witness: Any = None

    @property
    def ok(self) -> bool:
        return self.result == self.expected

    @property
    def verdict(self) -> str:
        if self.ok:
            return "proved"
        return "inconclusive" if self.result == "unknown" else "REFUTED"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "question": self.question,
                               "expected": self.expected, "result": self.result,
                               "verdict": self.verdict, "seconds": round(self.seconds, 3)}
        if self.detail:
            out["detail"] = self.detail
        if self.witness is not None:
            out["witness"] = self.witness
        return out


@dataclass
class Report:
    steps: list[Step] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.steps)

    @property
    def refuted(self) -> bool:
        return any(s.result not in ("unknown", s.expected) for s in self.steps)


def _z3() -> Any:
    try:
        import z3
    except ImportError as exc:  # pragma: no cover - z3-solver is a test dependency
        from collcert.reference.model import CollcertError

        raise CollcertError(
            "the Z3 proofs need the z3-solver package: pip install 'collcert[z3]'"
        ) from exc
    return z3


def _run(step: Step, solver: Any, timeout_s: float, decode: Any = None) -> Step:
    z3 = _z3()
    solver.set("timeout", max(1, int(timeout_s * 1000)))
    started = time.perf_counter()
    res = solver.check()
    step.seconds = time.perf_counter() - started
    step.result = "sat" if res == z3.sat else "unsat" if res == z3.unsat else "unknown"
    if step.result == "unknown":
        step.detail = (step.detail + " " if step.detail else "") + (
            f"Z3 gave up ({solver.reason_unknown()}) after {step.seconds:.1f} s")
    elif step.result == "sat" and decode is not None:
        step.witness = decode(solver.model())
    return step


class _CutVars:
    """in_S[v] for every node, with |S ∩ V_c| and B⁺(S) (integer-scaled) as Z3 terms."""

    def __init__(self, t: Topology) -> None:
        z3 = _z3()
        self.t = t
        self.x = {v: z3.Bool(f"in_S[{v}]") for v in t.nodes}
        self.inside = z3.Sum([z3.If(self.x[v], 1, 0) for v in t.compute_nodes])
        self.out = z3.Sum([z3.If(z3.And(self.x[u], z3.Not(self.x[v])), c, 0)
                           for (u, v), c in t.int_capacity.items()])
        n = t.num_compute
        self.proper = [self.inside >= 1, self.inside <= n - 1]

    def decode(self, model: Any) -> list[Any]:
        z3 = _z3()
        return [v for v in self.t.nodes if z3.is_true(model.eval(self.x[v], True))]


def prove_allgather(t: Topology, inv_x: Fraction, timeout_s: float = 60.0) -> list[Step]:
    """1/x* = max_{S ⊉ V_c} |S ∩ V_c| / B⁺(S): nothing above it (UNSAT), it is reached (SAT).

    With real capacities c = b/scale: |S∩V_c| / B⁺ > P/Q ⇔ Q·scale·|S∩V_c| > P·B⁺_int.
    """
    z3 = _z3()
    p, q = inv_x.numerator, inv_x.denominator
    steps = []
    cv = _CutVars(t)
    s1 = z3.Solver()
    s1.add(*cv.proper, q * t.scale * cv.inside > p * cv.out)
    steps.append(_run(Step("allgather: no cut beyond 1/x*",
                           f"∃ S ⊉ V_c with |S∩V_c|/B⁺(S) > {fraction_str(inv_x)}?", "unsat"),
                      s1, timeout_s, cv.decode))
    s2 = z3.Solver()
    # "≥" rather than "=": with the UNSAT answer above it means "=", and Z3 finds
    # it far faster than an exact subset-sum equality
    s2.add(*cv.proper, q * t.scale * cv.inside >= p * cv.out)
    steps.append(_run(Step("allgather: 1/x* attained",
                           f"∃ S ⊉ V_c with |S∩V_c|/B⁺(S) ≥ {fraction_str(inv_x)}?", "sat"),
                      s2, timeout_s, cv.decode))
    return steps


def _min_cut_steps(t: Topology, label: str, value: Fraction,
                   extra: Callable[[_CutVars], list[Any]], where: str,
                   timeout_s: float) -> list[Step]:
    """B⁺(S) ≥ value for every S of a family (UNSAT below), ≤ value somewhere (SAT)."""
    z3 = _z3()
    cv = _CutVars(t)
    fam = extra(cv)
    p, q = value.numerator, value.denominator  # B⁺_real = out/scale; out·q vs p·scale
    s1 = z3.Solver()
    s1.add(*fam, cv.out * q < p * t.scale)
    s2 = z3.Solver()
    s2.add(*fam, cv.out * q <= p * t.scale)  # "≤": with the UNSAT answer, "="
    return [
        _run(Step(f"{label}: no smaller cut", f"∃ S ({where}) with B⁺(S) < "
                  f"{fraction_str(value)}?", "unsat"), s1, timeout_s, cv.decode),
        _run(Step(f"{label}: attained", f"∃ S ({where}) with B⁺(S) ≤ {fraction_str(value)}?",
                  "sat"), s2, timeout_s, cv.decode),
    ]


def prove_broadcast(t: Topology, root: Node, algbw: Fraction,
                    timeout_s: float = 60.0) -> list[Step]:
    """algbw = min over S ∋ root, S ⊉ V_c of B⁺(S) (Zhao & Krishnamurthy 2023, (5))."""
    return _min_cut_steps(t, f"broadcast from {root}", algbw,
                          lambda cv: [*cv.proper, cv.x[root]], "root ∈ S ⊉ V_c", timeout_s)


def prove_allreduce(t: Topology, min6: Fraction, per_node7: dict[Node, Fraction],
                    timeout_s: float = 60.0) -> list[Step]:
    """Bound (6): min_{S∩V_c ∉ {∅,V_c}} B⁺(S) = min6; bound (7): per v, min_{S∩V_c={v}} B⁺(S)."""
    steps = _min_cut_steps(t, "allreduce bound (6)", min6, lambda cv: list(cv.proper),
                           "∅ ≠ S∩V_c ≠ V_c", timeout_s)
    for v, value in per_node7.items():
        steps += _min_cut_steps(t, f"allreduce bound (7) at {v}", value, _only(t, v),
                                f"S∩V_c = {{{v}}}", timeout_s)
    return steps


def _only(t: Topology, v: Node) -> Callable[[_CutVars], list[Any]]:
    """The constraints S ∩ V_c = {v}."""
    def family(cv: _CutVars) -> list[Any]:
        z3 = _z3()
        return [cv.x[v]] + [z3.Not(cv.x[w]) for w in t.compute_nodes if w != v]
    return family


def trees_exist(t: Topology, k: int, caps: dict[tuple[Node, Node], int], *,
                timeout_s: float = 60.0, name: str = "", expected: str = "sat") -> Step:
    """Do k out-trees per compute node, spanning V_c, fit within ``caps`` unit trees per link?

    Tree (r, i) picks links y[(r,i), e] ∈ {0,1} and routes one unit of flow from
    r to every other compute node on the links it picked (so they contain an
    out-tree spanning V_c, through switches as needed); Σ over trees of y ≤ caps[e].
    """
    z3 = _z3()
    n = t.num_compute
    links = [e for e in t.capacity if caps.get(e, 0) > 0]
    trees = [(r, i) for r in t.compute_nodes for i in range(k)]
    ctx = z3.Context()  # a fresh context: timings do not depend on earlier proofs
    s = z3.Solver(ctx=ctx)
    y = {(tr, e): z3.Bool(f"y[{tr[0]}#{tr[1]},{e[0]}>{e[1]}]", ctx)
         for tr in trees for e in links}
    for e in links:
        if caps[e] < len(trees):
            s.add(z3.PbLe([(y[(tr, e)], 1) for tr in trees], caps[e]))
    for tr in trees:
        root = tr[0]
        f = {e: z3.Int(f"f[{tr[0]}#{tr[1]},{e[0]}>{e[1]}]", ctx) for e in links}
        for e in links:
            if e[1] == root:  # an out-tree never needs a link into its root
                s.add(z3.Not(y[(tr, e)]), f[e] == 0)
            else:
                s.add(f[e] >= 0, f[e] <= (n - 1) * z3.If(y[(tr, e)], 1, 0))
        for v in t.compute_nodes:  # implied, helps propagation: every v ≠ root is entered
            if v != root:
                s.add(z3.PbGe([(y[(tr, e)], 1) for e in links if e[1] == v] or
                              [(z3.BoolVal(False, ctx), 1)], 1))
        for v in t.nodes:
            inflow = z3.Sum([f[e] for e in links if e[1] == v] or [z3.IntVal(0, ctx)])
            outflow = z3.Sum([f[e] for e in links if e[0] == v] or [z3.IntVal(0, ctx)])
            if v == root:
                s.add(outflow - inflow == n - 1)
            elif t.is_compute(v):
                s.add(inflow - outflow == 1)
            else:
                s.add(inflow == outflow)
        # symmetry breaking among a root's k interchangeable trees: order by the link set
        if tr[1] > 0 and links:
            prev = (root, tr[1] - 1)
            s.add(_lex_le([y[(prev, e)] for e in links], [y[(tr, e)] for e in links], ctx))

    def decode(model: Any) -> dict[str, Any]:
        used = {}
        for tr in trees:
            used[f"{tr[0]}#{tr[1]}"] = [[e[0], e[1]] for e in links
                                        if z3.is_true(model.eval(y[(tr, e)], True))]
        return used

    total = sum(caps.get(e, 0) for e in t.capacity)
    step = Step(name or f"fixed k={k}: trees exist",
                f"{n}·{k} spanning out-trees within capacities summing to {total}?", expected)
    return _run(step, s, timeout_s, decode)


def _lex_le(a: list[Any], b: list[Any], ctx: Any) -> Any:
    """a ≤ b lexicographically for Bool vectors (False < True)."""
    z3 = _z3()
    cond = z3.BoolVal(True, ctx)
    for x, y in reversed(list(zip(a, b))):
        # a ≤ b  ⇔  (¬x ∧ y) ∨ (x = y ∧ rest)
        cond = z3.Or(z3.And(z3.Not(x), y), z3.And(x == y, cond))
    return cond


def prove_fixed_k(t: Topology, k: int, u: Fraction, timeout_s: float = 60.0) -> list[Step]:
    """Trees exist within ⌊U*·c_e⌋ (SAT) and not within ⌈U*·c_e⌉ − 1 (UNSAT: any U < U*)."""
    at = {e: (u * c).__floor__() for e, c in t.capacity.items()}
    below = {e: (u * c).__ceil__() - 1 for e, c in t.capacity.items()}
    s1 = trees_exist(t, k, at, timeout_s=timeout_s,
                     name=f"fixed k={k}: trees exist at U* = {fraction_str(u)}")
    s2 = trees_exist(t, k, below, timeout_s=timeout_s, expected="unsat",
                     name=f"fixed k={k}: no trees for any U < U*")
    bal = {v: 0 for v in t.nodes}
    for (a, b), c in at.items():
        bal[a] += c
        bal[b] -= c
    if t.switch_nodes and any(bal.values()):
        note = ("the floored graph G({⌊U·c_e⌋}) is not Eulerian and has switches: Zhao & Krishnamurthy 2023, §2.4 "
                "promises trees only after switch removal on Eulerian graphs")
        s1.detail = (s1.detail + "; " if s1.detail else "") + note
    return [s1, s2]
