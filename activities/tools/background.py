"""Starting a tool's background workflow: once per call, visible in the Web UI.

Tools whose work outlasts a turn (a sandbox task, an image render) acknowledge at once and
start a workflow of their own; a retried tool call finds the one it started running.
"""

from __future__ import annotations

import contextlib

from pydantic import BaseModel
from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import WorkflowAlreadyStartedError

from contract import names
from schemas.tools import ToolContext


async def start_once(
    client: Client,
    workflow: str,
    arg: BaseModel,
    *,
    workflow_id: str,
    context: ToolContext,
    trigger: str,
    summary: str,
    details: str,
) -> None:
    """Start ``workflow`` as ``workflow_id`` unless it already runs, tagged for the Web UI.

    It runs on the calling activity's task queue (the default one outside an activity), with
    the agent, channel, conversation and ``trigger`` as search attributes.
    """
    queue = activity.info().task_queue if activity.in_activity() else names.TASK_QUEUE
    with contextlib.suppress(WorkflowAlreadyStartedError):
        await client.start_workflow(
            workflow,
            arg,
            id=workflow_id,
            task_queue=queue,
            search_attributes=names.search_attributes(
                agent=context.agent,
                channel=context.channel.key,
                conversation=context.conversation_id,
                trigger=trigger,
            ),
            static_summary=summary,
            static_details=details,
        )
