"""The voice transport: the external service that dials, transcribes and speaks.

It does only transport. The agent asks it to dial a number; once the call is answered, the
transport calls the web channel's voice endpoint as its response generator for every turn
(docs/channels.md, "Live voice"). One implementation: Vapi's ``POST /call``
(https://docs.vapi.ai/api-reference/calls/create), with a private key as bearer token, a
phone number to call from and an assistant whose custom LLM is this deployment's endpoint.

Vapi takes no idempotency key, so every dial carries the caller's own key in the call's
metadata, and :meth:`CallTransport.find` looks for it among the calls placed since: a dial
whose answer was lost is found there instead of being placed twice.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol

import httpx
from pydantic import ValidationError

from schemas.voice import CallRef, VoiceSettings

DIAL_TIMEOUT_S = 15.0
"""How long the transport has to accept a call request, or to list the calls placed."""

DIAL_KEY = "persyn_dial"
"""The metadata entry that carries a dial's key on the transport's call."""

FIND_LIMIT = 100
"""Calls one lookup reads (Vapi's own default); a full page without the key cannot tell."""


class TransportError(Exception):
    """The transport refused or failed to place the call; the message says why in one line."""


class DialUnansweredError(TransportError):
    """The request went out and no answer came back: the call may have been placed."""


class CallTransport(Protocol):
    """Something that can dial a person for an agent, and find a call it dialled."""

    async def dial(self, to: str, agent: str, first_message: str, *, key: str) -> CallRef:
        """Place a call to ``to`` for ``agent``, opening with ``first_message``.

        ``key`` travels with the call, so :meth:`find` can tell later whether it was placed.

        Raises:
            DialUnansweredError: No answer came: the call may or may not have been placed.
            TransportError: The call was not placed.
        """
        ...

    async def find(self, key: str, since: datetime) -> CallRef | None:
        """The call dialled with ``key`` at or after ``since``; ``None`` when there is none.

        Raises:
            TransportError: The transport could not tell (no answer, a refusal, too many calls).
        """
        ...


class VapiTransport:
    """Places calls through Vapi (``POST {base}/call``)."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str,
        phone_number_id: str,
        assistant_id: str | None = None,
        timeout_s: float = DIAL_TIMEOUT_S,
    ) -> None:
        self._key = api_key
        self._url = base_url.rstrip("/") + "/call"
        self._headers = {"Authorization": f"Bearer {api_key}"}
        self._phone_number_id = phone_number_id
        self._assistant_id = assistant_id
        self._timeout = timeout_s

    async def dial(self, to: str, agent: str, first_message: str, *, key: str) -> CallRef:
        """Ask Vapi to call ``to``; the call's ID is the one its turns will carry."""
        body: dict[str, object] = {
            "phoneNumberId": self._phone_number_id,
            "customer": {"number": to},
            # The model named in each turn is the agent's handle (the voice endpoint's rule).
            "assistantOverrides": {
                "firstMessage": first_message,
                "model": {"provider": "custom-llm", "model": agent},
                # Vapi's call object keeps the overrides, so its call list shows the key.
                "metadata": {"agent": agent, "direction": "outbound", DIAL_KEY: key},
            },
        }
        if self._assistant_id:
            body["assistantId"] = self._assistant_id
        try:
            async with httpx.AsyncClient(timeout=self._timeout) as http:
                answer = await http.post(self._url, json=body, headers=self._headers)
        except httpx.HTTPError as err:
            reason = type(err).__name__
            raise DialUnansweredError(f"the voice transport did not answer: {reason}") from None
        if answer.status_code >= 400:
            raise TransportError(
                f"the voice transport refused the call ({answer.status_code}): "
                f"{_said(answer)[:200]}"
            )
        try:
            placed = answer.json()
            return CallRef(call_id=str(placed["id"]), status=str(placed.get("status", "queued")))
        except (ValueError, KeyError, TypeError):
            raise TransportError("the voice transport's answer names no call ID") from None

    async def find(self, key: str, since: datetime) -> CallRef | None:
        """Read Vapi's calls from this number created since ``since`` (``GET /call``)."""
        query: dict[str, str | int] = {
            "phoneNumberId": self._phone_number_id,
            "createdAtGe": _iso(since),
            "limit": FIND_LIMIT,
        }
        try:
            async with httpx.AsyncClient(timeout=self._timeout) as http:
                answer = await http.get(self._url, params=query, headers=self._headers)
        except httpx.HTTPError as err:
            reason = type(err).__name__
            raise TransportError(
                f"the voice transport did not answer the call lookup: {reason}"
            ) from None
        if answer.status_code >= 400:
            raise TransportError(
                f"the voice transport refused the call lookup ({answer.status_code}): "
                f"{_said(answer)[:200]}"
            )
        try:
            calls = answer.json()
        except ValueError:
            calls = None
        if not isinstance(calls, list):
            raise TransportError("the voice transport's call lookup did not list calls")
        found = keyed_call(calls, key)
        if found is None and len(calls) >= FIND_LIMIT:
            raise TransportError(
                f"the voice transport lists {len(calls)} calls since the dial and none carries "
                "its key in the first page: cannot tell whether it was placed"
            )
        return found


def keyed_call(answer: object, key: str) -> CallRef | None:
    """The call in Vapi's call list ``answer`` whose metadata carries ``key``, if any.

    Anything else in the answer, of whatever shape, is passed over: a call is adopted only
    when its ``assistantOverrides.metadata`` holds exactly this key and its ID is a call ID.
    """
    if not isinstance(answer, list) or not key:
        return None
    for call in answer:
        if not isinstance(call, dict):
            continue
        overrides = call.get("assistantOverrides")
        metadata = overrides.get("metadata") if isinstance(overrides, dict) else None
        if not isinstance(metadata, dict) or metadata.get(DIAL_KEY) != key:
            continue
        status = call.get("status")
        try:
            return CallRef(
                call_id=call.get("id"),
                status=status if isinstance(status, str) and status else "queued",
            )
        except ValidationError:
            try:  # a status too long to keep is not a reason to lose the call
                return CallRef(call_id=call.get("id"))
            except ValidationError:
                continue
    return None


def _iso(at: datetime) -> str:
    """``at`` as Vapi writes its timestamps (UTC, milliseconds, ``Z``)."""
    return at.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _said(answer: httpx.Response) -> str:
    """The transport's own reason, on one line."""
    try:
        said = answer.json()
    except ValueError:
        said = None
    message = said.get("message", answer.text) if isinstance(said, dict) else answer.text
    return " ".join(str(message).split())


def transport_from(settings: VoiceSettings) -> CallTransport | None:
    """The configured transport, or ``None`` when none is (``place_call`` is then not offered)."""
    if settings.vapi_api_key is None or not settings.vapi_phone_number_id:
        return None
    return VapiTransport(
        api_key=settings.vapi_api_key.get_secret_value(),
        base_url=settings.vapi_base_url,
        phone_number_id=settings.vapi_phone_number_id,
        assistant_id=settings.vapi_assistant_id,
    )
