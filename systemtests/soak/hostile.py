"""Hostile events mixed into the soak's traffic (issue 26): none may hold an agent's inbox.

Every few seconds one agent gets an event no channel adapter of ours would build, sent raw as a
client in any language can send it, through the ``submit`` update or the ``deliver`` signal:
NUL and lone surrogates in the speaker, bidirectional controls in a name, a channel name with a
line break or a slash, 10,000 levels of nesting, 100,000 characters, fields that do not exist.
Each must end in a one-line refusal (submit) or a ``failed`` marker (deliver) within the inbox's
bound, nothing of it may be stored, and the agents' ordinary traffic goes on being answered
(:mod:`systemtests.soak.checks` judges that as for any message).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from temporalio.api.common.v1 import Payload
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError

from contract import names
from schemas.events import MarkerAnswer, MarkerQuery
from schemas.ids import new_ulid
from store.db import Database
from workflows.agent import INBOX_HOLD_LIMIT

log = logging.getLogger("persyn.systemtests.soak")

REFUSAL_WAIT_S = 60.0
"""How long one hostile submission is given; the door answers in milliseconds."""


def _deep(levels: int) -> object:
    value: object = "x"
    for _ in range(levels):
        value = {"a": [value]}
    return value


def _event(rng: random.Random) -> tuple[str, dict[str, Any]]:
    """One hostile event: what it tries, and the payload (its ``event_id`` a fresh ULID)."""
    event: dict[str, Any] = {
        "event_id": new_ulid(),
        "channel": {"service": "web", "channel": "home"},
        "speaker": {"speaker_id": "stranger", "display_name": "Stranger"},
        "text": "hello",
    }
    kind = rng.choice(
        [
            "nul-speaker",
            "surrogate-name",
            "bidi-name",
            "newline-channel",
            "slash-channel",
            "deep-nesting",
            "huge-text",
            "unknown-field",
            "nul-text",
        ]
    )
    if kind == "nul-speaker":
        event["speaker"]["speaker_id"] = "u\x0017"
    elif kind == "surrogate-name":
        event["speaker"]["display_name"] = "In\ud800es"
    elif kind == "bidi-name":
        event["speaker"]["display_name"] = "\u202eseni"
    elif kind == "newline-channel":
        event["channel"]["channel"] = "x\ny"
    elif kind == "slash-channel":
        event["channel"]["channel"] = "../../x"
    elif kind == "deep-nesting":
        event["speaker"]["display_name"] = _deep(10_000)
    elif kind == "huge-text":
        event["text"] = "x" * 100_000
    elif kind == "unknown-field":
        event["trigger_override"] = "heartbeat"
    else:
        event["text"] = "hi\x00there"
    return kind, {"event": event}


def _raw(payload: dict[str, Any]) -> RawValue:
    # Escaped JSON, as a client in another language writes it (lone surrogates included).
    data = json.dumps(payload, ensure_ascii=True).encode()
    return RawValue(Payload(metadata={"encoding": b"json/plain"}, data=data))


@dataclass
class HostileSent:
    """One hostile event and how it ended."""

    agent: str
    kind: str
    via: str
    event_id: str
    took_s: float | None = None
    refusal: str | None = None
    problem: str | None = None


@dataclass
class HostileTraffic:
    """Sends one hostile event every ``every_s`` seconds until :attr:`stopping` is set."""

    client: Callable[[], Awaitable[Client]]
    handles: Sequence[str]
    rng: random.Random
    every_s: float
    sent: list[HostileSent] = field(default_factory=list)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self) -> None:
        """Send until stopped (outages are skipped: the door is judged, not the network)."""
        while not self.stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), self.every_s)
            if self.stopping.is_set():
                return
            try:
                await self._one()
            except Exception as err:  # an outage under way: this one did not reach the door
                log.info("hostile event not sent: %s", err)
                if self.sent and self.sent[-1].took_s is None and self.sent[-1].problem is None:
                    self.sent.pop()

    async def _one(self) -> None:
        handle = self.rng.choice(list(self.handles))
        kind, payload = _event(self.rng)
        via = self.rng.choice(["submit", "deliver"])
        sent = HostileSent(handle, kind, via, payload["event"]["event_id"])
        self.sent.append(sent)
        agent = (await self.client()).get_workflow_handle(names.agent_workflow_id(handle))
        began = time.monotonic()
        if via == "submit":
            try:
                await asyncio.wait_for(
                    agent.execute_update(names.SUBMIT, _raw(payload), id=new_ulid()),
                    REFUSAL_WAIT_S,
                )
                sent.problem = "accepted"
            except WorkflowUpdateFailedError as err:
                cause = err.cause
                if isinstance(cause, ApplicationError):
                    sent.refusal = cause.message
                else:
                    sent.problem = f"refused without a reason: {err}"
            sent.took_s = time.monotonic() - began
            return
        await agent.signal(names.DELIVER, _raw(payload))
        deadline = began + REFUSAL_WAIT_S
        while time.monotonic() < deadline:
            answer: MarkerAnswer = await agent.query(
                names.MARKER, MarkerQuery(event_id=sent.event_id), result_type=MarkerAnswer
            )
            if answer.marker is not None:
                sent.took_s = time.monotonic() - began
                sent.refusal = answer.marker.reason
                return
            await asyncio.sleep(0.2)  # polling a marker, as an integrator does
        sent.problem = "no marker"


async def hostile_violations(db: Database, sent: Sequence[HostileSent]) -> list[str]:
    """Each hostile event refused in one line, within the inbox's bound, and nothing stored."""
    found = []
    bound = INBOX_HOLD_LIMIT.total_seconds()
    for s in sent:
        if s.problem is not None:
            found.append(f"hostile {s.kind} via {s.via} to {s.agent}: {s.problem}")
        elif s.took_s is not None and s.took_s > bound:
            found.append(f"hostile {s.kind} via {s.via} held {s.agent} for {s.took_s:.0f} s")
        elif s.refusal is not None and "\n" in s.refusal:
            found.append(f"hostile {s.kind} via {s.via}: the refusal is not one line")
    ids = [s.event_id for s in sent]
    if ids:
        async with db.autocommit() as session:
            connection = await session.connection()
            stored = (
                await connection.exec_driver_sql(
                    "SELECT count(*) FROM dialog_turns WHERE id = ANY(%(ids)s)", {"ids": ids}
                )
            ).scalar_one()
        if stored:
            found.append(f"{stored} hostile events were stored as dialog")
    return found


def hostile_summary(sent: Sequence[HostileSent]) -> str:
    """One line: how many, by which door, and the slowest refusal."""
    refused = [s for s in sent if s.refusal is not None]
    slowest = max((s.took_s or 0.0 for s in refused), default=0.0)
    by_via = {via: sum(1 for s in refused if s.via == via) for via in ("submit", "deliver")}
    return (
        f"- hostile events: {len(refused)} of {len(sent)} refused in one line "
        f"({by_via['submit']} by submit, {by_via['deliver']} by deliver's marker); "
        f"slowest {slowest:.2f} s"
    )
