"""``--degrade LINK=CAP`` and ``--fail NODE_OR_LINK`` for ``collcert optimum`` and
``collcert schedule``: the machine after a fault, its optimum against the healthy
one, the loss in percent (exact) and the cut that explains it (docs/whatif.md)."""

from __future__ import annotations

import argparse
from fractions import Fraction
from typing import Any

from collcert.reference.model import (
    Topology,
    WhatIf,
    decimal_str,
    fraction_str,
    show,
    what_if,
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--degrade", action="append", default=[], metavar="LINK=CAP",
                   help="what-if: set a link's capacity (exact, e.g. b3.gpu2<>b3.nic2=25/2); "
                   "a link is SRC>DST (one direction) or SRC<>DST (both); NODE=CAP sets "
                   "every link of a node (b3.nic2=25/2: a NIC at half speed); repeatable; quote "
                   "links ('b3.gpu2<>b3.nic2=25/2'): the shell reads < and > as redirections. The "
                   "result is compared with the healthy machine (docs/whatif.md)")
    p.add_argument("--fail", action="append", default=[], metavar="NODE_OR_LINK",
                   help="what-if: remove a node with all its links (e.g. b3.nic2), or a link "
                   "SRC>DST / SRC<>DST; repeatable")


def wanted(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "degrade", None) or getattr(args, "fail", None))


def apply(args: argparse.Namespace, topo: Topology, *, strict: bool = True) -> WhatIf:
    """The machine after ``--degrade`` and ``--fail`` (errors exit 2 through the CLI);
    ``strict=False`` keeps any directed graph (allreduce, alltoall)."""
    return what_if(topo, args.degrade, args.fail, strict=strict)


def _side(nodes: list[Any], total: int, inside: bool) -> str:
    where = "inside" if inside else "outside"
    shown = ", ".join(str(v) for v in nodes[:16])
    if len(nodes) > 16:
        shown += f", … ({len(nodes)} in all)"
    return f"the {len(nodes)} of {total} compute nodes {where} S: {shown}"


def cut_view(t: Topology, cut: frozenset[Any], w: WhatIf) -> dict[str, Any]:
    """The cut S of the changed machine ``t`` described by its shorter side of compute
    nodes, B⁺(S) after the changes and the changed links that leave it."""
    changed = w.changed
    out_capacity = sum((changed.get(e, c) for e, c in w.healthy.capacity.items()
                        if e[0] in cut and e[1] not in cut), Fraction(0))
    inside = [v for v in t.compute_nodes if v in cut]
    outside = [v for v in t.compute_nodes if v not in cut]
    gone = set(w.removed_nodes)
    leaving = [f"{u}>{v}" for (u, v) in changed
               if u in cut and v not in cut and u not in gone and v not in gone]
    return {
        "compute_inside": len(inside),
        "compute_outside": len(outside),
        "listed_side": "inside" if len(inside) <= len(outside) else "outside",
        "listed": [str(v) for v in (inside if len(inside) <= len(outside) else outside)],
        "out_capacity": out_capacity,
        "changed_links_leaving": leaving,
    }


def _cut_lines(view: dict[str, Any], t: Topology) -> list[str]:
    n = view["compute_inside"] + view["compute_outside"]
    inside = view["listed_side"] == "inside"
    lines = [f"  cut S: {_side(view['listed'], n, inside)}",
             f"         {view['compute_inside']} compute node"
             f"{'' if view['compute_inside'] == 1 else 's'} inside, "
             f"B⁺(S) = {show(view['out_capacity'])} {t.unit} leaves S"]
    if view["changed_links_leaving"]:
        shown = ", ".join(view["changed_links_leaving"][:8])
        lines.append(f"         changed links leaving S: {shown}")
    return lines


def loss_percent(healthy: Fraction, now: Fraction) -> Fraction:
    return (healthy - now) * 100 / healthy if healthy else Fraction(0)


def report(w: WhatIf, healthy: Fraction, now: Fraction, cut: frozenset[Any] | None,
           ) -> dict[str, Any]:
    """The what-if block as a JSON-ready dict (exact numbers as "p/q")."""
    t = w.topology if w.topology is not None else w.healthy
    loss = loss_percent(healthy, now)
    out: dict[str, Any] = {
        "changes": list(w.changes),
        "healthy_algbw": fraction_str(healthy),
        "algbw": fraction_str(now),
        "loss_percent": fraction_str(loss),
        "disconnected": w.disconnected,
    }
    if w.removed_nodes:
        out["removed_nodes"] = [str(v) for v in w.removed_nodes]
    if w.disconnected:
        out["cut_off"] = [str(v) for v in w.cut_off]
    if cut is not None:
        view = cut_view(t, cut, w)
        view["out_capacity"] = fraction_str(view["out_capacity"])
        out["cut"] = view
    return out


