"""Hypothesis strategies for random valid topologies (needs ``hypothesis``).

Use them like hypothesis's own strategies::

    from hypothesis import given, settings
    from collcert.fuzz import strategies as cst

    @settings(max_examples=50, deadline=None)
    @given(cst.topologies(max_nodes=6))
    def test_my_generator(topology):
        schedule = my_generator(topology)
        ...

Every strategy returns :class:`collcert.Topology` values that are Eulerian by
construction and strongly connected among compute nodes (see
:mod:`collcert.fuzz.generators`, which builds them from the same choices).
``capacities`` is a mode name (``"small"``, ``"wide"``, ``"huge"`` up to
2**70, ``"mixed"``, ``"uniform"``) or any strategy of positive integers, e.g.
``st.integers(1, 2**70)`` or ``st.sampled_from([25, 300])``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from . import generators as gen

__all__ = [
    "bidirectional",
    "boxes",
    "capacities",
    "cycle_unions",
    "switch_topologies",
    "switched_cycles",
    "topologies",
]


def capacities(mode: str = "mixed") -> st.SearchStrategy[int]:
    """Positive integer capacities: see :func:`collcert.fuzz.generators.capacity_drawer`."""
    drawer = gen.capacity_drawer(mode)

    @st.composite
    def _cap(draw: Any) -> int:
        return drawer(gen.HypothesisSource(draw))

    return _cap()


def _drawer(caps: str | st.SearchStrategy[int] | None) -> gen.CapacityDrawer | str | None:
    if caps is None or isinstance(caps, str):
        return caps
    strategy = caps

    def draw_cap(src: gen.Source) -> int:
        if not isinstance(src, gen.HypothesisSource):
            raise TypeError("a capacity strategy needs a hypothesis source")
        value = src.draw(strategy)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"capacity strategy produced {value!r}: need a positive integer")
        return value

    return draw_cap


def _build(builder: Any, **kwargs: Any) -> st.SearchStrategy[Any]:
    caps = _drawer(kwargs.pop("capacities", None))

    @st.composite
    def _topo(draw: Any) -> Any:
        return builder(gen.HypothesisSource(draw), capacities=caps, **kwargs)

    return _topo()


def cycle_unions(*, min_compute: int = 2, max_compute: int = 6, max_cycles: int = 4,
                 switches: int = 0,
                 capacities: str | st.SearchStrategy[int] | None = None) -> st.SearchStrategy[Any]:
    """Direct-connect Eulerian digraphs: unions of random directed cycles."""
    return _build(gen.cycle_union, min_compute=min_compute, max_compute=max_compute,
                  max_cycles=max_cycles, switches=switches, capacities=capacities)


def bidirectional(*, min_compute: int = 2, max_compute: int = 6, max_extra: int = 4,
                  capacities: str | st.SearchStrategy[int] | None = None
                  ) -> st.SearchStrategy[Any]:
    """Bidirectional topologies with symmetric capacities (no switches)."""
    return _build(gen.bidirectional, min_compute=min_compute, max_compute=max_compute,
                  max_extra=max_extra, capacities=capacities)


def switch_topologies(*, min_compute: int = 2, max_compute: int = 6, max_tiers: int = 2,
                      max_switches_per_tier: int = 3, direct_links: bool = True,
                      capacities: str | st.SearchStrategy[int] | None = None
                      ) -> st.SearchStrategy[Any]:
    """Switch topologies: leaf switches, 1..max_tiers tiers, oversubscribed uplinks."""
    return _build(gen.switched, min_compute=min_compute, max_compute=max_compute,
                  max_tiers=max_tiers, max_switches_per_tier=max_switches_per_tier,
                  direct_links=direct_links, capacities=capacities)


def boxes(*, max_boxes: int = 3, max_per_box: int = 4,
          capacities: str | st.SearchStrategy[int] | None = None) -> st.SearchStrategy[Any]:
    """Box-structured topologies: fast intra-box links, slow inter-box fabric."""
    return _build(gen.boxes, max_boxes=max_boxes, max_per_box=max_per_box,
                  capacities=capacities)


def switched_cycles(*, min_compute: int = 2, max_compute: int = 5, max_switches: int = 2,
                    capacities: str | st.SearchStrategy[int] | None = None
                    ) -> st.SearchStrategy[Any]:
    """Directed cycles through compute and switch nodes (asymmetric switch topologies)."""
    return _build(gen.switched_cycles, min_compute=min_compute, max_compute=max_compute,
                  max_switches=max_switches, capacities=capacities)


def topologies(*, max_nodes: int = 8, switches: bool = True, kinds: Sequence[str] | None = None,
               capacities: str | st.SearchStrategy[int] | None = None
               ) -> st.SearchStrategy[Any]:
    """Any family (``kinds`` restricts them) with at most ``max_nodes`` nodes in all."""
    return _build(gen.random_topology, max_nodes=max_nodes, switches=switches, kinds=kinds,
                  capacities=capacities)
