"""Fuzzing and brute-force checks (``collcert.fuzz``); a guide is in docs/fuzzing.md.

Modules (imported on demand; ``strategies`` needs hypothesis, ``z3proofs`` z3-solver):

``generators``  random valid topologies from ``random.Random(seed)`` or any source of choices
``strategies``  the same families as hypothesis strategies
``brute``       optima by exhaustive cut enumeration (small topologies)
``properties``  properties of the optimum and of schedules, as plain check functions
``outcomes``    how a property reports: PropertyFailure (it does not hold), Skipped
``allreduce``   properties of the allreduce rate, and Zhao et al. 2026's §5.7 hypothesis
``shrink``      shrink a failing topology (cycle edits, keeps it Eulerian); save regressions
``driver``      the differential driver behind ``collcert fuzz run``
``checking``    the property campaign behind ``collcert fuzz check``
``parallel``    run cases in worker processes or on a dask cluster (``--jobs``, ``--dask``)
``z3proofs``    Z3 proofs behind ``collcert prove``
"""
