"""The workflow runner: the sandbox with Persyn's pure modules passed through, or none.

Passing the wire models and helpers through means the sandbox imports them once per process
instead of once per workflow run, and workflow code shares the attribution registry with the
interceptor.

The sandbox catches non-deterministic calls at run time and costs CPU on every workflow task
(bench/RESULTS.md). Tests and the replayer always run sandboxed, so a worker may run without it
(``PERSYN_WORKFLOW_SANDBOX=false``) once the workflows it serves have passed them.
"""

from __future__ import annotations

from temporalio.worker import UnsandboxedWorkflowRunner, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

PASSTHROUGH = (
    "contract",
    "schemas",
    "temporal",
    "pydantic",
    "pydantic_core",
    "ulid",
    "annotated_types",
)


def workflow_runner(*, sandboxed: bool = True) -> WorkflowRunner:
    """The runner a Persyn worker uses; the replayer and tests always take the sandbox."""
    if not sandboxed:
        return UnsandboxedWorkflowRunner()
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH)
    )
