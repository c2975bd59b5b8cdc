#!/usr/bin/env python3
"""Machines as read from files, LP (5) at 1024 GPUs, estimates first, and the ceiling
(issue 31, items 2 and 3 and the rows they own).

Every case runs the ``collcert`` command a user would type, in a fresh process under
``/usr/bin/time`` (benchmarks/_timed.py): wall seconds, CPU seconds (user + system),
peak resident memory (MB), printed beside the case's goal. Schedules are certified
(``--check``). Topology files are written first into a temporary folder, as a tool
would write them: dgx_a100:128 changed by collcert's what-if, every node renamed
(``host3-nic2``, ``leaf-ib0``) and the links shuffled, so nothing tells collcert which
built-in it came from.

    python benchmarks/bench_from_files.py              # the rows below
    python benchmarks/bench_from_files.py -k file      # the rows naming "file"
    python benchmarks/bench_from_files.py --ceiling    # also dgx_h100:16384 (131,072 GPUs)

Rows and goals (2 cores):

* dgx_a100:128 with b3.nic2 at 25/2: ``--degrade`` (baseline, same run) and the same
  machine as a file: the file's schedule within 2x of the baseline, saying what it found;
  the NIC removed (``--fail`` and as a file) likewise;
* a coincidental near-symmetry (half the cables of dgx_a100:128 changed) and no
  symmetry at all (every cable changed): not called near-symmetric, the general path's
  estimate printed first, then the general path or a refusal with the size and the limit
  (run with ``COLLCERT_MAX_SECONDS=120``: refused by its estimate);
* ``schedule dgx_a100:128 -c allreduce --method lp --check``: < 5 min, < 4 GiB;
* ``optimum -c allreduce gb200_nvl72:4`` (LP (5) on 4 NVL72 racks): its estimate shown
  with ``--progress``;
* ``optimum torus:47x47x47`` (103,823 nodes): a note before the symmetry search, then
  the optimum or a refusal with the size and the limit, never silent;
* ``--ceiling``: ``optimum dgx_h100:16384`` (131,072 GPUs) with its certificate, checked
  by ``collcert check``: < 10 min, < 16 GB; its symmetric schedule (``--check``, built by
  the orbits of its group 16384 x 8, kept by its generators: no table of its elements)
  and ``collcert audit`` of that file: each < 10 min, < 16 GB; and the symmetric
  schedule of dgx_h100:2048 (16,384 GPUs, the largest whose box shift a table holds),
  audited.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from collections.abc import Callable
from typing import Any

from _timed import case_options, print_case_header, timed_cli

Check = Callable[[dict[str, Any]], str]


def _files(workdir: str) -> dict[str, str]:
    """The topology files of the rows (module docstring)."""
    from fractions import Fraction

    from collcert import platforms
    from collcert.reference.model import what_if

    healthy = platforms.dgx_a100(128)

    def write(name: str, doc: dict[str, Any]) -> str:
        new = {v: f"host{v[1:].replace('.', '-')}" if v.startswith("b") else f"leaf-{v}"
               for v in healthy.nodes}
        doc["compute_nodes"] = [new[v] for v in doc["compute_nodes"]]
        doc["switch_nodes"] = [new[v] for v in doc["switch_nodes"]]
        for link in doc["links"]:
            link["src"], link["dst"] = new[link["src"]], new[link["dst"]]
        doc["name"] = f"imported cluster ({name})"
        random.Random(1).shuffle(doc["links"])
        path = os.path.join(workdir, f"{name}.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def changed(**kw: Any) -> dict[str, Any]:
        t = what_if(healthy, **kw).topology
        assert t is not None
        return json.loads(json.dumps(t.to_json()))

    def perturbed(share: float, seed: int) -> dict[str, Any]:
        doc = json.loads(json.dumps(healthy.to_json()))
        rng = random.Random(seed)
        factor: dict[tuple[str, ...], Fraction] = {}
        for link in doc["links"]:
            key = tuple(sorted((link["src"], link["dst"])))
            if key not in factor:
                factor[key] = (rng.choice([Fraction(1, 2), Fraction(3, 4), Fraction(3, 2)])
                               if rng.random() < share else Fraction(1))
            link["capacity"] = str(Fraction(link["capacity"]) * factor[key])
        return doc

    return {"nic": write("nic-halved", changed(degrade=["b3.nic2=25/2"])),
            "nicfail": write("nic-removed", changed(fail=["b3.nic2"])),
            "half": write("half-changed", perturbed(0.5, 3)),
            "all": write("all-changed", perturbed(1.0, 4))}


def _found(info: dict[str, Any]) -> str:
    err = str(info.get("stderr", ""))
    line = next((x for x in err.splitlines() if "near-symmetric" in x), "")
    return line.split("near-symmetric: ", 1)[-1].split("; building")[0][:150]


def _estimate_first(info: dict[str, Any]) -> str:
    """Whether the general path's estimate (or LP (5)'s) came before the end."""
    err = str(info.get("stderr", ""))
    near = "not near-symmetric" in err or "near-symmetric" not in err
    said = ("general path" in err or "estimated" in err)
    refused = "would take about" in err or "of memory, more than" in err
    return (f"near-symmetric: {'no' if near else 'yes'}; estimate first: "
            f"{'yes' if said else 'NO'}" + ("; refused with its size and limit" if refused
                                            else ""))


def cases(files: dict[str, str], ceiling: bool) -> list[tuple[str, list[str], str, Any]]:
    """(label, collcert arguments, goal, extra: environment or a check of the output);
    '{out}' is a file to write."""
    nic, gone = files["nic"], files["nicfail"]
    out: list[tuple[str, list[str], str, Any]] = [
        ("NIC at 25/2: --degrade (baseline)", ["schedule", "dgx_a100:128", "--degrade",
                                               "b3.nic2=25/2", "--check", "-o", "{out}"],
         "baseline of the next row", None),
        ("NIC at 25/2: as a file", ["schedule", nic, "--check", "-o", "{out}"],
         "within 2x of the baseline", _found),
        ("NIC removed: --fail (baseline)", ["schedule", "dgx_a100:128", "--fail", "b3.nic2",
                                            "--check", "-o", "{out}"],
         "baseline of the next row", None),
        ("NIC removed: as a file", ["schedule", gone, "--check", "-o", "{out}"],
         "within 2x of the baseline", _found),
        ("half the cables changed: file", ["schedule", files["half"], "--progress", "-o",
                                           "{out}"],
         "estimate first, then general path or refusal", _estimate_first),
        ("every cable changed: file", ["schedule", files["all"], "--progress", "-o", "{out}"],
         "estimate first, then general path or refusal", _estimate_first),
        ("dgx_a100:128 LP (5) schedule", ["schedule", "dgx_a100:128", "-c", "allreduce",
                                          "--method", "lp", "--check", "-o", "{out}"],
         "< 300 s, < 4096 MB", None),
        ("NVL72 x4: LP (5), estimate shown", ["optimum", "-c", "allreduce", "gb200_nvl72:4",
                                              "--progress"],
         "< 60 s, estimate first", _lp_estimate),
        ("torus 47x47x47 (103,823 nodes): optimum", ["optimum", "torus:47x47x47"],
         "a note first, then the optimum or a refusal", _note),
    ]
    if ceiling:
        out += [
            ("dgx_h100:16384 (131,072 GPUs): optimum", ["optimum", "dgx_h100:16384",
                                                        "--certificate", "-o", "{cert}"],
             "< 600 s, < 16384 MB", None),
            ("dgx_h100:16384: collcert check", ["check", "dgx_h100:16384", "{cert}"],
             "(the certificate above)", None),
            ("dgx_h100:16384: symmetric schedule", ["schedule", "dgx_h100:16384",
                                                    "--symmetric", "--check", "-o", "{out}"],
             "< 600 s, < 16384 MB", _summary),
            ("dgx_h100:16384: audit of the file", ["audit", "dgx_h100:16384", "{out}"],
             "VALID, < 600 s, < 16384 MB", _verdict),
            ("dgx_h100:2048 (16,384 GPUs): sym. schedule", ["schedule", "dgx_h100:2048",
                                                           "--symmetric", "--check", "-o",
                                                           "{out}"],
             "the largest a table of its group holds", None),
            ("dgx_h100:2048: audit of the file", ["audit", "dgx_h100:2048", "{out}"],
             "VALID", None),
        ]
    return out


def _lp_estimate(info: dict[str, Any]) -> str:
    err = str(info.get("stderr", ""))
    shown = "LP (5) of" in err and "estimated" in err
    rounds = err.count("LP (5): round")
    return f"LP (5) estimate printed before its rounds: {'yes' if shown else 'NO'}; " \
           f"{rounds} round lines"


def _first_error(info: dict[str, Any]) -> str:
    err = str(info.get("stderr", ""))
    line = next((x for x in err.splitlines() if "error:" in x), "no error")
    return line[:400]


def _summary(info: dict[str, Any]) -> str:
    """The schedule's first line (or the error), and whether it was checked valid."""
    lines = str(info.get("stdout", "")).splitlines()
    if not lines:
        return _first_error(info)
    checked = "valid, same time" in str(info.get("stdout", ""))
    return f"{lines[0][:240]}; checked: {'valid' if checked else 'NO'}"


