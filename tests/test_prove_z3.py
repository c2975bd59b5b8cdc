"""Z3 brute-force proofs (collcert.fuzz.z3proofs) and the `collcert prove` command.

Z3's answers are cross-checked here with plain code: witness cuts are re-evaluated
by hand, tree packings are checked link by link, and wrong claims must be refuted.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings

from collcert import Topology, optimum, platforms
from collcert.cli import main
from collcert.fuzz import brute
from collcert.fuzz import strategies as cst
from collcert.fuzz import z3proofs as z
from collcert.fuzz.generators import RandomSource, bidirectional, cycle_union

CI = settings(max_examples=15, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])


def _ratio(t: Topology, nodes: list[object]) -> Fraction:
    s = set(nodes)
    inside = sum(1 for v in s if t.is_compute(v))
    return Fraction(inside) / t.out_capacity(s)


@CI
@given(cst.topologies(max_nodes=9))
def test_cut_proof_of_the_optimum_and_refutation_of_wrong_claims(t: Topology) -> None:
    inv_x = optimum(t).inv_x
    assert inv_x is not None
    above, attained = z.prove_allgather(t, inv_x)
    assert above.result == "unsat" and attained.result == "sat"
    assert _ratio(t, attained.witness) == inv_x  # Z3's cut, re-evaluated by hand
    # a claim slightly too low is refuted with a cut beating it
    low = z.prove_allgather(t, inv_x * Fraction(999, 1000))
    assert low[0].result == "sat" and not low[0].ok
    assert _ratio(t, low[0].witness) > inv_x * Fraction(999, 1000)
    # a claim slightly too high is not attained
    high = z.prove_allgather(t, inv_x * Fraction(1001, 1000))
    assert high[0].ok and high[1].result == "unsat"


@CI
@given(cst.topologies(max_nodes=7, capacities="small"))
def test_cut_proofs_agree_with_enumeration(t: Topology) -> None:
    inv_x, _ = brute.allgather_inv_x(t)
    assert all(s.ok for s in z.prove_allgather(t, inv_x))
    root = t.compute_nodes[0]
    assert all(s.ok for s in z.prove_broadcast(t, root, brute.broadcast_algbw(t, root)))


def _check_packing(t: Topology, k: int, caps: dict, packing: dict[str, list[list[object]]]):
    """Plain check of a tree packing found by Z3: caps respected, every tree spans V_c."""
    used: dict[tuple[object, object], int] = {}
    assert len(packing) == t.num_compute * k
    for name, edges in packing.items():
        root = next(v for v in t.compute_nodes if name.startswith(f"{v}#"))
        adj: dict[object, list[object]] = {}
        for u, v in edges:
            used[(u, v)] = used.get((u, v), 0) + 1
            adj.setdefault(u, []).append(v)
        seen, stack = {root}, [root]
        while stack:
            for w in adj.get(stack.pop(), []):
                if w not in seen:
                    seen.add(w)
                    stack.append(w)
        assert set(t.compute_nodes) <= seen, f"tree {name} does not span"
    for e, n in used.items():
        assert n <= caps[e]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 2])
def test_fixed_k_tree_proofs(seed: int, k: int) -> None:
    build = cycle_union if seed % 2 else bidirectional
    t = build(RandomSource(f"trees:{seed}"), min_compute=3, max_compute=5, capacities="small")
    u = optimum(t, fixed_k=k).U
    assert u is not None
    assert u == brute.fixed_k_u(t, k)[0]
    at, below = z.prove_fixed_k(t, k, u, timeout_s=60)
    assert at.result == "sat" and below.result == "unsat"
    _check_packing(t, k, {e: (u * c).__floor__() for e, c in t.capacity.items()}, at.witness)
    # a claimed U* one breakpoint too low: no trees fit at it
    lower = max(Fraction((u * c).__ceil__() - 1, 1) / c for c in t.capacity.values())
    assert lower < u
    wrong = z.prove_fixed_k(t, k, lower, timeout_s=60)
    assert wrong[0].result == "unsat" and wrong[0].verdict == "REFUTED"


def test_fixed_k_on_the_two_box_example_with_switches() -> None:
    t = platforms.two_box_example()
    steps = z.prove_fixed_k(t, 1, Fraction(1), timeout_s=60)
    assert [s.result for s in steps] == ["sat", "unsat"]


def test_allreduce_bounds() -> None:
    t = platforms.two_box_example()
    opt = optimum(t, "allreduce")
    b6, b7 = brute.allreduce_bounds(t)
    per7 = {v: t.out_capacity(cut) for v, cut in opt.extra["bound7_cuts"].items()}
    steps = z.prove_allreduce(t, 1 / b6, per7)
    assert all(s.ok for s in steps) and len(steps) == 2 + 2 * t.num_compute
    assert Fraction(2 * (t.num_compute - 1), t.num_compute) / max(per7.values()) == b7
    wrong = z.prove_allreduce(t, 1 / b6 + 1, per7)
    assert wrong[0].result == "sat"  # a cut below the claimed minimum exists


def test_step_verdicts() -> None:
    s = z.Step("x", "q", "unsat", result="unknown")
    assert s.verdict == "inconclusive" and not s.ok
    assert z.Step("x", "q", "unsat", result="sat").verdict == "REFUTED"
    assert z.Step("x", "q", "sat", result="sat").to_json()["verdict"] == "proved"


# ------------------------------------------------------------------------ CLI
def test_cli_prove_the_verified_values(capsys) -> None:
    assert main(["prove", "two_box_example", "--fixed-k", "1"]) == 0
    out = capsys.readouterr().out
    assert "1/x* = 1" in out and "verdict: proved" in out and "s)" in out
    assert "inv_x" not in out  # internal names stay in the JSON
    assert main(["prove", "dgx_a100:2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["claims"]["inv_x"] == "3/65" and data["verdict"] == "proved"
    assert all(isinstance(s["seconds"], float) for s in data["steps"])
    assert main(["prove", "two_box_example", "-c", "broadcast", "--root", "c1.2"]) == 0
    assert "algbw = 4" in capsys.readouterr().out


def test_cli_prove_refutes_a_wrong_claim(capsys) -> None:
    assert main(["prove", "two_box_example", "--claim", "9/10"]) == 1
    out = capsys.readouterr().out
    assert "REFUTED" in out and "counterexample" in out


def test_cli_prove_reduce_scatter_and_allreduce(tmp_path, capsys) -> None:
    t = cycle_union(RandomSource(12), min_compute=4, max_compute=4, capacities="small")
    path = tmp_path / "t.json"
    t.save(path)
    assert main(["prove", str(path), "-c", "reduce-scatter", "--fixed-k", "2"]) == 0
    assert "no trees for any U < U*" in capsys.readouterr().out
    assert main(["prove", str(path), "-c", "allreduce", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    names = [s["name"] for s in data["steps"]]
    assert sum("bound (7)" in n for n in names) == 2 * t.num_compute
    assert data["verdict"] == "proved"


@pytest.mark.parametrize("argv,needle", [
    (["prove", "two_box_example", "--fixed-k", "0"], "--fixed-k"),
    (["prove", "two_box_example", "-c", "broadcast", "--fixed-k", "1"], "--fixed-k"),
    (["prove", "two_box_example", "--claim", "abc"], "--claim"),
    (["prove", "no_such_platform:3"], "neither"),
    (["prove", "two_box_example", "--root", "c1.1"], "has no root"),
])
def test_cli_prove_bad_input(argv: list[str], needle: str, capsys) -> None:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse refuses a bad option value itself
        code = exc.code
    assert code == 2
    assert needle in capsys.readouterr().err
