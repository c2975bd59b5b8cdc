"""The all-reduce bundle's own fields: each one compared with what its checkers prove.

:func:`collcert.certify.dispatch.check_bundle` checks every certificate under
``"certificates"`` and the top-level figures :data:`~collcert.certify.dispatch.BUNDLE`
names (``cut_set_bound``, ``mac_bc_lp``, …, the ``chain`` rates, the fields repeated from
the ``rsag`` optimum). This module checks the rest, so that the bundle states nothing
unchecked (issue 22, item 5); a top-level field it does not know fails, naming it:

``collective``, ``topology``, ``unit``, ``num_compute``: this machine's (allreduce)
``cut_set_cut``      the cut of the checked ``cut_set_bound`` certificate
``corollary_2_1``    Σβ/(2(K−1)), which the MAC-BC checker computes from the topology
``not_applicable``   its keys: the figures stated as null (the texts say why, in words)
``thm19``            RS+AG optimal or not (Zhao & Krishnamurthy 2023, Thm 19): checked by
                     :func:`collcert.certify.allreduce.check_rsag_condition` against the
                     proven RS+AG rate and cut-set certificate; ``kind``, ``theorem`` fixed
``bidirected_tree``  R* = ``r_star`` (Zhou & Sun 2026, Thm 3): equal to the checked C and
                     R_LP (which prove R* together), its ``cut`` of B⁺ = r_star left by
                     its ``edge``
``chain[k].model``   ``coding`` for the cut-set bound, ``routing`` for every other rate
``algbw``, ``time_per_unit``, ``algbw_key``, ``algbw_model``  the best rate a checked
                     certificate reaches (RS+AG, weighted RS+AG, LP (5), R_LP, the in-network
                     schedule's ``lower``), the figure it is and its model (issue 30)
``in_network``       the in-network optimum's ``lower``, ``upper``, ``exact``, ``rate`` as its
                     certificate ``in_network`` (:mod:`.innetwork`) proves them; ``model`` names
                     the in-network model; ``method``, ``bound``, ``stats`` are words
``checked_by_certify``  true exactly for the checks that ran: each certificate present,
                     ``thm19`` and ``bidirected_tree`` when stated (or, as ``--method
                     bidirected-tree`` writes it, the list of the certificates)

``collcert optimum -c allreduce --method bidirected-tree --certificate`` states the tree's
``closed_form``, ``r_star``, ``edge`` and ``cut`` at the top level: checked as
``bidirected_tree`` above.

Provenance, not compared: ``topology_name`` (a label), ``seconds`` (wall time) and
``maxflows`` (how many max-flows the reference ran: a work count, not a figure about the
machine).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from .allreduce import check_rsag_condition
from .model import InputError, Topo, Verdict, frac_str, number, other_topology

PROVENANCE = {"topology_name", "seconds", "maxflows"}
OWN = {"collective", "topology", "unit", "num_compute", "certificates", "rsag_algbw", "bound7_algbw", "chain", "cut_set_cut", "corollary_2_1",
       "not_applicable", "thm19", "bidirected_tree", "checked_by_certify", "algbw",
       "time_per_unit", "algbw_key", "algbw_model", "in_network"}
ACHIEVED = {"rsag": "rsag.algbw", "rsag_weighted": "rsag_weighted.rsag_weighted",
            "forestcoll_lp": "forestcoll_lp.forestcoll_lp", "mac_bc_lp": "mac_bc_lp.mac_bc_lp",
            "in_network": "in_network.lower"}
IN_NETWORK = {"model", "exact", "rate", "lower", "upper", "method", "bound", "structures",
              "stats"}
FIGURES = ("rsag", "rsag_weighted", "forestcoll_lp", "mac_bc_lp", "bound7", "cut_set_bound")
THM19 = {"kind": "allreduce-rsag-condition", "theorem": "Zhao & Krishnamurthy 2023, Thm 19"}
THM19_KEYS = {*THM19, "inv_x", "cut_set_bound", "a", "b", "condition", "a_cut", "b_cuts",
              "b_refutation"}
TREE = "Zhou & Sun 2026, Thm 3 (bi-directed tree): R* = min β"
TREE_KEYS = ("closed_form", "r_star", "edge", "cut")


def check_fields(topology: Mapping[str, Any], cert: Mapping[str, Any], known: set[str],
                 proven: Mapping[str, Any], v: Verdict) -> None:
    """Fail ``v`` for each field of the bundle ``cert`` that is unknown or not what is
    proven. ``known``: the fields :func:`check_bundle` compares itself; ``proven``: the
    bundle's facts (``"<name>.<fact>"``), set only for valid certificates."""
    tree_form = set(TREE_KEYS) if "closed_form" in cert else set()
    for key in sorted(set(cert) - known - OWN - PROVENANCE - tree_form, key=str):
        v.fail(f"field {key!r}: the bundle states {_short(cert[key])}, which no checker "
               "proves; remove it")
    _machine(Topo(topology), cert, v)
    subs = cert["certificates"]
    if "cut_set_cut" in cert:
        _same(v, "cut_set_cut", cert["cut_set_cut"],
              subs.get("cut_set_bound", {}).get("cut"), "the cut of certificate 'cut_set_bound'")
    if "corollary_2_1" in cert:
        want = proven.get("mac_bc_lp.corollary_2_1")
        if want is None or number(cert["corollary_2_1"], "corollary_2_1") != want:
            v.fail(f"field 'corollary_2_1': {cert['corollary_2_1']}, but the MAC-BC checker "
                   f"computes Σβ/(2(K−1)) = {'nothing' if want is None else frac_str(want)}")
    if "not_applicable" in cert:
        _not_applicable(v, cert)
    _best(cert, proven, v)
    _in_network(cert, proven, v)
    for k, item in enumerate(cert.get("chain") or []):
        want_model = "coding" if isinstance(item, Mapping) and item.get(
            "key") == "cut_set_bound" else "routing"
        if isinstance(item, Mapping) and item.get("model") != want_model:
            v.fail(f"field 'chain[{k}].model': {item.get('model')!r}; "
                   f"{item.get('key')} is a bound on {want_model} schedules ({want_model!r})")
        if isinstance(item, Mapping) and set(item) - {"key", "rate", "model"}:
            v.fail(f"field 'chain[{k}]': unknown keys {sorted(set(item) - {'key', 'rate', 'model'})}")
    ran: dict[str, bool] = {name: True for name in subs}
    if cert.get("thm19") is not None:
        ran["thm19"] = _thm19(topology, cert, proven, v)
    if cert.get("bidirected_tree") is not None:
        ran["bidirected_tree"] = _tree(topology, cert["bidirected_tree"], proven, v)
    if "closed_form" in cert:  # --method bidirected-tree: the tree's fields at the top
        _tree(topology, {k: cert.get(k) for k in TREE_KEYS}, proven, v)
    said = cert.get("checked_by_certify")
    if "checked_by_certify" in cert and said != ran and said != list(subs):
        v.fail(f"field 'checked_by_certify': {_short(said)}, but the checks that ran are "
               f"{_short(ran)}")


