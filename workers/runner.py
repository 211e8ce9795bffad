"""The workflow runner: the sandbox with Persyn's workflow-safe packages passed through, or none.

Only the contract package, the wire models (``schemas``) and pydantic pass through: workflow code
needs nothing else from outside ``workflows/`` (``workflows/ruff.toml`` bans the rest). Passing
them through means the sandbox imports them once per process instead of once per workflow run,
and workflow code shares the attribution registry with the interceptor.

The sandbox catches non-deterministic calls at run time and costs CPU on every workflow task
(bench/RESULTS.md). Tests and the replayer always run sandboxed, so a worker may run without it
(``PERSYN_WORKFLOW_SANDBOX=false``) once the workflows it serves have passed them.
"""

from __future__ import annotations

from temporalio.worker import UnsandboxedWorkflowRunner, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

PASSTHROUGH = ("contract", "schemas", "pydantic", "pydantic_core", "annotated_types")
"""Modules the sandbox shares with the host: pure, deterministic, imported once per process.

``schemas`` imports ``ulid`` (and pydantic its two helpers) at module level, so these arrive
with it from the host's modules rather than being re-imported per run."""


def workflow_runner(*, sandboxed: bool = True) -> WorkflowRunner:
    """The runner a Persyn worker uses; the replayer and tests always take the sandbox."""
    if not sandboxed:
        return UnsandboxedWorkflowRunner()
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH)
    )
