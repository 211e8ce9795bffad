"""IDs a workflow gives to what a local activity commits: the same in every attempt of a task.

A local activity runs inside its workflow task and may commit before the task completes. A
task that never completes (a killed worker, an unreachable server) runs again at a later
``workflow.now()``, so an ID made from ``now()`` would name the same thing twice and record
it twice. The run's start time and its seeded randomness do not change between attempts.
"""

from __future__ import annotations

from temporalio import workflow

from schemas.ids import ulid_from_parts


def task_stable_id(patch: str) -> str:
    """A ULID from the run's start time and its seeded randomness (workflow code only).

    Args:
        patch: The patch that introduced it: runs recorded before it made the ID from
            ``workflow.now()``, and still do when replayed.
    """
    bits = workflow.random().getrandbits(80)
    if workflow.patched(patch):
        return ulid_from_parts(workflow.info().workflow_start_time, bits)
    return ulid_from_parts(workflow.now(), bits)


def run_start_id() -> str:
    """A ULID from the run's start time and its seeded randomness (workflow code only).

    What :func:`task_stable_id` makes once its patch is deprecated: the caller asks
    ``workflow.deprecate_patch`` where it asked for the patch.
    """
    return ulid_from_parts(workflow.info().workflow_start_time, workflow.random().getrandbits(80))
