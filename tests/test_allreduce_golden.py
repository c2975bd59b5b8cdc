"""Golden all-reduce rate cases (golden/allreduce/) and the closed forms of Thms 3-7.

The expected values come from the paper's theorems and the digest's worked
values (see each case's provenance); collcert must reproduce them, the
standard-library checker golden/check_allreduce.py must prove them, and the
closed-form functions must agree with both and with the LP on the families.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from collcert.certify.allreduce import Graph
from collcert.certify.allreduce.lp5 import lp5
from collcert.fuzz.allreduce import equalized
from collcert.reference.allreduce import closed_forms as forms
from collcert.reference.allreduce import cut_set_bound, forestcoll_lp, mac_bc_lp
from collcert.reference.forestcoll import optimum
from collcert.reference.model import Topology

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted((ROOT / "golden" / "allreduce").glob("*.json"))


def load(path: Path) -> tuple[dict, Topology]:
    case = json.loads(path.read_text())
    return case, Topology.from_json(case["topology"], strict=False)


def test_there_are_cases_with_provenance() -> None:
    assert len(CASES) >= 25
    for path in CASES:
        case, _ = load(path)
        assert case["id"] == path.stem and case["provenance"], path


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_collcert_reproduces_the_golden_values(path: Path) -> None:
    case, t = load(path)
    exp = {k: Fraction(v) for k, v in case["expected"].items()}
    assert cut_set_bound(t).value == exp["cut_set_bound"]
    if "mac_bc_lp" in exp:
        assert mac_bc_lp(t).value == exp["mac_bc_lp"]
    if "forestcoll_lp" in exp or len(t.nodes) <= 6:
        want = exp.get("forestcoll_lp", exp.get("mac_bc_lp"))
        assert forestcoll_lp(t).value == want
    if "rsag_algbw" in exp:
        assert optimum(t, "allreduce").algbw == exp["rsag_algbw"]
    if "uniform_lp" in exp:
        assert forestcoll_lp(t, uniform=True).value == exp["uniform_lp"]


def test_standard_library_checker_proves_every_case_and_catches_a_wrong_one(
        tmp_path: Path) -> None:
    script = ROOT / "golden" / "check_allreduce.py"
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = tmp_path / "bad.json"
    shutil.copy(ROOT / "golden" / "allreduce" / "k4-example.json", bad)
    case = json.loads(bad.read_text())
    case["expected"]["mac_bc_lp"] = "3"  # the cut bound, not R_LP
    bad.write_text(json.dumps(case))
    proc = subprocess.run([sys.executable, str(script), str(bad)], capture_output=True,
                          text=True)
    assert proc.returncode == 1 and "witness weighting reaches 8/3" in proc.stdout


def _uniform_lp_by_z3(t: Topology) -> Fraction:
    """LP (5) with equal shares, built by certify/ and optimised exactly by Z3."""
    z3 = pytest.importorskip("z3")
    data = lp5(Graph(t.to_json()))
    comp = [json.dumps(["x", v], separators=(",", ":")) for v in t.compute_nodes]
    names = {v for row in data["rows"] for v in row["coefs"]} | set(comp)
    var = {n: z3.Real(n) for n in names}
    opt = z3.Optimize()
    for x in var.values():
        opt.add(x >= 0)
    for row in data["rows"]:
        lhs = z3.Sum([Fraction(a).numerator * var[n] / Fraction(a).denominator
                      for n, a in row["coefs"].items()]) if row["coefs"] else z3.RealVal(0)
        b = Fraction(row["rhs"])
        rhs = z3.Q(b.numerator, b.denominator)
        opt.add({"<=": lhs <= rhs, ">=": lhs >= rhs, "=": lhs == rhs}[row["sense"]])
    for c in comp[1:]:
        opt.add(var[c] == var[comp[0]])
    h = opt.maximize(z3.Sum([var[c] for c in comp]))
    assert opt.check() == z3.sat
    return Fraction(str(opt.upper(h)))


@pytest.mark.parametrize("cid", ["hypothesis-counterexample-equal-shards",
                                 "hypothesis-counterexample-rsag"])
def test_hypothesis_counterexamples_hold_under_an_independent_solver(cid: str) -> None:
    case, t = load(ROOT / "golden" / "allreduce" / f"{cid}.json")
    bandwidth = {t.out_capacity([v]) for v in t.compute_nodes}
    assert len(bandwidth) == 1 and equalized(t) is t  # equal bandwidth per compute node
    assert _uniform_lp_by_z3(t) == Fraction(case["expected"]["uniform_lp"])
    assert Fraction(case["expected"]["rsag_algbw"]) < Fraction(case["expected"]["forestcoll_lp"])


# --------------------------------------------------------------------------- closed forms
def test_closed_forms_match_the_lp_on_the_families() -> None:
    for k in range(2, 9):
        b = forms.uniform_complete(k)
        t = forms.complete_network(k)
        assert (mac_bc_lp(t).value, cut_set_bound(t).value) == (b.r_lp, b.cut)
    for k in range(3, 7):
        for b, t in ((forms.uniform_cycle(k), forms.cycle_network(k)),
                     (forms.uniform_ring(k), forms.ring_network(k))):
            assert (mac_bc_lp(t).value, cut_set_bound(t).value) == (b.r_lp, b.cut)
    for u in range(1, 5):
        b, t = forms.hypercube(u), forms.hypercube_network(u)
        assert (mac_bc_lp(t).value, cut_set_bound(t).value) == (b.r_lp, b.cut)


def test_three_cycle_formula_over_a_grid() -> None:
    for a in range(1, 5):
        for b in range(1, 5):
            for c in (1, 3, 5):
                f = forms.three_cycle(a, b, c)
                t = forms.three_cycle_network(a, b, c)
                assert mac_bc_lp(t).value == f.r_lp and cut_set_bound(t).value == f.cut


def test_theorem_3_and_bidirected_trees() -> None:
    path = {(0, 1): 3, (1, 0): 2, (1, 2): 5, (2, 1): 4, (2, 3): 6, (3, 2): 7}
    b = forms.bidirected_tree(path)
    t = forms.bidirected_tree_network(4, path)
    assert b.r_star == mac_bc_lp(t).value == cut_set_bound(t).value == 2
    # Thm 3: 1-MAC-BC networks (a star MAC-BC network rooted at 0, its other links
    # raised) sharing the cut edge 1 -> 0 (the only link leaving 1), weights 1/2 and 3/2
    star = {(1, 0): 1, (2, 0): 1, (0, 1): 1, (0, 2): 1}
    raised = {(1, 0): 1, (2, 0): 3, (0, 1): 2, (0, 2): 5}
    combo = {e: Fraction(1, 2) * star.get(e, 0) + Fraction(3, 2) * raised.get(e, 0)
             for e in set(star) | set(raised)}
    t = forms.network(3, combo)
    assert mac_bc_lp(t).value == cut_set_bound(t).value == forms.mac_bc_sum(["1/2", "3/2"])
