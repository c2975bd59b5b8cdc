"""Checker: the alltoall optimum (maximum concurrent flow) certificate.

Alltoall on N compute nodes sends a block of M/N from every node to every
other. With λ the largest rate at which all N(N−1) ordered pairs can be sent
at once within the link capacities (the maximum concurrent flow), the blocks
take (M/N)/λ: time per unit of M = 1/(N·λ), algbw = N·λ (docs/certificates.md).

The checker builds the LP of this maximum concurrent flow *itself*, from the
topology, and requires the certificate's LP to be exactly that LP (so a
certificate of some other LP cannot pass), then checks the exact primal and
dual against it with :func:`~collcert.certify.solvers.lp.check_lp` (weak duality).
Naming, by node index (compute nodes, then switches)::

    max lambda
    cons{s}:{v}:  Σ_{e out of v} f{s}:e − Σ_{e into v} f{s}:e
                  − (N−1)·lambda [v = s] + lambda [v ≠ s compute]  = 0
    cap{u}>{v}:   Σ_s f{s}:{u}>{v} ≤ c_(u,v)

A certificate of ``"method": "symmetric flows"`` carries flows of one compute
node per orbit of its automorphisms and link lengths instead of the LP; it is
checked by :mod:`.orbit_lp` (both bounds, without the LP).

A ``cut`` in the certificate, if given, is checked too: the pairs from inside
S to outside all cross δ⁺(S), so λ ≤ B⁺(S)/(|S ∩ V_c|·|V_c ∖ S|); the cut
must meet λ exactly (a proof of the bound a reader can check by hand).
Every other field it states is compared by :mod:`.stated` (an unknown one fails).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Topo, Verdict, frac_str, number, other_topology
from ..solvers import check_lp
from .orbit_lp import check_flows_and_lengths
from .stated import check_stated


def alltoall_lp(topo: Topo) -> dict[str, Any]:
    """The maximum concurrent flow LP of alltoall, as plain data (the checker's own)."""
    n = len(topo.compute)
    idx = topo.node_index
    rows: list[dict[str, Any]] = []
    touching: dict[Any, list[tuple[str, Fraction]]] = {v: [] for v in topo.nodes}
    for (a, b) in topo.cap:
        touching[a].append((f"{idx[a]}>{idx[b]}", Fraction(1)))
        touching[b].append((f"{idx[a]}>{idx[b]}", Fraction(-1)))
    for s in topo.compute:
        for v in topo.nodes:
            coefs: dict[str, Fraction] = {f"f{idx[s]}:{e}": a for e, a in touching[v]}
            if v == s:
                coefs["lambda"] = Fraction(-(n - 1))
            elif v in topo.compute_set:
                coefs["lambda"] = Fraction(1)
            rows.append({"name": f"cons{idx[s]}:{idx[v]}", "coefs": coefs, "sense": "=",
                         "rhs": Fraction(0)})
    for (a, b), c in topo.cap.items():
        rows.append({"name": f"cap{idx[a]}>{idx[b]}",
                     "coefs": {f"f{idx[s]}:{idx[a]}>{idx[b]}": Fraction(1) for s in topo.compute},
                     "sense": "<=", "rhs": c})
    return {"sense": "max", "objective": {"lambda": Fraction(1)}, "rows": rows, "free": []}


def _canon(lp: Mapping[str, Any]) -> tuple[Any, ...]:
    """An LP as comparable data: exact numbers, zero entries dropped, rows by name."""
    rows_raw = lp.get("rows")
    obj_raw = lp.get("objective")
    if not isinstance(rows_raw, list) or not isinstance(obj_raw, Mapping):
        raise InputError("the certificate's 'lp' needs 'objective' and 'rows'")
    obj = {str(k): number(c, f"objective[{k}]") for k, c in obj_raw.items()}
    rows = {}
    for i, r in enumerate(rows_raw):
        if not isinstance(r, Mapping) or not isinstance(r.get("coefs"), Mapping):
            raise InputError(f"the certificate's LP rows[{i}] needs 'coefs'")
        coefs = {str(k): number(a, f"row {r.get('name')} coefficient") for k, a in
                 r["coefs"].items()}
        rows[str(r.get("name"))] = (r.get("sense"), number(r.get("rhs", 0), "rhs"),
                                    {k: a for k, a in coefs.items() if a})
    return (lp.get("sense", "min"), {k: c for k, c in obj.items() if c}, rows,
            sorted(str(x) for x in lp.get("free", [])))


def check_alltoall_optimum(topology: Mapping[str, Any] | Topo,
                           cert: Mapping[str, Any]) -> Verdict:
    """Check an alltoall optimum certificate; ``facts``: ``lambda``, ``algbw``,
    ``time_per_unit`` (per unit of M, each node's whole send buffer)."""
    topo = topology if isinstance(topology, Topo) else Topo(topology)
    v = Verdict("alltoall optimum certificate")
    wrong = other_topology(topo, cert)
    if wrong:
        v.fail(wrong)
        return v
    if "method" in cert and cert["method"] != "symmetric flows":
        v.fail(f"field 'method': {cert['method']!r} is not one collcert check reads "
               "('symmetric flows', or no method for the full LP)")
        return v
    if cert.get("method") == "symmetric flows":
        proven = check_flows_and_lengths(topo, cert, v)
        return v if proven is None else _conclude(topo, cert, proven, v)
    lp, primal, dual = cert.get("lp"), cert.get("primal"), cert.get("dual")
    if not (isinstance(lp, Mapping) and isinstance(primal, Mapping)
            and isinstance(dual, Mapping)):
        raise InputError("an alltoall certificate needs objects 'lp', 'primal' and 'dual'")
    mine = alltoall_lp(topo)
    want, got = _canon(mine), _canon(lp)
    if want != got:
        v.fail("the certificate's LP is not the alltoall LP of this topology: "
               + _first_difference(want, got))
        return v
    lv = check_lp(mine, primal, dual)
    v.absorb(lv, "LP: ")
    if not v.ok:
        return v
    lam = lv.facts["primal_objective"]
    if lam <= 0:
        v.fail("λ = 0: some compute node cannot reach another")
        return v
    return _conclude(topo, cert, lam, v)


def _conclude(topo: Topo, cert: Mapping[str, Any], lam: Fraction, v: Verdict) -> Verdict:
    """The facts λ proves, the certificate's claims compared with them, and its cut."""
    n = len(topo.compute)
    v.facts.update({"lambda": lam, "algbw": n * lam, "time_per_unit": 1 / (n * lam)})
    v.facts["objective"] = lam  # the LP's value, which the file repeats
    for key in ("lambda", "algbw", "time_per_unit", "objective"):
        if key in cert and number(cert[key], key) != v.facts[key]:
            v.fail(f"the certificate claims {key} {cert[key]}, but its witnesses prove "
                   f"{frac_str(v.facts[key])}")
    if cert.get("cut") is not None:
        _check_cut(topo, cert["cut"], lam, v)
    check_stated(topo, cert, v)  # every other field it states (issue 22, item 5)
    return v


def _check_cut(topo: Topo, raw: Any, lam: Fraction, v: Verdict) -> None:
    if not isinstance(raw, list):
        raise InputError("the certificate's 'cut' is a list of node ids")
    cut = {topo.node(x, "cut entry") for x in raw}
    inside = sum(1 for c in topo.compute if c in cut)
    outside = len(topo.compute) - inside
    if not inside or not outside:
        v.fail("the cut does not separate the compute nodes")
        return
    out = sum((c for (a, b), c in topo.cap.items() if a in cut and b not in cut), Fraction(0))
    bound = out / (inside * outside)
    if bound != lam:
        v.fail(f"the cut bounds λ by B⁺(S)/({inside}·{outside}) = {frac_str(bound)}, not λ = "
               f"{frac_str(lam)}")
    else:
        v.facts["cut_bound"] = bound


def _first_difference(want: tuple[Any, ...], got: tuple[Any, ...]) -> str:
    if want[0] != got[0]:
        return f"its sense is {got[0]!r}, not 'max'"
    if want[1] != got[1]:
        return "its objective is not max lambda"
    wr, gr = want[2], got[2]
    for name in list(wr)[:] + list(gr):
        if wr.get(name) != gr.get(name):
            what = "missing" if name not in gr else ("extra" if name not in wr else "different")
            return f"row {name} is {what}"
    return "its free variables differ"
