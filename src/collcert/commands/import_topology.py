"""``collcert import``: a real machine's topology file as a ``collcert-topology/1`` JSON file."""

from __future__ import annotations

import argparse
import json
import sys

from collcert.importers import FORMATS, MAX_BOXES

from ._common import add_json_option, positive_number, print_json, write_output


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "import",
        help="convert NCCL's topology XML or 'nvidia-smi topo -m' into collcert's topology JSON",
        description="Read a machine's topology (NCCL's XML written by NCCL_TOPO_DUMP_FILE, a "
        "cloud provider's NCCL_TOPO_FILE, or the matrix 'nvidia-smi topo -m' prints), say "
        "every speed it assumed and what the file lacks, and write it as a "
        "collcert-topology/1 JSON file. Every command also reads these files directly "
        "(collcert optimum nccl-topo.xml); this command adds the options. See "
        "docs/importing.md.",
    )
    import shtab

    files = p.add_argument("file", metavar="FILE", help="the topology file ('-' for stdin)")
    files.complete = shtab.FILE  # type: ignore[attr-defined]
    p.add_argument("--from", dest="fmt", choices=FORMATS, metavar="FORMAT",
                   help=f"the file's format ({', '.join(FORMATS)}); detected when not given")
    p.add_argument("-o", "--output", metavar="OUT.json",
                   help="write the collcert-topology/1 JSON here ('-' for stdout)")
    p.add_argument("--speeds", choices=("nominal", "nccl"), default="nominal",
                   help="assumed NVLink/PCIe speeds: the hardware's nominal rates (default, "
                   "as collcert's platforms) or the lower figures NCCL itself uses")
    p.add_argument("--nvlink-bw", type=positive_number, metavar="GBPS",
                   help="GB/s per NVLink each way, instead of the figure of the GPU's "
                   "generation (25 for V100/A100/H100, 50 for B200)")
    p.add_argument("--nvswitch", type=positive_number, metavar="GBPS",
                   help="for a file with no NVLink entries: every GPU reaches one NVSwitch at "
                   "GBPS each way (300 for A100 SXM, 450 for H100 SXM)")
    p.add_argument("--nvidia-smi", dest="nvidia_smi", metavar="MATRIX",
                   help="for an XML file: take the NVLinks from this 'nvidia-smi topo -m' "
                   "output of the same machine (GPUs matched in PCI bus-id order)"
                   ).complete = shtab.FILE  # type: ignore[attr-defined]
    p.add_argument("--nic-bw", type=positive_number, metavar="GBPS",
                   help="GB/s each way of every NIC (needed with --boxes when the file gives "
                   "no NIC speed; 25 = 200 Gb/s, 50 = 400 Gb/s)")

    def boxes(text: str) -> int:
        if not text.isdigit() or not 1 <= int(text) <= MAX_BOXES:
            raise argparse.ArgumentTypeError(f"{text[:20]!r} is not a count from 1 to "
                                             f"{MAX_BOXES}")
        return int(text)

    p.add_argument("--boxes", type=boxes, default=1, metavar="N",
                   help="N copies of the machine, every NIC on one non-blocking network "
                   "switch (default 1: NICs left out)")
    add_json_option(p, ": the report and the topology")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from collcert import importers

    from ._common import read_stdin

    options = dict(speeds=args.speeds, nvlink_bw=args.nvlink_bw, nvswitch=args.nvswitch,
                   nvidia_smi_file=args.nvidia_smi, nic_bw=args.nic_bw, boxes=args.boxes)
    if args.file == "-":
        got = importers.import_text(read_stdin("a topology"), "stdin", args.fmt, **options)
    else:
        got = importers.import_topology(args.file, args.fmt, **options)
    doc = got.to_json()
    if args.output and args.output != "-":
        write_output(args.output, json.dumps(doc, indent=1) + "\n")
    if args.json:
        print_json({"format": got.format, "origin": got.origin,
                    "compute_nodes": got.topology.num_compute,
                    "switch_nodes": len(got.topology.switch_nodes),
                    "links": len(got.topology.capacity), "assumed": got.notes,
                    "lacks": got.lacks, "nodes": got.nodes, "topology": doc})
        return 0
    if args.output == "-":
        print_json(doc)
        print(got.report(), file=sys.stderr)
        return 0
    print(got.report())
    if got.nodes:
        print("  nodes:")
        for node, what in got.nodes.items():
            print(f"    {node:<14} {what}")
    if args.output:
        print(f"wrote {args.output}: collcert optimum {args.output}")
    else:
        print("(-o FILE.json writes the collcert-topology/1 file)")
    return 0
