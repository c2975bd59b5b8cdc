"""Where an MSCCL++ plan's switch traffic runs on a topology, and whether the switch can.

A plan's switch channel names ranks, not a switch (``execution_plan.cc`` ``parseChannels``:
``buffer_type`` and ``rank_groups``): NVLS makes one multicast object over the GPUs of
the group, which one NVLink switch joins. So each rank group the plan's switch ops use
is mapped to the switch node of the topology that has a link to and from every GPU of
the group, and that switch must do what the ops ask of it (the topology's
declarations, docs/topology.md "Switches that add"):

* ``multimem.ld_reduce`` (``glres``) adds in the switch: a switch in
  ``reducing_switches``;
* ``multimem.st`` (``glres``, ``gstore``, ``gstorepkt``) copies one stream to every
  member: a reducing or a multicast switch.

Otherwise the plan is INVALID, naming the op, the group and the switch. The traffic
:mod:`.mscclpp_switch` recorded becomes loads on the GPU→switch and switch→GPU links
(cells), and the cells each switch adds (for its ``reduction_rates``).
"""

from __future__ import annotations

from typing import Any

from ..model import Node, Topo, Verdict

Link = tuple[Node, Node]


def switch_links(facts: dict[str, Any], topo: Topo, nodes: list[Node], v: Verdict,
                 ) -> tuple[dict[Link, int], dict[Node, int], list[str]]:
    """(cells per link, cells added per switch, notes) of the switch traffic in ``facts``
    (:mod:`.mscclpp_switch`); rank r is compute node ``nodes[r]``. A group no switch
    serves, or a switch that cannot do an op, fails ``v``."""
    where: dict[str, Node] = {}
    notes: list[str] = []
    groups = sorted({key.split("|")[1] for key in facts if key.startswith("need|")})
    for g in groups:
        w = _switch_of(g, facts, topo, nodes, v, notes)
        if w is not None:
            where[g] = w
    links: dict[Link, int] = {}
    added: dict[Node, int] = {}
    for key, cells in facts.items():
        kind, *rest = key.split("|")
        if kind in ("up", "down"):
            r, g = int(rest[0]), rest[1]
            if g not in where:
                continue
            e = (nodes[r], where[g]) if kind == "up" else (where[g], nodes[r])
            links[e] = links.get(e, 0) + cells
        elif kind == "add" and rest[0] in where:
            added[where[rest[0]]] = added.get(where[rest[0]], 0) + cells
    return links, added, notes


def _switch_of(g: str, facts: dict[str, Any], topo: Topo, nodes: list[Node], v: Verdict,
               notes: list[str]) -> Node | None:
    """The switch that serves rank group ``g``, or None (``v`` failed, saying why)."""
    ranks = [int(q) for q in g.split(",")]
    gpus = [nodes[q] for q in ranks]
    joined = [w for w in topo.switches
              if all((x, w) in topo.cap and (w, x) in topo.cap for x in gpus)]
    add, copy = (facts.get(f"need|{g}|{what}", [None] * 4)[3] for what in ("add", "copy"))
    shown = ", ".join(str(x) for x in gpus)
    if not joined:
        v.fail(f"{add or copy}: its switch channel joins ranks {ranks} (compute nodes {shown}), "
               "and no switch of the topology has a link to and from each of them: NVLS "
               "multicast needs one switch that every GPU of the group reaches directly")
        return None
    able = [w for w in joined if (not add or w in topo.reducing)
            and (not copy or w in topo.reducing or w in topo.multicast)]
    if not able:
        w = joined[0]
        if add and w not in topo.reducing:
            v.fail(f"{add}: multimem.ld_reduce adds in switch {w!r}, which joins ranks {ranks}, "
                   "but the topology does not declare it reducing (reducing_switches): it "
                   "cannot add (docs/topology.md, \"Switches that add\")")
        else:
            v.fail(f"{copy}: multimem.st copies through switch {w!r}, which joins ranks "
                   f"{ranks}, but the topology declares it neither reducing nor multicast: it "
                   "cannot copy a stream to every member")
        return None
    if len(able) > 1:
        notes.append(f"switch channels: ranks {ranks} are joined by {len(able)} switches that "
                     f"can serve them; the traffic is put on {able[0]!r}")
    return able[0]
