"""What the codec endpoint does to payloads: open them for display, seal what clients send.

``temporal/codec_server.py`` speaks the remote codec protocol over HTTP; these are the payload
transforms behind its two operations. A payload that cannot be opened becomes a short
placeholder instead of failing the page; what a client seals is sealed with the key of the
agent it is for, so it goes when that agent is shredded.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from temporalio.api.common.v1 import Payload

from schemas.ids import check_handle
from temporal.codec import (
    AGENT_FIELD,
    AGENT_META,
    ENCODING,
    AgentPayloadCodec,
    PayloadShreddedError,
    seal,
)
from temporal.keyring import NoSuchAgentError

log = logging.getLogger("persyn.codec")


def placeholder(reason: str) -> Payload:
    """A JSON string payload the UI shows where a payload could not be opened."""
    return Payload(metadata={"encoding": b"json/plain"}, data=json.dumps(f"[{reason}]").encode())


async def decode_for_display(
    codec: AgentPayloadCodec, payloads: Sequence[Payload]
) -> list[Payload]:
    """Open each payload on its own, putting a placeholder where one cannot be opened."""
    opened: list[Payload] = []
    for payload in payloads:
        try:
            opened.extend(await codec.decode([payload]))
        except PayloadShreddedError as err:
            opened.append(placeholder(str(err)))
        except ValueError as err:
            opened.append(placeholder(f"unreadable: {err}"))
    return opened


class EncodeRefusedError(ValueError):
    """What a client asked to seal names an agent that does not exist."""


def _named_agent(payload: Payload, agent: str | None) -> tuple[str | None, bool]:
    """The agent a payload is for, and whether the client named it (rather than its JSON)."""
    named = agent or payload.metadata.get(AGENT_META, b"").decode(errors="replace") or None
    if named is None:
        found = AGENT_FIELD.search(payload.data)
        return (found.group(1).decode() if found else None), False
    try:
        return check_handle(named), True
    except ValueError as err:
        raise EncodeRefusedError(str(err)) from None


async def encode_for_client(
    codec: AgentPayloadCodec, payloads: Sequence[Payload], *, agent: str | None
) -> list[Payload]:
    """Seal what a client sends with the key of the agent it is for, whoever the client is.

    The agent is ``agent`` (from the URL or the ``X-Persyn-Agent`` header), else each
    payload's ``persyn-agent`` metadata (taken off before sealing), else the agent its JSON
    names. A payload that names none is sealed with the deployment's shared key, which no
    shred reaches: the protocol does not say which workflow a payload is for.

    Raises:
        EncodeRefusedError: The client named an agent that does not exist (an agent its
            JSON names but that does not exist gets the shared key: the worker refuses it).
    """
    sealed: list[Payload] = []
    for payload in payloads:
        if payload.metadata.get("encoding") == ENCODING:
            sealed.append(payload)
            continue
        handle, explicit = _named_agent(payload, agent)
        if handle is None:
            log.info("sealing a payload that names no agent with the shared key")
        try:
            key = await codec.keyring.own_key(handle)
        except NoSuchAgentError as err:
            if explicit:
                raise EncodeRefusedError(f"{err}: name an existing agent's handle") from None
            key = await codec.keyring.own_key(None)
        bare = Payload()
        bare.CopyFrom(payload)
        if AGENT_META in bare.metadata:
            del bare.metadata[AGENT_META]
        sealed.append(seal(key, bare))
    return sealed
