"""Topologies from real machines (docs/importing.md).

``import_topology(path)`` reads a file in one of :data:`FORMATS` (detected from
its content unless ``fmt`` says) and returns an :class:`Imported`: the
``collcert-topology/1`` :class:`~collcert.Topology`, what each node is, the
speeds that were assumed, and what the file lacks. ``collcert optimum FILE``,
``collcert import FILE`` and every command that takes a topology go through it.

* ``nccl-xml``: NCCL's topology XML (``NCCL_TOPO_DUMP_FILE``; cloud providers'
  hand-written ``NCCL_TOPO_FILE`` files), :mod:`.nccl_xml`;
* ``nvidia-smi``: the matrix ``nvidia-smi topo -m`` prints, :mod:`.nvidia_smi`;
* ``json``: collcert's own ``collcert-topology/1`` (docs/topology.md).

Beside them, the reader of measurements: :func:`read_nccl_tests` reads nccl-tests output
(every ``*_perf`` test, old and new column sets, launcher tags, NCCL's debug lines) into
:class:`NcclTestsLog` runs for ``collcert measured`` (docs/measured.md).

Modules:

``importer``    :func:`import_topology`, :func:`import_text`, :func:`detect_format`,
                :class:`Imported`: the format, the options, the machines completed and
                assembled; :data:`MAX_BOXES`, the most copies ``boxes`` makes
``nccl_xml``    NCCL's topology XML, read into machines
``nvidia_smi``  the ``nvidia-smi topo -m`` matrix, read into a machine
``machine``     one host before it becomes a topology, and their assembly (boxes
                replicated, NICs joined by a network switch, dead switches dropped)
``speeds``      the link speeds assumed where a file gives none (nominal or NCCL's)
``nccl_tests``  nccl-tests output read line by line (``nccl_tests_table``: the columns, the
                rows and their numbers; ``nccl_tests_run``: one run, its test and ranks)
"""

from .importer import FORMATS, MAX_BOXES, Imported, detect_format, import_text, import_topology
from .nccl_tests import NcclTestsLog, parse_nccl_tests, read_nccl_tests
from .nccl_tests_run import TESTS as NCCL_TESTS
from .nccl_tests_run import Run as NcclTestsRun
from .nccl_tests_table import LogError

__all__ = ["FORMATS", "MAX_BOXES", "NCCL_TESTS", "Imported", "LogError", "NcclTestsLog",
           "NcclTestsRun",
           "detect_format", "import_text", "import_topology", "parse_nccl_tests",
           "read_nccl_tests"]
