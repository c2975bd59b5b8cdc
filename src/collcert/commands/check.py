"""``collcert check``: check a certificate file with collcert.certify alone.

This command imports nothing from ``collcert.reference`` (unless TOPOLOGY is a
built-in platform, which the reference builds): what it reports was
established by the small independent checkers, and it says which ones ran and
which reference modules, if any, were imported.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from fractions import Fraction
from typing import Any

from collcert.certify.dispatch import KINDS, check_certificate
from collcert.certify.model import InputError, decode, frac_str, load_json, read_stream, read_text

MAX_BYTES = 512 * 1024 * 1024


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    kinds = "; ".join(f"{k}: {what}" for k, (_, what) in KINDS.items())
    p = sub.add_parser(
        "check",
        help="check a certificate file (optimum, schedule, splitting, LP) with the "
        "independent checkers only",
        description="Check any certificate collcert writes, using only collcert.certify: small, "
        "exact, standard-library checkers that share no code with the reference "
        "implementation that produced the certificate. The kind is detected from the file. "
        f"Kinds: {kinds}. The output names the checker that ran and lists every "
        "collcert.reference module that was imported (none, unless TOPOLOGY is a built-in "
        "platform).",
        epilog="Exit codes: 0 the certificate proves what it claims, 1 it does not (reasons "
        "given), 2 unreadable input. Example: collcert optimum topo.json --certificate > "
        "opt.json && collcert check topo.json opt.json",
    )
    p.add_argument("topology", metavar="TOPOLOGY",
                   help="topology JSON file (collcert-topology/1), '-' for stdin, or a built-in "
                   "platform such as dgx_a100:2 (built by collcert.reference)")
    p.add_argument("certificate", metavar="CERTIFICATE",
                   help="the certificate JSON file, or '-' for stdin")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object; exact numbers are \"p/q\" strings")
    p.add_argument("--degrade", action="append", default=[], metavar="LINK=CAP",
                   help="check a certificate that 'collcert optimum --certificate' wrote with "
                   "the same --degrade/--fail: TOPOLOGY is changed first, by collcert.reference "
                   "(docs/whatif.md); repeatable, as there")
    p.add_argument("--fail", action="append", default=[], metavar="NODE_OR_LINK",
                   help="see --degrade")
    p.set_defaults(func=run)


def _changed(spec: str, degrade: list[str], fail: list[str]) -> dict[str, Any]:
    """TOPOLOGY after --degrade/--fail (built by collcert.reference, as for a platform)."""
    from collcert.commands._common import load_topology
    from collcert.reference.model import what_if

    w = what_if(load_topology(spec, strict=False), degrade, fail, strict=False)
    if w.topology is None:
        raise InputError(w.disconnected_text(
            "every rate is 0 and collcert optimum writes no certificate of it to check"))
    changed: dict[str, Any] = w.topology.to_json()
    return changed


def _read(path: str, what: str) -> Any:
    if path == "-":
        origin = f"{what} on stdin"
        return load_json(decode(read_stream(sys.stdin.buffer, MAX_BYTES, origin), origin),
                         origin)
    try:
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            raise InputError(f"{path}: {size} bytes is more than collcert reads ({MAX_BYTES})")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError:
        pass  # read_text names the problem
    text = read_text(path, MAX_BYTES)  # gzip by its magic bytes, size capped
    if what == "topology" and not text.lstrip().startswith(("{", "[")):
        # NCCL XML and nvidia-smi matrices are read by the importers, which build the
        # topology with collcert.reference: convert once, then check against the JSON
        raise InputError(f"{path}: collcert check reads the topology as collcert-topology/1 "
                         "JSON only (so that no reference code runs); convert the machine's "
                         f"file first: collcert import {path} -o topo.json")
    if text.lstrip().startswith("<"):
        raise InputError(f"{path}: an XML file is a schedule, not a certificate; check it "
                         "with 'collcert audit TOPOLOGY SCHEDULE'")
    return load_json(text, path)


def _topology(spec: str) -> dict[str, Any]:
    if spec == "-" or os.path.exists(spec) or spec.endswith(".json") or "/" in spec:
        data = _read(spec, "topology")
        if not isinstance(data, dict):
            raise InputError(f"{spec}: a topology is a JSON object (collcert-topology/1)")
        return data
    try:  # a built-in platform: only the reference can build it
        from collcert.commands._common import ONE_PORT_NAMES, load_topology
    except ImportError as exc:
        raise InputError(f"{spec!r} is not a file; built-in platforms are built by "
                         f"collcert.reference, which cannot be imported here ({exc}); pass a "
                         "topology JSON file") from None
    if spec.split(":", 1)[0] in ONE_PORT_NAMES:  # fig1, fig5, random:P (broadcast-steady)
        from collcert.commands.broadcast_steady import load_platform

        one_port: dict[str, Any] = load_platform(spec).to_json()
        return one_port
    built: dict[str, Any] = load_topology(spec).to_json()
    return built


def _show(value: Any) -> str:
    if isinstance(value, Fraction | int) and not isinstance(value, bool):
        q = Fraction(value)
        exact = frac_str(q)
        if q.denominator == 1:
            return exact
        scaled = round(abs(q) * 10**6)  # 6 decimals, by integer arithmetic
        sign = "-" if q < 0 else ""
        return f"{exact} (≈ {sign}{scaled // 10**6}.{scaled % 10**6:06d})"
    return str(value)


def run(args: argparse.Namespace) -> int:
    if args.topology == "-" and args.certificate == "-":
        raise InputError("TOPOLOGY and CERTIFICATE cannot both be '-' (stdin holds one file); "
                         "give one of them as a file name")
    whatif = bool(getattr(args, "degrade", None) or getattr(args, "fail", None))
    # the certificate first: a missing file is said at once, not after a large build
    # (dgx_h100:16384: 22 s)
    cert = _read(args.certificate, "certificate")
    topo = (_changed(args.topology, args.degrade, args.fail) if whatif
            else _topology(args.topology))
    try:
        kind, verdict = check_certificate(topo, cert)
    except InputError as exc:  # name the file: the checkers see only its contents
        where = "the certificate on stdin" if args.certificate == "-" else args.certificate
        raise InputError(f"checking {where} on {args.topology}: {exc}") from None
    module = KINDS[kind][0].replace(":", ".")
    loaded = sorted(m for m in sys.modules if m.startswith("collcert.reference"))
    if args.json:
        out = verdict.to_json()
        out.update({"kind": kind, "checker": f"collcert.certify.{module}",
                    "reference_modules_imported": loaded})
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(f"{'OK' if verdict.ok else 'FAILED'}: {verdict.check} ({kind})")
        for r in verdict.all_reasons():
            print(f"  - {r}")
        if verdict.ok:
            for key, value in verdict.facts.items():
                if isinstance(value, Fraction | int | str) and not isinstance(value, bool):
                    print(f"  {key:<24} = {_show(value)}")
        print(f"  checked by collcert.certify.{module}")
        print("  collcert.reference modules imported: " + (", ".join(loaded) or "none"))
    return 0 if verdict.ok else 1
