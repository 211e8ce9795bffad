"""System tests: the whole stack run as an operator runs it, judged from outside.

``systemtests.acceptance`` lives the §9 acceptance week; ``systemtests.soak`` keeps agents
talking while the worker, Temporal and PostgreSQL are killed. Each runs from the command line
(``python -m systemtests.acceptance``, ``python -m systemtests.soak``) and, shortened, from
``tests/acceptance`` and ``tests/soak``. Their figures go to ``bench/RESULTS.md`` through the
benchmarks' harness (``bench.harness``).
"""
