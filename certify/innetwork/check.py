"""``in-network-allreduce`` certificates: the model, a schedule's rate, a bound, each checked.

A certificate (``collcert optimum -c allreduce --certificate``, key
``certificates.in_network``) states:

``model``   the switches that add the SHARP way (``reducing_switches``) and the
            NVLS way (``nvls_switches``, absent: none), that copy
            (``multicast_switches``) and the reduction rates it assumes: they must be
            exactly what the topology declares, so a figure never holds in a model
            the machine does not have;
``lower``   ``method: structures``: weighted structures (with ``automorphisms``: the
            average over the group they generate), checked by :mod:`.structures`; or
            ``method: forestcoll_lp``: ForestColl's LP (5) certificate (switches that
            forward are a special case of the model), checked by
            :func:`collcert.certify.allreduce.check_forestcoll_lp`. Its ``value`` is
            the rate a schedule reaches;
``upper``   a cut, a partition or a dual (:mod:`.bounds`): no schedule of the model
            beats its ``value``.

The verdict's facts: ``lower``, ``upper`` and ``exact`` (equal).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Node, Topo, Verdict, frac_str, number, other_topology
from .bounds import check_upper
from .structures import check_schedule

KEYS = {"kind", "topology", "model", "lower", "upper"}


def _model(topo: Topo, model: object, v: Verdict) -> None:
    keys = {"reducing_switches", "multicast_switches", "reduction_rates"}
    if not isinstance(model, Mapping) or not keys <= set(model) <= keys | {"nvls_switches"}:
        raise InputError("model must be an object with reducing_switches, multicast_switches, "
                         "reduction_rates and (optional) nvls_switches")
    sharp = topo.node_set(model["reducing_switches"], "model.reducing_switches")
    nvls = topo.node_set(model.get("nvls_switches", []), "model.nvls_switches")
    mc = topo.node_set(model["multicast_switches"], "model.multicast_switches")
    rates = model["reduction_rates"]
    if not isinstance(rates, Mapping):
        raise InputError("model.reduction_rates must be an object")
    got = {topo.node(k, "model.reduction_rates key"): number(r, "model.reduction_rates value")
           for k, r in rates.items()}
    if (sharp != topo.reducing - topo.nvls or nvls != topo.nvls or mc != topo.multicast
            or got != topo.reduction_rate):
        def names(s: frozenset[Node]) -> list[str]:
            return sorted(map(str, s))
        v.fail("the certificate's model is not the topology's: it assumes SHARP switches "
               f"{names(sharp)}, NVLS switches {names(nvls)}, multicast switches {names(mc)} "
               f"and rates { {str(k): frac_str(r) for k, r in got.items()} }, the topology "
               f"declares {names(topo.reducing - topo.nvls)}, {names(topo.nvls)}, "
               f"{names(topo.multicast)} and "
               f"{ {str(k): frac_str(r) for k, r in topo.reduction_rate.items()} }")


def _lower(topology: Mapping[str, Any], topo: Topo, lower: object,
           v: Verdict) -> Fraction | None:
    if not isinstance(lower, Mapping):
        raise InputError("lower must be an object")
    method = lower.get("method")
    if method == "structures":
        if set(lower) - {"method", "value", "structures", "automorphisms"}:
            raise InputError("lower: unknown keys beside method, value, structures, "
                             "automorphisms")
        value = check_schedule(topo, lower, v)
    elif method == "forestcoll_lp":
        from ..allreduce import check_forestcoll_lp

        sub = check_forestcoll_lp(topology, lower.get("certificate") or {})
        v.absorb(sub, "lower (LP (5)): ")
        value = sub.facts.get("forestcoll_lp", sub.facts.get("uniform_lp")) if sub.ok else None
    else:
        raise InputError(f"lower.method {str(method)[:20]!r} is not structures or "
                         "forestcoll_lp")
    if value is not None and number(lower.get("value"), "lower.value") != value:
        v.fail(f"lower.value is {lower.get('value')}, but the schedule reaches "
               f"{frac_str(value)}")
    return value


def check_in_network(topology: Mapping[str, Any], cert: Mapping[str, Any]) -> Verdict:
    """Check an ``in-network-allreduce`` certificate (module docstring) on ``topology``."""
    v = Verdict("in-network allreduce optimum")
    topo = Topo(topology)
    if not isinstance(cert, Mapping) or cert.get("kind") != "in-network-allreduce":
        raise InputError("not an in-network-allreduce certificate")
    if set(cert) - KEYS:
        raise InputError(f"unknown keys {sorted(map(str, set(cert) - KEYS))}")
    wrong = other_topology(topo, cert)
    if wrong:
        v.fail(wrong)
        return v
    _model(topo, cert.get("model"), v)
    if not v.ok:
        return v
    low = _lower(topology, topo, cert.get("lower"), v)
    up = check_upper(topo, cert.get("upper"), v)
    if low is not None and up is not None and low > up:
        v.fail(f"the schedule's rate {frac_str(low)} exceeds the bound {frac_str(up)}: "
               "one of them is wrong")
    if v.ok and low is not None and up is not None:
        v.facts.update(lower=low, upper=up, exact=low == up)
    return v
