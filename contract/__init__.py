"""What workflow code may import besides ``schemas``: pure, deterministic, no I/O.

- :mod:`contract.names`: workflow IDs, workflow type names, handler names, task queue and
  search attributes, defined once and referenced by symbol on both sides of the wire;
- :mod:`contract.attribution`: binding the attribution a run carries to what it starts;
- :mod:`contract.policies`: timeouts and retry policies, typed as the SDK's activity configs.
- :mod:`contract.provider_errors`: the classified provider failures whose names the model
  call's retry policy reads.

Workers pass this package, ``schemas`` and pydantic through the determinism sandbox
(``workers.runner``), so they are imported once per process rather than once per workflow run;
anything else in ``temporal/`` does I/O and is banned from workflows (``workflows/ruff.toml``).
"""
