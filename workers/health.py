"""Whether the supervised processes serve, as ``persyn status``, ``up``, ``chat`` and ``send`` ask.

A worker is healthy while its own liveness beacon is fresh (:mod:`workers.liveness`), not while
Temporal lists pollers, which it does for minutes after a worker dies. Only a home with no
worker of its own (workers run elsewhere, against an existing deployment) falls back to the
pollers Temporal reports.
"""

from __future__ import annotations

import time

from pydantic import BaseModel
from temporalio.client import Client

from schemas.codec import get_codec_settings
from schemas.local_model import base_url
from schemas.settings import Settings
from temporal.devserver import port_open
from temporal.inbox import has_pollers
from workers import channel_processes, liveness
from workers.channel_processes import ChannelProcess
from workers.model_server import model_server, wanted
from workers.process import CODEC, MODEL_SERVER, WORKER, live_pid
from workers.supervisor_state import ChildState, read_state


class ComponentStatus(BaseModel):
    """One component's health as ``persyn status`` shows it."""

    name: str
    healthy: bool
    address: str
    pid: int | None = None
    detail: str = ""


def has_own_worker(settings: Settings) -> bool:
    """Whether this home runs (or ran) a worker that renews a beacon here."""
    return read_state(settings) is not None or bool(liveness.beacons(settings))


async def serving(settings: Settings, client: Client) -> bool:
    """Whether some worker serves the task queue right now (for ``chat`` and ``send``)."""
    if liveness.alive(settings):
        return True
    if has_own_worker(settings) or settings.embedded:
        return False
    return await has_pollers(client, settings.task_queue)


def _child(settings: Settings, name: str) -> ChildState | None:
    state = read_state(settings)
    return state.children.get(name) if state is not None else None


def _history(child: ChildState | None) -> str:
    """Restarts so far, for the detail column."""
    if child is None or not child.restarts:
        return ""
    return f"; restarted {child.restarts}x, last after {child.last_exit}"


def _spare(child: ChildState | None) -> str:
    """The worker's waiting spare, for the detail column (workers/standby.py)."""
    if child is None or child.standby_pid is None:
        return ""
    return f"; spare ready (pid {child.standby_pid})"


def _not_running(child: ChildState | None) -> str:
    if child is None:
        return "not running: run `persyn up`"
    if child.error:
        return child.error
    if child.pid is None and child.restart_at is not None:
        wait = max(0.0, child.restart_at.timestamp() - time.time())
        return f"died ({child.last_exit}), restarting in {wait:.0f}s"
    return "starting"


async def worker_status(settings: Settings, client: Client | None) -> ComponentStatus:
    """The worker, from its beacon (or Temporal's pollers for a home without a worker)."""
    address = f"task queue {settings.task_queue}"
    child = _child(settings, WORKER)
    alive = liveness.alive(settings)
    if alive:
        newest = max(alive, key=lambda b: b.at)
        return ComponentStatus(
            name="worker",
            healthy=True,
            address=address,
            pid=newest.process.pid,
            detail=f"alive (beacon {time.time() - newest.at:.0f}s ago)"
            + _spare(child)
            + _history(child),
        )
    if not settings.embedded and not has_own_worker(settings) and client is not None:
        polling = await has_pollers(client, settings.task_queue)
        return ComponentStatus(
            name="worker",
            healthy=polling,
            address=address,
            detail="polled, as Temporal sees it" if polling else "no poller on the task queue",
        )
    return ComponentStatus(
        name="worker",
        healthy=False,
        address=address,
        pid=live_pid(settings, WORKER),
        detail=_not_running(child) + _history(child),
    )


def model_server_status(settings: Settings) -> ComponentStatus | None:
    """The local model server, if some task runs on the local model."""
    if not wanted(settings):
        return None
    child = _child(settings, MODEL_SERVER)
    pid = live_pid(settings, MODEL_SERVER)
    if child is None and read_state(settings) is not None:
        # The running supervisor was started when nothing ran on the local model.
        return ComponentStatus(
            name=MODEL_SERVER,
            healthy=False,
            address=base_url(settings),
            detail="the stack started without it: run `persyn down`, then `persyn up`",
        )
    try:
        server = model_server(settings)
    except RuntimeError as err:
        return ComponentStatus(
            name=MODEL_SERVER, healthy=False, address=base_url(settings), detail=str(err)
        )
    if server.listening():
        busy = "" if server.answers() else " (busy generating)"
        return ComponentStatus(
            name=MODEL_SERVER,
            healthy=True,
            address=server.base_url,
            pid=pid,
            detail=f"{server.model_path.name}{busy}" + _history(child),
        )
    return ComponentStatus(
        name=MODEL_SERVER,
        healthy=False,
        address=server.base_url,
        pid=pid,
        detail=_not_running(child) + _history(child),
    )


def codec_status(settings: Settings) -> ComponentStatus | None:
    """The payload codec's endpoint (the Web UI reads payloads through it), if the codec is on."""
    codec = get_codec_settings()
    if not codec.enabled:
        return None
    child = _child(settings, CODEC)
    address = f"http://127.0.0.1:{codec.port}"
    answers = port_open(codec.port)
    return ComponentStatus(
        name=CODEC,
        healthy=answers,
        address=address,
        pid=live_pid(settings, CODEC),
        detail=("decodes payloads for the Web UI" if answers else _not_running(child))
        + _history(child),
    )


def channel_status(settings: Settings, process: ChannelProcess) -> ComponentStatus | None:
    """An inbound channel's process (:mod:`workers.channel_processes`), if it is set up."""
    if not process.configured(settings):
        return None
    child = _child(settings, process.name)
    pid = live_pid(settings, process.name)
    return ComponentStatus(
        name=process.name,
        healthy=pid is not None,
        address=process.address(settings),
        pid=pid,
        detail=(process.activity(settings) if pid is not None else _not_running(child))
        + _history(child),
    )


def channel_statuses(settings: Settings) -> list[ComponentStatus]:
    """Every inbound channel process ``settings`` set up, in registration order."""
    found = (channel_status(settings, process) for process in channel_processes.REGISTRY)
    return [status for status in found if status is not None]
