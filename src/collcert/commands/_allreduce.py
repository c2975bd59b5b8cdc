"""``collcert optimum -c allreduce``: every allreduce rate, exact, certified, as one chain.

The topology may be any directed graph (Zhou & Sun 2026's model). Each figure's
certificate is checked by ``collcert.certify`` before it is printed; a
certificate that fails is a bug (exit 3).

``--method rsag-weighted`` (``optimum`` and ``schedule -c allreduce``): weighted
RS+AG alone, reduce-scatter then allgather with the best unequal shards
(:mod:`collcert.reference.allreduce.rsag_weighted`), its shards and certificate,
or its trees.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from collcert.reference.model import ScheduleError, TopologyError, fraction_str

from . import _capabilities, _sizes, _whatif
from ._common import (
    Progress,
    duration_text,
    is_eulerian,
    load_topology,
    print_json,
    write_output,
)


def check_all(report: Any) -> dict[str, bool]:
    """Run the independent checkers on the report's certificates; raise on a failure."""
    from collcert.certify.allreduce import (
        Graph,
        check_cut_set,
        check_forestcoll_lp,
        check_mac_bc_lp,
        check_rsag_weighted,
    )

    g = Graph(report.topology.to_json())
    certs = report.certificates()
    checkers = {"cut_set_bound": check_cut_set, "mac_bc_lp": check_mac_bc_lp,
                "forestcoll_lp": check_forestcoll_lp, "rsag_weighted": check_rsag_weighted}
    done = {}
    for key, check in checkers.items():
        if key in certs:
            verdict = check(g, certs[key])
            if not verdict.ok:
                raise RuntimeError(f"internal: the {key} certificate did not check: "
                                   + "; ".join(verdict.all_reasons()[:3]))
            done[key] = True
    if "in_network" in certs:  # switches that add (issue 30)
        from collcert.certify.innetwork import check_in_network

        verdict = check_in_network(report.topology.to_json(), certs["in_network"])
        if not verdict.ok:
            raise RuntimeError("internal: the in_network certificate did not check: "
                               + "; ".join(verdict.all_reasons()[:3]))
        done["in_network"] = True
    if getattr(report, "thm19", None) is not None:  # Thm 19 decided (issue 23)
        from collcert.certify.allreduce import check_rsag_condition
        from collcert.certify.forestcoll import check_optimum

        topo = report.topology.to_json()
        rsag = check_optimum(topo, certs["rsag"])
        verdict = check_rsag_condition(topo, rsag.facts.get("algbw", 0),
                                       certs["cut_set_bound"],
                                       report.thm19.certificate(report.topology))
        verdict.absorb(rsag, "RS+AG optimum: ")
        if not verdict.ok:
            raise RuntimeError("internal: the Thm 19 decision did not check: "
                               + "; ".join(verdict.all_reasons()[:3]))
        done["rsag"] = done["thm19"] = True
    tree = getattr(report, "bidirected_tree", None)
    if tree is not None:  # Thm 3's closed form must meet the checked C and R_LP (issue 23)
        checked = [report.cut_set.value] + ([report.mac_bc.value] if report.mac_bc else [])
        if any(v != tree.value for v in checked):
            raise RuntimeError("internal: the bi-directed tree's closed form min β differs "
                               "from the checked cut-set bound or R_LP")
        done["bidirected_tree"] = True
    return done


PRICE_SECONDS_PER_LINK = 2.5e-5
"""One pricing of the MAC-BC LP (Zhou & Sun 2026, Thm 2) costs about this per link: the
cheapest in- and out-arborescence of one root. Measured on 2 loaded cores (CPU s / pricings):
ring with one link at 1/2, 64 nodes 1.8 s / 576, torus:4x16 2.1 s / 576, ring:80 9.6 s /
5,040, complete:16 7.3 s / 2,144 (2.5-4 ms per pricing at 80-256 links)."""
WARM_PASSES = 8  # mac_bc_lp's warm start prices every root this many times
BYTES_PER_ENTRY = 100  # GLOP's columns: about 100 bytes per nonzero (ring:80 4,440 columns)
ESTIMATE_SHOWN_FROM = 10.0  # seconds: below this the estimate is not printed
STAGES_SHOWN_FROM = 1_000_000
"""Compute nodes × links from which the stages are shown without --progress: LP (5), the
cut-set bound and weighted RS+AG grow with both (complete:256, 16.7 million: the cut-set
bound 6.7 s, LP (5) minutes, on 2 loaded cores)."""


