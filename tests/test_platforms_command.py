"""``collcert platforms``: every built-in topology, its parameters, a line and an example."""

from __future__ import annotations

import contextlib
import inspect
import io
import json

import pytest

from collcert import platforms
from collcert.cli import main


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse errors
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


BUILDERS = [n for n in platforms.__all__ if callable(getattr(platforms, n))]


def test_json_lists_every_builder_with_its_parameters_and_a_true_example_size() -> None:
    code, out, _ = run("platforms", "--json")
    assert code == 0
    entries = {e["name"]: e for e in json.loads(out)["platforms"]}
    assert sorted(entries) == sorted(BUILDERS)
    for name, e in entries.items():
        sig = inspect.signature(getattr(platforms, name))
        positional = [p.name for p in sig.parameters.values()
                      if p.kind is not p.KEYWORD_ONLY]
        assert [p["name"] for p in e["parameters"]] == positional
        assert e["description"] and "\n" not in e["description"]
        spec = e["example"]
        assert spec.split(":")[0] == name
    # sizes are those of the built example, counted here independently
    t = platforms.dgx_a100(2)
    assert entries["dgx_a100"]["example_size"] == {
        "compute_nodes": 16, "nodes": len(t.compute_nodes) + len(t.switch_nodes),
        "links": len(t.capacity)}
    assert entries["torus"]["example_size"]["compute_nodes"] == 16  # 4x4
    assert entries["ring"]["parameters"] == [{"name": "n"}, {"name": "capacity", "default": 1}]


def test_text_and_one_platform() -> None:
    code, out, _ = run("platforms")
    assert code == 0
    for name in BUILDERS:
        assert f"\n{name}" in "\n" + out
    assert "e.g. mi250:2: 32 compute nodes" in out
    code, out, _ = run("platforms", "fat_tree")
    assert code == 0 and "Al-Fares" in out and out.startswith("fat_tree:k=4,capacity=1")


def test_unknown_platform_is_bad_input() -> None:
    code, _, err = run("platforms", "dgx_z9")
    assert code == 2 and "dgx_z9" in err and "dgx_a100" in err


@pytest.mark.parametrize("spec", ["dgx_h100:2", "mi250:2", "fat_tree:4"])
def test_examples_are_usable_specs(spec: str) -> None:
    code, out, _ = run("optimum", spec, "--json")
    assert code == 0 and json.loads(out)["algbw"]


@pytest.mark.parametrize("name", ["mi250", "dgx1", "torus", "two_box_example"])
def test_full_description_is_plain_text(name: str) -> None:
    # the builders' docstrings use reST (``ib``, :data:`MI250_LINKS`); a terminal shows text
    code, out, _ = run("platforms", name)
    assert code == 0 and out.startswith(name)
    assert "``" not in out and ":data:" not in out
