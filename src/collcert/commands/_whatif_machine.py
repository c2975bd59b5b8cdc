"""The machine a schedule is judged on: after ``--degrade``/``--fail``, or the one its file
says it was built for (issue 33 row 7).

``collcert schedule TOPO --degrade/--fail ... -o FILE`` builds for the changed machine
and records the what-if in the file's ``generator.whatif`` (``{"degrade": [...],
"fail": [...]}``: how the file was made, not a claim; certify compares none of it).
``draw`` and ``smoke --topology`` take the same options, and without them judge a file
whose ``topology`` fingerprint is that of TOPO after its recorded what-if on that
machine, saying so: drawn on the healthy machine, a NIC slowed to half its speed showed
50 % busy (really 100 %) and the caption gave the healthy optimum. ``audit`` judges
what it is told: with the options on the changed machine, without them on TOPO, and
then it says how to audit the file on the machine it was built for.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import shlex
from typing import Any

from collcert.reference.model import CollcertError, Topology, TopologyError, what_if

from . import _whatif

KEY = "whatif"
HEAD_BYTES = 1 << 16
"""How much of a schedule file is read to find its top-level ``topology`` fingerprint
(the third key collcert writes): the whole file is read only when it differs."""
_HASH = re.compile(rb'"topology"\s*:\s*"(sha256:[0-9a-f]{64})"')


def record(args: argparse.Namespace) -> dict[str, list[str]]:
    """The what-if of ``args`` as a schedule file's ``generator.whatif`` records it."""
    return {"degrade": list(args.degrade or []), "fail": list(args.fail or [])}


def options_text(rec: dict[str, Any]) -> str:
    """``--degrade 'b0.nic0=25/2' --fail b1.nic3``: the options that rebuild the machine."""
    return " ".join([*(f"--degrade {shlex.quote(str(d))}" for d in rec.get("degrade", [])),
                     *(f"--fail {shlex.quote(str(f))}" for f in rec.get("fail", []))])


def judged_machine(args: argparse.Namespace, topo: Topology, path: str | None,
                   command: str) -> tuple[Topology, str | None]:
    """(the machine to judge the schedule at ``path`` on, a note for the user or None).

    With --degrade/--fail: TOPOLOGY after them. Else, when the file was built for
    TOPOLOGY after a what-if it records: that machine for ``draw`` and ``smoke``, and
    TOPOLOGY for ``audit`` with a note saying how to audit it on the machine it was
    built for."""
    if _whatif.wanted(args):
        w = _whatif.apply(args, topo, strict=False)
        if w.topology is None:
            raise TopologyError(w.disconnected_text(
                f"there is no machine left to {command} on"))
        return w.topology, None
    found = _built_for(topo, path)
    if found is None:
        return topo, None
    changed, rec = found
    opts = options_text(rec)
    spec = shlex.quote(str(args.topology))
    if command == "audit":
        return topo, (f"note: {path} was built for {spec} {opts} (its generator records the "
                      "what-if): judged here on the healthy machine, which its embedded "
                      "certificate is not for. Audit it on the machine it was built for: "
                      f"collcert audit {spec} {shlex.quote(path or '')} {opts}")
    return changed, (f"note: {path} was built for {spec} {opts} (its generator records the "
                     f"what-if): {'drawn' if command == 'draw' else 'modelled'} on that "
                     "machine (give --degrade/--fail to choose another)")


def _built_for(topo: Topology, path: str | None) -> tuple[Topology, dict[str, Any]] | None:
    """(TOPOLOGY after the recorded what-if, the record) when the file at ``path`` names
    that machine's fingerprint; None in every other case (no file, the same machine, no
    record, a record that does not rebuild it)."""
    if not path or path == "-" or not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
            fh.seek(0)
            head = gzip.GzipFile(fileobj=fh).read(HEAD_BYTES) if gz else fh.read(HEAD_BYTES)
    except (OSError, EOFError):
        return None
    m = _HASH.search(head)
    if m is None or m.group(1).decode() == topo.content_hash():
        return None
    doc = _document(path)
    gen = doc.get("generator") if isinstance(doc, dict) else None
    rec = gen.get(KEY) if isinstance(gen, dict) else None
    if not isinstance(rec, dict) or not all(
            isinstance(rec.get(k, []), list) and all(isinstance(x, str) for x in rec.get(k, []))
            for k in ("degrade", "fail")):
        return None
    try:
        w = what_if(topo, rec.get("degrade", []), rec.get("fail", []), strict=False)
    except CollcertError:
        return None
    if w.topology is None or w.topology.content_hash() != doc.get("topology"):
        return None
    return w.topology, rec


def _document(path: str) -> Any:
    """The schedule file parsed, in bounded memory (as the checkers read it); None when
    it is not readable JSON (the reader that follows says why)."""
    from collcert.certify.model import InputError, load_json, read_text

    try:
        return load_json(read_text(path, 512 << 20), path)
    except (InputError, OSError):
        return None