def mac_bc_estimate(k: int, links: int) -> tuple[float, float, float]:
    """(seconds if the warm start is nearly optimal, seconds if column generation needs a
    round per compute node, bytes then) for the MAC-BC LP on ``k`` nodes and ``links``.

    Each round prices every root once (k pricings) and adds at most k columns of
    2(k−1) entries. Irregular machines (a ring with one slow link, tori) finished in 1
    round after the warm start; symmetric ones without a closed form can need a round
    per node or more (ring:80 55 rounds, complete:16 126)."""
    price = PRICE_SECONDS_PER_LINK * links
    low = (WARM_PASSES + 1) * k * price
    high = (WARM_PASSES + k) * k * price
    return low, high, float((WARM_PASSES + k) * k * 2 * (k - 1) * BYTES_PER_ENTRY)


def _announce_mac_bc(topo: Any, progress_shown: bool) -> bool:
    """Say before any work how R_LP will be found: a closed form (Zhou & Sun 2026), or the
    LP's estimated time from its size (issue 24 row 8). Whether the LP's estimate is long."""
    from collcert.certify.model import human_bytes
    from collcert.reference.allreduce import MAX_MAC_BC_NODES, closed_form_mac_bc

    k = topo.num_compute
    if topo.switch_nodes or k > MAX_MAC_BC_NODES:
        return False
    known = closed_form_mac_bc(topo) if k >= 16 else None
    if known is not None:
        print(f"note: R_LP from the closed form of {known.stats['closed_form']}: "
              f"{known.stats['columns']} MAC-BC networks, checked by collcert.certify; "
              "no LP to solve", file=sys.stderr)
        return False
    low, high, mem = mac_bc_estimate(k, len(topo.capacity))
    if high < ESTIMATE_SHOWN_FROM:
        return False
    print(f"note: the MAC-BC LP (Zhou & Sun 2026, Thm 2) on {k} compute nodes and "
          f"{len(topo.capacity)} links is solved by column generation: estimated "
          f"{duration_text(low)} if its warm start is nearly optimal (irregular machines), up to "
          f"{duration_text(high)} and {human_bytes(mem)} if it needs a round per node (symmetric "
          "machines without a closed form; docs/limits.md)"
          + ("" if progress_shown else "; stage and round progress follow"), file=sys.stderr)
    return True


class _Stages:
    """``allreduce: <stage> ...`` lines on stderr, each followed by its time, and the MAC-BC
    LP's rounds with the share of the gap closed (--progress, or a long estimate)."""

    def __init__(self, shown: bool) -> None:
        self.shown = shown
        self.name = ""
        self.since = time.monotonic()
        self.rounds = 0
        self.bar = Progress("  MAC-BC LP: gap closed (‰)", force=shown)
        self.bar.enabled = shown
        self.warm_bar = Progress("  MAC-BC LP: warm start (pricings)", force=shown)
        self.warm_bar.enabled = shown
        self.open_line = False
        self.label = ""  # "healthy machine: " and "changed machine: " under --degrade/--fail

    def __call__(self, name: str) -> None:
        self.finish()
        name = self.label + name
        if self.shown:
            print(f"allreduce: {name} ...", file=sys.stderr, flush=True)
        self.name, self.since = name, time.monotonic()

    def warm(self, done: int, total: int) -> None:
        self.open_line = done + 1 < total
        self.warm_bar(done + 1, total)

    def round(self, done: int, total: int) -> None:
        self.rounds += 1
        self.open_line = done < total
        self.bar(done, total, f"round {self.rounds}")

    def notice(self, text: str, seconds: float) -> None:
        """LP (5)'s estimate, before its rounds: shown from ``ESTIMATE_SHOWN_FROM`` seconds
        on (or with the stages), and the stages shown from then on."""
        if self.shown or seconds >= ESTIMATE_SHOWN_FROM:
            if not self.shown:  # the stage line it belongs to
                print(f"allreduce: {self.name} ...", file=sys.stderr, flush=True)
            self.shown = True
            print(f"  {text}", file=sys.stderr, flush=True)

    def lp5_round(self, rounds: int, cuts: int) -> None:
        """LP (5)'s cut generation: the round and the cuts so far, on one line."""
        if self.shown:
            print(f"\r  LP (5): round {rounds}, {cuts} cuts, "
                  f"{time.monotonic() - self.since:.1f} s\033[K", end="", file=sys.stderr,
                  flush=True)
            self.open_line = True

    def finish(self) -> None:
        if self.shown and self.name:
            end = "\n" if self.open_line else ""
            print(f"{end}allreduce: {self.name}: {time.monotonic() - self.since:.1f} s",
                  file=sys.stderr, flush=True)
        self.open_line = False
        self.name = ""


