"""Shrink a failing topology to a small one that still fails (usable without hypothesis).

A topology is kept as a list of weighted directed cycles (an Eulerian graph
always decomposes so), and every shrinking step edits cycles, so every
candidate is Eulerian by construction:

1. remove a node: splice it out of every cycle (``u → v → t`` becomes
   ``u → t``; a cycle that collapses to one node disappears), or bypass it
   (pair its in- and out-links as in edge splitting) — switches first;
2. remove a cycle of the decomposition, or any short simple cycle of the links
   (subtracting its smallest capacity);
3. lower a cycle's weight (to 1, 2, 3, half, or by one);
4. divide every weight by their gcd and merge cycles over the same nodes.

A candidate is kept when it is still a valid topology (at least two compute
nodes, strongly connected) and the failure persists. ``fails`` is any
predicate on topologies; it is called at most ``max_calls`` times.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import time
from collections.abc import Callable, Hashable
from fractions import Fraction
from pathlib import Path
from typing import Any

from collcert.reference.model import CollcertError, Topology, TopologyError, output_file

Node = Hashable
Cycle = tuple[tuple[Node, ...], int]


def cycles_of(t: Topology) -> list[Cycle]:
    """A decomposition of the integer-scaled topology into weighted simple cycles."""
    return _decompose(t.int_capacity)


def _decompose(caps: dict[tuple[Node, Node], int]) -> list[Cycle]:
    rest = {e: c for e, c in caps.items() if c > 0}
    out_edges: dict[Node, list[Node]] = {}
    for u, v in rest:
        out_edges.setdefault(u, []).append(v)
    cycles: list[Cycle] = []
    for start_edge in list(rest):
        while rest.get(start_edge, 0) > 0:
            u0, v0 = start_edge
            walk = [u0, v0]
            pos = {u0: 0, v0: 1}
            while True:
                cur = walk[-1]
                nxt = next(w for w in out_edges[cur] if rest[(cur, w)] > 0)
                if nxt in pos:
                    cyc = walk[pos[nxt]:]
                    break
                pos[nxt] = len(walk)
                walk.append(nxt)
            edges = [(cyc[i], cyc[(i + 1) % len(cyc)]) for i in range(len(cyc))]
            w = min(rest[e] for e in edges)
            for e in edges:
                rest[e] -= w
            cycles.append((tuple(cyc), w))
    return cycles


def from_cycles(t: Topology, cycles: list[Cycle], scale: int | None = None,
                drop: frozenset[Node] = frozenset()) -> Topology:
    """The topology with t's nodes (minus ``drop``) and links from ``cycles`` / ``scale``."""
    sc = t.scale if scale is None else scale
    links: dict[tuple[Node, Node], int] = {}
    for nodes, w in cycles:
        for i, u in enumerate(nodes):
            e = (u, nodes[(i + 1) % len(nodes)])
            links[e] = links.get(e, 0) + w
    used = {u for e in links for u in e}
    compute = [v for v in t.compute_nodes if v not in drop]
    switches = [v for v in t.switch_nodes if v not in drop and v in used]
    return Topology(compute, [(u, v, Fraction(c, sc)) for (u, v), c in links.items()],
                    switches, name=t.name, unit=t.unit,
                    multicast_switches=[w for w in t.multicast_switches if w in switches])


def _splice(cycles: list[Cycle], node: Node) -> list[Cycle]:
    out = []
    for nodes, w in cycles:
        kept = tuple(v for v in nodes if v != node)
        # consecutive duplicates cannot occur: a simple cycle visits each node once
        if len(kept) >= 2:
            out.append((kept, w))
    return out


def _bypass(t: Topology, node: Node) -> list[Cycle]:
    """Remove ``node`` by routing its through traffic directly (edge splitting, Zhao & Krishnamurthy 2023, §2.2):
    γ units of (u, node) and (node, w) become γ units of (u, w); u = w is dropped."""
    caps = dict(t.int_capacity)
    ins = [(u, c) for (u, v), c in caps.items() if v == node]
    outs = {w: c for (v, w), c in caps.items() if v == node}
    for e in list(caps):
        if node in e:
            del caps[e]
    for u, amount in ins:
        for prefer_self in (False, True):
            for w in list(outs):
                if amount == 0:
                    break
                if (w == u) != prefer_self or outs[w] == 0:
                    continue
                g = min(amount, outs[w])
                amount -= g
                outs[w] -= g
                if w != u:
                    caps[(u, w)] = caps.get((u, w), 0) + g
    return _decompose(caps)


