"""The critique activity: one counter-perspective lens over a candidate reply (spec §4 step 4).

The critic sees the lens's template, the conversation's tail and the candidate; the provenance
critic also sees exactly the retrieved records that were in the prompt. Its reply is held to a
JSON schema; unusable output is repaired, then asked for again, then given up on: the turn
goes on without that critique rather than failing.
"""

from __future__ import annotations

from temporalio import activity

from activities.deliberation.calls import clip, stored_prompt
from activities.deliberation.objections import CRITIQUE_SCHEMA, CriticOutputError, parse_objections
from activities.deliberation.records import records_in_context
from activities.deliberation.templates import critic_message, critic_system, load_rules
from activities.drafts import with_candidate
from activities.gateway.activity_call import complete
from activities.gateway.gateway import ModelGateway
from schemas.deliberation import (
    Critique,
    CritiqueInput,
    CritiqueStatus,
    DeliberationSettings,
    Lens,
)
from schemas.models import ChatMessage, ModelRequest, TaskType, instructions
from store.db import Database

ECHO_CHARS = 2000
"""How much of an unusable reply is shown back to the critic when asking again."""


class CritiqueActivities:
    """Counter-perspective critics."""

    def __init__(self, db: Database, gateway: ModelGateway, settings: DeliberationSettings):
        self._db = db
        self._gateway = gateway
        self._settings = settings

    async def request(self, data: CritiqueInput) -> ModelRequest:
        """The critic's request for ``data`` (also used by tests to inspect prompts)."""
        row = await stored_prompt(self._db, data.prompt_id)
        shown = instructions(row.system, row.messages)
        records = records_in_context(row.extra, shown) if data.lens is Lens.PROVENANCE else []
        rules = load_rules(self._settings.rules_file) if data.lens is Lens.CONSTRAINED else []
        dialog = [ChatMessage.model_validate(m) for m in row.messages]
        return ModelRequest(
            task=TaskType.CRITIQUE,
            system=critic_system(
                data.lens,
                max_objections=self._settings.max_objections,
                rules=rules,
                records=records,
            ),
            messages=[critic_message(dialog, data.candidate)],
            response_schema=CRITIQUE_SCHEMA,
        )

    @activity.defn(name="deliberation.critique")
    async def critique(self, data: CritiqueInput) -> Critique:
        """Objections to ``data.candidate`` through ``data.lens``.

        Raises:
            ApplicationError: A provider failure (transient ones are retried by Temporal).
        """
        data = await with_candidate(self._db, data)
        request = await self.request(data)
        problem = "no attempt was made"
        for _ in range(self._settings.critic_attempts):
            response = await complete(self._gateway, request)
            try:
                objections, repaired = parse_objections(
                    response.text, limit=self._settings.max_objections
                )
            except CriticOutputError as err:
                problem = str(err)
                # Ask again in the same exchange, showing what was wrong with the answer.
                request = request.model_copy(
                    update={
                        "messages": [
                            *request.messages,
                            ChatMessage(
                                role="assistant",
                                content=clip(response.text, ECHO_CHARS) or "(empty)",
                            ),
                            ChatMessage(
                                role="user",
                                content=f"That answer was unusable ({problem}). Answer again "
                                'with only the JSON object {"objections": [...]}.',
                            ),
                        ]
                    }
                )
                continue
            status = CritiqueStatus.REPAIRED if repaired else CritiqueStatus.OK
            return Critique(lens=data.lens, objections=objections, status=status)
        activity.logger.warning("critic %s gave nothing usable: %s", data.lens.value, problem)
        return Critique(
            lens=data.lens, status=CritiqueStatus.FAILED, note=clip(f"unusable: {problem}", 300)
        )
