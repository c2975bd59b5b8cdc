"""``collcert prove``: brute-force Z3 proofs of an optimum on a small topology."""

from __future__ import annotations

import argparse
import time
from typing import Any

from collcert.reference.forestcoll import COLLECTIVES, optimum
from collcert.reference.model import TopologyError, check_prove_size, fraction_str

from ._common import (
    add_json_option,
    add_topology_argument,
    count,
    load_topology,
    positive_number,
    print_json,
    seconds,
)

# human names of the claims (the JSON keeps the short keys)
_CLAIM_NAMES = {"inv_x": "1/x*", "bound6_min_cut": "least cut of bound (6)",
                "bound7_time_per_unit": "bound (7) time per unit"}

_EPILOG = """\
What is proved (Zhao & Krishnamurthy 2023), each as two Z3 questions with the time each took:
  allgather / reduce-scatter  no cut S ⊉ V_c has |S∩V_c|/B⁺(S) above 1/x* (UNSAT) and one
                              reaches it (SAT, so it is equal); reduce-scatter on the
                              transposed topology
  --fixed-k K                 K spanning out-trees per compute node fit within ⌊U*·c_e⌋
                              unit trees per link (SAT) but not within ⌈U*·c_e⌉-1 (UNSAT)
  broadcast / reduce          no cut separating the root is below the optimum (UNSAT), one
                              reaches it (SAT)
  allreduce                   the allgather part and the cut-set bounds (6) and (7)
The proofs use neither max-flow nor collcert's algorithms: Z3 searches all cuts (or all
tree packings) itself. Measured (benchmarks/prove_scaling.py): cut proofs take under 0.3 s
up to ~100 nodes, ~20 s at 274 nodes (dgx_a100:16); tree proofs ~1 s on 8-11 nodes,
2-17 s on dgx_a100:2 with k = 1-2, over 2 minutes for mi250:2 or k = 4 there.
exit status: 0 all proved, 1 a claim refuted or Z3 inconclusive (timeout), 2 bad input."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "prove",
        help="independent Z3 proofs of an optimum on a small topology",
        description="Check collcert's optimum for a collective with the Z3 SMT solver, "
        "independently of max-flow and of collcert's algorithms: Z3 must find no cut "
        "better than the claim and must find one that reaches it.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_topology_argument(p, optional=False)
    p.add_argument("--collective", "-c", default="allgather", choices=COLLECTIVES,
                   help="collective whose optimum to prove (default: allgather)")
    p.add_argument("--fixed-k", type=int, metavar="K",
                   help="also prove the fixed-k optimum U* with K trees per compute node "
                   "(allgather / reduce-scatter)")
    p.add_argument("--root", help="root compute node for broadcast / reduce (default: the "
                   "first compute node)")
    p.add_argument("--claim", metavar="P/Q", type=positive_number, help="prove this value instead of collcert's: "
                   "1/x* for allgather / reduce-scatter, algbw for broadcast / reduce")
    p.add_argument("--timeout", type=seconds, default=120.0, metavar="SECONDS",
                   help="Z3 time limit per question (default 120)")
    add_json_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from collcert.fuzz import z3proofs as z

    topo = load_topology(args.topology)
    coll = args.collective
    if args.fixed_k is not None and coll not in ("allgather", "reduce-scatter"):
        raise TopologyError("--fixed-k applies to allgather and reduce-scatter only")
    if args.fixed_k is not None and args.fixed_k < 1:
        raise TopologyError(f"--fixed-k must be a positive integer, got {args.fixed_k}")
    if args.root is not None and coll not in ("broadcast", "reduce"):
        raise TopologyError(f"{coll} has no root; --root is for broadcast and reduce")
    check_prove_size(topo, args.fixed_k)
    claim = args.claim
    started = time.monotonic()
    steps = []
    claims: dict[str, str] = {}
    t = topo.transpose() if coll in ("reduce-scatter", "reduce") else topo
    # the fixed-k optimum carries 1/x* too: computing it first saves a second run
    fk = None if args.fixed_k is None else optimum(topo, coll, fixed_k=args.fixed_k)
    if coll in ("allgather", "reduce-scatter", "allreduce"):
        opt = fk if fk is not None else optimum(topo, coll)
        assert opt.inv_x is not None
        inv_x = claim if claim is not None and coll != "allreduce" else opt.inv_x
        claims["inv_x"] = fraction_str(inv_x)
        steps += z.prove_allgather(t, inv_x, args.timeout)
        if coll == "allreduce":
            ex = opt.extra
            min6 = 1 / ex["bound6_time_per_unit"]
            per7 = {v: topo.out_capacity(cut) for v, cut in ex["bound7_cuts"].items()}
            claims["bound6_min_cut"] = fraction_str(min6)
            claims["bound7_time_per_unit"] = fraction_str(ex["bound7_time_per_unit"])
            steps += z.prove_allreduce(topo, min6, per7, args.timeout)
    else:
        root: Any = topo.lookup(args.root) if args.root is not None else topo.compute_nodes[0]
        opt = optimum(topo, coll, root=root)
        value = claim if claim is not None else opt.algbw
        claims["algbw"] = fraction_str(value)
        steps += z.prove_broadcast(t, root, value, args.timeout)
    if fk is not None:
        assert args.fixed_k is not None and fk.U is not None
        claims[f"U*(k={args.fixed_k})"] = fraction_str(fk.U)
        steps += z.prove_fixed_k(t, args.fixed_k, fk.U, args.timeout)
    elapsed = time.monotonic() - started
    proved = all(s.ok for s in steps)
    refuted = any(s.result not in ("unknown", s.expected) for s in steps)
    verdict = "proved" if proved else "REFUTED" if refuted else "inconclusive"
    if args.json:
        print_json({"collective": coll, "topology": topo.content_hash(),
                    "topology_name": topo.name, "nodes": len(topo.nodes),
                    "links": len(topo.capacity), "claims": claims, "verdict": verdict,
                    "steps": [s.to_json() for s in steps], "seconds": round(elapsed, 3),
                    "practical": z.PRACTICAL})
    else:
        print(f"Z3 proofs for {coll} on {topo.name or 'topology'} ({topo.num_compute} compute, "
              f"{count(len(topo.switch_nodes), 'switch', 'switches')}, "
              f"{count(len(topo.capacity), 'link')}); claims: "
              + ", ".join(f"{_CLAIM_NAMES.get(k, k)} = {v}" for k, v in claims.items()))
        for s in steps:
            print(f"  {s.verdict:12s} {s.name}: {s.question} -> {s.result.upper()} "
                  f"(expected {s.expected.upper()}, {s.seconds:.3f} s)")
            if s.detail:
                print(f"               note: {s.detail}")
            if not s.ok and s.witness is not None and s.result == "sat":
                print(f"               counterexample: {s.witness}")
        print(f"verdict: {verdict} in {elapsed:.2f} s")
        print(f"practical sizes: {z.PRACTICAL['cut']}; {z.PRACTICAL['trees']}")
    return 0 if proved else 1
