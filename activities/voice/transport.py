"""The voice transport: the external service that dials, transcribes and speaks.

It does only transport. The agent asks it to dial a number; once the call is answered, the
transport calls the web channel's voice endpoint as its response generator for every turn
(docs/channels.md, "Live voice"). One implementation: Vapi's ``POST /call``
(https://docs.vapi.ai/api-reference/calls/create), with a private key as bearer token, a
phone number to call from and an assistant whose custom LLM is this deployment's endpoint.
"""

from __future__ import annotations

from typing import Protocol

import httpx

from schemas.voice import CallRef, VoiceSettings

DIAL_TIMEOUT_S = 15.0
"""How long the transport has to accept a call request."""


class TransportError(Exception):
    """The transport refused or failed to place the call; the message says why in one line."""


class CallTransport(Protocol):
    """Something that can dial a person for an agent."""

    async def dial(self, to: str, agent: str, first_message: str) -> CallRef:
        """Place a call to ``to`` for ``agent``, opening with ``first_message``.

        Raises:
            TransportError: The call was not placed.
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
        self._phone_number_id = phone_number_id
        self._assistant_id = assistant_id
        self._timeout = timeout_s

    async def dial(self, to: str, agent: str, first_message: str) -> CallRef:
        """Ask Vapi to call ``to``; the call's ID is the one its turns will carry."""
        body: dict[str, object] = {
            "phoneNumberId": self._phone_number_id,
            "customer": {"number": to},
            # The model named in each turn is the agent's handle (the voice endpoint's rule).
            "assistantOverrides": {
                "firstMessage": first_message,
                "model": {"provider": "custom-llm", "model": agent},
                "metadata": {"agent": agent, "direction": "outbound"},
            },
        }
        if self._assistant_id:
            body["assistantId"] = self._assistant_id
        try:
            async with httpx.AsyncClient(timeout=self._timeout) as http:
                answer = await http.post(
                    self._url, json=body, headers={"Authorization": f"Bearer {self._key}"}
                )
        except httpx.HTTPError as err:
            reason = type(err).__name__
            raise TransportError(f"the voice transport did not answer: {reason}") from None
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


def _said(answer: httpx.Response) -> str:
    """The transport's own reason, on one line."""
    try:
        message = answer.json().get("message", answer.text)
    except ValueError:
        message = answer.text
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
