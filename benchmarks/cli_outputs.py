"""Run a fixed list of collcert commands and compare their outputs with a saved run.

A refactoring that must not change behaviour (the CLI, every file format, every
printed number) is shown not to by running this script before and after it::

    python benchmarks/cli_outputs.py --save /tmp/before      # on the old commit
    python benchmarks/cli_outputs.py --compare /tmp/before   # on the new one

Each command runs in a fresh temporary folder (input files copied in); its exit
status, stdout, stderr and every file it writes are recorded. Timings, memory
figures and temporary paths are masked, since they differ from run to run.
``--compare`` prints a unified diff per command that differs and exits 1 if any
does. ``--list`` prints the commands; ``-k TEXT`` runs only those whose name
contains TEXT.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
API = "import collcert, json; "

# name -> (argv after 'collcert', or ['python', '-c', ...]; files to copy in)
COMMANDS: list[tuple[str, list[str], list[Path]]] = [
    ("optimum-default", ["optimum"], []),
    ("optimum-mi250-json", ["optimum", "mi250:2", "--json"], []),
    ("optimum-mi250-k1", ["optimum", "mi250:2", "--fixed-k", "1"], []),
    ("optimum-broadcast", ["optimum", "two_box_example", "-c", "broadcast", "--root", "c1.1"], []),
    ("optimum-reduce-json", ["optimum", "dgx_a100:1", "-c", "reduce", "--root", "b0.gpu3", "--json"], []),
    ("optimum-rs", ["optimum", "torus:3x3", "-c", "reduce-scatter"], []),
    ("optimum-allreduce", ["optimum", "dgx_a100:1", "-c", "allreduce"], []),
    ("optimum-allreduce-json", ["optimum", "torus:3x3", "-c", "allreduce", "--json"], []),
    ("optimum-alltoall", ["optimum", "dgx_a100:2", "-c", "alltoall"], []),
    ("optimum-alltoall-sym-json", ["optimum", "dgx_a100:8", "-c", "alltoall", "--json"], []),
    ("optimum-orbits", ["optimum", "dgx_a100:128"], []),
    ("optimum-sizes", ["optimum", "dgx_a100:2", "--sizes", "1K:1G", "--alpha", "2"], []),
    ("optimum-certificate", ["sh", "-c", "collcert optimum two_box_example --certificate > cert.json"], []),
    ("optimum-nccl-dump", ["optimum", "dgx_a100_dump.xml"], [DATA / "importers" / "dgx_a100_dump.xml"]),
    ("optimum-file", ["optimum", "box4_topology.json"], [DATA / "formats" / "box4_topology.json"]),
    ("schedule-default", ["schedule", "dgx_a100:2", "-o", "ag.json", "--check"], []),
    ("schedule-fixed-k-xml", ["schedule", "mi250:2", "--fixed-k", "3", "--format", "forestcoll-xml", "-o", "ag.xml"], []),
    ("schedule-allreduce-lp", ["schedule", "torus:3x3", "-c", "allreduce", "--method", "lp", "-o", "ar.json"], []),
    ("schedule-allreduce", ["schedule", "dgx_a100:1", "-c", "allreduce", "-o", "ar.json", "--json"], []),
    ("schedule-broadcast", ["schedule", "two_box_example", "-c", "broadcast", "--root", "c1.1", "-o", "b.json"], []),
    ("schedule-sym-gz", ["schedule", "dgx_a100:16", "-o", "ag.json.gz", "--check"], []),
    ("schedule-nosym", ["schedule", "dgx_a100:2", "--no-symmetry", "-o", "ag.json"], []),
    ("msccl-allgather", ["schedule", "dgx_a100:2", "--format", "msccl-xml", "-o", "ag.xml"], []),
    ("msccl-allreduce", ["schedule", "dgx_a100:1", "-c", "allreduce", "--format", "msccl-xml", "-o", "ar.xml"], []),
    ("msccl-allreduce-lp", ["schedule", "ring:4", "-c", "allreduce", "--method", "lp", "--format", "msccl-xml", "-o", "ar.xml"], []),
    ("msccl-ring", ["schedule", "ring:4", "--format", "msccl-xml"], []),
    ("audit-schedule", ["audit", "dgx_a100:2", "ag.json"], []),
    ("audit-forestcoll-xml", ["audit", "forestcoll_a100_1box_topology.json", "forestcoll_a100_1box_allgather.xml"],
     [DATA / "formats" / "forestcoll_a100_1box_topology.json", DATA / "formats" / "forestcoll_a100_1box_allgather.xml"]),
    ("audit-msccl-tools", ["audit", "complete4_topology.json", "msccl-tools_allreduce_ring_4gpu_inplace.xml", "--json"],
     [DATA / "formats" / "complete4_topology.json", DATA / "formats" / "msccl-tools_allreduce_ring_4gpu_inplace.xml"]),
    ("audit-msccl-tools-ag", ["audit", "complete4_topology.json", "msccl-tools_allgather_ring_4gpu_inplace.xml", "--sizes", "1K:1G"],
     [DATA / "formats" / "complete4_topology.json", DATA / "formats" / "msccl-tools_allgather_ring_4gpu_inplace.xml"]),
    ("audit-claim", ["audit", "dgx_a100:2", "ag.json", "--claim-time", "2.5ms", "--size", "1GB"], []),
    ("audit-sizes", ["audit", "dgx_a100:2", "ag.json", "--sizes", "1K:8G", "--alpha", "2", "--json"], []),
    ("audit-msccl-export", ["audit", "dgx_a100:2", "ag.xml", "--format", "msccl-xml"], []),
    ("audit-allreduce-lp", ["audit", "torus:3x3", "ar.json", "--json"], []),
    ("check-certificate", ["check", "two_box_example", "cert.json"], []),  # uses the file of optimum-certificate (made below)
    ("allreduce-rate-json", ["optimum", "complete:4", "-c", "allreduce", "--json"], []),
    ("broadcast-steady", ["broadcast-steady", "fig1", "--compare"], []),
    ("broadcast-steady-json", ["broadcast-steady", "fig1", "--json", "-o", "bs.json"], []),
    ("broadcast-steady-audit", ["audit", "fig1", "bs.json"], []),
    ("reduce-tree", ["reduce-tree", "1000", "-d", "2", "-c", "1"], []),
    ("reduce-tree-json", ["reduce-tree", "12", "-d", "1", "-c", "1", "--json"], []),
    ("reduce-tree-strategies", ["reduce-tree", "30", "-d", "2", "-c", "3", "--strategy", "fibonacci", "-o", "r.json"], []),
    ("reduce-tree-check", ["reduce-tree", "--check", "r.json", "--json"], []),
    ("import-nccl", ["import", "dgx_a100_dump.xml", "-o", "t.json"], [DATA / "importers" / "dgx_a100_dump.xml"]),
    ("import-smi", ["import", "nvidia_smi_dgx1.txt", "-o", "t.json"], [DATA / "importers" / "nvidia_smi_dgx1.txt"]),
    ("platforms", ["platforms"], []),
    ("draw-tree", ["draw", "dgx_a100:2", "ag.json", "-o", "tree.png"], []),
    ("draw-loads", ["draw", "dgx_a100:2", "ag.json", "--loads", "-o", "loads.png"], []),
    ("prove", ["prove", "two_box_example"], []),
    ("fuzz-check", ["fuzz", "check", "--count", "4", "--seed", "3"], []),
    ("bad-missing", ["optimum", "no_such.json"], []),
    ("bad-schedule-as-topology", ["optimum", "dgx_a100-2box-allgather.json"], [REPO / "golden" / "cases" / "dgx_a100-2box-allgather.json"]),
    ("bad-fixed-k", ["schedule", "ring:4", "--fixed-k", "0"], []),
    ("bad-platform", ["optimum", "dgx_a100:0"], []),
    ("api-optimum", ["python", "-c", API + "o = collcert.optimum(collcert.platforms.dgx_a100(2)); print(o.summary()); print(json.dumps(o.to_json(), sort_keys=True)[:4000])"], []),
    ("api-schedule", ["python", "-c", API + "s = collcert.schedule(collcert.platforms.mi250(2), fixed_k=2); print(s.summary())"], []),
    ("api-audit", ["python", "-c", API + "r = collcert.audit_file(collcert.platforms.dgx_a100(2), 'ag.json'); print(r.summary())"], []),
    ("api-allreduce", ["python", "-c", API + "print(collcert.allreduce_rate(collcert.platforms.ring(4)).summary())"], []),
]

COMMANDS += [(f"help-{cmd}", [cmd, "--help"], []) for cmd in (
    "optimum", "schedule", "draw", "audit", "fuzz", "prove", "check", "broadcast-steady",
    "reduce-tree", "smoke", "import", "platforms", "completion")]

# Chained commands: a command that reads what an earlier one wrote.
CHAIN = {"check-certificate": "optimum-certificate", "broadcast-steady-audit": "broadcast-steady-json",
         "audit-schedule": "schedule-default", "audit-claim": "schedule-default",
         "audit-sizes": "schedule-default", "api-audit": "schedule-default",
         "audit-msccl-export": "msccl-allgather", "audit-allreduce-lp": "schedule-allreduce-lp",
         "reduce-tree-check": "reduce-tree-strategies", "draw-tree": "schedule-default",
         "draw-loads": "schedule-default"}

MASKS = [
    (re.compile(r"/tmp/[\w./-]+"), "<tmp>"),
    (re.compile(r"\b\d+(\.\d+)?\s?(ms|µs|us|s|seconds|second|min)\b(?!/)"), "<time>"),
    (re.compile(r"\b\d+(\.\d+)?\s?(MB|MiB|GB|GiB|KiB|kB|B)\b(?!/)"), "<mem>"),
    (re.compile(r'"(seconds|wall_seconds|cpu_seconds|elapsed|peak_memory_mb|time_s)": [\d.e+-]+'), r'"\1": <num>'),
]


SECONDS_BLOCK = re.compile(r'"seconds": \{[^{}]*\}')


def mask(text: str) -> str:
    text = SECONDS_BLOCK.sub('"seconds": {<times>}', text)
    for pattern, repl in MASKS:
        text = pattern.sub(repl, text)
    return text


def record_files(folder: Path, inputs: set[str]) -> dict[str, str]:
    files = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name in inputs:
            continue
        data = path.read_bytes()
        if path.suffix == ".gz":
            import gzip
            data = gzip.decompress(data)
        try:
            text = mask(data.decode())
            files[path.name] = text if len(text) < 200_000 else "sha256 " + hashlib.sha256(text.encode()).hexdigest()
        except UnicodeDecodeError:
            files[path.name] = "binary sha256 " + hashlib.sha256(data).hexdigest()
    return files


def run_one(name: str, argv: list[str], inputs: list[Path], carry: dict[str, Path]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for path in inputs:
            shutil.copy(path, folder / path.name)
        for fname, src in carry.items():
            shutil.copy(src, folder / fname)
        if argv[0] == "python":
            cmd = [sys.executable] + argv[1:]
        elif argv[0] == "sh":
            cmd = argv
        else:
            cmd = [sys.executable, "-m", "collcert", *argv]
        env = dict(os.environ, COLUMNS="100", PYTHONHASHSEED="0")
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
        proc = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, env=env, timeout=600)
        names = {p.name for p in inputs} | set(carry)
        result = {"rc": proc.returncode, "stdout": mask(proc.stdout), "stderr": mask(proc.stderr),
                  "files": record_files(folder, names)}
        keep = Path(tempfile.gettempdir()) / "collcert-cli-outputs" / name
        shutil.rmtree(keep, ignore_errors=True)
        shutil.copytree(folder, keep)
        return result


def run_all(only: str | None) -> dict[str, dict]:
    results: dict[str, dict] = {}
    kept = Path(tempfile.gettempdir()) / "collcert-cli-outputs"
    for name, argv, inputs in COMMANDS:
        if only and only not in name and not (name in CHAIN and only in CHAIN[name]):
            continue
        carry = {}
        if name in CHAIN:
            for path in (kept / CHAIN[name]).iterdir():
                if path.is_file():
                    carry[path.name] = path
        print(f"{name} ...", file=sys.stderr, flush=True)
        results[name] = run_one(name, argv, inputs, carry)
    return results


def show(result: dict) -> list[str]:
    lines = [f"exit {result['rc']}", "--- stdout"] + result["stdout"].splitlines()
    lines += ["--- stderr"] + result["stderr"].splitlines()
    for fname, text in result["files"].items():
        lines += [f"--- file {fname}"] + text.splitlines()
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", metavar="DIR", help="run the commands and save their outputs in DIR")
    group.add_argument("--compare", metavar="DIR", help="run the commands and compare with DIR")
    group.add_argument("--list", action="store_true", help="print the commands and exit")
    parser.add_argument("-k", metavar="TEXT", help="only the commands whose name contains TEXT")
    args = parser.parse_args()
    if args.list:
        for name, argv, _ in COMMANDS:
            print(f"{name:28} " + (" ".join(argv[1:]) if argv[0] in ("python", "sh") else "collcert " + " ".join(argv)))
        return 0
    results = run_all(args.k)
    if args.save:
        out = Path(args.save)
        out.mkdir(parents=True, exist_ok=True)
        for name, result in results.items():
            (out / f"{name}.json").write_text(json.dumps(result, indent=1, sort_keys=True))
        print(f"{len(results)} commands saved in {out}")
        return 0
    differ = 0
    for name, result in results.items():
        saved = Path(args.compare) / f"{name}.json"
        if not saved.exists():
            print(f"{name}: not in {args.compare}")
            differ += 1
            continue
        before = json.loads(saved.read_text())
        if before != result:
            differ += 1
            diff = difflib.unified_diff(show(before), show(result), "before", "after", lineterm="", n=1)
            print(f"=== {name}")
            print("\n".join(list(diff)[:80]))
    print(f"{len(results)} commands, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
