"""What every request of the web channel shares: the store, Temporal, the listener, limits."""

from __future__ import annotations

from dataclasses import dataclass, field

from fastapi import Request
from temporalio.client import Client

from schemas.settings import Settings
from store.db import Database
from usecases.listener import ChannelListener
from usecases.presence import WorkerPresence
from webchannel.body import DEFAULT_BODY_TIMEOUT_S
from webchannel.limits import MessageLimits
from webchannel.stream_caps import StreamCaps


@dataclass
class WebState:
    """Built once when the service starts (``app.lifespan``), closed when it stops."""

    settings: Settings
    db: Database
    client: Client
    presence: WorkerPresence
    """Whether a worker serves the task queue, which every submission watches."""
    max_body_bytes: int
    limits: MessageLimits
    listener: ChannelListener
    """The one LISTEN connection every stream of the process shares."""
    streams: StreamCaps = field(default_factory=StreamCaps)
    """Open streams, capped per token and in total."""
    body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S
    """Seconds a client has to send a request's body once its headers are in (then 408)."""


def web_state(request: Request) -> WebState:
    """The running service's shared state (a FastAPI dependency)."""
    state: WebState = request.app.state.web
    return state