def run(args: argparse.Namespace) -> int:
    from collcert.reference.allreduce import allreduce_rate

    if args.root is not None:
        raise TopologyError("allreduce has no root; --root is for broadcast and reduce")
    if args.fixed_k is not None:
        raise TopologyError("--fixed-k applies to allgather and reduce-scatter, not allreduce")
    if getattr(args, "method", "all") != "all" and _sizes.wanted(args):  # never ignored
        raise TopologyError(f"--sizes/--plot/--alpha: the α-β view of -c allreduce is drawn "
                            f"for the rates of --method all, not --method {args.method}; "
                            "drop them or the --method")
    if _whatif.wanted(args) and (getattr(args, "method", "all") != "all"
                                 or _sizes.wanted(args)):
        raise TopologyError("--degrade/--fail with -c allreduce compare every rate of the "
                            "changed machine with the healthy one (--method all); drop "
                            "--method, --sizes, --plot and --alpha, or the what-if options")
    if getattr(args, "method", "all") == "rsag-weighted":
        return _run_weighted(args)
    if getattr(args, "method", "all") == "bidirected-tree":  # Zhou & Sun 2026, Thm 3
        from . import _allreduce_tree

        return _allreduce_tree.run(args)
    topo = _capabilities.apply(args, load_topology(args.topology, strict=False), "allreduce")
    _sizes.check_unit(args, topo)
    if _sizes.wanted(args) and not is_eulerian(topo):  # the view is RS+AG's: never ignored
        raise TopologyError("--sizes/--plot/--alpha: the α-β view of -c allreduce is drawn "
                            "from the RS+AG optimum, which needs an Eulerian topology (every "
                            "node sends what it receives), and this one is not; drop them")
    started = time.monotonic()
    long = _announce_mac_bc(topo, args.progress)
    big = topo.num_compute * len(topo.capacity) >= STAGES_SHOWN_FROM  # LP (5), max-flows
    stages = _Stages(args.progress or long or big)

    def solve(t: Any, label: str = "") -> tuple[Any, dict[str, bool]]:
        stages.label = f"{label} machine: " if label else ""
        rate = allreduce_rate(t, engine=args.engine, progress=stages.round, stage=stages,
                              warm=stages.warm, lp5=stages.lp5_round, notice=stages.notice)
        add_in_network(rate, args.engine, stages)
        stages("checking the certificates")
        done = check_all(rate)
        stages.finish()
        return rate, done

    if _whatif.wanted(args):  # the machine after --degrade/--fail against the healthy one
        from . import _whatif_rates

        return _whatif_rates.allreduce(args, topo, solve)
    report, checked = solve(topo)
    elapsed = time.monotonic() - started
    if args.json or args.certificate:
        out = report.to_json(certificates=args.certificate)
        out["checked_by_certify"] = checked
        out["topology_name"] = topo.name
        out["seconds"] = round(elapsed, 3)  # wall time: informative, not a result
        if _sizes.wanted(args) and report.rsag is not None:
            out["sizes"] = _sizes.optimum_view(args, topo, report.rsag)
        print_json(out)
    else:
        print(report.summary())
        print(f"  certificates checked by collcert.certify: {', '.join(checked)}")
        print(f"  time: {elapsed:.2f} s")
        if _sizes.wanted(args) and report.rsag is not None:
            _sizes.optimum_view(args, topo, report.rsag)
    return 0


def add_in_network(rate: Any, engine: str = "auto", stage: Any = None) -> None:
    """Put the in-network optimum (switches that add, issue 30) into the allreduce
    report ``rate``, or the reason it is missing into its ``reasons``."""
    from collcert.reference.innetwork import attach

    attach(rate, engine=engine, stage=stage)


def _weighted_size(topo: Any) -> None:
    """Refuse, before any work, a machine too large for weighted RS+AG here."""
    import collcert.reference.allreduce as ar

    limit = ar.MAX_WEIGHTED_NODES
    if topo.num_compute > limit:
        raise TopologyError(
            f"weighted RS+AG on {topo.num_compute} compute nodes: its cut generation runs one "
            f"max-flow per compute node per round and its certificate holds two flows per "
            f"compute node, about {2 * topo.num_compute * len(topo.capacity):,} flow entries; "
            f"the limit here is {limit} compute nodes (docs/allreduce.md)")


