"""``collcert smoke``: run a schedule on real devices and check every element."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from collcert.reference.model import ScheduleError
from collcert.smoke import MAX_ITERS  # torch itself is imported only when a run starts

from . import _whatif, _whatif_machine
from ._common import (
    add_json_option,
    announce_estimates,
    bounded_int,
    load_topology,
    print_result,
    seconds,
)

_SIZE = re.compile(r"^\s*(\d{1,20})\s*([kmg]i?b?|b)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Bytes from ``4096``, ``64K``, ``1M``, ``2GiB`` (powers of 1024)."""
    m = _SIZE.match(text)
    if not m:
        raise ScheduleError(f"--size {text[:40]!r} is not a size such as 1048576, 64K or 1M "
                            "(at most 20 digits)")
    unit = (m.group(2) or "b").lower()[0]
    return int(m.group(1)) * {"b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[unit]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "smoke",
        help="run a schedule on real devices (gloo CPU processes, NCCL/RCCL GPUs, or one GPU) "
        "and check every element of the result",
        description="Execute a schedule (collcert JSON of any collective, ForestColl tree XML "
        "with --topology, an MSCCL algorithm XML or an MSCCL++ execution plan) on real devices "
        "with integer data, and "
        "compare every element of every rank's output with the collective's definition "
        "computed on the host. Each tree's share of each shard travels along the tree's edges "
        "in dependency order (reductions on the way for reduce-scatter, reduce, allreduce). "
        "Prints PASS/FAIL (the first wrong rank, element, expected and actual value, and "
        "which root's shard and tree the missing data belongs to), the time per iteration, "
        "the measured algbw beside the model's, and the devices used. Needs torch: "
        "pip install 'collcert[smoke]'. See docs/smoke.md.",
        epilog="Examples: collcert smoke ag.json --backend gloo; "
        "collcert smoke ag.xml --topology dgx_a100:2 --size 64M --iters 20; "
        "collcert smoke ar.json --backend single-gpu --json. "
        "Exit codes: 0 PASS, 1 FAIL, 2 bad input (or no torch, or no such device).",
    )
    p.add_argument("schedule", metavar="SCHEDULE", help="schedule file: collcert JSON, "
                   "ForestColl XML, MSCCL XML or an MSCCL++ plan (JSON) (detected from the "
                   "content)")
    p.add_argument("--topology", "-t", metavar="TOPO",
                   help="topology file or platform (e.g. dgx_a100:2): the model algbw is then "
                   "computed exactly by 'collcert audit'; required for ForestColl XML")
    p.add_argument("--backend", "-b", default="auto",
                   choices=("auto", "gloo", "nccl", "single-gpu"),
                   help="gloo: one CPU process per rank; nccl: one process per GPU (RCCL on "
                   "ROCm), needs a GPU per rank; single-gpu: every rank on one GPU, one stream "
                   "per link (on the CPU with emulated streams when there is no GPU); auto "
                   "(default): nccl if the GPUs suffice, else single-gpu on a GPU, else gloo "
                   "(up to 64 ranks; single-gpu on the CPU beyond)")
    p.add_argument("--size", default="1M", metavar="BYTES",
                   help="data size M in bytes (the allgather output, the reduce-scatter input, "
                   "the broadcast/reduce/allreduce buffer), rounded up to whole cells; "
                   "K, M, G suffixes are powers of 1024 (default: 1M)")
    p.add_argument("--iters", type=bounded_int(1, MAX_ITERS), default=5, metavar="N",
                   help="timed iterations after a checked warm-up (default: 5, at most "
                   f"{MAX_ITERS}); the last one is checked too")
    p.add_argument("--format", choices=("json", "forestcoll-xml", "msccl-xml", "mscclpp-json"),
                   help="schedule format (default: detected)")
    p.add_argument("--device", metavar="DEV",
                   help="single-gpu backend: the device, e.g. cuda:1 or cpu (default: cuda:0 "
                   "when there is a GPU, else cpu)")
    p.add_argument("--timeout", type=seconds, default=120.0, metavar="S",
                   help="gloo/nccl: stop the ranks after S (+30) seconds (default: 120)")
    p.add_argument("--seed", type=bounded_int(-(2**63), 2**63 - 1), default=0,
                   help="seed of the random orders: the emulated streams' interleaving "
                   "(single-gpu on the CPU) and an MSCCL++ plan's random thread orders, "
                   "tried after the fixed adversarial ones (default: 0)")
    p.add_argument("--run-invalid", action="store_true",
                   help="run a schedule that the checks of 'collcert audit' find INVALID "
                   "anyway (it is refused by default), to see what goes wrong on the devices; "
                   "the result is FAIL whatever the devices do")
    add_json_option(p, ' (model algbw exact as "p/q")')
    _whatif.add_arguments(p)  # the model on the changed --topology
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from collcert.smoke import require_torch, smoke

    require_torch()  # without torch, say how to get it before anything else
    topology = None
    if args.topology:  # the machine the schedule was built for: --degrade/--fail, its file
        topology, note = _whatif_machine.judged_machine(args, load_topology(args.topology),
                                                        args.schedule, "smoke")
        if note:
            print(note, file=sys.stderr)
    elif _whatif.wanted(args):
        raise ScheduleError("--degrade/--fail change the machine --topology names: give it")
    size = parse_size(args.size)
    with announce_estimates("smoke"):
        invalid = check_structure(args.schedule, args.format, topology)
    if invalid and not args.run_invalid:
        more = f" (and {len(invalid) - 3} more)" if len(invalid) > 3 else ""
        raise ScheduleError(
            f"{args.schedule}: not run: the schedule is INVALID ({'; '.join(invalid[:3])}"
            f"{more}); 'collcert audit TOPOLOGY {args.schedule}' lists every problem "
            "(--run-invalid runs it anyway, to see what goes wrong on the devices)")
    report = smoke(args.schedule, topology=topology, backend=args.backend,
                   size=size, iters=args.iters, fmt=args.format,
                   timeout=args.timeout, device=args.device, seed=args.seed,
                   reasons=invalid)  # an MSCCL++ plan is not simulated a second time
    if invalid:  # --run-invalid: whatever the devices did, the schedule stays INVALID
        report.mark_invalid(invalid)
    print_result(args, report)
    return 0 if report.passed else 1


