"""Checker 7: a steady-state broadcast under the one-port model (Legrand et al. 2003).

Input: a one-port platform (``collcert-topology/1`` with ``"port_model":
"one-port"`` and a ``cost`` per link) and a ``collcert-steady-broadcast/1``
schedule file (docs/steady-broadcast.md). Three independent checks:

1. **Optimality bound** (:func:`check_lp`). The primal part: flows x_i, one
   unit from the source s to each destination i (no arc into s or out of i,
   conserved elsewhere), x_i ≤ n, and both ports of every node busy at most T*
   per message: SSB(G) of §5.2 is feasible with value T*. The dual part: port
   prices α_j, β_j ≥ 0 with Σα + Σβ ≤ 1 and cut weights y_X ≥ 0 (X a node set
   without s) with Σ_{X entered by (j,k)} y_X ≤ c_{j,k}·(α_j + β_k) on every
   link. Any schedule with throughput r moves n_e ≥ 0 messages per unit time
   over each link e, at least r into every X (each node of X must get every
   message), with port loads ≤ 1; so Σ_X y_X·r ≤ Σ_e n_e·c_e·(α_j + β_k) ≤
   Σα + Σβ ≤ 1: **no schedule beats 1/Σ y_X** (Lemma 7). Σ y_X = T* makes T*
   the exact optimum and 1/T* the best throughput.
2. **Packing** (:func:`check_packing`): trees are spanning arborescences
   rooted at s on real links, integer weights, Σλ = N, loads m_e = Σ λ_l χ_e
   ≤ N·n_e, Σ_j m_{j,k} = N for every k ≠ s (Thm 5, eqs. (17)-(18)); the
   matchings are matchings, with durations that are whole ticks, cover every
   link's m_e·c_e exactly (eq. (19)) and add up to N·T* (Lemma 6, equality).
   For the DAG method: heights with h(s) = 0 rising along every used link.
3. **Events** (:mod:`collcert.certify.broadcast.oneport_events`): the period replayed.

Standard library only; never imports collcert.reference.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import (
    InputError,
    Link,
    LinkFormat,
    Node,
    Verdict,
    find_node,
    frac_str,
    integer,
    number,
    read_links,
)

FORMAT = "collcert-steady-broadcast/1"
MAX_ITEMS = 2_000_000
PLATFORM = LinkFormat("platform", "cost", missing="{where} needs src, dst and cost",
                      not_a_link="{where} is not a link with src, dst and cost",
                      bad="{where}: the cost must be positive and src ≠ dst", once=True)
"""A one-port platform's links: a cost per link (time per message), each link once."""


class OnePortTopo:
    """A one-port platform dict read into exact data: ``nodes`` and ``cost[(j, k)]``."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        if not isinstance(data, Mapping):
            raise InputError("the platform must be a JSON object")
        if data.get("port_model") != "one-port":
            raise InputError("this is not a one-port platform (its file has no \"port_model\": "
                             "\"one-port\" and links with a 'cost'): check the schedule on "
                             "the platform it was made for, e.g. fig1 or its platform file")
        raw = data.get("compute_nodes")
        if not isinstance(raw, list) or len(raw) < 2:
            raise InputError("the platform needs 'compute_nodes', at least two")
        self.nodes: list[Node] = []
        self._by_text: dict[str, Node] = {}
        for v in raw:
            if isinstance(v, bool) or not isinstance(v, str | int) or str(v) in self._by_text:
                raise InputError(f"platform node id {v!r} is not a unique string or integer")
            self.nodes.append(v)
            self._by_text[str(v)] = v
        self._ids = frozenset(self.nodes)
        self.cost: dict[Link, Fraction] = read_links(data, PLATFORM, self.node)
        self.out_adj: dict[Node, list[Node]] = {v: [] for v in self.nodes}
        self.in_adj: dict[Node, list[Node]] = {v: [] for v in self.nodes}
        for u, v in self.cost:
            self.out_adj[u].append(v)
            self.in_adj[v].append(u)

    def node(self, ref: object, where: str) -> Node:
        hit = find_node(ref, self._ids, self._by_text)
        if hit is not None:
            return hit
        text = repr(ref) if len(repr(ref)) < 60 else repr(ref)[:57] + "..."
        raise InputError(f"{where} names {text}, which is not a node of the platform")

    def link(self, pair: object, where: str) -> Link:
        if not isinstance(pair, list) or len(pair) != 2:
            raise InputError(f"{where} is not a [src, dst] pair")
        e = (self.node(pair[0], f"{where} src"), self.node(pair[1], f"{where} dst"))
        if e not in self.cost:
            raise InputError(f"{where}: {e[0]!r} -> {e[1]!r} is not a link of the platform")
        return e

    def content_hash(self) -> str:
        """The same canonical hash as collcert writes in the schedule's ``topology`` key."""
        canon = {"port_model": "one-port",
                 "nodes": [[type(v).__name__, str(v)] for v in self.nodes],
                 "links": sorted([str(u), str(v), frac_str(c)] for (u, v), c in self.cost.items())}
        blob = json.dumps(canon, sort_keys=True, separators=(",", ":")).encode()
        return "sha256:" + hashlib.sha256(blob).hexdigest()

    def other_platform(self, doc: Mapping[str, Any]) -> str | None:
        """Why ``doc`` (a schedule collcert wrote) is not for this platform: its
        ``topology`` hash names another one; None when it names this one, or none.
        Compared before anything else, so that a link of another platform is not
        reported as a broken schedule."""
        claimed = doc.get("topology")
        mine = self.content_hash()
        if claimed is None or claimed == mine:
            return None
        name = doc.get("topology_name")
        made = f" ({name[:80]!r})" if isinstance(name, str) and name else ""
        return (f"the schedule was made for another platform{made}: its 'topology' is "
                f"{str(claimed)[:19]}…, this platform's is {mine[:19]}…; check it on the "
                "platform it was made for")


