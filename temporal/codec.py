"""The payload codec: every payload Temporal stores is sealed with its agent's key.

The codec runs after the pydantic converter has made a payload and before it leaves the
process (and the other way round on the way in): it replaces each payload with an AES-GCM
sealed copy whose metadata names the key (``persyn-key``). Decoding needs nothing but that
name, so the Web UI's codec endpoint, a replayer and any worker can open a payload without
knowing where it came from. A payload without the codec's encoding passes through untouched:
histories recorded before the codec, and JSON an integrator sends with the ``temporal`` CLI.

Which agent's key seals a payload comes from Temporal's serialization context (the workflow
ID the payload belongs to), in this order:

1. ``agent/{handle}``, ``heartbeat/{handle}``, ``maintenance/{handle}...``: the handle.
2. A workflow whose payloads this process has opened before (``conversation/{ulid}``,
   ``activation/{ulid}``, ...): the agent whose key sealed them.
3. The payload itself: the first ``"agent"`` or ``"handle"`` field of its JSON (every Persyn
   input names its agent, so the first payload of a new workflow, its start input, does).
4. Otherwise the deployment's shared key: still encrypted, but not shredded with any agent.
"""

from __future__ import annotations

import re
import secrets
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Self

from cryptography.exceptions import InvalidTag
from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    DataConverter,
    PayloadCodec,
    SerializationContext,
    WithSerializationContext,
)

from temporal.keyring import DataKey, Keyring, ShreddedKeyError

ENCODING = b"binary/persyn-encrypted"
"""Metadata ``encoding`` of a sealed payload."""
KEY_ID = "persyn-key"
"""Metadata naming the data key that sealed the payload."""
AGENT_META = "persyn-agent"
"""Metadata a client of the codec endpoint may set to name the agent a payload is for."""

_NONCE = 12
_HANDLE = r"[a-z][a-z0-9-]{0,30}[a-z0-9]"
_OWN_ID = re.compile(rf"^(?:agent|heartbeat|maintenance)/({_HANDLE})(?:-\d{{4}}-\d\d-\d\dT.*)?$")
AGENT_FIELD = re.compile(rf'"(?:agent|handle)":"({_HANDLE})"'.encode())
"""The first ``"agent"``/``"handle"`` field of a JSON payload (JSON escapes every quote inside
a string, so this matches only a real key, never text)."""


class PayloadShreddedError(ValueError):
    """A payload was sealed with a key that no longer exists; its content is gone for good."""


class _Scopes:
    """Which agent each workflow ID belongs to, as learned from its payloads (bounded).

    The first answer stays: a workflow's first payload is its start input, written by Persyn
    for the agent it runs for, and a later payload (a signal from any client) cannot move the
    workflow under another agent's key.
    """

    def __init__(self, capacity: int = 50_000) -> None:
        self._agents: OrderedDict[str, str] = OrderedDict()
        self._capacity = capacity

    def get(self, workflow_id: str) -> str | None:
        return self._agents.get(workflow_id)

    def learn(self, workflow_id: str, agent: str) -> None:
        if workflow_id in self._agents:
            return
        self._agents[workflow_id] = agent
        if len(self._agents) > self._capacity:
            self._agents.popitem(last=False)


def agent_of_workflow(workflow_id: str) -> str | None:
    """The agent a workflow ID names by itself (``agent/{handle}`` and the schedules')."""
    found = _OWN_ID.match(workflow_id)
    return found.group(1) if found else None


