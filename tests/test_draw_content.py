"""What the pictures show, read back from the figures: the cut's capacities and loads are
written on the cut, legends do not cover captions, titles stay inside the picture, and the
steady-broadcast picture writes costs where they can be read.

Texts are read from SVG files written with ``svg.fonttype = none`` (text stays text), and
layouts from the matplotlib figure just before it is saved.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from collcert.cli import main

mpl = pytest.importorskip("matplotlib")


def svg_texts(argv: list[str], path: Path, capsys: Any) -> list[str]:
    with mpl.rc_context({"svg.fonttype": "none"}):
        assert main([*argv, "-o", str(path)]) == 0
    capsys.readouterr()
    return re.findall(r"<text[^>]*>([^<]*)</text>", path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def dgx2_schedules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("dgx2")
    out = {"optimal": d / "opt.json", "k1": d / "k1.json"}
    assert main(["schedule", "dgx_a100:2", "-o", str(out["optimal"])]) == 0
    assert main(["schedule", "dgx_a100:2", "--fixed-k", "1", "-o", str(out["k1"])]) == 0
    return out


def test_cut_links_carry_their_capacities(tmp_path: Path, capsys: Any) -> None:
    # the lone GPU b0.gpu0 outside S* gets data over its NVSwitch link (300 GB/s) and its NIC
    # link (25 GB/s): the platform's own speeds; 16·325/15 = 1040/3 is what they prove
    texts = svg_texts(["draw", "dgx_a100:2"], tmp_path / "cut.svg", capsys)
    assert "300" in texts and "25" in texts
    assert any("1040/3" in t for t in texts)


def test_loads_label_the_cut_links_with_how_busy_they_are(
        tmp_path: Path, capsys: Any, dgx2_schedules: dict[str, Path]) -> None:
    def cut_labels(name: str) -> list[int]:
        texts = svg_texts(["draw", "dgx_a100:2", str(dgx2_schedules[name]), "--loads"],
                          tmp_path / f"{name}.svg", capsys)
        return [int(t[:-1]) for t in texts if re.fullmatch(r"\d+%", t)]

    # a schedule that reaches the cut bound keeps every cut link busy all the time
    assert cut_labels("optimal") == [100, 100]
    # one slower than the bound cannot: the cut's links carry the same data for longer
    slow = cut_labels("k1")
    assert len(slow) == 2 and min(slow) < 100 and max(slow) <= 100


def _layout_problems(fig: Any) -> list[str]:
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    width, height = fig.canvas.get_width_height()
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    captions = [t.get_window_extent(r) for t in fig.texts if t.get_text()]
    problems = [f"legend over caption {c}" for lg in legends for c in captions
                if lg.get_window_extent(r).overlaps(c)]
    for ax in fig.axes:
        if ax.title.get_text():
            box = ax.title.get_window_extent(r)
            if box.y1 > height + 1 or box.x0 < -1 or box.x1 > width + 1:
                problems.append(f"title {ax.title.get_text()!r} outside the picture")
    return problems


@pytest.mark.parametrize("argv", [
    ["draw", "torus:4x4"],
    ["draw", "ring:8", "-c", "broadcast", "--root", "3"],
    ["draw", "dgx_a100:2", "{optimal}"],
    ["draw", "dgx_a100:2", "{k1}", "--loads"],
])
def test_legend_caption_and_title_fit(argv: list[str], tmp_path: Path, capsys: Any,
                                      monkeypatch: pytest.MonkeyPatch,
                                      dgx2_schedules: dict[str, Path]) -> None:
    import collcert.drawing.network as network

    figures: list[Any] = []
    monkeypatch.setattr(network, "save", lambda fig, path, dpi=150: figures.append(fig))
    argv = [a.format(**{k: str(v) for k, v in dgx2_schedules.items()}) for a in argv]
    assert main([*argv, "-o", str(tmp_path / "x.png")]) == 0
    capsys.readouterr()
    assert len(figures) == 1 and _layout_problems(figures[0]) == []
    mpl.pyplot.close(figures[0])


def test_steady_broadcast_costs_are_readable(tmp_path: Path, capsys: Any) -> None:
    from collcert.drawing.steady_broadcast import LABEL_ALL

    # Fig. 1 has 6 links: every cost is written (1 on four links, 1/2 on two)
    sched = tmp_path / "fig1.json"
    assert main(["broadcast-steady", "fig1", "-o", str(sched)]) == 0
    texts = svg_texts(["draw", "fig1", str(sched)], tmp_path / "fig1.svg", capsys)
    costs = [t for t in texts if t.startswith("c=")]
    assert sorted(costs) == ["c=1"] * 4 + ["c=1/2"] * 2
    # a platform with more links than LABEL_ALL: costs only on the links the trees use
    sched = tmp_path / "r12.json"
    assert main(["broadcast-steady", "random:12", "-o", str(sched)]) == 0
    capsys.readouterr()
    import json

    doc = json.loads(sched.read_text())
    used = {tuple(e) for t in doc["trees"] for e in t["edges"]}
    texts = svg_texts(["draw", "random:12", str(sched)], tmp_path / "r12.svg", capsys)
    written = [t for t in texts if t.startswith("c=")]
    from collcert.commands.broadcast_steady import load_platform

    links = len(load_platform("random:12").cost)
    assert links > LABEL_ALL and len(written) == len(used) < links