def _machine(topo: Topo, cert: Mapping[str, Any], v: Verdict) -> None:
    """``collective``, ``topology`` (hash), ``unit``, ``num_compute``: this machine's."""
    if "collective" in cert and cert["collective"] != "allreduce":
        v.fail(f"field 'collective': {_short(cert['collective'])}; the bundle is allreduce's")
    wrong = other_topology(topo, cert)
    if wrong:
        v.fail(f"field 'topology': {wrong}")
    if "unit" in cert and cert["unit"] != topo.unit:
        v.fail(f"field 'unit': {_short(cert['unit'])}; the topology's unit is {topo.unit!r}")
    n = cert.get("num_compute")
    if "num_compute" in cert and (isinstance(n, bool) or n != len(topo.compute)):
        v.fail(f"field 'num_compute': {_short(n)}; the topology has {len(topo.compute)} "
               "compute nodes")


def _not_applicable(v: Verdict, cert: Mapping[str, Any]) -> None:
    reasons = cert["not_applicable"]
    if not isinstance(reasons, Mapping) or not all(
            isinstance(t, str) for t in reasons.values()):
        v.fail("field 'not_applicable': not an object of reasons (texts)")
        return
    null = {k for k in FIGURES if cert.get(k if k not in ("rsag", "bound7")
                                          else f"{k}_algbw") is None}
    if cert.get("in_network") is None:
        null.add("in_network")
    if set(reasons) - null:
        v.fail(f"field 'not_applicable': {sorted(set(reasons) - null)} are stated with a value")


def _best(cert: Mapping[str, Any], proven: Mapping[str, Any], v: Verdict) -> None:
    """``algbw`` is the best rate a checked certificate reaches, ``algbw_key`` that figure,
    ``algbw_model`` its model, ``time_per_unit`` its inverse (issue 30)."""
    if "algbw" not in cert:
        return
    found = {k: proven[f] for k, f in ACHIEVED.items() if proven.get(f) is not None}
    best = max(found.values(), default=None)
    got = None if cert["algbw"] is None else number(cert["algbw"], "algbw")
    if got != best:
        v.fail(f"field 'algbw': {cert['algbw']}, but the best rate its certificates reach is "
               f"{'none' if best is None else frac_str(best)}")
        return
    key = cert.get("algbw_key")
    if best is not None and (not isinstance(key, str) or found.get(key) != best):
        v.fail(f"field 'algbw_key': {_short(key)} does not reach algbw")
    model = cert.get("algbw_model")
    if best is not None and not (model == "routing" if key != "in_network" else
                                 isinstance(model, str) and model.startswith("in-network")):
        v.fail(f"field 'algbw_model': {_short(model)} is not the model of {key}")
    tpu = cert.get("time_per_unit")
    if best is not None and best and (tpu is None or number(tpu, "time_per_unit") * best != 1):
        v.fail("field 'time_per_unit' is not 1 / algbw")


