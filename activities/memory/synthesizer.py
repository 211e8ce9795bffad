"""Recall told as one account (phi's synthesis): a model call over the memories found.

The deterministic half (:mod:`activities.memory.synthesis`) dedupes and marks replaced facts
on every plan. Where the plan runs the ``recall`` task and enough lines were found, one short
model call retells the best of them as one first-person account: merged, dated, the newer of
two disagreeing memories holding, each memory cited by its ID. It runs on the reply's path,
so it is bounded: at most ``synthesis_lines`` lines go in, and past
``synthesis_timeout_seconds``, or on any failure, the lines are shown as they are. An account
that cites an ID it was not shown is not used.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from activities.context.fencing import DIALOG, MEMORY, fence
from activities.gateway.gateway import ModelGateway
from activities.memory.formation.calls import read_reply
from activities.memory.lines import annotate
from activities.prompts import load
from contract.provider_errors import ProviderError
from schemas.memory import MemorySettings
from schemas.models import ChatMessage, ModelRequest, TaskType
from schemas.recall import RetrievedMemory
from schemas.text import InvalidTextError, clean_text

log = logging.getLogger(__name__)

TASK = TaskType.RECALL
_CITED = re.compile(r"\[([0-9A-HJKMNP-TV-Z]{26})\]")


class SynthesisReply(BaseModel):
    """The ``recall`` task's answer."""

    model_config = ConfigDict(extra="forbid")

    synthesis: str = Field(min_length=1, max_length=8000)


def synthesis_request(
    lines: Sequence[str], *, query: str, agent_name: str, max_chars: int
) -> ModelRequest:
    """Ask for the account of ``lines`` (memories as the block annotates them) for ``query``."""
    system = load("memory/synthesis.md").replace("{name}", agent_name)
    system = system.replace("{chars}", str(max_chars))
    body = (
        f"What was just said:\n{fence(query, DIALOG)}\n\n"
        f"Your memories, best match first:\n{fence(chr(10).join(lines), MEMORY)}"
    )
    return ModelRequest(
        task=TASK,
        system=system,
        messages=[ChatMessage(role="user", content=body)],
        temperature=0.0,
        response_schema=SynthesisReply.model_json_schema(),
    )


def usable(text: str, *, shown: Sequence[str], max_chars: int) -> str | None:
    """The account if it may stand for the lines: storable, in size, citing only ``shown``."""
    try:
        account = clean_text(" ".join(text.split()), what="a recall synthesis", max_chars=100_000)
    except InvalidTextError:
        return None
    if not account or len(account) > max_chars:
        return None
    if not set(_CITED.findall(account)) <= set(shown):
        return None  # a memory it was not shown: invented, or another's
    return account


class RecallSynthesizer:
    """Retells the memories found as one account, within a deadline, or gives up quietly."""

    def __init__(self, gateway: ModelGateway, settings: MemorySettings) -> None:
        self._gateway = gateway
        self._settings = settings

    def wanted(self, records: Sequence[RetrievedMemory]) -> bool:
        """Whether this plan tells these records as one account."""
        return len(records) >= self._settings.synthesis_min_lines and self._gateway.runs(TASK)

    async def synthesize(
        self,
        records: Sequence[RetrievedMemory],
        *,
        query: str,
        agent_name: str,
        zone: ZoneInfo,
    ) -> tuple[str, int] | None:
        """The account of the first ``synthesis_lines`` records and how many it tells, or None."""
        told = list(records[: self._settings.synthesis_lines])
        lines = [annotate(record, zone) for record in told]
        max_chars = self._settings.synthesis_chars
        request = synthesis_request(lines, query=query, agent_name=agent_name, max_chars=max_chars)
        try:
            async with asyncio.timeout(self._settings.synthesis_timeout_seconds):
                response = await self._gateway.complete(request)
            reply = read_reply(response.text, SynthesisReply)
        except (ProviderError, TimeoutError, ValidationError) as err:
            log.info("recall shown line by line: the synthesis failed (%s)", type(err).__name__)
            return None
        account = usable(reply.synthesis, shown=[r.id for r in told], max_chars=max_chars)
        return None if account is None else (account, len(told))