def entries(value: object, where: str) -> list[Any]:
    """The array ``value`` of a schedule file (InputError if it is not one, or has more than
    :data:`MAX_ITEMS` entries); the replay of :mod:`.oneport_events` reads its arrays so too."""
    if not isinstance(value, list):
        raise InputError(f"{where} must be an array")
    if len(value) > MAX_ITEMS:
        raise InputError(f"{where} has {len(value)} entries: too many")
    return value


def _link_values(topo: OnePortTopo, rows: object, where: str, exact: bool = True,
                 ) -> dict[Link, Fraction]:
    out: dict[Link, Fraction] = {}
    for k, row in enumerate(entries(rows, where)):
        if not isinstance(row, list) or len(row) != 3:
            raise InputError(f"{where}[{k}] is not [src, dst, value]")
        e = topo.link(row[:2], f"{where}[{k}]")
        if e in out:
            raise InputError(f"{where} lists {e[0]!r} -> {e[1]!r} twice")
        out[e] = number(row[2], f"{where}[{k}] value")
    return out


def check_lp(topo: OnePortTopo, source: Node, cert: Mapping[str, Any]) -> Verdict:
    """The SSB optimum T*: primal flows and dual prices/cuts (module doc, part 1).

    ``facts``: ``T_star`` (the claimed value), ``bound`` (Σ y_X, proven ≤ the
    period of any schedule when the dual part holds), ``n`` (dict link -> n_e).
    """
    v = Verdict("SSB optimum (Legrand et al. 2003, §5.2, Lemma 7)")
    if not isinstance(cert, Mapping):
        raise InputError("'lp' must be an object")
    T = number(cert.get("T_star"), "lp T_star")
    if T <= 0:
        raise InputError(f"lp T_star is {frac_str(T)}: the time per message must be positive")
    n = _link_values(topo, cert.get("n", []), "lp n")
    for e, val in n.items():
        if val < 0:
            v.fail(f"primal: n on {e[0]!r} -> {e[1]!r} is {frac_str(val)} < 0")
    _check_ports(topo, n, T, v)
    _check_unit_flows(topo, source, cert, n, v)
    bound = _check_dual(topo, source, cert, v)
    if v.ok and bound != T:
        v.fail(f"the dual bound Σ y = {frac_str(bound)} differs from T* = {frac_str(T)}: "
               "the optimum is not proven")
    v.facts.update({"T_star": T, "bound": bound, "n": n})
    return v


