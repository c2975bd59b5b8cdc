"""Bi-directed trees (Zhou & Sun 2026, Thm 3): the closed form R* = min β against the
MAC-BC LP (column generation and, for K ≤ 5, every MAC-BC network enumerated), the
cut-set bound by max-flow, and the independent checkers; bad shapes refused."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collcert.certify.allreduce import Graph, check_cut_set, check_mac_bc_lp
from collcert.reference.allreduce import closed_forms as forms
from collcert.reference.allreduce import cut_set_bound, mac_bc_lp
from collcert.reference.allreduce.rate import mac_bc_lp_enumerated
from collcert.reference.model import Topology, TopologyError

ROOT = Path(__file__).resolve().parents[1]
CAPS = st.sampled_from([1, 2, 3, 5, 7, Fraction(1, 2), Fraction(5, 3), Fraction(9, 4)])


@st.composite
def trees(draw: st.DrawFn, max_k: int = 6) -> tuple[int, dict[tuple[int, int], object]]:
    """A random labelled tree (random parent per node after a shuffle), β drawn per direction."""
    k = draw(st.integers(2, max_k))
    order = draw(st.permutations(range(k)))
    beta: dict[tuple[int, int], object] = {}
    for i in range(1, k):
        u, v = order[draw(st.integers(0, i - 1))], order[i]
        beta[(u, v)] = draw(CAPS)
        beta[(v, u)] = draw(CAPS)
    return k, beta


@settings(max_examples=25, deadline=None, derandomize=True)
@given(trees())
def test_closed_form_equals_lp_and_cut_set_on_random_trees(case: tuple) -> None:
    k, beta = case
    t = forms.bidirected_tree_network(k, beta)
    r = forms.bidirected_tree_rate(t)
    assert r.value == min(Fraction(c) for c in beta.values())
    assert r.value == mac_bc_lp(t).value == cut_set_bound(t).value
    assert t.out_capacity(r.side) == r.value  # the witness cut
    if k <= 4:  # every MAC-BC network as a column: brute force
        assert mac_bc_lp_enumerated(t) == r.value
    g = Graph(t.to_json())
    certs = r.certificates(t)
    assert check_cut_set(g, certs["cut_set_bound"]).ok
    assert check_mac_bc_lp(g, certs["mac_bc_lp"]).ok


def test_checkers_refuse_a_wrong_closed_form() -> None:
    beta = {(0, 1): 3, (1, 0): 2, (1, 2): 5, (2, 1): 4, (1, 3): 6, (3, 1): 7}
    t = forms.bidirected_tree_network(4, beta)
    certs = forms.bidirected_tree_rate(t).certificates(t)
    g = Graph(t.to_json())
    for key, check in (("cut_set_bound", check_cut_set), ("mac_bc_lp", check_mac_bc_lp)):
        wrong = json.loads(json.dumps(certs[key]))
        wrong["value"] = "3"
        if key == "mac_bc_lp":
            wrong["columns"][0]["weight"] = "3"  # over capacity on 1 -> 0
        assert not check(g, wrong).ok


@pytest.mark.parametrize("beta, match", [
    ({(0, 1): 1, (1, 0): 1, (1, 2): 1}, "no reverse link 2 -> 1"),
    ({(0, 1): 1, (1, 0): 1, (1, 2): 1, (2, 1): 1, (2, 0): 1, (0, 2): 1}, "cycle"),
    ({(0, 1): 1, (1, 0): 1, (2, 3): 1, (3, 2): 1}, "cannot be reached"),
])
def test_bad_shapes_are_refused_with_the_reason(beta: dict, match: str) -> None:
    with pytest.raises(TopologyError, match=match):
        forms.bidirected_tree(beta)


def test_switches_and_single_nodes_are_refused() -> None:
    star = Topology(["a", "b"], [("a", "s", 1), ("s", "a", 1), ("b", "s", 1), ("s", "b", 1)],
                    ["s"], strict=False)
    with pytest.raises(TopologyError, match="compute nodes only"):
        forms.bidirected_tree_rate(star)
    with pytest.raises(TopologyError, match="one compute node"):
        forms.bidirected_tree_rate(Topology(["a"], [], strict=False))


def test_golden_tree_cases_check_with_the_standard_library() -> None:
    cases = sorted((ROOT / "golden" / "allreduce").glob("bidirected-tree-*.json"))
    assert len(cases) >= 3
    for path in cases:
        case = json.loads(path.read_text())
        t = Topology.from_json(case["topology"], strict=False)
        r = forms.bidirected_tree_rate(t)
        assert Fraction(case["expected"]["r_star"]) == r.value
    out = subprocess.run([sys.executable, str(ROOT / "golden" / "check_allreduce.py"),
                          *map(str, cases)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from collcert.cli import main

    case = json.loads((ROOT / "golden" / "allreduce" / "bidirected-tree-spider-7.json")
                      .read_text())
    tree = tmp_path / "tree.json"
    tree.write_text(json.dumps(case["topology"]))
    args = ["optimum", "-c", "allreduce", "--method", "bidirected-tree"]
    assert main([*args, str(tree), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert Fraction(out["r_star"]) == Fraction(case["expected"]["r_star"])
    one_way = dict(case["topology"], links=case["topology"]["links"][:-1])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(one_way))
    assert main([*args, str(bad)]) == 2
    assert "no reverse link" in capsys.readouterr().err
    assert main([*args, "ring:4"]) == 2
    assert "cycle" in capsys.readouterr().err
