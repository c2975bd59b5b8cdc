"""``collcert fuzz``: random topologies, collcert's own properties, and a differential driver.

``collcert fuzz generate``  writes seeded random topologies as JSON files;
``collcert fuzz check``     checks collcert's own properties on them;
``collcert fuzz run``       runs *your* schedule generator on them and audits its output.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from collcert.reference.forestcoll import COLLECTIVES
from collcert.reference.model import Topology, TopologyError, write_files

from ._common import (
    Progress,
    add_json_option,
    add_progress_option,
    bounded_int,
    duration_text,
    print_json,
    seconds,
)

MAX_FUZZ_NODES = 1000
"""Largest --max-nodes: fuzzing looks for small counterexamples, and some properties
enumerate cuts (exponential in the node count)."""

_EPILOG_RUN = """\
example:
  collcert fuzz run --impl 'python mygen.py {topology} {schedule}' --count 50 --seed 1
  (your command reads the topology JSON at {topology} (docs/topology.md) and writes a
  schedule to {schedule}; {collective} is replaced by the collective's name.)
exit status: 0 every case valid, 1 some case invalid/crashed/timed out, 2 bad input.
See docs/fuzzing.md for a walk-through."""


def _add_family_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=0, help="campaign seed: case i uses seed "
                   "'SEED:i', so the same seed always gives the same topologies (default 0)")
    p.add_argument("--count", "-n", type=bounded_int(1, 100_000), default=20,
                   help="number of topologies (default 20)")
    p.add_argument("--max-nodes", type=bounded_int(2, MAX_FUZZ_NODES), default=8, metavar="M",
                   help=f"at most M nodes (compute + switches) per topology, 2 to "
                   f"{MAX_FUZZ_NODES} (default 8)")
    p.add_argument("--switches", action="store_true",
                   help="also draw switch topologies (tiers, oversubscription, boxes, directed "
                   "cycles through switches); without it only direct-connect ones")
    p.add_argument("--capacities", default="mixed",
                   choices=("small", "wide", "huge", "mixed", "uniform"),
                   help="capacity range: small 1..8, wide up to 10^6, huge up to 2^70, mixed "
                   "(default) mostly small with some wide and huge, uniform all 1")


def _add_parallel_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", "-j", type=bounded_int(1, 512), default=1, metavar="N",
                   help="run the cases (and the shrinking of failures) in N local worker "
                   "processes; results, saved files and output are those of one process "
                   "(default 1)")
    p.add_argument("--dask", metavar="ADDRESS",
                   help="run the cases on an existing dask.distributed cluster: the scheduler "
                   "address as Dask prints it, e.g. tcp://10.0.0.5:8786 (needs "
                   "'collcert[dask]' here and on the workers; docs/fuzzing.md)")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "fuzz",
        help="random topologies; fuzz collcert itself or your own schedule generator",
        description="Random valid topologies (Eulerian, strongly connected among compute "
        "nodes) and two ways to use them: check collcert's own properties, or run another "
        "schedule generator on each one and audit what it writes.",
        epilog="Run 'collcert fuzz generate|check|run --help' for the options.",
    )
    fsub = p.add_subparsers(dest="fuzz_command", metavar="ACTION", parser_class=type(p))

    g = fsub.add_parser("generate", help="write seeded random topologies as JSON files",
                        description="Write COUNT random topologies (collcert-topology/1 JSON, "
                        "docs/topology.md) into a folder, deterministically from SEED.")
    _add_family_options(g)
    g.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="folder to write case-0000.json, case-0001.json, ... into (all of "
                   "them at the end; case files already there are replaced only with --force)")
    g.add_argument("--force", action="store_true",
                   help="replace case files of the same names already in DIR")
    g.set_defaults(func=run_generate)

    c = fsub.add_parser("check", help="check collcert's own properties on random topologies",
                        description="Check the reference against enumeration, symmetries and "
                        "the certify/ checkers on seeded random topologies. Failures are "
                        "shrunk and saved (topology JSON + README line) for regression tests.")
    _add_family_options(c)
    c.add_argument("--property", "-p", action="append", dest="properties", metavar="NAME",
                   help="a property to check (repeatable; default all): brute, transpose, "
                   "fixed_k, scaling, relabel, broadcast, allreduce, certificate, schedule, "
                   "allreduce_rate; only by name: allreduce_hypothesis, rsag_lp, rsag_weighted_lp "
                   "(Zhao et al. 2026 "
                   "§5.7's open hypothesis, docs/allreduce.md), mscclpp_export (every MSCCL++ "
                   "export audits VALID at its stated rate, docs/mscclpp.md; use --switches)")
    c.add_argument("--replay", nargs="+", metavar="FILE",
                   help="check these topology files instead of random ones")
    c.add_argument("--save-dir", metavar="DIR", help="where shrunk failures go (default: "
                   "$COLLCERT_REGRESSIONS, else golden/regressions of a source checkout, else "
                   "./fuzz-failures)")
    c.add_argument("--no-save", action="store_true", help="report failures, save nothing")
    add_json_option(c)
    add_progress_option(c, "progress bar")
    _add_parallel_options(c)
    c.set_defaults(func=run_check)

    r = fsub.add_parser(
        "run", help="differential testing: run your generator on random topologies, audit it",
        description="Run another implementation on each random topology and audit the "
        "schedule it writes with collcert's checker: per case VALID or INVALID (with the "
        "checker's reasons), CRASH or TIMEOUT, its algbw and its ratio to the optimum. "
        "Failing cases are shrunk to small topologies that still fail and saved with a "
        "command that reproduces them.",
        epilog=_EPILOG_RUN, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("--impl", required=True, metavar="CMD",
                   help="shell command with {topology} and {schedule} placeholders")
    r.add_argument("--impl-format", default="json", choices=("json", "forestcoll-xml",
                                                             "msccl-xml"),
                   help="format the command writes (default json, docs/schedule-format.md)")
    r.add_argument("--collective", "-c", default="allgather", choices=COLLECTIVES,
                   help="collective the schedule must implement (default allgather; "
                   "broadcast/reduce use the first compute node as root)")
    _add_family_options(r)
    r.add_argument("--timeout", type=seconds, default=60.0, metavar="SECONDS",
                   help="kill the command after this long (default 60)")
    r.add_argument("--replay", nargs="+", metavar="FILE",
                   help="run on these topology files (e.g. a saved failure) instead")
    r.add_argument("--save-dir", default="fuzz-failures", metavar="DIR",
                   help="where failing topologies are saved, shrunk unless --no-shrink "
                   "(default ./fuzz-failures)")
    r.add_argument("--no-shrink", action="store_true", help="save failures as found, "
                   "without shrinking them")
    add_json_option(r)
    add_progress_option(r, "progress bar")
    _add_parallel_options(r)
    r.set_defaults(func=run_run)
    p.set_defaults(func=lambda args: _missing_action(p))


def _missing_action(p: argparse.ArgumentParser) -> int:
    p.print_help(sys.stderr)
    return 2


def _validate(args: argparse.Namespace) -> None:
    if args.count < 1:
        raise TopologyError(f"--count must be 1 or more, got {args.count}")
    if args.max_nodes < 2:
        raise TopologyError(f"--max-nodes must be at least 2, got {args.max_nodes}")


def _cases(args: argparse.Namespace) -> list[tuple[str, Topology]]:
    from collcert.fuzz.generators import case_seed, generate

    if getattr(args, "replay", None):
        return [(path, Topology.from_json(path)) for path in args.replay]
    _validate(args)
    return [(case_seed(args.seed, i), generate(case_seed(args.seed, i), max_nodes=args.max_nodes,
                                                switches=args.switches,
                                                capacities=args.capacities))
            for i in range(args.count)]


def run_generate(args: argparse.Namespace) -> int:
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise TopologyError(f"{out} exists and is not a folder: choose another -o")
    cases = _cases(args)  # validates the options before anything is created
    names = [str(out / f"case-{i:04d}.json") for i in range(len(cases))]
    there = [os.path.basename(n) for n in names if os.path.lexists(n)]
    if there and not args.force:
        raise TopologyError(f"-o {out}: {len(there)} of the case files are there already "
                            f"({', '.join(there[:3])}{', …' if len(there) > 3 else ''}); add "
                            "--force to replace them, or name another folder")
    texts = {}
    for name, (seed, topo) in zip(names, cases):
        data = topo.to_json()
        data["source"] = (f"collcert fuzz generate --seed {args.seed} --max-nodes "
                          f"{args.max_nodes}{' --switches' if args.switches else ''} "
                          f"--capacities {args.capacities} (case seed {seed})")
        texts[name] = json.dumps(data, indent=1) + "\n"
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_files(texts)  # all or nothing
    except OSError as exc:
        raise TopologyError(f"{out}: cannot write the case files there "
                            f"({exc.strerror})") from None
    print(f"wrote {len(cases)} topologies to {out}/ (case-0000.json …)", file=sys.stderr)
    return 0


SECONDS_PER_CASE = 0.3
"""CPU seconds per direct-connect topology of at most 8 nodes, all 10 default properties:
60 cases took 18.6 s of CPU (30 with --switches 17.0 s, hence SWITCHES_FACTOR), on the
2-core machine at load 9; it grows about as the cube of --max-nodes."""
SWITCHES_FACTOR = 2.0
LINE_EVERY = 30.0
"""Seconds between the progress lines printed when stderr is not a terminal."""


def _announce_campaign(args: argparse.Namespace, count: int, names: list[str]) -> None:
    """The estimate of the whole campaign on stderr before it starts (issue 33 row 6:
    'fuzz check --count 1000 --jobs 8' on 2 cores printed nothing for minutes)."""
    per = (SECONDS_PER_CASE * (SWITCHES_FACTOR if args.switches else 1)
           * (max(args.max_nodes, 2) / 8) ** 3 * len(names) / 10)
    cpu = per * count
    if args.dask is not None:
        where = f"on the dask cluster at {args.dask}"
        wall = ""
    else:
        cores = os.cpu_count() or 1
        used = min(args.jobs, cores)
        where = (f"in {args.jobs} process{'es' if args.jobs != 1 else ''}"
                 + (f" on {cores} cores (so {used} at a time)" if args.jobs > cores else ""))
        wall = f", {duration_text(cpu / used)} on {used} free core{'s' if used != 1 else ''}"
    print(f"fuzz check: {count} topologies × {len(names)} properties {where}: estimated "
          f"{duration_text(cpu)} of CPU{wall} (measured {SECONDS_PER_CASE} s a case at "
          "--max-nodes 8; each failure found adds its shrinking, up to 2 min)",
          file=sys.stderr, flush=True)


class _CampaignProgress(Progress):
    """The bar on a terminal (or with --progress); elsewhere a line every
    :data:`LINE_EVERY` seconds with the cases done, the failures and the time left."""

    def __init__(self, label: str, *, force: bool = False) -> None:
        super().__init__(label, force=force)
        self._line = time.monotonic()

    def __call__(self, done: int, total: int, note: str = "") -> None:
        if self.enabled:
            super().__call__(done, total, note)
            return
        now = time.monotonic()
        if now - self._line < LINE_EVERY or done >= total:
            return
        self._line = now
        elapsed = now - self.start
        left = elapsed / done * (total - done) if done else 0.0
        print(f"{self.label}: {done}/{total} cases" + (f" ({note})" if note else "")
              + f", {elapsed:.0f} s so far" + (f", {duration_text(left)} left" if done else ""),
              file=self.stream, flush=True)


def run_check(args: argparse.Namespace) -> int:
    from collcert.fuzz import parallel
    from collcert.fuzz import properties as props
    from collcert.fuzz.checking import check_campaign

    names = args.properties or list(props.PROPERTIES)
    unknown = [n for n in names if n not in props.PROPERTIES and n not in props.OPT_IN]
    if unknown:
        raise TopologyError(f"unknown property {unknown[0]!r}: choose from "
                            f"{', '.join([*props.PROPERTIES, *props.OPT_IN])}")
    parallel.check_options(args.jobs, args.dask)
    cases = _cases(args)
    _announce_campaign(args, len(cases), names)
    progress = _CampaignProgress("fuzz check", force=args.progress)

    def show(record: dict[str, object]) -> None:
        if not args.json:
            if progress.enabled:
                progress.stream.write("\r\033[K")
            i = int(str(record["case"]))
            print(f"case {i} (seed {record['seed']}, {cases[i][1].name}): property "
                  f"{record['property']} FAILED: {record['message']}" +
                  (f"\n    saved as {record['saved']}" if "saved" in record else ""), flush=True)

    failures, skipped = check_campaign(cases, names, save=not args.no_save,
                                       save_dir=args.save_dir, jobs=args.jobs, dask=args.dask,
                                       progress=progress, on_failure=show)
    if args.json:
        print_json({"cases": len(cases), "properties": names, "failures": failures,
                    "skipped": len(skipped), "ok": not failures})
    else:
        print(f"{len(cases)} topologies × {len(names)} properties: "
              + ("all hold" if not failures else f"{len(failures)} failures")
              + (f" ({len(skipped)} checks skipped: {skipped[0]})" if skipped else ""))
    return 1 if failures else 0


def run_run(args: argparse.Namespace) -> int:
    from collcert.fuzz import driver, parallel

    driver.check_template(args.impl)
    if args.timeout <= 0:
        raise TopologyError(f"--timeout must be positive, got {args.timeout:g}")
    parallel.check_options(args.jobs, args.dask)
    parallel_run = args.jobs > 1 or args.dask is not None
    auditor = driver.default_auditor()
    cases = _cases(args)
    progress = Progress("fuzz run", force=args.progress)

    def show(res: driver.CaseResult) -> None:
        if not args.json:
            if progress.enabled:
                progress.stream.write("\r\033[K")
            print(res.line(), flush=True)

    results = driver.campaign(
        args.impl, cases, fmt=args.impl_format, collective=args.collective,
        timeout=args.timeout, auditor=None if parallel_run else auditor,
        shrink_failures=not args.no_shrink, save_dir=os.fspath(args.save_dir),
        progress=progress, on_result=show, jobs=args.jobs, dask=args.dask)
    failed = [r for r in results if r.failed]
    if args.json:
        print_json({"impl": args.impl, "collective": args.collective,
                    "impl_format": args.impl_format, "cases": [r.to_json() for r in results],
                    "failed": len(failed), "ok": not failed})
    else:
        valid = [r for r in results if r.status == "valid"]
        optimal = [r for r in valid if r.ratio == 1]
        print(f"{len(results)} cases: {len(valid)} valid ({len(optimal)} at the optimum), "
              f"{len(failed)} failed")
    return 1 if failed else 0
