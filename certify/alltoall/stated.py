"""Every figure an alltoall optimum certificate states is one its witnesses prove.

:mod:`.full_lp` (or :mod:`.orbit_lp`) proves λ; this module compares each other field
the certificate states with what was proven or what the topology says, and fails naming
the field on any difference (issue 22, item 5). A field it does not know fails too, so a
certificate cannot state a figure nobody checks. Fields and what they are compared with:

``format`` (``collcert-certificate/1``), ``kind`` (``alltoall-optimum``), ``collective``
(``alltoall``), ``method`` (``symmetric flows``, or absent for the full LP), ``unit``
(the topology's), ``num_compute`` (its compute nodes), ``witness`` (the sentence that
says what proves the optimum, rebuilt here from the checked cut: its B⁺(S) and pair
counts are figures), ``objective`` (λ, as :mod:`.full_lp` compares it with ``lambda``,
``algbw``, ``time_per_unit``; the cut, the LP and the flows are checked there).
``topology`` (the hash) is compared by ``other_topology``. ``topology_name`` and
``seconds`` (what ``collcert optimum`` adds: a label and its wall time) are provenance,
not figures about the machine, and are not compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import Topo, Verdict, frac_str

# the file's label and how long `collcert optimum` took: not figures about the machine
PROVENANCE = {"topology_name", "seconds"}
COMMON = {"format", "kind", "collective", "topology", "unit", "num_compute", "lambda",
          "algbw", "time_per_unit", "cut", "witness"} | PROVENANCE
KNOWN = {"full LP": COMMON | {"lp", "primal", "dual", "objective"},
         "symmetric flows": COMMON | {"method", "automorphisms", "flows", "lengths"}}
_EXPECTED = {"format": "collcert-certificate/1", "kind": "alltoall-optimum",
             "collective": "alltoall"}


def check_stated(topo: Topo, cert: Mapping[str, Any], v: Verdict) -> None:
    """Fail ``v``, naming the field, for each field of ``cert`` that is unknown or is not
    what the topology and the checked witnesses give."""
    method = "symmetric flows" if cert.get("method") == "symmetric flows" else "full LP"
    for key in sorted(set(cert) - KNOWN[method], key=str):
        v.fail(f"field {key!r}: the certificate states {_short(cert[key])}, which no checker "
               f"of an alltoall optimum certificate ({method}) proves; remove it")
    for key, want in _EXPECTED.items():
        if key in cert and cert[key] != want:
            v.fail(f"field {key!r}: the certificate says {_short(cert[key])}, but this is "
                   f"an alltoall optimum certificate ({want!r})")
    unit = cert.get("unit")
    if "unit" in cert and unit != topo.unit:
        v.fail(f"field 'unit': the certificate says {_short(unit)}; the topology's unit is "
               f"{topo.unit!r}")
    n = cert.get("num_compute")
    if "num_compute" in cert and (isinstance(n, bool) or n != len(topo.compute)):
        v.fail(f"field 'num_compute': the certificate says {_short(n)}; the topology has "
               f"{len(topo.compute)} compute nodes")
    if "witness" in cert and v.ok and cert["witness"] != witness(topo, cert, method):
        v.fail(f"field 'witness': {_short(cert['witness'])} is not what the certificate "
               f"proves: {witness(topo, cert, method)!r}")


def witness(topo: Topo, cert: Mapping[str, Any], method: str) -> str:
    """The sentence saying what proves the optimum (the same words ``collcert optimum``
    writes), from the cut when one is given (it has been checked)."""
    if cert.get("cut") is not None:
        cut = topo.node_set(cert["cut"], "certificate cut")
        inside = [c for c in topo.compute if c in cut]
        names = ", ".join(str(c) for c in inside[:6]) + (", …" if len(inside) > 6 else "")
        a, b = len(inside), len(topo.compute) - len(inside)
        return (f"the cut S with compute nodes {{{names}}} has egress B⁺(S) = "
                f"{frac_str(topo.out_capacity(cut))}, and the {a}·{b} ordered pairs "
                "from inside to outside must all cross it")
    if method == "symmetric flows":
        return ("a length ℓ for every link (in the certificate, the same on links the "
                "automorphisms exchange) bounds λ ≤ Σ c·ℓ / Σ over pairs of dist_ℓ "
                "(max concurrent flow duality), and it meets λ")
    return ("the exact dual of the maximum concurrent flow LP (a length for every link, "
            "in the certificate) proves it by LP duality")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