def _check_ports(topo: OnePortTopo, n: Mapping[Link, Fraction], T: Fraction,
                 v: Verdict) -> None:
    """Both ports of every node busy at most T* per message: Σ c·n ≤ T* out and in."""
    for node in topo.nodes:
        out = sum((topo.cost[(node, w)] * n.get((node, w), Fraction(0))
                   for w in topo.out_adj[node]), Fraction(0))
        into = sum((topo.cost[(u, node)] * n.get((u, node), Fraction(0))
                    for u in topo.in_adj[node]), Fraction(0))
        for port, load in (("send", out), ("receive", into)):
            if load > T:
                v.fail(f"primal: the {port} port of {node!r} is busy {frac_str(load)} per "
                       f"message, more than T* = {frac_str(T)}")


def _check_unit_flows(topo: OnePortTopo, s: Node, cert: Mapping[str, Any],
                      n: Mapping[Link, Fraction], v: Verdict) -> None:
    """One unit flow x_i from the source to every other node, within n (SSB (7)-(10))."""
    seen: set[Node] = set()
    for k, item in enumerate(entries(cert.get("x", []), "lp x")):
        if not isinstance(item, Mapping):
            raise InputError(f"lp x[{k}] is not an object with dest and flow")
        i = topo.node(item.get("dest"), f"lp x[{k}] dest")
        if i == s or i in seen:
            raise InputError(f"lp x[{k}]: destination {i!r} is the source or listed twice")
        seen.add(i)
        x = _link_values(topo, item.get("flow", []), f"lp x[{k}] flow")
        _check_unit_flow(s, i, x, n, v)
    missing = [w for w in topo.nodes if w != s and w not in seen]
    if missing:
        v.fail(f"primal: no flow x for destination{'s' if len(missing) > 1 else ''} "
               + ", ".join(map(repr, missing[:10])))


def _check_unit_flow(s: Node, i: Node, x: Mapping[Link, Fraction],
                     n: Mapping[Link, Fraction], v: Verdict) -> None:
    """x carries one unit from s to i on arcs neither into s nor out of i, each ≤ n."""
    net: dict[Node, Fraction] = {}  # inflow − outflow, on the nodes the flow touches
    for (a, b), val in x.items():
        if val < 0:
            v.fail(f"primal: x for {i!r} on {a!r} -> {b!r} is negative")
        if b == s or a == i:
            v.fail(f"primal: x for {i!r} uses {a!r} -> {b!r}, an arc into the source or "
                   "out of the destination (SSB's flows must not: see docs)")
        if val > n.get((a, b), Fraction(0)):
            v.fail(f"primal: x for {i!r} on {a!r} -> {b!r} is {frac_str(val)} > n = "
                   f"{frac_str(n.get((a, b), Fraction(0)))} (constraint (10))")
        net[b] = net.get(b, Fraction(0)) + val
        net[a] = net.get(a, Fraction(0)) - val
    for w in [s, i] + [w for w in net if w not in (s, i)]:
        bal = net.get(w, Fraction(0))
        want = Fraction(-1) if w == s else Fraction(1) if w == i else Fraction(0)
        if bal != want:
            v.fail(f"primal: the flow to {i!r} has net inflow {frac_str(bal)} at {w!r}, "
                   f"not {frac_str(want)} (constraints (7)-(9))")