def _in_network(cert: Mapping[str, Any], proven: Mapping[str, Any], v: Verdict) -> None:
    """``in_network``: the figures its certificate proves, stated as it proves them."""
    block = cert.get("in_network")
    has_cert = "in_network" in cert["certificates"]
    if block is None:
        if has_cert:
            v.fail("field 'in_network' is null but certificate 'in_network' is given")
        return
    if not isinstance(block, Mapping) or set(block) - IN_NETWORK:
        v.fail("field 'in_network': not an object of " + ", ".join(sorted(IN_NETWORK)))
        return
    sub = cert["certificates"].get("in_network")
    if not isinstance(sub, Mapping) or sub.get("kind") != "in-network-allreduce":
        v.fail("field 'in_network': no in-network-allreduce certificate 'in_network' proves it")
        return
    low, up = proven.get("in_network.lower"), proven.get("in_network.upper")
    if low is None or up is None:
        return  # the certificate failed: its own reasons are given
    rate = block.get("rate")
    if (number(block.get("lower"), "in_network.lower") != low
            or number(block.get("upper"), "in_network.upper") != up
            or block.get("exact") is not (low == up)
            or (rate is not None if low != up else rate is None or number(rate, "rate") != low)):
        v.fail(f"field 'in_network': its lower, upper, exact or rate are not the certificate's "
               f"({frac_str(low)}, {frac_str(up)})")
    if not str(block.get("model", "")).startswith("in-network"):
        v.fail("field 'in_network.model' does not name the in-network model")
    lower = sub.get("lower")
    count = len(lower.get("structures") or []) if isinstance(lower, Mapping) else 0
    if block.get("structures") != count:
        v.fail(f"field 'in_network.structures': {_short(block.get('structures'))}, the "
               f"certificate lists {count}")


def _thm19(topology: Mapping[str, Any], cert: Mapping[str, Any], proven: Mapping[str, Any],
           v: Verdict) -> bool:
    thm = cert["thm19"]
    if not isinstance(thm, Mapping):
        raise InputError("the bundle's 'thm19' must be an object (or null)")
    for key in sorted(set(thm) - THM19_KEYS, key=str):
        v.fail(f"field 'thm19.{key}': unknown; remove it")
    for key, want in THM19.items():
        if thm.get(key) != want:
            v.fail(f"field 'thm19.{key}': {thm.get(key)!r}, not {want!r}")
    if thm.get("a") is False and thm.get("a_cut") is not None:
        v.fail("field 'thm19.a_cut': a cut is stated for (a), which is false")
    cut = cert["certificates"].get("cut_set_bound")
    algbw = proven.get("rsag.algbw")
    if not isinstance(cut, Mapping) or algbw is None:
        v.fail("field 'thm19': needs valid certificates 'rsag' and 'cut_set_bound'")
        return False
    tv = check_rsag_condition(topology, Fraction(algbw), cut, thm)
    v.absorb(tv, "thm19: ")
    return tv.ok


def _tree(topology: Mapping[str, Any], tree: Any, proven: Mapping[str, Any],
          v: Verdict) -> bool:
    if not isinstance(tree, Mapping) or set(tree) != set(TREE_KEYS):
        v.fail("field 'bidirected_tree': needs exactly closed_form, r_star, edge, cut")
        return False
    if tree["closed_form"] != TREE:
        v.fail(f"field 'bidirected_tree.closed_form': {tree['closed_form']!r}, not {TREE!r}")
    r = number(tree["r_star"], "bidirected_tree.r_star")
    bounds = [proven.get("cut_set_bound.cut_set_bound"), proven.get("mac_bc_lp.mac_bc_lp")]
    if any(b != r for b in bounds):  # C ≥ R* ≥ R_LP: equal, they prove R*
        v.fail(f"field 'bidirected_tree.r_star': {frac_str(r)}, but the checked C and R_LP "
               f"are {', '.join('none' if b is None else frac_str(b) for b in bounds)}")
        return False
    topo = Topo(topology)
    side = topo.node_set(tree["cut"], "bidirected_tree.cut")
    edge = tree["edge"]
    ends = [topo.node(x, "bidirected_tree.edge") for x in edge] if isinstance(
        edge, list) and len(edge) == 2 else None
    if (ends is None or (ends[0], ends[1]) not in topo.cap or ends[0] not in side
            or ends[1] in side or topo.out_capacity(side) != r):
        v.fail("field 'bidirected_tree': its edge does not leave its cut, or the cut's "
               f"B⁺ = {frac_str(topo.out_capacity(side))} is not r_star = {frac_str(r)}")
        return False
    return True


def _same(v: Verdict, field: str, got: Any, want: Any, what: str) -> None:
    if got != want:
        v.fail(f"field {field!r}: {_short(got)}, not {what} ({_short(want)})")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
