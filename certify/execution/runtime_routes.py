"""The best allgather rate when every GPU pair uses the route the runtime gives it.

Certificate ``runtime-routes-optimum`` (docs/schedules.md, "Runtime routes"): an
exact LP certificate whose LP must be, exactly, the one this module builds from
the topology (node ids are indices, compute nodes first):

    max x  s.t.   dir p>q:  y_pq (− Σ_w h^p_wq unless constrained) ≤ c_pq   (linked pair)
                  sw p>q:   y_pq − Σ_w h^p_wq ≤ 0                         (unlinked pair)
                  swc p:w:  Σ_out h^p − Σ_in h^p = 0 at switch w
                  link a>b: Σ_p h^p_ab ≤ c_ab          (a link touching a switch)
                  cap v:p>q: g^v_pq − y_pq ≤ 0        (p ≠ v)
                  cons v:u: Σ_q g^v_uq − Σ_{p≠v} g^v_pu − x = 0   (u ≠ v)
                  bal p:    Σ_q y_pq − Σ_q y_qp = 0   (only when ``balanced``)

h^p may use the links from p to switches, between switches, and from a switch to a
compute node q ≠ p (constrained: only one p has no link to). Soundness: any schedule
whose linked pairs use only their direct link and whose other pairs go through
switches sends, per unit of time, y_pq from p to q with (y, h) feasible (h^p: p's
traffic through switches); its trees bring every other node's shard to each v, so
for every node set S ∌ v the logical capacity out of S is at least x·|S ∩ V_c| for
x = its algbw / N (Zhao & Krishnamurthy 2023, eq. (1), Thm 1, on the logical graph),
which by max-flow/min-cut gives a feasible g^v. So the LP's optimum bounds every such
schedule's algbw by N·x; checked with :func:`collcert.certify.solvers.check_lp`.
Reduce-scatter (``"collective": "reduce-scatter"``) is the same LP on the transposed
machine (Zhao & Krishnamurthy 2023, App. B: its in-trees are the allgather's out-trees
reversed).

``"method": "cuts"`` (cut generation, docs/schedules.md "Runtime routes at scale"): the
LP is the routing rows above plus cut rows ``cut:i,j,…`` (Σ_{p∈S, q∉S} y_pq − |S|·x ≥ 0
for the S its name gives, a proper non-empty set of compute nodes: every schedule on
these routes meets it, so the LP is a relaxation and its optimum an upper bound), and
``flows`` holds, per sink, a flow in the primal's y that brings x from every other
compute node (so x is reached). ``"collective": "allreduce"``: the certificates of its
reduce-scatter and allgather phases; time 1/rs + 1/ag, the optimum of two-phase
schedules on these routes (``scope``), not of every allreduce.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Topo, Verdict, frac_str, number, other_topology
from ..solvers import check_lp

Row = dict[str, Any]


def runtime_lp(topo: Topo, constrained: bool, balanced: bool,
               sinks: bool = True) -> dict[str, Any]:
    """The LP of the module docstring, as plain data (this checker's own); ``sinks=False``:
    the routing rows only (the cut form adds its cut rows to them)."""
    ix = topo.node_index
    comp = list(topo.compute)
    sw = set(topo.switches)
    cap = topo.cap

    def h(p: Any, a: Any, b: Any) -> str:
        return f"h{ix[p]}:{ix[a]}>{ix[b]}"

    def may(p: Any, a: Any, b: Any) -> bool:  # may p's switch flow use link (a, b)?
        if a == p:
            return b in sw
        into_ok = b in sw or (b != p and b in topo.compute_set
                              and not (constrained and (p, b) in cap))
        return a in sw and into_ok

    rows: list[Row] = []
    for p in comp:
        for q in comp:
            if p != q:
                coefs = {f"y{ix[p]}>{ix[q]}": Fraction(1)}
                coefs.update({h(p, w, q): Fraction(-1) for w in sw
                              if (w, q) in cap and may(p, w, q)})
                linked = (p, q) in cap
                rows.append(_row(f"{'dir' if linked else 'sw'}{ix[p]}>{ix[q]}", coefs, "<=",
                                 cap[(p, q)] if linked else Fraction(0)))
    if balanced:
        for p in comp:
            bal: dict[str, Fraction] = {}
            for q in comp:
                if q != p:
                    bal[f"y{ix[p]}>{ix[q]}"] = Fraction(1)
                    bal[f"y{ix[q]}>{ix[p]}"] = Fraction(-1)
            rows.append(_row(f"bal{ix[p]}", bal, "=", Fraction(0)))
    for p in comp:
        for w in sorted(sw, key=lambda n: ix[n]):
            coefs = {}
            for (a, b) in cap:
                if may(p, a, b) and b == w:
                    coefs[h(p, a, b)] = Fraction(-1)
                if may(p, a, b) and a == w:
                    coefs[h(p, a, b)] = Fraction(1)
            if coefs:
                rows.append(_row(f"swc{ix[p]}:{ix[w]}", coefs, "=", Fraction(0)))
    for (a, b), c in cap.items():
        users = [p for p in comp if may(p, a, b)] if a in sw or b in sw else []
        if users:
            rows.append(_row(f"link{ix[a]}>{ix[b]}", {h(p, a, b): Fraction(1) for p in users},
                             "<=", c))
    if sinks:
        rows += _sink_rows(topo)
    return {"sense": "max", "objective": {"x": Fraction(1)}, "rows": rows, "free": []}


def _sink_rows(topo: Topo) -> list[Row]:
    ix = topo.node_index
    comp = list(topo.compute)
    rows: list[Row] = []
    for v in comp:
        for u in comp:
            if u == v:
                continue
            coefs = {"x": Fraction(-1)}
            for q in comp:
                if q != u:
                    coefs[f"g{ix[v]}:{ix[u]}>{ix[q]}"] = Fraction(1)
                if q not in (u, v):
                    coefs[f"g{ix[v]}:{ix[q]}>{ix[u]}"] = Fraction(-1)
            rows.append(_row(f"cons{ix[v]}:{ix[u]}", coefs, "=", Fraction(0)))
        for p in comp:
            for q in comp:
                if p != q and p != v:
                    rows.append(_row(f"cap{ix[v]}:{ix[p]}>{ix[q]}",
                                     {f"g{ix[v]}:{ix[p]}>{ix[q]}": Fraction(1),
                                      f"y{ix[p]}>{ix[q]}": Fraction(-1)}, "<=", Fraction(0)))
    return rows


def _row(name: str, coefs: dict[str, Fraction], sense: str, rhs: Fraction) -> Row:
    return {"name": name, "coefs": coefs, "sense": sense, "rhs": rhs}


def _canon(lp: Mapping[str, Any]) -> tuple[Any, ...]:
    rows_raw, obj_raw = lp.get("rows"), lp.get("objective")
    if not isinstance(rows_raw, list) or not isinstance(obj_raw, Mapping):
        raise InputError("the certificate's 'lp' needs 'objective' and 'rows'")
    rows = {}
    for i, r in enumerate(rows_raw):
        if not isinstance(r, Mapping) or not isinstance(r.get("coefs"), Mapping):
            raise InputError(f"the certificate's LP rows[{i}] needs 'coefs'")
        coefs = {str(k): number(a, f"row {r.get('name')} coefficient")
                 for k, a in r["coefs"].items()}
        rows[str(r.get("name"))] = (r.get("sense"), number(r.get("rhs", 0), "rhs"),
                                    {k: a for k, a in coefs.items() if a})
    obj = {str(k): number(c, "objective") for k, c in obj_raw.items()}
    return (lp.get("sense", "min"), {k: c for k, c in obj.items() if c}, rows,
            sorted(str(x) for x in lp.get("free", [])))


KNOWN = {"format", "kind", "collective", "topology", "constrained", "balanced", "x", "algbw",
         "time_per_unit", "lp", "primal", "dual", "objective", "method", "flows"}


def _cut_rows(topo: Topo, lp: Mapping[str, Any]) -> list[Row]:
    """This checker's own row for every cut the certificate's LP names ("cut:i,j,…": S by
    node index): Σ_{p∈S, q∉S} y_pq − |S|·x ≥ 0, which every schedule on the runtime's
    routes meets (the allgather condition on its logical graph), so adding it keeps the
    LP an upper bound."""
    rows: list[Row] = []
    comp = set(range(len(topo.compute)))
    for r in lp.get("rows") or []:
        name = str(r.get("name")) if isinstance(r, Mapping) else ""
        if not name.startswith("cut:"):
            continue
        try:
            cut = {int(i) for i in name[4:].split(",")}
        except ValueError:
            raise InputError(f"LP row {name!r}: a cut row names node indices, "
                             "'cut:0,3,5'") from None
        if not cut or not cut < comp:
            raise InputError(f"LP row {name!r}: a cut is a proper, non-empty set of compute "
                             f"node indices (0..{len(comp) - 1})")
        coefs = {f"y{p}>{q}": Fraction(1) for p in sorted(cut) for q in sorted(comp - cut)}
        coefs["x"] = Fraction(-len(cut))
        rows.append(_row(name, coefs, ">=", Fraction(0)))
    return rows


def _check_flows(topo: Topo, primal: Mapping[str, Any], x: Fraction, flows: Any,
                 v: Verdict) -> None:
    """Field 'flows': for every sink t a flow in the primal's logical graph y bringing x
    from every other compute node to t, so y meets the allgather condition at x (reached
    by Edmonds' packing on y)."""
    n = len(topo.compute)
    if not isinstance(flows, Mapping) or set(map(str, flows)) != {str(i) for i in range(n)}:
        v.fail(f"field 'flows': needs one flow per sink, keyed 0..{n - 1}")
        return
    y = {str(k): number(a, f"primal[{k}]") for k, a in primal.items()}
    for t, flow in flows.items():
        sink = int(t)
        if not isinstance(flow, Mapping):
            raise InputError(f"field 'flows': sink {t}: an object {{'p>q': amount}}")
        net = [Fraction(0)] * n
        for arc, a in flow.items():
            p, _, q = str(arc).partition(">")
            if not (p.isdigit() and q.isdigit() and int(p) < n and int(q) < n and p != q):
                raise InputError(f"field 'flows': sink {t}: arc {arc!r} is not 'p>q' of two "
                                 "compute node indices")
            g = number(a, f"flows[{t}][{arc}]")
            if g < 0 or g > y.get(f"y{p}>{q}", Fraction(0)) or int(p) == sink:
                v.fail(f"field 'flows': sink {t}: arc {arc} carries {frac_str(g)}, outside "
                       f"[0, y{p}>{q}] or leaving the sink")
                return
            net[int(p)] += g
            net[int(q)] -= g
        bad = [u for u in range(n) if u != sink and net[u] != x]
        if bad:
            v.fail(f"field 'flows': sink {t}: node {bad[0]} sends {frac_str(net[bad[0]])}, "
                   f"not x = {frac_str(x)}")
            return


def check_runtime_routes(topology: Mapping[str, Any] | Topo,
                         cert: Mapping[str, Any]) -> Verdict:
    """Check a ``runtime-routes-optimum`` certificate; ``facts``: ``x``, ``algbw``,
    ``time_per_unit``, ``constrained``, ``balanced``."""
    topo = topology if isinstance(topology, Topo) else Topo(topology)
    v = Verdict("runtime-routes optimum certificate")
    wrong = other_topology(topo, cert)
    if wrong:
        v.fail(wrong)
        return v
    coll = cert.get("collective", "allgather")
    if coll == "allreduce":
        return _check_allreduce(topo, cert, v)
    if coll not in ("allgather", "reduce-scatter"):
        raise InputError(f"collective {coll!r}: a runtime-routes certificate is for allgather, "
                         "reduce-scatter or allreduce")
    if coll == "reduce-scatter":  # the allgather of the transposed machine
        topo = topo.transposed()
    constrained, balanced = cert.get("constrained", True), cert.get("balanced", False)
    if not isinstance(constrained, bool) or not isinstance(balanced, bool):
        raise InputError("'constrained' and 'balanced' must be true or false")
    lp, primal, dual = cert.get("lp"), cert.get("primal"), cert.get("dual")
    if not (isinstance(lp, Mapping) and isinstance(primal, Mapping)
            and isinstance(dual, Mapping)):
        raise InputError("a runtime-routes certificate needs objects 'lp', 'primal', 'dual'")
    method = cert.get("method", "lp")
    if method not in ("lp", "cuts"):
        raise InputError(f"field 'method': {method!r}; a runtime-routes certificate is 'lp' "
                         "(one flow per sink in the LP) or 'cuts' (cut rows and flows)")
    mine = runtime_lp(topo, constrained, balanced, sinks=method == "lp")
    if method == "cuts":
        mine["rows"] += _cut_rows(topo, lp)
    if _canon(mine) != _canon(lp):
        v.fail("the certificate's LP is not the runtime-routes LP of this topology")
        return v
    lv = check_lp(mine, primal, dual)
    v.absorb(lv, "LP: ")
    if not v.ok:
        return v
    x = lv.facts["primal_objective"]
    if x <= 0:
        v.fail("x = 0: under these routes some compute node cannot reach another")
        return v
    if method == "cuts":
        _check_flows(topo, primal, x, cert.get("flows"), v)
        if not v.ok:
            return v
    n = len(topo.compute)
    v.facts.update({"x": x, "objective": x, "algbw": n * x, "time_per_unit": 1 / (n * x),
                    "constrained": constrained, "balanced": balanced})
    for key in ("x", "objective", "algbw", "time_per_unit"):
        if key in cert and number(cert[key], key) != v.facts[key]:
            v.fail(f"field {key!r}: the certificate states {cert[key]}, its LP proves "
                   f"{frac_str(v.facts[key])}")
    for key in sorted(set(cert) - KNOWN, key=str):
        v.fail(f"field {key!r}: no checker of a runtime-routes certificate proves it")
    return v


ALLREDUCE_KNOWN = {"format", "kind", "collective", "topology", "constrained", "scope", "algbw",
                   "time_per_unit", "reduce_scatter", "allgather"}
SCOPE = "reduce-scatter then allgather"


def _check_allreduce(topo: Topo, cert: Mapping[str, Any], v: Verdict) -> Verdict:
    """Allreduce as reduce-scatter then allgather on the runtime's routes: both phases'
    certificates checked; time per unit 1/rs + 1/ag, the best of every two-phase
    schedule of equal shards on these routes (the phases' times add, and each is at its
    proven optimum). Not a bound on allreduce schedules of another shape; ``scope`` says
    so and must be stated as written."""
    facts: dict[str, Any] = {}
    for key, coll in (("reduce_scatter", "reduce-scatter"), ("allgather", "allgather")):
        sub = cert.get(key)
        if not isinstance(sub, Mapping):
            raise InputError(f"an allreduce runtime-routes certificate needs object {key!r}")
        if sub.get("collective") != coll:
            v.fail(f"field '{key}.collective': {sub.get('collective')!r}, not {coll!r}")
            return v
        sv = check_runtime_routes(topo, sub)
        v.absorb(sv, f"{key}: ")
        facts[key] = sv.facts
    if not v.ok:
        return v
    if facts["reduce_scatter"]["balanced"] or facts["allgather"]["balanced"]:
        v.fail("field 'balanced': the phases of an allreduce certificate are not balanced")
    constrained = facts["reduce_scatter"]["constrained"] and facts["allgather"]["constrained"]
    time = facts["reduce_scatter"]["time_per_unit"] + facts["allgather"]["time_per_unit"]
    v.facts.update({"algbw": 1 / time, "time_per_unit": time, "constrained": constrained,
                    "balanced": False, "scope": SCOPE})
    if cert.get("constrained", True) is not constrained:
        v.fail(f"field 'constrained': {cert.get('constrained')!r}, the phases say "
               f"{constrained}")
    if cert.get("scope") != SCOPE:
        v.fail(f"field 'scope': {cert.get('scope')!r}; the only value is {SCOPE!r} (the "
               "optimum of two-phase schedules, not of every allreduce)")
    for key in ("algbw", "time_per_unit"):
        if key in cert and number(cert[key], key) != v.facts[key]:
            v.fail(f"field {key!r}: the certificate states {cert[key]}, its phases prove "
                   f"{frac_str(v.facts[key])}")
    for key in sorted(set(cert) - ALLREDUCE_KNOWN, key=str):
        v.fail(f"field {key!r}: no checker of a runtime-routes certificate proves it")
    return v