def _check_dual(topo: OnePortTopo, s: Node, cert: Mapping[str, Any], v: Verdict) -> Fraction:
    """Port prices α, β ≥ 0 with Σ ≤ 1 and cut weights y_X ≥ 0 (X ∌ s) whose cuts
    entered by each link weigh at most c·(α_j + β_k); returns Σ y_X (Lemma 7)."""
    dual = cert.get("dual")
    if not isinstance(dual, Mapping):
        raise InputError("lp dual must be an object with send, recv and cuts")
    price: dict[str, dict[Node, Fraction]] = {}
    for key in ("send", "recv"):
        raw = dual.get(key, {})
        if not isinstance(raw, Mapping):
            raise InputError(f"lp dual {key} must be an object node -> price")
        price[key] = {topo.node(a, f"lp dual {key} key"): number(b, f"lp dual {key}[{a}]")
                      for a, b in raw.items()}
        for node, val in price[key].items():
            if val < 0:
                v.fail(f"dual: {key} price of {node!r} is negative")
    total = sum(price["send"].values(), Fraction(0)) + sum(price["recv"].values(), Fraction(0))
    if total > 1:
        v.fail(f"dual: the port prices add up to {frac_str(total)} > 1")
    entering: dict[Link, Fraction] = {e: Fraction(0) for e in topo.cost}
    bound = Fraction(0)
    for k, cut in enumerate(entries(dual.get("cuts", []), "lp dual cuts")):
        if not isinstance(cut, Mapping):
            raise InputError(f"lp dual cuts[{k}] is not an object with nodes and weight")
        X = {topo.node(w, f"lp dual cuts[{k}] node") for w in entries(cut.get("nodes"),
                                                                     f"lp dual cuts[{k}] nodes")}
        y = number(cut.get("weight"), f"lp dual cuts[{k}] weight")
        if not X or s in X or y < 0:
            v.fail(f"dual: cuts[{k}] must be a non-empty node set without the source, with a "
                   "weight ≥ 0")
            continue
        bound += y
        for b in X:  # the links entering X: work per node of X, not per link of the platform
            for a in topo.in_adj[b]:
                if a not in X:
                    entering[(a, b)] += y
    for (a, b), load in entering.items():
        cap = topo.cost[(a, b)] * (price["send"].get(a, Fraction(0))
                                   + price["recv"].get(b, Fraction(0)))
        if load > cap:
            v.fail(f"dual: the cuts entered by {a!r} -> {b!r} weigh {frac_str(load)} > "
                   f"c·(send price of {a!r} + receive price of {b!r}) = {frac_str(cap)}")
    return bound


def check_packing(topo: OnePortTopo, source: Node, doc: Mapping[str, Any], T: Fraction,
                  n: Mapping[Link, Fraction]) -> Verdict:
    """Trees (or DAG heights), loads and matchings (module doc, part 2).

    ``facts``: ``N``, ``loads`` (link -> m_e), ``tick``.
    """
    v = Verdict("packing and edge colouring (Legrand et al. 2003, Thm 5, Lemma 1)")
    method = doc.get("method")
    packing = doc.get("packing")
    if not isinstance(packing, Mapping):
        raise InputError("'packing' must be an object")
    N = integer(packing.get("N"), "packing N", 1, strict=True)
    loads_raw = _link_values(topo, packing.get("loads", []), "packing loads")
    loads: dict[Link, int] = {}
    for e, raw_m in loads_raw.items():
        if raw_m.denominator != 1 or raw_m < 0:
            raise InputError(f"packing loads: {e[0]!r} -> {e[1]!r} has {frac_str(raw_m)}, not "
                             "a whole number of messages")
        loads[e] = int(raw_m)
    if method == "trees":
        _check_trees(topo, source, doc, N, loads, v)
    elif method == "dag":
        _check_heights(topo, source, packing, loads, v)
    else:
        raise InputError(f"method {method!r} is not 'trees' or 'dag'")
    for e, m in loads.items():
        if m > N * n.get(e, Fraction(0)):
            v.fail(f"link {e[0]!r} -> {e[1]!r} carries {m} messages per batch, more than "
                   f"N·n = {frac_str(N * n.get(e, Fraction(0)))}")
    for node in topo.nodes:
        if node != source:
            got = sum(loads.get((j, node), 0) for j in topo.in_adj[node])
            if got != N:
                v.fail(f"{node!r} receives {got} messages per batch, not N = {N} (eq. (18))")
    tick = _check_matchings(topo, doc, packing, loads, N * T, v)
    v.facts.update({"N": N, "loads": loads, "tick": tick})
    return v


def _check_trees(topo: OnePortTopo, s: Node, doc: Mapping[str, Any], N: int,
                 loads: Mapping[Link, int], v: Verdict) -> None:
    """Weighted spanning arborescences from s, Σλ = N, whose loads are ``loads`` (eq. (17))."""
    counted: dict[Link, int] = {}
    total = 0
    for k, tree in enumerate(entries(doc.get("trees"), "trees")):
        if not isinstance(tree, Mapping):
            raise InputError(f"trees[{k}] is not an object with weight and edges")
        lam = integer(tree.get("weight"), f"trees[{k}] weight", 1, strict=True)
        edges = [topo.link(p, f"trees[{k}] edge") for p in entries(tree.get("edges"),
                                                                 f"trees[{k}] edges")]
        _check_arborescence(topo, s, edges, f"trees[{k}]", v)
        total += lam
        for e in edges:
            counted[e] = counted.get(e, 0) + lam
    if total != N:
        v.fail(f"the tree weights add up to {total}, not N = {N}")
    if {e: m for e, m in counted.items() if m} != {e: m for e, m in loads.items() if m}:
        v.fail("packing loads are not Σ λ over the trees using each link (eq. (17))")


