"""The figures a steady-state broadcast file states beside its schedule, compared.

:mod:`.oneport` proves T* (the LP of Legrand et al. 2003, §5.2, Lemma 7), the packing
(Thm 5, Lemma 6) and :mod:`.oneport_events` replays the period (§5.4). This module
compares what they do not read (issue 22, item 5), each failure naming its field:

* ``T_star`` (top level): the T* the LP certificate proves;
* ``messages_per_period``: stretch·N of the packing;
* ``method`` and ``lp.problem``: ``trees`` with SSB, ``dag`` with SSBPDAG (§4.1);
* ``packing.tick``: 1/L, L the lcm of the denominators of the costs of the links that
  carry messages (the unit the matchings' durations are counted in);
* the DAG method (§4.3, Thm 2): ``packing.q`` = the lcm of the denominators of the
  rates n_e·TP, of n_e·c_e·TP and of TP; ``packing.N`` = q·TP; every block sent to a
  node j carries the batch injected h(j) − 1 periods before (``lag``);
* a dual cut lists each node once;
* every object holds only the keys of the format (docs/steady-broadcast.md); another
  fails as a field no checker proves. ``topology_name`` is provenance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import Link, Verdict, frac_str, number

SCHEMA: dict[str, set[str]] = {
    "": {"format", "topology", "topology_name", "source", "method", "throughput", "T_star",
         "period", "messages_per_period", "trees", "matchings", "packing", "lp", "steps"},
    "trees[]": {"weight", "edges"}, "matchings[]": {"duration", "edges"},
    "packing": {"N", "loads", "tick", "stretch", "q", "heights"},
    "lp": {"problem", "T_star", "n", "x", "dual"}, "lp.x[]": {"dest", "flow"},
    "lp.dual": {"send", "recv", "cuts"}, "lp.dual.cuts[]": {"nodes", "weight"},
    "steps[]": {"start", "duration", "transfers"}, "steps[].transfers[]": {"src", "dst", "blocks"},
    "steps[].transfers[].blocks[]": {"lag", "first", "count"},
}
PROBLEM = {"trees": "ssb", "dag": "ssbpdag"}


def _objects(doc: Any, path: str = "") -> list[tuple[str, Mapping[str, Any]]]:
    """(schema path, object) of every object the schema names, ``doc`` first."""
    out: list[tuple[str, Mapping[str, Any]]] = []
    if not isinstance(doc, Mapping):
        return out
    out.append((path, doc))
    for key, value in doc.items():
        sub = f"{path}.{key}" if path else str(key)
        if isinstance(value, list) and f"{sub}[]" in SCHEMA:
            for item in value:
                out += _objects(item, f"{sub}[]")
        elif isinstance(value, Mapping) and sub in SCHEMA:
            out += _objects(value, sub)
    return out


def check_stated(topo: Any, doc: Mapping[str, Any], T: Fraction, packed: Mapping[str, Any],
                 v: Verdict) -> None:
    """Compare the stated fields (module docstring) with T* and the packing's facts
    (``N``, ``loads``)."""
    loads: Mapping[Link, int] = packed.get("loads", {})
    for path, obj in _objects(doc):
        for key in sorted(set(obj) - SCHEMA[path], key=str):
            where = f"{path}.{key}" if path else key
            v.fail(f"field {where!r}: no checker of a steady-state broadcast proves it")
    if "T_star" in doc and number(doc["T_star"], "T_star") != T:
        v.fail(f"field 'T_star': {doc['T_star']}, but the LP certificate proves "
               f"{frac_str(T)}")
    method = doc.get("method", "trees")
    lp: Mapping[str, Any] = doc["lp"] if isinstance(doc.get("lp"), Mapping) else {}
    if method not in PROBLEM:
        v.fail(f"field 'method': {method!r}; 'trees' or 'dag'")
    elif lp.get("problem", PROBLEM[method]) != PROBLEM[method]:
        v.fail(f"field 'lp.problem': {lp.get('problem')!r}; the {method} method solves "
               f"{PROBLEM[method]!r}")
    packing: Mapping[str, Any] = (doc["packing"] if isinstance(doc.get("packing"), Mapping)
                                  else {})
    stretch = packing.get("stretch", 1)
    if isinstance(packed.get("N"), int) and isinstance(stretch, int) and doc.get(
            "messages_per_period") is not None and number(
            doc["messages_per_period"], "messages_per_period") != stretch * packed["N"]:
        v.fail(f"field 'messages_per_period': {doc['messages_per_period']!r}, but the "
               f"packing sends stretch·N = {stretch * packed['N']} messages a period")
    used = [topo.cost[e] for e, m in loads.items() if m]
    tick = Fraction(1, math.lcm(*(c.denominator for c in used))) if used else None
    if tick is not None and "tick" in packing and number(packing["tick"], "tick") != tick:
        v.fail(f"field 'packing.tick': {packing['tick']}, but the costs of the links in use "
               f"give 1/L = {frac_str(tick)}")
    dual: Mapping[str, Any] = lp["dual"] if isinstance(lp.get("dual"), Mapping) else {}
    for k, cut in enumerate(dual.get("cuts") or []):
        nodes = cut.get("nodes") if isinstance(cut, Mapping) else None
        if isinstance(nodes, list) and len({str(x) for x in nodes}) != len(nodes):
            v.fail(f"field 'lp.dual.cuts[{k}].nodes': a node is listed twice")
    if method == "dag":
        _dag(topo, doc, packing, lp, T, v)


def _dag(topo: Any, doc: Mapping[str, Any], packing: Mapping[str, Any],
         lp: Mapping[str, Any], T: Fraction, v: Verdict) -> None:
    """§4.3: q, N = q·TP and the lags h(j) − 1 of the height-based schedule."""
    tp = 1 / T
    rates: list[Fraction] = [tp]
    for item in lp.get("n") or []:
        if isinstance(item, list) and len(item) == 3:
            e = (topo.node(item[0], "lp n"), topo.node(item[1], "lp n"))
            r = number(item[2], "lp n") * tp
            rates += [r, r * topo.cost.get(e, Fraction(0))]
    q = math.lcm(*(r.denominator for r in rates))
    if "q" in packing and packing["q"] != q:
        v.fail(f"field 'packing.q': {packing['q']!r}, but the LP's rates give q = {q}")
    if "N" in packing and packing["N"] != q * tp:
        v.fail(f"field 'packing.N': {packing['N']!r}, but q·TP = {frac_str(q * tp)}")
    heights = packing.get("heights")
    if not isinstance(heights, Mapping):
        return
    h = {str(k): x for k, x in heights.items()}
    for i, step in enumerate(doc.get("steps") or []):
        for t in (step.get("transfers") or []) if isinstance(step, Mapping) else []:
            if not isinstance(t, Mapping) or str(t.get("dst")) not in h:
                continue
            for b in t.get("blocks") or []:
                if isinstance(b, Mapping) and b.get("lag") != h[str(t["dst"])] - 1:
                    v.fail(f"field 'steps[{i}]' block lag: {b.get('lag')!r} into "
                           f"{t['dst']!r}, whose height {h[str(t['dst'])]} gives "
                           f"{h[str(t['dst'])] - 1}")
                    return


PIPE_KEYS = {"format", "topology", "topology_name", "source", "size", "T_star", "lower_bound",
             "slack_w", "paper", "best", "searched", "schedule"}
RUN_KEYS = {"packets", "packet_size", "stretch", "makespan", "ratio", "batches", "periods",
            "compact"}


def check_pipe_stated(topo: Any, beta: Mapping[Link, Fraction], doc: Mapping[str, Any],
                      steady: Mapping[str, Any], v: Verdict) -> None:
    """PIPE (§6, proof of Thm 8): what the replay does not read. ``slack_w`` = w = max β/c;
    per run ``stretch`` = q + w, ``batches`` = ⌈p/M⌉ (M messages a period), ``periods``
    D of initialisation, B − D steady and D of clean-up (D the largest lag, as the
    replay runs them); ``searched`` (how the count was searched: provenance) must hold
    the best count; ``topology`` and ``source`` those of the platform and schedule."""
    lag = _platform_fields(topo, doc, PIPE_KEYS, "a PIPE broadcast", v)
    w = max((b / topo.cost[e] for e, b in beta.items()), default=Fraction(0))
    if "slack_w" in doc and number(doc["slack_w"], "slack_w") != w:
        v.fail(f"field 'slack_w': {doc['slack_w']}, but max β/c = {frac_str(w)}")
    m = steady.get("messages_per_period")
    for name in ("paper", "best"):
        run = doc.get(name)
        if isinstance(run, Mapping) and isinstance(m, int) and m > 0:
            _run(run, name, w, lag, m, v)
    searched = doc.get("searched")
    if isinstance(searched, Mapping):
        for key in sorted(set(searched) - {"counts", "least", "most"}, key=str):
            v.fail(f"field 'searched.{key}': no checker of a PIPE broadcast proves it")
        best = (doc.get("best") or {}).get("packets")
        lo, hi, n = searched.get("least"), searched.get("most"), searched.get("counts")
        fits = (isinstance(lo, int) and isinstance(hi, int) and isinstance(n, int)
                and isinstance(best, int) and 1 <= lo <= best <= hi and n <= hi - lo + 1)
        if n and not fits:
            v.fail(f"field 'searched': counts {n!r} between {lo!r} and {hi!r} cannot hold "
                   f"the best count {best!r}")


def _run(run: Mapping[str, Any], name: str, w: Fraction, lag: int, m: int,
         v: Verdict) -> None:
    for key in sorted(set(run) - RUN_KEYS, key=str):
        v.fail(f"field '{name}.{key}': no checker of a PIPE broadcast proves it")
    p, q = run.get("packets"), number(run.get("packet_size"), f"{name} packet_size")
    if "stretch" in run and number(run["stretch"], f"{name} stretch") != q + w:
        v.fail(f"field '{name}.stretch': {run['stretch']}, but q + w = {frac_str(q + w)}")
    if isinstance(p, int):
        _batches(run, f"{name}.", -(-p // m), lag, "p", v)
    _compact_keys(run, f"{name}.", "a PIPE broadcast", v)


SERIES_KEYS = {"format", "topology", "topology_name", "source", "messages", "makespan",
               "lower_bound", "ratio", "batches", "periods", "compact", "schedule"}


def check_series_stated(topo: Any, doc: Mapping[str, Any], m: int, v: Verdict) -> None:
    """A finite series of n messages (§5.5): what the replay does not read. ``batches``
    = ⌈n/M⌉, ``periods`` as for PIPE, ``topology`` and ``source`` those of the platform
    and schedule, no other field."""
    lag = _platform_fields(topo, doc, SERIES_KEYS, "a series of broadcasts", v)
    n = doc.get("messages")
    if isinstance(n, int) and m > 0:
        _batches(doc, "", -(-n // m), lag, "n", v)
    _compact_keys(doc, "", "a series of broadcasts", v)


def _platform_fields(topo: Any, doc: Mapping[str, Any], keys: set[str], what: str,
                     v: Verdict) -> int:
    """Unknown keys, ``topology`` and ``source`` checked; the schedule's largest lag D."""
    for key in sorted(set(doc) - keys, key=str):
        v.fail(f"field {key!r}: no checker of {what} proves it")
    if doc.get("topology") not in (None, topo.content_hash()):
        v.fail("field 'topology': the document was made for a different platform")
    sched = doc.get("schedule")
    if isinstance(sched, Mapping) and str(doc.get("source")) != str(sched.get("source")):
        v.fail(f"field 'source': {doc.get('source')!r}, the schedule broadcasts from "
               f"{sched.get('source')!r}")
    lags = [b.get("lag") for s in (sched or {}).get("steps") or [] if isinstance(s, Mapping)
            for t in s.get("transfers") or [] if isinstance(t, Mapping)
            for b in t.get("blocks") or [] if isinstance(b, Mapping)]
    return max((x for x in lags if isinstance(x, int)), default=0)


def _batches(run: Mapping[str, Any], at: str, b: int, lag: int, count: str,
             v: Verdict) -> None:
    """``batches`` = B and ``periods``: D of initialisation, B − D steady, D of clean-up."""
    if "batches" in run and run["batches"] != b:
        v.fail(f"field '{at}batches': {run['batches']!r}, but ⌈{count}/M⌉ = {b}")
    init, steady = min(lag, b + lag), max(0, b - lag)
    want = {"initialisation": init, "steady": steady, "clean_up": b + lag - init - steady}
    periods = run.get("periods")
    if isinstance(periods, Mapping) and dict(periods) != want:
        v.fail(f"field '{at}periods': {dict(periods)!r}, but B = {b} batches and the "
               f"largest lag D = {lag} give {want}")


def _compact_keys(run: Mapping[str, Any], at: str, what: str, v: Verdict) -> None:
    compact = run.get("compact")
    if isinstance(compact, Mapping):
        for key in sorted(set(compact) - {"makespan", "ratio", "transfers"}, key=str):
            v.fail(f"field '{at}compact.{key}': no checker of {what} proves it")