_SHAPE_KEYS = ("format", "collective", "root", "weights", "overlap", "compute_nodes")
_PHASE_KEYS = ("collective", "k", "walks")
_TREE_KEYS = ("root", "multiplicity", "direction", "edges")


def check_structure(path: str, fmt: str | None, topology: Any) -> list[str]:
    """The reasons why the checks of ``collcert audit`` find a tree schedule INVALID
    (none: it may run) (a node receiving twice, a tree that spans too
    little, multiplicities that do not add up to k, a k too large to compute with), with
    the audit's reasons. With ``--topology`` the schedule is checked on it, as
    ``collcert audit`` would, certificates aside; without, on the links its own paths
    name (the shapes and multiplicities, not the times or figures it states). An MSCCL
    program is checked by its simulator when it is loaded (its own reasons); an MSCCL++
    plan by the audit's simulator (:func:`_mscclpp_reasons`). A k too
    large for any memory is refused (ScheduleError), as is unreadable input."""
    from collcert.certify.forestcoll import check_schedule, forestcoll_xml, schedule_json
    from collcert.certify.model import InputError, read_text
    from collcert.smoke import is_mscclpp

    try:
        text = read_text(path, 512 * 1024 * 1024)  # gzip by its magic bytes, size capped
        head = text.lstrip()[:4096]
        if (fmt or ("json" if head.startswith("{") else "xml")) == "msccl-xml" or (
                fmt is None and head.startswith("<")
                and re.search(r"<algo\b[^>]*\b(ngpus|nchunksperloop)=", head)):
            return []
        if fmt == "mscclpp-json" or (fmt is None and is_mscclpp(head)):
            return _mscclpp_reasons(text, path)
        if fmt == "forestcoll-xml" or head.startswith("<"):
            if topology is None:
                return []  # the harness asks for --topology
            doc = forestcoll_xml(text, origin=path, node_ids=[str(v) for v in topology.nodes])
            doc["compute_nodes"] = [str(v) for v in topology.compute_nodes]
        else:
            _refuse_other_json(text, path)
            doc = schedule_json(text, path)
        _refuse_huge_k(doc, path)
        repeated = _repeated_edge(doc)
        if repeated:
            return [repeated]
        own, shape = _own_links(doc)
        verdict = check_schedule(own if topology is None else topology.to_json(), shape,
                                 certificates=False)
    except InputError as exc:
        text = str(exc)
        raise ScheduleError(text if text.startswith(path) else f"{path}: {text}") from None
    return [] if verdict.ok else list(dict.fromkeys(verdict.all_reasons()))


def _mscclpp_reasons(text: str, path: str) -> list[str]:
    """Why the audit's simulator finds an MSCCL++ plan INVALID (none: it may run): what
    its executor refuses to load, deadlocks, races, a wrong postcondition, what a call
    leaves behind for the next (docs/mscclpp.md). What it does not simulate (NVLS,
    ``pipeline``) or cannot read is refused (InputError)."""
    from collcert.auditing import check_mscclpp_size
    from collcert.certify.execution import mscclpp, mscclpp_sim

    plan = mscclpp.read(text, path)
    check_mscclpp_size(plan)  # announced from 5 s: the simulation of a large plan is long
    verdict = mscclpp_sim.run(plan).verdict
    return [] if verdict.ok else list(dict.fromkeys(verdict.all_reasons()))


