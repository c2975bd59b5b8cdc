"""`collcert draw`: layouts, the pictures it writes, and the inputs it refuses.

Pictures are checked for being real pictures (PNG, size, many colours, ink on a good
part of the canvas); a person looked at each kind while writing collcert.drawing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from collcert import platforms
from collcert.cli import main
from collcert.drawing.layout import aggregate, find_boxes, layout
from collcert.drawing.model import cut_info, read_schedule_for_drawing

pytest.importorskip("matplotlib")


def _nontrivial(path: Path, least_kb: int = 25) -> None:
    import numpy as np
    from matplotlib.image import imread

    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    assert len(data) > least_kb * 1000, (path, len(data))
    img = imread(str(path))[:, :, :3]
    h, w = img.shape[:2]
    assert h > 400 and w > 600
    px = (img[::3, ::3] * 255).astype(np.int64)
    ink = (px.sum(axis=2) < 740).mean()  # not white
    colours = len(np.unique(px[:, :, 0] << 16 | px[:, :, 1] << 8 | px[:, :, 2]))
    assert ink > 0.02 and colours > 40, (path, ink, colours)


# ----------------------------------------------------------------- layouts
def test_boxes_are_found_from_ids() -> None:
    boxes, glob = find_boxes(platforms.dgx_a100(2)) or ([], [])
    assert [b.name for b in boxes] == ["b0", "b1"]
    assert all(len(b.compute) == 8 and b.hubs == [f"{b.name}.nvswitch"] for b in boxes)
    assert sorted(glob) == ["ib0", "ib1"]
    assert len(boxes[0].switches) == 9  # NVSwitch and 8 NICs
    two, glob2 = find_boxes(platforms.two_box_example()) or ([], [])
    assert [b.hubs for b in two] == [["w1"], ["w2"]] and glob2 == ["w0"]
    assert find_boxes(platforms.ring(8)) is None
    assert find_boxes(platforms.torus((4, 4))) is None  # "0.1" are coordinates


def test_rings_are_circles_and_tori_grids() -> None:
    lay = layout(platforms.ring(8))
    assert lay.kind == "ring"
    radii = {round((x * x + y * y) ** 0.5, 9) for x, y in lay.pos.values()}
    assert len(radii) == 1
    # neighbours on the ring are neighbours on the circle: all 8 chords equally long
    d = {round(((lay.pos[i][0] - lay.pos[(i + 1) % 8][0]) ** 2
                + (lay.pos[i][1] - lay.pos[(i + 1) % 8][1]) ** 2) ** 0.5, 9) for i in range(8)}
    assert len(d) == 1
    grid = layout(platforms.torus((4, 4)))
    assert grid.kind == "grid" and grid.pos["2.3"] == (3.0, -2.0)


def test_aggregate_sums_links_per_box() -> None:
    t = platforms.dgx_a100(4)
    ag = aggregate(t, layout(t))
    assert len(ag.nodes) == 4 + 2
    # each box has 4 NICs on ib0 at 25 GB/s each way
    assert ag.capacity[("b0", "ib0")] == 100 and ag.capacity[("ib1", "b3")] == 100


# ----------------------------------------------------------------- what the pictures show
def test_cut_of_dgx_names_the_two_links_into_the_lone_gpu() -> None:
    cut = cut_info(platforms.dgx_a100(2), "allgather")
    assert cut is not None
    # 15 GPUs send 15/16 of the data to b0.gpu0 over NVSwitch (300) + NIC (25)
    assert sorted(cut.links) == [("b0.nic0", "b0.gpu0"), ("b0.nvswitch", "b0.gpu0")]
    assert cut.total == 325 and cut.algbw == Fraction(1040, 3)
    assert "325" in cut.text and "1040/3" in cut.text and "15/16" in cut.text


def test_loads_add_up_to_the_schedule_time(tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "s.json"
    assert main(["schedule", "ring:6", "-o", str(out)]) == 0
    capsys.readouterr()
    t = platforms.ring(6)
    s = read_schedule_for_drawing(t, str(out))
    assert s.time_per_unit == Fraction(5, 12)  # ring(6): algbw 12/5 (6 nodes, 2 links each)
    assert max(s.busy.values()) == 1 and all(0 < x <= 1 for x in s.busy.values())
    # every byte of every shard reaches 5 other nodes: at least 5/6 of M crosses links,
    # and the loads are the shards' traversals
    assert sum(s.loads.values()) >= 5


# ----------------------------------------------------------------- pictures
@pytest.mark.parametrize("topo", ["dgx_a100:2", "mi250:2", "ring:8", "torus:4x4"])
def test_cut_pictures(topo: str, tmp_path: Path, capsys: Any) -> None:
    png = tmp_path / "cut.png"
    assert main(["draw", topo, "-o", str(png)]) == 0
    assert "bottleneck cut" in capsys.readouterr().out
    _nontrivial(png)


def test_tree_and_load_pictures(tmp_path: Path, capsys: Any) -> None:
    sched = tmp_path / "s.json"
    assert main(["schedule", "dgx_a100:2", "-o", str(sched)]) == 0
    for extra, name in ((["--tree", "5"], "tree.png"), (["--loads"], "loads.png"),
                        ([], "default.png")):
        png = tmp_path / name
        assert main(["draw", "dgx_a100:2", str(sched), "-o", str(png), *extra]) == 0
        _nontrivial(png, 60)
    out = capsys.readouterr().out
    assert "one tree" in out and "loads of all" in out
    svg = tmp_path / "t.svg"
    assert main(["draw", "ring:8", "-o", str(svg)]) == 0
    assert svg.read_text().lstrip().startswith("<?xml") and "<svg" in svg.read_text()


def test_large_topologies_are_drawn_per_box(tmp_path: Path, capsys: Any) -> None:
    full = tmp_path / "d16.png"
    assert main(["draw", "dgx_a100:16", "-o", str(full)]) == 0
    _nontrivial(full, 100)
    big = tmp_path / "d128.png"
    assert main(["draw", "dgx_a100:128", "-o", str(big), "--no-cut"]) == 0
    assert "one node per box (128 boxes)" in capsys.readouterr().out
    _nontrivial(big, 100)
    assert main(["draw", "ring:8", "-o", str(big), "--detail", "boxes"]) == 2


# ----------------------------------------------------------------- refusals (issue 12)
def test_a_schedule_for_another_topology_is_refused_naming_the_link(tmp_path: Path,
                                                                    capsys: Any) -> None:
    sched = tmp_path / "c4.json"
    assert main(["schedule", "complete:4", "-o", str(sched)]) == 0
    capsys.readouterr()
    assert main(["draw", "ring:4", str(sched), "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "is not a link of the topology" in err and "0 -> 2" in err
    assert not (tmp_path / "x.png").exists()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "collcert-schedule/1"}))
    assert main(["draw", "ring:4", str(bad), "-o", str(tmp_path / "y.png")]) == 2
    assert main(["draw", "ring:4", "--loads", "-o", str(tmp_path / "z.png")]) == 2
    assert "needs a SCHEDULE" in capsys.readouterr().err


def test_without_matplotlib_draw_says_what_to_install(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['matplotlib'] = None; from collcert.cli import main; "
            f"sys.exit(main(['draw', 'ring:4', '-o', {str(tmp_path / 'x.png')!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert "pip install 'collcert[draw]'" in proc.stderr and "bug" not in proc.stderr
    code = code.replace("'draw', 'ring:4', '-o'", "'optimum', 'ring:4', '--plot'")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 2 and "collcert[draw]" in proc.stderr


def test_a_certificate_given_as_schedule_is_named_once(tmp_path: Path, capsys: Any) -> None:
    """The wrong kind of file is named once (it read 'c.json: c.json: not a schedule')."""
    from collcert import optimum

    cert = tmp_path / "c.json"
    cert.write_text(json.dumps(optimum(platforms.ring(4), "allgather").certificate()))
    assert main(["draw", "ring:4", str(cert), "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "but a certificate" in err and err.count(str(cert)) == 1, err
