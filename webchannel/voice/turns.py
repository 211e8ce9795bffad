"""What a settled turn does besides speaking: the hard gates, the prompt, the pipeline's run."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Coroutine
from typing import Any

from contract import names
from schemas.deliberation import ScreenInput
from schemas.delivery import AffordReplyInput
from schemas.events import CompletionMarker, Outcome, Speaker
from schemas.ids import ULID_PATTERN
from schemas.voice import CallConclusion, CallTurnSignal
from usecases import submission
from usecases.voice import direction_cue, pipeline_prompt, record_spoken, run_background, tell_call
from webchannel.state import WebState
from webchannel.voice.runtime import VoiceRuntime
from webchannel.voice.session import CallSession
from webchannel.voice.speech import Spoken

_ULID = re.compile(ULID_PATTERN)

SPOKEN_WAIT_S = 30.0
"""How long a turn's run waits, once done, for its answer to finish being said."""

log = logging.getLogger(__name__)


async def screen(
    runtime: VoiceRuntime, session: CallSession, text: str, *, turn_id: str
) -> str | None:
    """The hard gates on the caller's words: cooldown, blocking rules, a spent token budget.

    The budget is asked only on a channel of a paced service (``PERSYN_PACING__PACED_SERVICES``;
    calls are on ``web``). A check that fails passes (fail soft, as in the decide screen)
    unless it fails closed.
    """
    try:
        event = submission.build_event(
            channel=session.channel, speaker=Speaker(speaker_id=session.speaker_id), text=text
        )
        data = ScreenInput(
            agent=session.agent, channel=session.channel, event=event, candidate=text
        )
    except ValueError as err:  # words no event may carry: nothing to screen, nothing to run
        log.warning("call %s: the turn cannot be screened: %s", session.call_id, err)
        return None
    for check in runtime.checks:
        try:
            reason = await check.check(data)
        except Exception:
            log.warning("guardrail check %s failed on a call turn", check.name, exc_info=True)
            if check.fail_closed:
                return "I can't talk just now."
            continue
        if reason:
            return reason
    asked = AffordReplyInput(agent=session.agent, channel=session.channel, activation_id=turn_id)
    affordance = await runtime.pacing.afford_reply(asked)
    return affordance.withheld


async def refresh_prompt(runtime: VoiceRuntime, state: WebState, session: CallSession) -> None:
    """Refresh the cached system prompt from the newest background run, when it is stale."""
    voice = state.settings.voice
    stale = session.stale(max_age_s=voice.prompt_refresh_s, max_turns=voice.prompt_refresh_turns)
    if not stale or session.newest_activation is None:
        return
    prompt = await pipeline_prompt(db=runtime.deps.db, activation_id=session.newest_activation)
    if prompt:
        session.system = prompt
        session.system_at = time.monotonic()
        session.system_turns = 0


GREETING_CHARS = 500
"""How much of a greeting the conversation's first turn carries."""


def opening_cue(session: CallSession) -> str:
    """Who dialled whom, and what the agent said before the caller spoke, if it said anything.

    A greeting is spoken before the call has a conversation (the first words open it), so the
    first words carry it: the dialog then reads in the order things were said.
    """
    cue = direction_cue(session.direction, session.agent_name, session.person)
    greeting, session.greeting = session.greeting, None
    if not greeting:
        return cue
    said = " ".join(greeting.split())[:GREETING_CHARS]
    return f'{cue} {session.agent_name} said first: "{said}"'


async def follow_turn(
    runtime: VoiceRuntime,
    state: WebState,
    session: CallSession,
    text: str,
    first: bool,
    screening: asyncio.Task[str | None] | None,
    spoken: asyncio.Future[Spoken],
    begin: Coroutine[Any, Any, None],
) -> None:
    """The turn through the full pipeline; then the spoken words recorded after it.

    Nothing runs for a turn the hard gates refused.
    """
    await begin
    if screening is not None and await screening is not None:
        session.cued = session.cued and not first
        return
    cue = ""
    if first:
        cue = f"[{opening_cue(session)}]\n"
    marker: CompletionMarker | None = await run_background(
        client=state.client,
        settings=state.settings,
        presence=state.presence,
        agent=session.agent,
        channel=session.channel,
        speaker=Speaker(speaker_id=session.speaker_id),
        text=cue + text,
    )
    try:
        # Long since said by now, unless the answer was never read (the caller hung up first).
        said = await asyncio.wait_for(asyncio.shield(spoken), SPOKEN_WAIT_S)
    except TimeoutError:
        said = Spoken()
    async with session.persisting:
        conversation = (marker.conversation_id if marker else None) or session.conversation_id
        if conversation is not None and said.text:
            await record_spoken(
                db=runtime.deps.db,
                agent=session.agent,
                agent_name=session.agent_name,
                channel=session.channel,
                conversation_id=conversation,
                text=said.text,
            )
        if conversation is not None and session.conversation_id is None:
            session.conversation_id = conversation
        await tell_call(
            client=state.client,
            call_id=session.call_id,
            signal=names.CALL_TURN,
            message=CallTurnSignal(conversation_id=conversation),
        )
        if marker is None:
            return
        if marker.activation_id and _ULID.fullmatch(marker.activation_id):
            session.newest_activation = marker.activation_id
        if (
            marker.outcome is Outcome.SPOKE
            and marker.text
            and not marker.degraded
            and marker.activation_id
        ):
            session.pending.append(marker.text)
            await tell_call(
                client=state.client,
                call_id=session.call_id,
                signal=names.CALL_CONCLUSION,
                message=CallConclusion(activation_id=marker.activation_id),
            )
