"""Schedule files for checker 5: JSON, and ForestColl's tree XML, as ``collcert-schedule/1``.

:func:`schedule_json` reads a ``collcert-schedule/1`` file (and names the
other collcert files it is given instead); :func:`forestcoll_xml` turns the
tree XML that the ForestColl tool writes (Zhao et al. 2026; one spanning tree
per ``<tree>``, the pipeline of Zhao & Krishnamurthy 2023, §2) into the same
dict (docs/schedule-format.md)::

    <algo nchunkspernode="K" [collective="allgather"]>
      <tree root="R" index="I" nchunks="MULTIPLICITY" height="H">
        <send src="U" dst="V" path="U,W1,V"/>
      </tree>
    </algo>

One ``<algo>`` is one phase; several phases (allreduce: reduce-scatter then
allgather) sit side by side under any wrapper element. Node references are
kept as text; the checkers match them to topology ids by string form.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ..model import Element, InputError, load_json, parse
from .schedule_expand import expand_symmetric
from .schedule_read import (
    COLLECTIVES,
    DIRECTION,
    MAX_EDGES,
    MAX_PATH,
    MAX_PHASES,
    MAX_TREES,
    PHASES,
)

OTHER_FILES = {
    "collcert-certificate/1": "a certificate; check it with 'collcert check TOPOLOGY FILE'",
    "collcert-reduction/1": "a reduction-tree schedule; check it with 'collcert reduce-tree "
                            "--check FILE'",
    "collcert-steady-broadcast/1": "a one-port broadcast schedule; check it with 'collcert "
                                   "audit PLATFORM FILE'",
    "collcert-topology/1": "a topology; give it as TOPOLOGY",
}
"""collcert files that are not schedules, and what to do with them."""


def schedule_json(text: str | bytes, origin: str = "schedule", *, orbits: bool = False) -> Any:
    """Parse a schedule JSON text, refusing absurd tree counts before building them,
    and other collcert files (a certificate, a topology) with what to do instead. A
    symmetric file (docs/schedules.md) is written out in full (:func:`expand_symmetric`,
    up to its size limit) unless ``orbits`` (for the checkers that read it by orbits)."""
    sample = text if isinstance(text, str) else text.decode("utf-8", "replace")
    trees = sample.count('"edges"')
    if trees > MAX_TREES:
        raise InputError(f"{origin}: more than {MAX_TREES} trees ({trees}); that is beyond "
                         "what collcert audits (a 1024-GPU schedule needs far fewer)")
    data = load_json(sample, origin)
    fmt = data.get("format") if isinstance(data, dict) else None
    other = OTHER_FILES.get(fmt) if isinstance(fmt, str) else None
    if isinstance(data, dict) and other is None and "port_model" in data:
        other = OTHER_FILES["collcert-topology/1"]
    if other is not None:
        raise InputError(f"{origin}: not a schedule (collcert-schedule/1) but {other}")
    if (isinstance(data, dict) and data.get("format") == "collcert-schedule/1"
            and "compute_nodes" not in data):  # the schema requires it (docs/schedule-format.md)
        raise InputError(f"{origin}: 'compute_nodes' is missing: a collcert-schedule/1 file "
                         "lists the topology's compute nodes in rank order "
                         "(docs/schedule-format.md); 'collcert schedule' writes it")
    if isinstance(data, dict) and data.get("symmetry") is not None and not orbits:
        return expand_symmetric(data, origin)
    return data


def _int_attr(el: Element, name: str, default: int | None = None, least: int = 0) -> int:
    raw = el.attrs.get(name)
    if raw is None:
        if default is None:
            raise InputError(f"{el.where()} lacks the attribute {name}")
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise InputError(f"{el.where()}: {name}={raw[:40]!r} is not an integer") from None
    if value < least or value > 10**12:
        raise InputError(f"{el.where()}: {name}={value} is out of range")
    return value


def split_path(text: str, node_ids: Collection[str] | None, where: str) -> list[str]:
    """The node ids of a comma-separated ``path`` attribute.

    ForestColl writes node ids that may themselves contain commas (Python tuple
    reprs such as ``(0, 'GPU', 0)``), so a path is read by matching the
    topology's ids (compared after stripping blanks): a reading is a way to cut
    the comma-separated pieces into runs that each join to an id. None is an
    error naming the path, and so is more than one (the path is ambiguous).
    Without ``node_ids``, or when no id contains a comma, the path is simply
    split at its commas.
    """
    pieces = text.split(",")
    ids = {i.strip() for i in node_ids or ()}
    widest = max((i.count(",") + 1 for i in ids), default=1)
    if widest == 1:
        return [p.strip() for p in pieces]
    if len(pieces) > widest * MAX_PATH:
        raise InputError(f"{where}: a path of {len(pieces)} comma-separated pieces is longer "
                         f"than the {MAX_PATH} nodes collcert reads")
    # readings[i]: up to two ways to read pieces[:i] as ids (two are enough to tell)
    readings: list[list[list[str]]] = [[[]]]
    readings += [[] for _ in pieces]
    for i in range(len(pieces)):
        for k in range(1, min(widest, len(pieces) - i) + 1):
            node = ",".join(pieces[i:i + k]).strip()
            if readings[i] and node in ids:
                for r in readings[i]:
                    if len(readings[i + k]) < 2:
                        readings[i + k].append(r + [node])
    found = readings[len(pieces)]
    if not found:
        raise InputError(f"{where}: path {text[:200]!r} is not a comma-separated list of the "
                         "topology's node ids")
    if len(found) > 1:
        raise InputError(f"{where}: path {text[:200]!r} is ambiguous: with the topology's node "
                         f"ids it reads as {found[0]} or as {found[1]}; rename the nodes so "
                         "that no id is other ids joined by commas")
    return found[0]


def forestcoll_xml(text: str | bytes, collective: str | None = None,
                   origin: str = "ForestColl XML",
                   node_ids: Collection[str] | None = None) -> dict[str, Any]:
    """A schedule dict from ForestColl tree XML.

    ``node_ids``: the topology's node ids as text, to read ``path`` attributes
    whose ids contain commas (see :func:`split_path`).
    """
    root = parse(text, origin, max_per_tag={"tree": MAX_TREES, "send": MAX_EDGES,
                                            "algo": MAX_PHASES})
    # the ForestColl tool itself writes <Algo ...>; collcert writes <algo ...>
    algos = ([root] if root.tag.lower() == "algo"
             else [c for c in root.children if c.tag.lower() == "algo"])
    if not algos:
        raise InputError(f"{origin}: no <algo> element (expected <algo nchunkspernode=...>)")
    coll = collective or root.attrs.get("collective") or algos[0].attrs.get("collective")
    if coll is None:
        coll = "allgather" if len(algos) == 1 else "allreduce"
    coll = coll.lower().replace("_", "-")
    if coll not in COLLECTIVES:
        raise InputError(f"{origin}: collective {coll!r} is not one of {', '.join(COLLECTIVES)}")
    want = PHASES[coll]
    if len(algos) != len(want):
        raise InputError(f"{origin}: a {coll} schedule needs {len(want)} <algo> element(s) "
                         f"({', '.join(want)}), found {len(algos)}")
    phases = []
    roots: set[str] = set()
    for algo, phase_coll in zip(algos, want):
        says = algo.attrs.get("collective", phase_coll).lower().replace("_", "-")
        if says != phase_coll:
            raise InputError(f"{origin}: {algo.where()} says collective={says!r}, but a {coll} "
                             f"schedule needs {' then '.join(want)}, in that order")
        k = _int_attr(algo, "nchunkspernode", least=1)
        trees = []
        for t in algo.children:
            if t.tag != "tree":
                raise InputError(f"{origin}: unexpected {t.where()} inside <algo>; expected "
                                 "<tree>")
            r = t.attrs.get("root")
            if r is None:
                raise InputError(f"{origin}: {t.where()} lacks root")
            roots.add(r)
            edges = []
            for s in t.children:
                if s.tag != "send":
                    raise InputError(f"{origin}: unexpected {s.where()} inside <tree>; expected "
                                     "<send>")
                src, dst = s.attrs.get("src"), s.attrs.get("dst")
                if src is None or dst is None:
                    raise InputError(f"{origin}: {s.where()} needs src and dst")
                path_text = s.attrs.get("path")
                path = (split_path(path_text, node_ids, f"{origin}: {s.where()}")
                        if path_text else [src, dst])
                edges.append({"src": src, "dst": dst, "path": path})
            tree: dict[str, Any] = {"root": r,
                                    "multiplicity": _int_attr(t, "nchunks", 1, least=0),
                                    "direction": DIRECTION[phase_coll], "edges": edges}
            if "index" in t.attrs:
                tree["index"] = _int_attr(t, "index")
            trees.append(tree)
        phases.append({"collective": phase_coll, "k": k, "trees": trees})
    out: dict[str, Any] = {"format": "collcert-schedule/1", "collective": coll,
                           "phases": phases}
    if coll in ("broadcast", "reduce"):
        if len(roots) != 1:
            raise InputError(f"{origin}: a {coll} schedule has one root; trees name "
                             f"{len(roots)} roots")
        out["root"] = next(iter(roots))
    return out