def _check_heights(topo: OnePortTopo, s: Node, packing: Mapping[str, Any],
                   loads: Mapping[Link, int], v: Verdict) -> None:
    """The DAG method: heights with h(s) = 0, rising along every used link."""
    hs = packing.get("heights")
    if not isinstance(hs, Mapping):
        raise InputError("packing heights must be an object node -> height")
    h = {topo.node(key, "packing heights key"): integer(hv, f"height of {key}", 0, strict=True)
         for key, hv in hs.items()}
    if h.get(s) != 0:
        v.fail("the source's height must be 0")
    for (tail, head), load in loads.items():
        if load and not h.get(tail, -1) < h.get(head, -1):
            v.fail(f"heights do not rise along the used link {tail!r} -> {head!r}")


def _check_matchings(topo: OnePortTopo, doc: Mapping[str, Any], packing: Mapping[str, Any],
                     loads: Mapping[Link, int], NT: Fraction, v: Verdict) -> Fraction:
    """Matchings of whole ticks that give every link exactly m·c and last N·T* in all
    (eq. (19), Lemma 6); returns the tick."""
    tick = number(packing.get("tick"), "packing tick")
    if tick <= 0:
        raise InputError("packing tick must be positive")
    covered: dict[Link, Fraction] = {}
    total_mu = Fraction(0)
    for k, mt in enumerate(entries(doc.get("matchings"), "matchings")):
        if not isinstance(mt, Mapping):
            raise InputError(f"matchings[{k}] is not an object with duration and edges")
        mu = number(mt.get("duration"), f"matchings[{k}] duration")
        if mu <= 0 or (mu / tick).denominator != 1:
            v.fail(f"matchings[{k}]: duration {frac_str(mu)} is not a positive whole number "
                   f"of ticks ({frac_str(tick)})")
        edges = [topo.link(p, f"matchings[{k}] edge") for p in entries(mt.get("edges"),
                                                                     f"matchings[{k}] edges")]
        senders = [a for a, _ in edges]
        receivers = [b for _, b in edges]
        if len(set(senders)) < len(senders) or len(set(receivers)) < len(receivers):
            v.fail(f"matchings[{k}] is not a matching: a node sends or receives twice in it")
        total_mu += mu
        for e in edges:
            covered[e] = covered.get(e, Fraction(0)) + mu
    for e in set(covered) | set(loads):
        want = loads.get(e, 0) * topo.cost[e]
        if covered.get(e, Fraction(0)) != want:
            v.fail(f"the matchings give {e[0]!r} -> {e[1]!r} "
                   f"{frac_str(covered.get(e, Fraction(0)))} time units per batch, its "
                   f"messages need m·c = {frac_str(want)} (eq. (19))")
    if total_mu != NT:
        v.fail(f"the matchings last Σμ = {frac_str(total_mu)}, not N·T* = {frac_str(NT)} "
               "(Lemma 6 holds with equality at the optimum)")
    return tick


def _check_arborescence(topo: OnePortTopo, s: Node, edges: list[Link], label: str,
                        v: Verdict) -> None:
    parent: dict[Node, Node] = {}
    for a, b in edges:
        if b == s or b in parent:
            why = "a parent although it is the source" if b == s else "two parents"
            v.fail(f"{label}: {b!r} has {why}")
            return
        parent[b] = a
    reached = {s}
    children: dict[Node, list[Node]] = {}
    for b, a in parent.items():
        children.setdefault(a, []).append(b)
    stack = [s]
    while stack:
        for b in children.get(stack.pop(), []):
            reached.add(b)
            stack.append(b)
    if len(reached) != len(topo.nodes):  # name 5 missed nodes, not scan them all per tree
        missed = list(itertools.islice((w for w in topo.nodes if w not in reached), 5))
        v.fail(f"{label} does not reach {', '.join(map(repr, missed[:5]))} from the source: "
               "not a spanning arborescence")