def _support_cycles(t: Topology, limit: int) -> list[list[Node]]:
    """Up to ``limit`` simple directed cycles of t's links, shortest first."""
    import itertools

    import networkx as nx

    g = nx.DiGraph(list(t.capacity))
    found = list(itertools.islice(nx.simple_cycles(g, length_bound=min(len(t.nodes), 6)),
                                  limit * 4))
    found.sort(key=len)
    return found[:limit]


def _normalise(cycles: list[Cycle], scale: int) -> tuple[list[Cycle], int]:
    merged: dict[tuple[Node, ...], int] = {}
    for nodes, w in cycles:
        i = min(range(len(nodes)), key=lambda j: repr(nodes[j]))
        key = nodes[i:] + nodes[:i]
        merged[key] = merged.get(key, 0) + w
    g = 0
    for w in merged.values():
        g = math.gcd(g, w)
    g = math.gcd(g, scale) if g else 1
    return [(k, w // g) for k, w in merged.items()], scale // g


def size(t: Topology) -> tuple[int, int, int]:
    """What shrinking minimises: (nodes, links, total capacity bits)."""
    return (len(t.nodes), len(t.capacity), sum(c.bit_length() for c in t.int_capacity.values()))


def shrink(
    topology: Topology,
    fails: Callable[[Topology], bool],
    *,
    max_calls: int = 400,
    time_limit: float | None = None,
) -> Topology:
    """The smallest topology found that still ``fails`` (``topology`` if none is smaller).

    ``fails(topology)`` should be True at the start; exceptions other than a
    :class:`~collcert.CollcertError` raised while building a candidate count
    as failures of the predicate only if ``fails`` itself catches them.
    """
    run = _Shrinker(topology, fails, max_calls, time_limit)
    progress = True
    while progress and not run.exhausted():
        progress = False
        for step in (run.remove_nodes, run.remove_cycles, run.remove_support_cycles,
                     run.lower_weights, run.normalise):
            progress = step() or progress
    return run.best


class _Shrinker:
    """One shrinking run: the smallest failing topology so far, and the budget of calls
    to ``fails``. Each step (1-4 of the module docstring) says whether it shrank ``best``."""

    def __init__(self, topology: Topology, fails: Callable[[Topology], bool], max_calls: int,
                 time_limit: float | None) -> None:
        self.best = topology
        self.fails = fails
        self.max_calls = max_calls
        self.deadline = None if time_limit is None else time.monotonic() + time_limit
        self.calls = 0

    def exhausted(self) -> bool:
        return self.calls >= self.max_calls or (
            self.deadline is not None and time.monotonic() > self.deadline)

    def attempt(self, candidate_cycles: list[Cycle], scale: int,
                drop: frozenset[Node] = frozenset()) -> bool:
        """Keep the candidate built from ``candidate_cycles`` if it is smaller and fails."""
        if self.exhausted():
            return False
        try:
            cand = from_cycles(self.best, candidate_cycles, scale, drop)
        except (TopologyError, CollcertError):
            return False
        if size(cand) >= size(self.best):
            return False
        self.calls += 1
        if self.fails(cand):
            self.best = cand
            return True
        return False

    def remove_nodes(self) -> bool:
        """1. Splice out or bypass each node, switches first."""
        progress = False
        for v in list(self.best.switch_nodes) + list(self.best.compute_nodes)[::-1]:
            for remove in (_splice, _bypass):
                if v not in self.best.index:
                    break
                base = cycles_of(self.best) if remove is _splice else self.best
                if self.attempt(remove(base, v), self.best.scale,  # type: ignore[arg-type]
                                frozenset([v])):
                    progress = True
        return progress

    def remove_cycles(self) -> bool:
        """2. Remove each cycle of the decomposition."""
        progress = False
        cycles = cycles_of(self.best)
        i = 0
        while i < len(cycles):
            if self.attempt(cycles[:i] + cycles[i + 1:], self.best.scale):
                cycles = cycles_of(self.best)
                progress = True
            else:
                i += 1
        return progress

    def remove_support_cycles(self) -> bool:
        """2b. Remove any simple cycle of the support graph (not only those of the
        decomposition): subtract its smallest capacity along it."""
        progress = False
        for cyc in _support_cycles(self.best, limit=60):
            caps = dict(self.best.int_capacity)
            edges = [(cyc[i], cyc[(i + 1) % len(cyc)]) for i in range(len(cyc))]
            if not all(e in caps for e in edges):
                continue
            w = min(caps[e] for e in edges)
            for e in edges:
                caps[e] -= w
            if self.attempt(_decompose(caps), self.best.scale):
                progress = True
        return progress

    def lower_weights(self) -> bool:
        """3. Lower each cycle's weight: to 1, 2, 3, half, or by one."""
        progress = False
        cycles = cycles_of(self.best)
        for i in range(len(cycles)):
            nodes, w = cycles[i]
            for lower in sorted({1, 2, 3, w // 2, w - 1}):
                if 1 <= lower < w:
                    trial = cycles[:i] + [(nodes, lower)] + cycles[i + 1:]
                    if self.attempt(trial, self.best.scale):
                        cycles = trial
                        progress = True
                        break
        return progress

    def normalise(self) -> bool:
        """4. Divide every weight by their gcd; only kept when it still fails."""
        norm, scale = _normalise(cycles_of(self.best), self.best.scale)
        return scale != self.best.scale and self.attempt(norm, scale)


# --------------------------------------------------------------------------- #
# saving regressions
# --------------------------------------------------------------------------- #
def default_regressions_dir() -> Path:
    """``$COLLCERT_REGRESSIONS``, else ``golden/regressions`` of the source tree when
    collcert runs from one (an editable install), else ``fuzz-failures`` in the current
    directory (an installed package has no golden/: nothing is written into site-packages)."""
    env = os.environ.get("COLLCERT_REGRESSIONS")
    if env:
        return Path(env)
    tree = Path(__file__).resolve().parent.parent / "golden" / "regressions"
    return tree if tree.is_dir() else Path("fuzz-failures")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:60] or "case"


def save_regression(
    topology: Topology,
    what: str,
    reproduce: str,
    *,
    directory: str | os.PathLike[str] | None = None,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write ``<dir>/<kind>-<hash>.json`` (a topology file) and add a README line.

    ``what`` is ``"<kind>: <message>"`` (``kind`` a property name, or ``impl-invalid``...).

    The JSON is a normal topology file (``collcert optimum FILE`` reads it);
    its ``description`` says what failed and ``source`` how to reproduce it
    (``{file}`` in ``reproduce`` is replaced by the file's path).
    """
    folder = Path(directory) if directory is not None else default_regressions_dir()
    folder.mkdir(parents=True, exist_ok=True)
    digest = topology.content_hash().split(":")[1][:10]
    path = folder / f"{_slug(what.removeprefix('[open] ').split(':')[0])}-{digest}.json"
    try:
        shown = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        shown = str(path)
    shown = str(path) if shown.startswith("..") else shown
    command = reproduce.replace("{file}", shlex.quote(shown))
    data = topology.to_json()
    data["description"] = what
    data["source"] = command
    if extra:
        data["description"] = f"{what} | " + json.dumps(extra, sort_keys=True, default=str)
    with output_file(path) as fh:  # all or nothing: a case is whole or absent
        json.dump(data, fh, indent=1)
        fh.write("\n")
    readme = folder / "README.md"
    line = f"- `{path.name}`: {what}. Reproduce: `{command}`\n"
    existing = readme.read_text(encoding="utf-8") if readme.exists() else ""
    if line not in existing:
        with open(readme, "a", encoding="utf-8") as fh:
            if not existing:
                fh.write("# Saved regressions\n\nShrunk failing topologies, one line each.\n\n")
            fh.write(line)
    return path
