"""The workflow runner: the sandbox, strict or sharing the workflow code, or none.

Three modes, from safest to cheapest:

* **strict** (``workflow_runner()``: tests and the replayer): only the contract package, the
  wire models (``schemas``) and pydantic pass through. Every new run imports the workflow
  modules afresh, so no module state can leak between runs, and whatever they import of the
  clock, randomness, files or the network is a restricted proxy that raises at run time.
* **shared** (``workflow_runner(share_workflow_code=True)``, what ``workers/main.py`` runs): the
  ``workflows`` package passes through as well, imported once per process. What the sandbox
  still enforces: ``open``/``input`` and other restricted builtins during every activation,
  the restricted modules for any import a workflow makes at run time, and a fresh instance per
  run. What it gives up: the per-run isolation of module globals (no workflow module holds any:
  ``tests/workflows/test_turn_state.py``) and the run-time proxies on clocks and randomness for
  the workflow modules' own top-level imports (``workflows/ruff.toml`` bans those imports, and
  the test workers and every replay run strict). It saves re-importing the workflow modules
  for every run (bench/RESULTS.md).
* **none** (``PERSYN_WORKFLOW_SANDBOX=false``): no sandbox at all, the least CPU.

Passing the shared packages through means the sandbox imports them once per process instead
of once per workflow run, and workflow code shares the attribution registry with the
interceptor.
"""

from __future__ import annotations

from temporalio.worker import UnsandboxedWorkflowRunner, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

PASSTHROUGH = ("contract", "schemas", "pydantic", "pydantic_core", "annotated_types")
"""Modules the sandbox shares with the host: pure, deterministic, imported once per process.

``schemas`` imports ``ulid`` (and pydantic its two helpers) at module level, so these arrive
with it from the host's modules rather than being re-imported per run."""

WORKFLOW_CODE = "workflows"
"""The package the shared mode passes through as well."""


def workflow_runner(*, sandboxed: bool = True, share_workflow_code: bool = False) -> WorkflowRunner:
    """The runner a Persyn worker uses; the replayer and tests take the strict sandbox.

    Args:
        sandboxed: Run workflow code in the determinism sandbox.
        share_workflow_code: Pass the ``workflows`` package through the sandbox too (the
            module docstring says what that gives up); ignored without the sandbox.
    """
    if not sandboxed:
        return UnsandboxedWorkflowRunner()
    shared = (*PASSTHROUGH, WORKFLOW_CODE) if share_workflow_code else PASSTHROUGH
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*shared)
    )
