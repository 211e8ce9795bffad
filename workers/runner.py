"""The workflow sandbox: standard restrictions, with Persyn's pure modules passed through.

Passing the wire models and helpers through means the sandbox imports them once per process
instead of once per workflow run, and workflow code shares the attribution registry with the
interceptor.
"""

from __future__ import annotations

from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

PASSTHROUGH = ("schemas", "temporal", "pydantic", "pydantic_core", "ulid", "annotated_types")


def workflow_runner() -> SandboxedWorkflowRunner:
    """The sandboxed runner every Persyn worker (and replayer) uses."""
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH)
    )