def _weighted_checked(topo: Any, engine: str) -> tuple[Any, dict[str, Any]]:
    """Weighted RS+AG and its certificate, checked by collcert.certify (exit 3 if not)."""
    from collcert.certify.allreduce import Graph, check_rsag_weighted
    from collcert.reference.allreduce import weighted_rsag

    r = weighted_rsag(topo, engine=engine)
    cert = json.loads(json.dumps(r.certificate(), default=str))
    verdict = check_rsag_weighted(Graph(topo.to_json()), cert)
    if not verdict.ok or verdict.facts["rsag_weighted"] != r.value:
        raise RuntimeError("internal: the weighted RS+AG certificate did not check: "
                           + "; ".join(verdict.all_reasons()[:3]))
    return r, cert


def _run_weighted(args: argparse.Namespace) -> int:
    """``optimum -c allreduce --method rsag-weighted``."""
    topo = load_topology(args.topology)
    _weighted_size(topo)
    started = time.monotonic()
    r, cert = _weighted_checked(topo, args.engine)
    elapsed = time.monotonic() - started
    if args.json or args.certificate:
        out: dict[str, Any] = {"collective": "allreduce", "method": "rsag-weighted",
                               "topology": topo.content_hash(), "topology_name": topo.name,
                               "unit": topo.unit, **r.to_json(),
                               "checked_by_certify": True, "seconds": round(elapsed, 3)}
        if args.certificate:
            out["certificate"] = cert
        print_json(out)
        return 0
    print(r.summary())
    print(f"  optimal over every choice of shards (dual: {len(r.dual)} cuts); "
          f"{r.stats['rounds']} LP rounds, {r.stats['cuts']} cuts, {r.stats['maxflows']} "
          "max-flows")
    print(f"  certificate checked by collcert.certify (check_rsag_weighted); "
          f"time: {elapsed:.2f} s")
    return 0


def run_schedule(args: argparse.Namespace) -> int:
    """``schedule -c allreduce --method rsag-weighted``: the trees, JSON only."""
    from collcert.reference.allreduce import weighted_rsag_schedule

    if args.collective != "allreduce":
        raise ScheduleError("--method rsag-weighted builds allreduce schedules; for "
                            f"{args.collective} use --weights with the default --method")
    if args.format != "json":
        raise ScheduleError("--method rsag-weighted writes --format json (its shards are "
                            "unequal, which the ForestColl tree XML cannot say)")
    for flag, value in (("--root", args.root), ("--fixed-k", args.fixed_k),
                        ("--weights", args.weights)):
        if value is not None:
            raise ScheduleError(f"{flag} does not apply to --method rsag-weighted: it chooses "
                                "every shard itself")
    topo = load_topology(args.topology)
    _weighted_size(topo)
    started = time.monotonic()
    r, _ = _weighted_checked(topo, args.engine)
    s = weighted_rsag_schedule(topo, engine=args.engine, result=r)
    doc = s.to_json(certificates=not args.no_certificates)
    checked = _check_schedule(topo, doc, s.time_per_unit) if args.check else None
    if args.output:
        write_output(args.output, json.dumps(doc, indent=1) + "\n", dash_is_stdout=True)
    elapsed = time.monotonic() - started
    out = sys.stderr if args.output == "-" else sys.stdout
    if args.json:
        print_json({"collective": "allreduce", "method": "rsag-weighted",
                    "topology": topo.content_hash(), "topology_name": topo.name,
                    "algbw": fraction_str(s.algbw), "time_per_unit": fraction_str(s.time_per_unit),
                    "shards": doc["weights"], "trees": s.num_trees,
                    "checked_time_per_unit": checked, "output": args.output,
                    "seconds": round(elapsed, 3)}, out)
    else:
        print(s.summary(), file=out)
        if checked:
            print(f"checked by collcert.certify: time per unit {checked}", file=out)
    return 0


def _check_schedule(topo: Any, doc: dict[str, Any], want: Any) -> str:
    from collcert.certify.forestcoll import check_schedule
    from collcert.certify.model import Topo

    verdict = check_schedule(Topo(topo.to_json()), json.loads(json.dumps(doc, default=str)))
    if not verdict.ok or verdict.facts.get("time_per_unit") != want:
        raise RuntimeError("internal: collcert.certify rejects the weighted RS+AG schedule: "
                           + "; ".join(verdict.all_reasons()[:3]))
    return fraction_str(verdict.facts["time_per_unit"])