class AgentPayloadCodec(PayloadCodec, WithSerializationContext):
    """Seals payloads with their agent's key and opens them with the key they name.

    Args:
        keyring: Where keys come from (shared by every codec of the process).
        workflow_id: The workflow the payloads belong to, when Temporal says.
    """

    def __init__(
        self, keyring: Keyring, *, workflow_id: str | None = None, scopes: _Scopes | None = None
    ) -> None:
        self._keyring = keyring
        self._workflow_id = workflow_id
        self._scopes = scopes if scopes is not None else _Scopes()

    @property
    def keyring(self) -> Keyring:
        """Where this codec's keys come from."""
        return self._keyring

    def with_context(self, context: SerializationContext) -> Self:
        """This codec for the payloads of the workflow ``context`` names."""
        workflow_id = getattr(context, "workflow_id", None)
        if workflow_id == self._workflow_id:
            return self
        return type(self)(self._keyring, workflow_id=workflow_id, scopes=self._scopes)

    def _agent(self, payloads: Sequence[Payload]) -> str | None:
        workflow_id = self._workflow_id
        if workflow_id is not None:
            agent = agent_of_workflow(workflow_id) or self._scopes.get(workflow_id)
            if agent is not None:
                return agent
        for payload in payloads:
            found = AGENT_FIELD.search(payload.data)
            if found is not None:
                agent = found.group(1).decode()
                if workflow_id is not None:
                    self._scopes.learn(workflow_id, agent)
                return agent
        return None

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Seal every payload not sealed yet with the key of the agent it belongs to."""
        if all(p.metadata.get("encoding") == ENCODING for p in payloads):
            return list(payloads)
        key = await self._keyring.for_agent(self._agent(payloads))
        return [p if p.metadata.get("encoding") == ENCODING else seal(key, p) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Open every sealed payload; others pass through untouched.

        Raises:
            PayloadShreddedError: A payload's key was shredded.
        """
        named: list[str] = []
        for payload in payloads:
            if payload.metadata.get("encoding") != ENCODING:
                continue
            key_id = payload.metadata.get(KEY_ID, b"").decode(errors="replace")
            if not key_id:
                raise ValueError(f"a sealed payload names no key ({KEY_ID} metadata missing)")
            named.append(key_id)
        if not named:
            return list(payloads)
        try:
            keys = await self._keyring.open_keys(named)
        except ShreddedKeyError as err:
            raise PayloadShreddedError(str(err)) from None
        opened: list[Payload] = []
        for payload in payloads:
            if payload.metadata.get("encoding") != ENCODING:
                opened.append(payload)
                continue
            key = keys[payload.metadata[KEY_ID].decode(errors="replace")]
            if key.agent is not None and self._workflow_id is not None:
                self._scopes.learn(self._workflow_id, key.agent)
            opened.append(unseal(key, payload))
        return opened


def seal(key: DataKey, payload: Payload) -> Payload:
    """``payload`` (metadata and data) encrypted with ``key``, the key's ID bound in."""
    nonce = secrets.token_bytes(_NONCE)
    sealed = key.aead.encrypt(nonce, payload.SerializeToString(), key.id.encode())
    return Payload(metadata={"encoding": ENCODING, KEY_ID: key.id.encode()}, data=nonce + sealed)


def unseal(key: DataKey, payload: Payload) -> Payload:
    """The payload :func:`seal` sealed.

    Raises:
        ValueError: The sealed bytes were altered.
    """
    nonce, sealed = payload.data[:_NONCE], payload.data[_NONCE:]
    try:
        plain = key.aead.decrypt(nonce, sealed, key.id.encode())
    except InvalidTag:
        raise ValueError(
            f"a payload sealed with key {key.id} was altered: it cannot be opened"
        ) from None
    opened = Payload()
    opened.ParseFromString(plain)
    return opened


@dataclass(frozen=True)
class SealingDataConverter(DataConverter):
    """A data converter that keeps the copies it makes for each serialization context.

    The worker asks for a copy per payload sequence it visits (several passes over every
    activation and completion). With a context-aware codec each copy is a new converter, and
    building one costs about as much as sealing a payload; kept, a repeat costs a lookup.
    """

    _copies: dict[SerializationContext, DataConverter] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def with_context(self, context: SerializationContext) -> Self:
        """This converter for ``context``, made once per context."""
        found = self._copies.get(context)
        if found is None:
            found = super().with_context(context)
            if len(self._copies) >= 4096:  # contexts are per workflow and activity: bounded
                self._copies.clear()
            self._copies[context] = found
        return found  # type: ignore[return-value]