def _refuse_other_json(text: str, path: str) -> None:
    """A JSON file that is not a tree schedule (an MSCCL++ plan, a certificate, ...):
    refused by what it is, not by the first key a schedule reader misses."""
    head = text[:4096]
    fmt = re.search(r'"format"\s*:\s*"([^"]{1,60})"', head)
    what = fmt.group(1) if fmt else ("an MSCCL++ plan" if '"gpus"' in head else None)
    if fmt and what != "collcert-schedule/1":
        raise ScheduleError(f"{path}: a {what!r} document, not a schedule smoke runs "
                            "(collcert JSON schedules, ForestColl XML, MSCCL XML)")
    if what is None:
        raise ScheduleError(f"{path}: not a schedule: no 'format' field (a collcert "
                            "schedule says \"format\": \"collcert-schedule/1\"; 'collcert "
                            "schedule' writes one)")
    if not fmt:
        from collcert.smoke import is_mscclpp

        if is_mscclpp(head):
            raise ScheduleError(f"{path}: an MSCCL++ plan, not a collcert JSON schedule: leave "
                                "out --format json (or pass --format mscclpp-json)")
        raise ScheduleError(f"{path}: an MSCCL++ plan? It has \"gpus\" but no "
                            "\"threadblocks\" in its first 4096 characters: pass --format "
                            "mscclpp-json if it is one")


MAX_K_BITS = 64
"""A phase's k beyond 2^64: smoke cuts each shard into k cells, so no memory holds it."""


def _refuse_huge_k(doc: Any, path: str) -> None:
    phases = doc.get("phases") if isinstance(doc, dict) else None
    for i, phase in enumerate(phases if isinstance(phases, list) else []):
        k = phase.get("k") if isinstance(phase, dict) else None
        if isinstance(k, str) and k.strip().isdigit():
            k = int(k) if len(k) < 4000 else 1 << 20000
        if isinstance(k, int) and k.bit_length() > MAX_K_BITS:
            raise ScheduleError(
                f"{path}: phase {i} has k = a number of about "
                f"{k.bit_length() * 30103 // 100000 + 1} digits: smoke cuts every shard into "
                f"k cells, and no memory holds that many (at most 2^{MAX_K_BITS}); a real "
                "schedule has k below a few thousand")


def _repeated_edge(doc: Any) -> str:
    """A tree that lists one edge twice (it would send the same data twice), found at
    once, before the full check reads every edge of a million repeated ones."""
    phases = doc.get("phases") if isinstance(doc, dict) else None
    for i, phase in enumerate(phases if isinstance(phases, list) else []):
        trees = phase.get("trees") if isinstance(phase, dict) else None
        for j, tree in enumerate(trees if isinstance(trees, list) else []):
            edges = tree.get("edges") if isinstance(tree, dict) else None
            seen: set[tuple[str, str]] = set()
            for e in edges if isinstance(edges, list) else []:
                if not isinstance(e, dict):
                    break
                key = (str(e.get("src")), str(e.get("dst")))
                if key in seen:
                    return (f"phase {i} tree {j} lists the edge {key[0][:40]} -> "
                            f"{key[1][:40]} twice: node {key[1][:40]} would receive the same "
                            "data twice")
                seen.add(key)
    return ""


def _own_links(doc: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(a topology of the links the schedule's paths use, each of capacity 1; the
    schedule's shape without the figures it states), for :func:`check_structure`."""
    if not isinstance(doc, dict) or not isinstance(doc.get("phases"), list):
        return {"compute_nodes": []}, {}
    shape = {k: doc[k] for k in _SHAPE_KEYS if k in doc}
    shape["phases"] = []
    links: dict[tuple[str, str], None] = {}
    nodes: dict[str, Any] = {str(v): v for v in doc.get("compute_nodes") or []
                             if isinstance(v, str | int)}
    compute = set(nodes)
    for phase in doc["phases"]:
        if not isinstance(phase, dict):
            shape["phases"].append(phase)
            continue
        trees = [{k: t[k] for k in _TREE_KEYS if k in t} if isinstance(t, dict) else t
                 for t in phase.get("trees") or []]
        shape["phases"].append({**{k: phase[k] for k in _PHASE_KEYS if k in phase},
                                "trees": trees})
        walks = list(phase.get("walks") or [])
        for tree in trees:
            if isinstance(tree, dict) and isinstance(tree.get("edges"), list):
                walks += [e for e in tree["edges"] if isinstance(e, dict)]
        for e in walks:
            path = e.get("path", [e.get("src"), e.get("dst")]) if isinstance(e, dict) else []
            hops = [v for v in path if isinstance(v, str | int)] if isinstance(path, list) else []
            for v in hops:
                nodes.setdefault(str(v), v)
            for u, v in zip(hops, hops[1:]):
                links[(str(u), str(v))] = None
    topo = {"compute_nodes": [nodes[v] for v in compute if v in nodes],
            "switch_nodes": [v for k, v in nodes.items() if k not in compute],
            "links": [{"src": nodes[u], "dst": nodes[v], "capacity": 1} for u, v in links]}
    return topo, shape
