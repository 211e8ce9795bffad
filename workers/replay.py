"""The replayer: recorded histories against today's workflow code, configured as a worker is.

A ``Worker`` built from a client takes that client's data converter (the pydantic converter
with the payload codec) and its worker-side interceptors (attribution, tracing). The replayer
takes them the same way, from a client made by :func:`temporal.client.connect`, so a history
replays exactly as a worker would run it. ``connect(..., lazy=True)`` builds that client
without reaching a server: replaying needs no running Temporal.
"""

from __future__ import annotations

import json
from pathlib import Path

import temporalio.worker
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from workers.build import WORKFLOWS
from workers.runner import workflow_runner


class HistoryFileError(ValueError):
    """A file is not a workflow history; the message names the file and what is wrong."""


def replayer(client: Client, *, share_workflow_code: bool = False) -> Replayer:
    """A ``Replayer`` of every Persyn workflow with ``client``'s converter and interceptors.

    The sandbox is always on: a worker may run without it only once its workflows pass here.
    ``share_workflow_code`` runs it as the worker process does (``workers.runner``), for
    measuring replay cost rather than checking determinism.
    """
    interceptors = [
        i for i in client.config()["interceptors"] if isinstance(i, temporalio.worker.Interceptor)
    ]
    return Replayer(
        workflows=WORKFLOWS,
        workflow_runner=workflow_runner(share_workflow_code=share_workflow_code),
        namespace=client.namespace,
        data_converter=client.data_converter,
        interceptors=interceptors,
    )


def load_history(path: Path) -> WorkflowHistory:
    """The history in ``path``, as ``temporal workflow show --output json`` writes it.

    The replayer needs a workflow ID only to name the run; the file's stem stands in for it.

    Raises:
        HistoryFileError: The file is unreadable, not JSON, or holds no history events.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise HistoryFileError(f"{path}: cannot read it ({err.__class__.__name__})") from err
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise HistoryFileError(f"{path}: not JSON ({err.msg}, line {err.lineno})") from err
    if not isinstance(data, dict) or not isinstance(data.get("events"), list) or not data["events"]:
        raise HistoryFileError(
            f"{path}: no history events; export one with "
            "`temporal workflow show --workflow-id ID --output json > FILE`"
        )
    try:
        return WorkflowHistory.from_json(path.stem, data)
    except Exception as err:  # protobuf's parse errors share no base class worth naming
        first = str(err).splitlines()[0] if str(err) else err.__class__.__name__
        raise HistoryFileError(f"{path}: not a workflow history ({first})") from err
