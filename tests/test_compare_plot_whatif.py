"""The what-if comparison plot shows before and after, and no text runs into another
(issue 33 row 10: 'compare dgx_a100:1 --degrade b0.gpu0<>b0.nvswitch=150 --sizes 1K:1G
--plot' drew only the changed machine, five identical flat lines at α = 0, and its
'fastest at each size' label over the title)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib")


def _figure(monkeypatch: Any, argv: list[str], tmp_path: Path) -> Any:
    import collcert.drawing.compare as drawing
    from collcert.cli import main

    got: list[Any] = []

    def keep(fig: Any, path: str, dpi: int = 150) -> None:
        fig.canvas.draw()
        got.append(fig)

    monkeypatch.setattr(drawing, "save", keep)
    assert main([*argv, "--plot", str(tmp_path / "c.png")]) == 0
    return got[0]


def _texts(fig: Any) -> list[tuple[str, Any]]:
    renderer = fig.canvas.get_renderer()
    out = [(t.get_text(), t.get_window_extent(renderer)) for t in fig.texts if t.get_text()]
    for ax in fig.axes:
        for t in [ax.title, *ax.texts, *(ax.get_legend().get_texts() if ax.get_legend() else [])]:
            if t.get_text():
                out.append((t.get_text(), t.get_window_extent(renderer)))
    return out


def test_what_if_plot_has_before_and_after_and_no_overlapping_text(
        monkeypatch: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fig = _figure(monkeypatch, ["compare", "dgx_a100:1", "--degrade",
                                "b0.gpu0<>b0.nvswitch=150", "--sizes", "1K:1G"], tmp_path)
    ax = fig.axes[0]
    levels = {round(float(y), 3) for line in ax.get_lines() for y in line.get_ydata()}
    assert {171.429, 342.857} <= levels  # after (solid) and before (dotted)
    texts = _texts(fig)
    assert any("healthy" in s for s, _ in texts) and any("α = 0" in s for s, _ in texts)
    for i, (a, box_a) in enumerate(texts):
        for b, box_b in texts[i + 1:]:
            assert not box_a.overlaps(box_b), (a, b)
    low, high = ax.get_ylim()  # one power of ten is not inside: 2, 3, 5 x are labelled
    shown = [t for t in ax.yaxis.get_ticklabels(minor=True) + ax.yaxis.get_ticklabels()
             if t.get_text() and low <= t.get_position()[1] <= high]
    assert shown
