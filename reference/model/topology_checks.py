"""What a topology's constructor checks of its nodes and of its graph as a whole.

Node ids (hashable, not None, a bool or a float, unique, distinct as text),
the number of compute nodes, the multicast switches, and the conditions of
ForestColl's methods (Zhao & Krishnamurthy 2023, §1; Zhao et al. 2026, §3): G is
*Eulerian* (every node receives as much as it sends) and every compute node can
be reached from the first. Capacities are scaled to integers by the least common
multiple of their denominators.

A check that :class:`~collcert.Topology` always enforces raises
:class:`~collcert.TopologyError`; a ForestColl condition is returned as a message
instead (None when it holds), which the constructor raises (``strict=True``)
or keeps as ``forestcoll_problem`` (``strict=False``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

from .errors import TopologyError
from .errors import node_name as _name
from .exact import NumberError, fraction_str, lcm_of_denominators
from .links import Link, Node


def check_node_ids(compute: Sequence[Node], switches: Sequence[Node]) -> dict[Node, str]:
    """``{node: "compute" | "switch"}`` after checking every id: hashable, not None,
    a bool or a float, declared once, and no two with the same string form."""
    seen: dict[Node, str] = {}
    by_text: dict[str, Node] = {}
    for kind, group in (("compute", compute), ("switch", switches)):
        for node in group:
            try:
                hash(node)
            except TypeError:
                raise TopologyError(
                    f"{kind} node id {node!r} is not hashable: use a string or an integer"
                ) from None
            if node is None or isinstance(node, bool | float):
                raise TopologyError(
                    f"{kind} node id {node!r} is not allowed: use a string or an integer"
                )
            if node in seen:
                raise TopologyError(
                    f"duplicate node id {_name(node)}: declared as a {seen[node]} node "
                    f"and again as a {kind} node; give every node one unique id"
                )
            text = str(node)
            if text in by_text:
                raise TopologyError(
                    f"node ids {_name(by_text[text])} and {_name(node)} have the same "
                    f"string form {text!r}; schedule files name nodes by that form, "
                    "so rename one of them"
                )
            seen[node] = kind
            by_text[text] = node
    return seen


def compute_count_problem(compute: Sequence[Node], strict: bool) -> str | None:
    """Raise when there are fewer compute nodes than any topology needs (two when
    ``strict``, else one); the ForestColl problem of a single compute node."""
    if len(compute) < (2 if strict else 1):
        raise TopologyError(
            f"a topology needs at least two compute nodes, this one has {len(compute)}"
            + (f" ({', '.join(map(_name, compute))})" if compute else "")
            + ": declare the GPUs as compute nodes"
        )
    if len(compute) < 2:
        return (f"a topology needs at least two compute nodes, this one has one "
                f"({_name(compute[0])})")
    return None


def check_multicast(multicast: Iterable[Node], kinds: Mapping[Node, str]) -> frozenset[Node]:
    """The multicast switches, each a declared switch node."""
    found = tuple(multicast)
    for w in found:
        if w not in kinds or kinds[w] != "switch":
            raise TopologyError(
                f"multicast switch {_name(w)} is not a declared switch node: "
                "list it under switch_nodes too"
            )
    return frozenset(found)


def link_totals(nodes: Iterable[Node], capacity: Mapping[Link, Fraction],
                ) -> tuple[dict[Node, Fraction], dict[Node, Fraction]]:
    """``(in-total, out-total)`` of the capacities at every node."""
    tot_in: dict[Node, Fraction] = {v: Fraction(0) for v in nodes}
    tot_out: dict[Node, Fraction] = {v: Fraction(0) for v in nodes}
    for (u, v), c in capacity.items():
        tot_out[u] += c
        tot_in[v] += c
    return tot_in, tot_out


def eulerian_problem(nodes: Iterable[Node], tot_in: Mapping[Node, Fraction],
                     tot_out: Mapping[Node, Fraction], unit: str) -> str | None:
    """Why the topology is not Eulerian (Zhao & Krishnamurthy 2023, §1: every node's
    in-total equals its out-total), or None."""
    bad = [v for v in nodes if tot_in[v] != tot_out[v]]
    if not bad:
        return None
    details = "; ".join(
        f"{_name(v)} receives {fraction_str(tot_in[v])} but sends "
        f"{fraction_str(tot_out[v])}"
        for v in bad
    )
    return (
        f"the topology is not Eulerian ({len(bad)} unbalanced node"
        f"{'s' if len(bad) > 1 else ''}): {details} ({unit}). Every node must "
        "send exactly as much as it receives: add or fix links so that the totals match "
        "(bidirectional links with equal capacities always balance)"
    )


def capacity_scale(capacities: Iterable[Fraction]) -> int:
    """The least common multiple of the capacities' denominators (refused when huge)."""
    try:
        return lcm_of_denominators(list(capacities), what="the link capacities")
    except NumberError as exc:
        raise TopologyError(str(exc)) from None


def connectivity_problem(compute_nodes: Sequence[Node], nodes: Iterable[Node],
                         capacity: Iterable[Link], tot_in: Mapping[Node, Fraction],
                         ) -> str | None:
    """Why some compute node cannot receive from the first one (it has no links, or
    no directed path leads to it), or None."""
    first = compute_nodes[0]
    for v in compute_nodes:
        if tot_in[v] == 0:
            return (
                f"compute node {_name(v)} has no links, so it cannot receive from "
                f"compute node {_name(first if v != first else compute_nodes[1])}: "
                "connect it or remove it"
            )
    adj: dict[Node, list[Node]] = {v: [] for v in nodes}
    for u, v in capacity:
        adj[u].append(v)
    reached = {first}
    stack = [first]
    while stack:
        u = stack.pop()
        for v in adj[u]:
            if v not in reached:
                reached.add(v)
                stack.append(v)
    for v in compute_nodes:
        if v not in reached:
            return (
                f"compute node {_name(v)} cannot receive from compute node {_name(first)}: "
                "no directed path leads from one to the other; add links that join "
                "their parts of the network"
            )
    return None