def _verdict(info: dict[str, Any]) -> str:
    out = str(info.get("stdout", ""))
    line = next((x for x in out.splitlines() if "VALID" in x or "INVALID" in x), "")
    return line.strip()[:200] or _first_error(info)


def _note(info: dict[str, Any]) -> str:
    err = str(info.get("stderr", ""))
    noted = "only by the orbits of a symmetry" in err
    return f"note first: {'yes' if noted else 'no'}; " + (
        "refused with its size and limit" if "more than" in err else "answered")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ceiling", action="store_true", help="also dgx_h100:16384")
    case_options(ap, 900, 8, "; 20 with --ceiling")
    args = ap.parse_args(argv)
    print_case_header()
    baseline: float | None = None
    with tempfile.TemporaryDirectory() as workdir:
        files = _files(workdir)
        out_file = os.path.join(workdir, "s.json")
        for label, cmd, goal, extra in cases(files, args.ceiling):
            if args.k not in label:
                continue
            if os.path.exists(out_file) and "audit" not in cmd and "check" not in cmd:
                os.remove(out_file)
            gib = max(args.max_memory, 20.0) if "dgx_h100" in label else args.max_memory
            env = {"COLLCERT_MAX_SECONDS": "120"} if "cables" in label else None
            cert_file = os.path.join(workdir, "cert.json")
            info = timed_cli([a.replace("{out}", out_file).replace("{cert}", cert_file)
                              for a in cmd], args.timeout, workdir, gib, env=env)
            wall = float(info["wall"])
            if label.endswith("(baseline)") and info["status"] == "ok":
                baseline = wall
            if "within 2x" in goal and baseline is not None:
                goal += f" ({wall / baseline:.2f}x of {baseline:.1f} s)"
            cpu = f"{info['cpu']:>8.1f}" if "cpu" in info else f"{'':>8}"
            peak = f"{info['peak_mb']:>7.0f}" if "peak_mb" in info else f"{'':>7}"
            print(f"{label:<42}{info['status']:>10}{wall:>8.1f}{cpu}{peak}  {goal}",
                  flush=True)
            if callable(extra):
                print(f"    {extra(info)}")
            lines = (str(info.get("stdout", "")) + str(info.get("stderr", ""))).splitlines()
            if args.verbose or (str(info["status"]).startswith("exit") and not callable(extra)):
                for line in lines[-6:]:
                    print(f"    {line[:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
