"""Pictures: topologies with their bottleneck cut, schedule trees and link loads,
steady-state broadcast schedules, and algbw-versus-size plots.

Needs matplotlib (``pip install 'collcert[draw]'``), imported only when a picture
is made: importing this package does not import it, and :func:`require_matplotlib`
turns its absence into a clear :class:`DrawError` (exit status 2).

Modules:

``common``            :class:`DrawError`, :func:`require_matplotlib`, :func:`check_output`
                      (the format from the file name), :func:`save`
``model``             what a picture shows, computed exactly before anything is drawn:
                      :func:`cut_info` (the bottleneck cut S*), :func:`read_schedule_for_drawing`
                      (a schedule file checked as ``collcert audit`` checks it, with its loads)
``layout``            where every node goes: boxes, rings, grids, layers; one node per box
``network``           :func:`draw_network`: the cut, one tree, or every link's load
``sheet``             the figure's size for a network picture, and its legend band
``treeplot``          one schedule tree drawn as a tree (the right panel of ``--tree``)
``steady_broadcast``  :func:`draw_steady`: a steady-state broadcast schedule (Legrand et al.
                      2003), its trees and one period
``sizeplot``          :func:`plot_algbw`: algbw against message size (``--plot``)
``compare``           :func:`plot_comparison`: every schedule of ``collcert compare``
``measured``          :func:`plot_measured`: an nccl-tests measurement beside the optimum
                      and the baselines (``collcert measured --plot``)
"""

from .common import DrawError, check_output, require_matplotlib, save
from .compare import CompareSeries, plot_comparison
from .measured import MeasuredLine, ModelLine, plot_measured
from .model import CutInfo, DrawnSchedule, DrawnTree, cut_info, read_schedule_for_drawing
from .network import draw_network
from .sizeplot import Series, plot_algbw
from .steady_broadcast import draw_steady

__all__ = [
    "CompareSeries",
    "CutInfo",
    "DrawError",
    "DrawnSchedule",
    "DrawnTree",
    "MeasuredLine",
    "ModelLine",
    "Series",
    "check_output",
    "cut_info",
    "draw_network",
    "draw_steady",
    "plot_algbw",
    "plot_comparison",
    "plot_measured",
    "read_schedule_for_drawing",
    "require_matplotlib",
    "save",
]