def print_report(w: WhatIf, healthy: Fraction, now: Fraction, cut: frozenset[Any] | None,
                 figure: str = "algbw") -> None:
    """The what-if block: the changes, ``figure`` healthy and now, the loss, the cut."""
    t = w.topology if w.topology is not None else w.healthy
    unit = t.unit
    print(f"What-if on {w.healthy.name or 'the topology'}:")
    for line in w.changes:
        print(f"  {line}")
    if w.topology is not None and w.topology.num_compute != w.healthy.num_compute:
        print(f"  compute nodes: {w.healthy.num_compute} → {w.topology.num_compute} (the "
              "changed machine's algbw is over the compute nodes left)")
    pad = " " * len(figure)
    print(f"  healthy {figure} = {show(healthy)} {unit}")
    print(f"  now     {figure} = {show(now)} {unit}")
    loss = loss_percent(healthy, now)
    print(f"  loss    {pad} = {fraction_str(loss)} % (≈ {decimal_str(loss, 4)} %)")
    if w.disconnected:
        print(f"  disconnected: no link leaves S, so the rate is 0; the compute nodes cut off "
              f"({len(w.cut_off)}): {', '.join(str(v) for v in w.cut_off[:16])}"
              + (" …" if len(w.cut_off) > 16 else ""))
    if cut is not None:
        for line in _cut_lines(cut_view(t, cut, w), t):
            print(line)


def print_certificate(cert: dict[str, Any] | None, block: Any, w: WhatIf) -> int:
    """``--certificate`` with --degrade/--fail: the changed machine's certificate alone on
    stdout (what 'collcert check TOPOLOGY CERT --degrade/--fail ...' proves), the what-if
    block (``block()`` prints it) on stderr; a disconnected machine ``w`` has none (exit 2)."""
    import sys

    from collcert.reference.model import TopologyError

    from ._common import print_json

    stdout = sys.stdout
    sys.stdout = sys.stderr
    try:
        block()
    finally:
        sys.stdout = stdout
    if cert is None:
        raise TopologyError(w.disconnected_text(
            "the rate is 0, proven by the set S that no link leaves (above), and there is no "
            "certificate to write; drop --certificate"))
    cert.pop("whatif", None)
    print_json(cert)
    return 0


def schedule_topology(args: argparse.Namespace, topo: Topology) -> Topology:
    """``collcert schedule --degrade/--fail``: the changed machine to schedule on, after
    its what-if block (optimum, loss, cut) on stderr; a disconnected machine has no
    schedule (exit 2, naming the compute nodes cut off)."""
    import sys

    from collcert.reference.forestcoll import optimum
    from collcert.reference.model import ScheduleError

    w = apply(args, topo)
    if w.topology is None:
        raise ScheduleError(w.disconnected_text(
            "the rate is 0 and no schedule exists; 'collcert optimum' with the same options "
            "names the cut"))
    collective = "allgather" if args.collective == "allreduce" else args.collective
    root = None if args.root is None else topo.lookup(args.root)
    if root is not None and root not in w.topology.index:
        raise ScheduleError(f"--root {args.root!r} is given to --fail")
    kw: dict[str, Any] = {"root": root, "fixed_k": args.fixed_k, "engine": args.engine}
    healthy = optimum(topo, collective, **kw)
    now = optimum(w.topology, collective, **kw)
    stdout = sys.stdout
    sys.stdout = sys.stderr
    try:
        print_report(w, healthy.algbw, now.algbw, now.cut)
    finally:
        sys.stdout = stdout
    return w.topology


def print_json_result(doc: dict[str, Any] | None, block: dict[str, Any],
                      elapsed: float) -> int:
    """``--json`` with --degrade/--fail: the changed machine's result ``doc`` (None when
    the machine is disconnected), its ``whatif`` block, and the wall time."""
    from ._common import print_json

    out = {**(doc or {}), "whatif": block,
           "seconds": round(elapsed, 3)}  # wall time: informative, not a result
    print_json(out)
    return 0
