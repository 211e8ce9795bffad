"""The engagement judgment: a fast model decides whether the agent speaks (spec §4 step 6, §4.5).

Every unaddressed message gets one (does the draft add something, is an interruption warranted,
does a goal demand it?), and so do substantive addressed replies (does the draft add nothing
beyond what others said, does the request conflict with the agent's objectives?). The answer is
schema-constrained ``{"speak", "reason"}``; output that cannot be read falls back to the rule
(addressed: speak; unaddressed: stay silent) rather than failing the turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from temporalio import activity

from activities.context.fencing import CANDIDATE, CONVERSATION, fence
from activities.deliberation.calls import clip, find_json
from activities.drafts import with_candidate
from activities.gateway.activity_call import complete
from activities.gateway.gateway import ModelGateway
from activities.prompts import load
from schemas.deliberation import JudgeInput, SpeakBasis, Verdict, fallback_verdict
from schemas.dialog import DialogTurn, Role
from schemas.models import ChatMessage, ModelRequest, TaskType
from store.db import Database
from store.queries.agents import agent_on
from store.queries.dialog import load_turns

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"speak": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["speak", "reason"],
    "additionalProperties": False,
}
DIALOG_TURNS = 8
TURN_CHARS = 800
PERSONA_CHARS = 2000
DRAFT_CHARS = 6000


def parse_verdict(text: str) -> Verdict | None:
    """The model's verdict, or ``None`` when its output cannot be read as one."""
    try:
        document, _ = find_json(text.strip())
    except ValueError:
        return None
    if not isinstance(document, Mapping):
        return None
    speak, reason = document.get("speak"), document.get("reason")
    if isinstance(speak, str) and speak.strip().lower() in ("true", "false"):
        speak = speak.strip().lower() == "true"
    if not isinstance(speak, bool) or not isinstance(reason, str) or not reason.strip():
        return None
    return Verdict(speak=speak, reason=clip(reason, 500), basis=SpeakBasis.MODEL)


def _transcript(turns: list[DialogTurn], data: JudgeInput, agent_name: str) -> str:
    lines = [
        (agent_name if t.role is Role.AGENT else t.speaker_name, t.text)
        for t in turns[-DIALOG_TURNS:]
    ]
    if not turns or turns[-1].turn_id != data.event.event_id:
        # The input is normally the window's last turn; show it even if it is not.
        speaker = data.event.speaker
        lines.append((speaker.display_name or speaker.speaker_id, data.event.text))
    return "\n".join(f"{who}: {clip(text, TURN_CHARS)}" for who, text in lines)


class JudgeActivities:
    """The model side of the decide step."""

    def __init__(self, db: Database, gateway: ModelGateway) -> None:
        self._db = db
        self._gateway = gateway

    async def request(self, data: JudgeInput) -> ModelRequest:
        """The judgment's request for ``data``."""
        agent, turns = await asyncio.gather(
            agent_on(self._db.lane, handle=data.agent),
            load_turns(self._db.lane, turn_ids=data.window_turn_ids),
        )
        name = agent.name if agent is not None else data.agent
        persona = clip(agent.persona, PERSONA_CHARS) if agent is not None else "(unknown)"
        situation = (
            f"The latest message was {'addressed' if data.event.addressed else 'NOT addressed'} "
            f"to {name}. People taking part in this conversation: {data.participants}."
        )
        content = "\n\n".join(
            [
                situation,
                "The conversation, most recent last:\n"
                + fence(_transcript(turns, data, name), CONVERSATION),
                f"{name}'s draft reply:\n" + fence(clip(data.candidate, DRAFT_CHARS), CANDIDATE),
            ]
        )
        system = load("deliberation/decide.md").replace("{persona}", persona)
        system = system.replace("{name}", name)
        return ModelRequest(
            task=TaskType.DECIDE,
            system=system,
            messages=[ChatMessage(role="user", content=content)],
            response_schema=JUDGE_SCHEMA,
            max_output_tokens=300,
        )

    @activity.defn(name="deliberation.judge")
    async def judge(self, data: JudgeInput) -> Verdict:
        """Whether to speak, and why, in the agent's own words.

        Raises:
            ApplicationError: A provider failure; the workflow falls back after retries.
        """
        if not self._gateway.runs(TaskType.DECIDE):
            # The provider's call plan skips the judgment (a small local model, whose verdicts
            # silenced replies to people who had asked something): the rule decides.
            return fallback_verdict(addressed=data.event.addressed)
        data = await with_candidate(self._db, data)
        response = await complete(self._gateway, await self.request(data))
        verdict = parse_verdict(response.text)
        if verdict is None:
            activity.logger.warning("the decide model's answer was unreadable; using the rule")
            return fallback_verdict(addressed=data.event.addressed)
        return verdict
