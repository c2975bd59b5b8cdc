"""Which checker reads which certificate: the table behind ``collcert check``.

A certificate file names its kind (``"kind"``, or ``"format":
"collcert-schedule/1"`` for a schedule); files without one are recognised by
their keys. Each kind maps to one checker of this package, named as
``"module:function"`` and imported only when used, so adding a kind is one
line. Every checker takes the topology (``Topo``) and the certificate dict and
returns a :class:`~collcert.certify.model.base.Verdict`; the topology is passed as
read (a dict), since checkers of other models read it their own way (the
all-reduce rate takes any directed graph, the one-port broadcast a platform).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from .model import InputError, Topo, Verdict, frac_str, number, other_topology

Checker = Callable[[Mapping[str, Any], Mapping[str, Any]], Verdict]

# kind -> (checker "module:function" in collcert.certify, what it proves)
KINDS: dict[str, tuple[str, str]] = {
    "optimum": ("forestcoll:check_optimum",
                "a certified optimum (cut + flows): `collcert optimum --certificate`"),
    "schedule": ("forestcoll:check_schedule",
                 "a schedule with the certificates it carries: `collcert schedule -o`"),
    "splitting": ("forestcoll:check_splitting",
                  "an edge-splitting certificate (gstar, routing, flows)"),
    "lp": ("dispatch:check_lp_file", "a linear program with exact primal and dual solutions"),
    "alltoall-optimum": ("alltoall:check_alltoall_optimum",
                         "the alltoall optimum as a maximum concurrent flow (LP rebuilt "
                         "from the topology, or flows of orbit representatives and link "
                         "lengths)"),
    "allreduce-cut-set": ("allreduce:check_cut_set",
                          "the all-reduce cut-set bound: `collcert optimum -c allreduce`"),
    "allreduce-mac-bc-lp": ("allreduce:check_mac_bc_lp", "the all-reduce MAC-BC LP"),
    "allreduce-forestcoll-lp": ("allreduce:check_forestcoll_lp",
                                "ForestColl's all-reduce LP (5)"),
    "in-network-allreduce": ("innetwork:check_in_network",
                             "the allreduce optimum when switches add (NVLS, SHARP): the model, "
                             "a schedule's rate and a bound (`collcert optimum -c allreduce`)"),
    "allreduce-rsag-weighted": ("allreduce:check_rsag_weighted",
                                "weighted RS+AG: its shards, and that no shards do better "
                                "(`collcert optimum -c allreduce --method rsag-weighted`)"),
    "steady-broadcast": ("broadcast:check_steady_broadcast",
                         "a one-port steady-state broadcast schedule "
                         "(`collcert broadcast-steady`; TOPOLOGY is its platform)"),
    "pipe-broadcast": ("broadcast:check_pipe",
                       "one long message cut into packets, PIPE (`collcert broadcast-steady "
                       "--size L -o`; TOPOLOGY is its platform)"),
    "series-broadcast": ("broadcast:check_series_doc",
                         "a finite series of broadcasts (`collcert broadcast-steady --messages "
                         "N -o`; TOPOLOGY is its platform)"),
    "runtime-routes-optimum": ("execution:check_runtime_routes",
                               "the best allgather rate when every GPU pair uses the runtime's "
                               "route (an LP rebuilt from the topology): `collcert schedule "
                               "--routes runtime`"),
    "reduction": ("dispatch:check_reduction_file",
                  "a reduction-tree schedule (`collcert reduce-tree`; TOPOLOGY is not used)"),
    "bundle": ("dispatch:check_bundle",
               "several certificates under \"certificates\", each checked (`collcert optimum "
               "-c allreduce --certificate`)"),
}
FORMATS = {"collcert-schedule/1": "schedule", "collcert-steady-broadcast/1": "steady-broadcast",
           "collcert-reduction/1": "reduction", "collcert-lp-certificate/1": "lp",
           "collcert-pipe-broadcast/1": "pipe-broadcast",
           "collcert-series-broadcast/1": "series-broadcast"}


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
    fmt = cert.get("format")
    if isinstance(fmt, str) and fmt in FORMATS:
        return FORMATS[fmt]
    if isinstance(fmt, str) and fmt != "collcert-certificate/1":
        raise InputError(f"format {fmt!r} is not one collcert check reads "
                         f"({', '.join(sorted(FORMATS))}, collcert-certificate/1)")
    if cert.get("format") == "collcert-certificate/1" and "collective" in cert:
        return "alltoall-optimum" if cert["collective"] == "alltoall" else "optimum"
    subs = cert.get("certificates")
    if isinstance(subs, Mapping) and subs and all(isinstance(c, Mapping) for c in subs.values()):
        return "bundle"
    if {"gstar", "routing", "flows"} <= set(cert):
        return "splitting"
    if {"lp", "primal", "dual"} <= set(cert):
        return "lp"
    if fmt == "collcert-topology/1" or {"compute_nodes", "links"} <= set(cert):
        raise InputError("this is a topology, not a certificate: give it as TOPOLOGY, and as "
                         "CERTIFICATE a file that collcert optimum --certificate, schedule -o, "
                         "broadcast-steady -o or reduce-tree -o wrote")
    if {"gpus", "collective"} <= set(cert):
        raise InputError("this is an MSCCL++ execution plan, not a certificate: 'collcert audit "
                         "TOPOLOGY PLAN' simulates it and checks its result (docs/mscclpp.md)")
    keys = ", ".join(sorted(str(k) for k in cert)[:8])
    raise InputError(f"cannot tell what this certificate is (keys: {keys}); collcert check "
                     f"reads: {', '.join(KINDS)} (see collcert check --help)")


def checker(kind: str) -> Checker:
    module, _, name = KINDS[kind][0].partition(":")
    fn: Checker = getattr(importlib.import_module(f"{__package__}.{module}"), name)
    return fn


# the fields of the allreduce rate certificates: every one is read by its checker (the
# value compared with what the witnesses prove); any other field fails (issue 22, item 5)
_LP5_CUTS = {"kind", "method", "value", "shares", "automorphisms", "x", "c", "balance", "cuts",
             "flows"}
FIELDS: dict[str, set[str]] = {
    "allreduce-cut-set": {"kind", "value", "cut", "multiplier", "flows"},
    "allreduce-mac-bc-lp": {"kind", "value", "columns", "dual"},
    "allreduce-forestcoll-lp": {"kind", "value", "primal", "dual"},
}


def check_certificate(topology: Mapping[str, Any],
                      cert: Mapping[str, Any]) -> tuple[str, Verdict]:
    """(kind, verdict) for any certificate collcert writes."""
    kind = detect(cert)
    verdict = checker(kind)(topology, cert)
    known = _LP5_CUTS if kind == "allreduce-forestcoll-lp" and cert.get(
        "method") == "cuts" else FIELDS.get(kind)
    for key in sorted(set(cert) - known if known is not None else (), key=str):
        verdict.fail(f"field {key!r}: the {kind} certificate states {str(cert[key])[:40]!r}, "
                     "which its checker does not read; remove it")
    return kind, verdict


def check_reduction_file(topology: Mapping[str, Any], cert: Mapping[str, Any]) -> Verdict:
    from .reduction import check_reduction

    verdict, sim = check_reduction(cert)
    if sim is None:  # unreadable (wrong types, lengths, numbers): bad input, not INVALID
        raise InputError("; ".join(verdict.all_reasons()))
    return verdict


def check_lp_file(topology: Mapping[str, Any], cert: Mapping[str, Any]) -> Verdict:
    """A generic LP certificate: it proves its LP's optimum, whatever the LP says about
    the topology (a topology-specific kind rebuilds the LP to tie the two together)."""
    from .solvers import check_lp

    lp, primal, dual = cert.get("lp"), cert.get("primal"), cert.get("dual")
    if not (isinstance(lp, Mapping) and isinstance(primal, Mapping)
            and isinstance(dual, Mapping)):
        raise InputError("an LP certificate needs objects 'lp', 'primal' and 'dual'")
    v = check_lp(lp, primal, dual)
    if v.ok and cert.get("objective") is not None:  # the value the file states, as written
        if number(cert["objective"], "objective") != v.facts["primal_objective"]:
            v.fail(f"the certificate claims objective {cert['objective']}, but its LP proves "
                   f"{frac_str(v.facts['primal_objective'])}")
    return v


# the all-reduce bundle: certificate name -> (its kind, the fact it proves, the top-level key
# that claims that fact)
BUNDLE = {"cut_set_bound": ("allreduce-cut-set", "cut_set_bound", "cut_set_bound"),
          "mac_bc_lp": ("allreduce-mac-bc-lp", "mac_bc_lp", "mac_bc_lp"),
          "forestcoll_lp": ("allreduce-forestcoll-lp", "forestcoll_lp", "forestcoll_lp"),
          "rsag_weighted": ("allreduce-rsag-weighted", "rsag_weighted", "rsag_weighted"),
          "rsag": ("optimum", "algbw", "rsag_algbw")}


def check_bundle(topology: Mapping[str, Any], cert: Mapping[str, Any]) -> Verdict:
    """Every certificate under ``cert["certificates"]``, each by its own checker; and the
    bundle's own claims: a certificate under a name of :data:`BUNDLE` is of that kind, and
    each top-level value (``mac_bc_lp``, ``rsag_algbw``, the ``chain``, the fields the top
    level repeats from ``rsag``) is the one its certificate proves; every other field is
    compared by :mod:`.bundle_fields` (an unknown one fails)."""
    v = Verdict("certificates")
    wrong = other_topology(Topo(topology), cert)
    if wrong:  # first: another machine's figures would fail every check with no hint why
        v.fail(wrong if not wrong.startswith("the certificate is for") else
               f"{wrong}: check it on the topology it was made for (a bundle of a machine "
               "changed by --degrade/--fail: give the same options to collcert check)")
        return v
    subs = cert["certificates"]
    proven: dict[str, Any] = {}
    for name, sub in subs.items():
        if detect(sub) == "bundle":  # collcert writes one level; no recursion on hostile files
            raise InputError(f"certificates[{name!r}] is itself a bundle of certificates: "
                             "collcert writes bundles one level deep")
        kind, sv = check_certificate(topology, sub)
        v.absorb(sv, f"{name} ({kind}): ")
        for key, value in sv.facts.items():
            if isinstance(value, int | str | Fraction):
                v.facts[f"{name}.{key}"] = value
        want = BUNDLE.get(name)
        if want and (kind != want[0] or (kind == "optimum" and sub.get("collective")
                                         != "allreduce")):
            got = f"{sub.get('collective')} {kind}" if kind == "optimum" else kind
            v.fail(f"certificates[{name!r}] is a {got} certificate, not the "
                   f"{'allreduce optimum' if want[0] == 'optimum' else want[0]} certificate "
                   "its name stands for")
        elif want and sv.ok:
            proven[want[2]] = sv.facts.get(want[1])
    for name, (_, _, key) in BUNDLE.items():
        if cert.get(key) is not None and key not in proven:
            v.fail(f"the bundle claims {key} = {cert[key]} but no valid certificate "
                   f"{name!r} proves it")
        elif cert.get(key) is not None and number(cert[key], key) != proven[key]:
            v.fail(f"the bundle claims {key} = {cert[key]}, its certificate {name!r} proves "
                   f"{frac_str(proven[key])}")
    rsag = subs.get("rsag", {})
    # algbw and time_per_unit: the best certified rate (issue 30), checked in bundle_fields
    for key in sorted(set(cert) & set(rsag) - {"certificates", "algbw", "time_per_unit"}):
        if cert[key] != rsag[key]:
            v.fail(f"the bundle's {key} is not the {key} of its certificate 'rsag'")
    values = dict(cert)
    if cert.get("bound7_algbw") is not None:
        values["bound7"] = number(cert["bound7_algbw"], "bound7_algbw")
        if values["bound7"] * number(cert.get("bound7_time_per_unit"), "bound7 time") != 1:
            v.fail("the bundle's bound7_algbw is not 1 / bound7_time_per_unit")
    values["rsag"] = cert.get("rsag_algbw")
    chain = cert.get("chain", [])
    for k, item in enumerate(chain if isinstance(chain, list) else [chain]):
        what = item.get("key") if isinstance(item, Mapping) else None
        if not isinstance(what, str) or values.get(what) is None or number(
                item.get("rate"), f"chain[{k}] rate") != number(values[what], what):
            v.fail(f"chain[{k}] does not repeat a value the bundle claims")
    from .bundle_fields import check_fields  # every other field (issue 22, item 5)

    known = {key for _, _, key in BUNDLE.values()} | (set(cert) & set(rsag)) - {
        "algbw", "time_per_unit"}
    check_fields(topology, cert, known, v.facts, v)
    return v
