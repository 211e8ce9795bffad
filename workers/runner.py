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

Both sandboxed modes read a payload's serialization context (which workflow, which activity:
the codec picks the agent's key by it) straight off the sandboxed instance. The SDK's sandbox
enters the sandbox for that lookup, once for every payload a task carries, and the entry (an
``exec`` under the restricted importer) cost more than all the workflow code a replay runs
(bench/RESULTS.md, "Workflow-side CPU per activation"). The lookup is the SDK's own
bookkeeping: no workflow code runs in it, so nothing the sandbox guards is given up.
"""

from __future__ import annotations

from dataclasses import dataclass

from temporalio.converter import SerializationContext
from temporalio.converter._extstore import StorageDriverStoreContext
from temporalio.worker import UnsandboxedWorkflowRunner, WorkflowRunner
from temporalio.worker._command_aware_visitor import CommandInfo
from temporalio.worker._workflow_instance import WorkflowInstance, WorkflowInstanceDetails
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions
from temporalio.worker.workflow_sandbox._in_sandbox import InSandbox
from temporalio.worker.workflow_sandbox._runner import _Instance as _SandboxedInstance

PASSTHROUGH = ("contract", "schemas", "pydantic", "pydantic_core", "annotated_types")
"""Modules the sandbox shares with the host: pure, deterministic, imported once per process.

``schemas`` imports ``ulid`` (and pydantic its two helpers) at module level, so these arrive
with it from the host's modules rather than being re-imported per run."""

WORKFLOW_CODE = "workflows"
"""The package the shared mode passes through as well."""


_IN_SANDBOX = "__temporal_in_sandbox"
"""Where the SDK's sandboxed instance keeps the object that runs inside the sandbox."""


class _DirectContextInstance(_SandboxedInstance):
    """A sandboxed workflow instance whose serialization contexts are read without entering it.

    Falls back to the SDK's way if the in-sandbox object is not where this SDK version keeps
    it, so an SDK upgrade costs speed, never correctness (``tests/workers/test_runner.py``
    says which one runs).
    """

    def _inside(self) -> InSandbox | None:
        inside: object = self.globals_and_locals.get(_IN_SANDBOX)
        return inside if isinstance(inside, InSandbox) else None

    def get_serialization_context(
        self, command_info: CommandInfo | None
    ) -> SerializationContext | None:
        inside = self._inside()
        if inside is None:
            return super().get_serialization_context(command_info)
        return inside.get_serialization_context(command_info)

    def get_external_store_context(
        self, command_info: CommandInfo | None
    ) -> StorageDriverStoreContext:
        inside = self._inside()
        if inside is None:
            return super().get_external_store_context(command_info)
        return inside.get_external_store_context(command_info)


@dataclass(frozen=True)
class DirectContextSandboxRunner(SandboxedWorkflowRunner):
    """The SDK's sandbox, with payload contexts read directly (the module docstring says why)."""

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        """Implements :py:meth:`WorkflowRunner.create_instance`."""
        return _DirectContextInstance(det, self.runner_class, self.restrictions)


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
    return DirectContextSandboxRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*shared)
    )
