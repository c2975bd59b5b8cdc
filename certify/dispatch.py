"""Which checker reads which certificate: the table behind ``collcert check``.

A certificate file names its kind (``"kind"``, or ``"format":
"collcert-schedule/1"`` for a schedule); files without one are recognised by
their keys. Each kind maps to one checker of this package, named as
``"module:function"`` and imported only when used, so adding a kind is one
line. Every checker takes the topology (``Topo``) and the certificate dict and
returns a :class:`~collcert.certify.base.Verdict`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from .base import InputError, Topo, Verdict

Checker = Callable[[Topo, Mapping[str, Any]], Verdict]

# kind -> (checker "module:function" in collcert.certify, what it proves)
KINDS: dict[str, tuple[str, str]] = {
    "optimum": ("optimum:check_optimum",
                "a certified optimum (cut + flows): `collcert optimum --certificate`"),
    "schedule": ("schedule:check_schedule",
                 "a schedule with the certificates it carries: `collcert schedule -o`"),
    "splitting": ("splitting:check_splitting",
                  "an edge-splitting certificate (gstar, routing, flows)"),
    "lp": ("dispatch:check_lp_file", "a linear program with exact primal and dual solutions"),
    "alltoall-optimum": ("alltoall:check_alltoall_optimum",
                         "the alltoall optimum as a maximum concurrent flow (LP rebuilt "
                         "from the topology)"),
}


def detect(cert: Mapping[str, Any]) -> str:
    """The kind of ``cert`` (a key of :data:`KINDS`); InputError if it is none of them."""
    if not isinstance(cert, Mapping):
        raise InputError("a certificate is a JSON object")
    kind = cert.get("kind")
    if isinstance(kind, str):
        if kind in KINDS:
            return kind
        raise InputError(f"certificate kind {kind!r} is not one collcert check knows "
                         f"({', '.join(sorted(KINDS))})")
    if cert.get("format") == "collcert-schedule/1":
        return "schedule"
    if cert.get("format") == "collcert-certificate/1" and "collective" in cert:
        return "optimum"
    if {"gstar", "routing", "flows"} <= set(cert):
        return "splitting"
    if {"lp", "primal", "dual"} <= set(cert):
        return "lp"
    keys = ", ".join(sorted(str(k) for k in cert)[:8])
    raise InputError(f"cannot tell what this certificate is (keys: {keys}); collcert check "
                     "reads optimum certificates, schedules (collcert-schedule/1), splitting "
                     "certificates (gstar, routing, flows) and LP certificates (lp, primal, "
                     "dual)")


def checker(kind: str) -> Checker:
    module, _, name = KINDS[kind][0].partition(":")
    fn: Checker = getattr(importlib.import_module(f"{__package__}.{module}"), name)
    return fn


def check_certificate(topology: Mapping[str, Any] | Topo,
                      cert: Mapping[str, Any]) -> tuple[str, Verdict]:
    """(kind, verdict) for any certificate collcert writes."""
    topo = topology if isinstance(topology, Topo) else Topo(topology)
    kind = detect(cert)
    return kind, checker(kind)(topo, cert)


def check_lp_file(topo: Topo, cert: Mapping[str, Any]) -> Verdict:
    """A generic LP certificate: it proves its LP's optimum, whatever the LP says about
    the topology (a topology-specific kind rebuilds the LP to tie the two together)."""
    from .lp import check_lp

    lp, primal, dual = cert.get("lp"), cert.get("primal"), cert.get("dual")
    if not (isinstance(lp, Mapping) and isinstance(primal, Mapping)
            and isinstance(dual, Mapping)):
        raise InputError("an LP certificate needs objects 'lp', 'primal' and 'dual'")
    return check_lp(lp, primal, dual)
