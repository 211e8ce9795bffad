"""Where memory formation plugs into ``ConversationWorkflow`` (workflow-side, deterministic).

``after_turn`` runs after every activation: it counts the tokens said since the last
consolidated turn and, every ``chunk_tokens``, starts a ``ConsolidationWorkflow`` for that range
and moves the mark, without waiting for it; ``remember_now`` does the same at once when the
stack is stopping (the ``remember_now`` update, sent by ``persyn down``). ``on_close`` runs once
the agent has been told the conversation closed and consolidates what remains; the
conversation's run ends when that consolidation does, so its close and its memory finish
together (and Temporal's time-skipping test server, which never releases its clock for a child
that outlives its parent, keeps working). Every consolidation is a child with ``ABANDON``:
terminating a conversation never takes its memory with it. A consolidation that fails leaves its
range in the formation ledger, and the next one picks it up.

After the closing consolidation, ``on_close`` runs the residue pass (``ResidueWorkflow``): what
the conversation left behind, carried into the next ones (``docs/memory.md``, "Residue").

Histories recorded before memory formation existed replay unchanged: both hooks are gated by
the ``memory-formation`` patch, and the residue pass by the ``residue`` patch.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from temporalio import workflow
from temporalio.workflow import ChildWorkflowHandle, ParentClosePolicy

from contract import names
from contract.names import (
    consolidation_workflow_id,
    observation_workflow_id,
    residue_workflow_id,
)
from contract.policies import BACKGROUND, DATABASE, summarized_local
from schemas.conversation import ConversationInput, ConversationState, RememberNowResult
from schemas.ids import ulid_from_parts, ulid_time
from schemas.memory_formation import (
    ConsolidationInput,
    ConsolidationResult,
    FormationReason,
    FormationSettingsQuery,
    TurnRange,
)
from schemas.observations import ObserveInput, ObserveResult
from schemas.residue import ResidueInput
from schemas.text import estimate_tokens
from workflows import up_front
from workflows.consolidation import ConsolidationWorkflow
from workflows.observations import ObservationWorkflow
from workflows.residue import ResidueWorkflow

with workflow.unsafe.imports_passed_through():
    from activities.memory.consolidate import ConsolidationActivities


CHUNK_TURNS_PATCH = "chunk-turns"
"""A running conversation also consolidates every ``memory.chunk_turns`` turns (2026-12-04).
Runs recorded before counted tokens alone and replay so."""


def _count(state: ConversationState) -> int:
    """Add the tokens of the turns not counted yet (the window always holds them).

    Returns how many turns were new.
    """
    fresh, turns = 0, 0
    for turn in reversed(state.window):
        if turn.turn_id == state.counted_through:
            break
        fresh += estimate_tokens(turn.text)
        turns += 1
    state.tokens_since_consolidated += fresh
    state.counted_through = state.window[-1].turn_id
    return turns


async def after_turn(data: ConversationInput, state: ConversationState) -> None:
    """Consolidate the range said since the mark at ``chunk_tokens`` or ``chunk_turns``."""
    if not state.window:
        return
    fresh = _count(state)
    by_turns = up_front.conversation_patched(data, CHUNK_TURNS_PATCH)
    if by_turns:
        state.turns_since_consolidated += fresh
    if state.chunk_tokens is None or (by_turns and state.chunk_turns is None):
        settings = await workflow.execute_local_activity_method(
            ConsolidationActivities.formation_settings,
            FormationSettingsQuery(agent=data.agent),
            **summarized_local(DATABASE, "when to consolidate"),
        )
        state.chunk_tokens = settings.chunk_tokens
        state.chunk_turns = settings.chunk_turns
    turns_due = by_turns and bool(state.chunk_turns)
    turns_due = turns_due and state.turns_since_consolidated >= (state.chunk_turns or 0)
    if state.tokens_since_consolidated >= state.chunk_tokens or turns_due:
        after = state.consolidated_through
        if await _consolidate(data, state, FormationReason.CHUNK) is not None:
            await _observe(data, state, after)


async def remember_now(data: ConversationInput, state: ConversationState) -> RememberNowResult:
    """Consolidate what was said since the mark, now (the stack is stopping), without waiting."""
    if not state.window or state.window[-1].turn_id == state.consolidated_through:
        return RememberNowResult(started=False, detail="nothing said since the last memory")
    after = state.consolidated_through
    if await _consolidate(data, state, FormationReason.STOP) is None:
        return RememberNowResult(started=False, detail="the consolidation did not start")
    await _observe(data, state, after)
    return RememberNowResult(
        started=True, detail=f"remembering through {state.consolidated_through}"
    )


RESIDUE_PATCH = "residue"
"""A closing conversation leaves its residue (2026-12-04). Runs recorded before close without."""

OBSERVATIONS_PATCH = "observations"
"""A consolidation starts an observation run beside it; runs recorded before start none."""

PATCHES = (CHUNK_TURNS_PATCH, RESIDUE_PATCH, OBSERVATIONS_PATCH)
"""Every patch the hooks ask."""


async def on_close(data: ConversationInput, state: ConversationState) -> None:
    """Consolidate whatever was said after the last consolidated turn, then leave residue."""
    if not state.window:
        return
    await _remember_the_rest(data, state)
    if up_front.conversation_patched(data, RESIDUE_PATCH):
        await _leave_residue(data, state)


async def _remember_the_rest(data: ConversationInput, state: ConversationState) -> None:
    """The closing consolidation and observation, awaited (failures logged, never raised)."""
    if state.window[-1].turn_id == state.consolidated_through:
        return
    after = state.consolidated_through
    child = await _consolidate(data, state, FormationReason.CLOSE)
    if child is None:
        return
    observing = await _observe(data, state, after)
    try:
        await child
    except asyncio.CancelledError:
        raise
    except Exception as err:  # its range stays in the ledger for the next consolidation
        workflow.logger.warning("closing consolidation failed: %s", err)
    if observing is None:
        return
    try:
        await observing
    except asyncio.CancelledError:
        raise
    except Exception as err:  # facts not learned this time; the dialog stays stored
        workflow.logger.warning("closing observation failed: %s", err)


def _stamp(state: ConversationState) -> datetime:
    """The time a child's ID is made from: the newest turn's, which the history fixes.

    ``workflow.now()`` after a local activity is the time of whichever task the worker ran
    the code in, and a query can make that differ between the live run and its replay
    (``workflows/up_front.py``). Runs recorded before keep the clock.
    """
    if state.asked_up_front and state.window:
        return ulid_time(state.window[-1].turn_id)
    return workflow.now()


async def _leave_residue(data: ConversationInput, state: ConversationState) -> None:
    """Run the conversation's residue pass, awaited like the closing consolidation.

    It runs after the closing memory, and fails soft: the items stay as they were.
    """
    residue_id = ulid_from_parts(_stamp(state), workflow.random().getrandbits(80))
    try:
        await workflow.execute_child_workflow(
            ResidueWorkflow.run,
            ResidueInput(
                residue_id=residue_id,
                agent=data.agent,
                conversation_id=data.conversation_id,
                channel=data.channel,
            ),
            id=residue_workflow_id(residue_id),
            parent_close_policy=ParentClosePolicy.ABANDON,
            priority=BACKGROUND,
            search_attributes=names.search_attributes(
                agent=data.agent, channel=data.channel.key, conversation=data.conversation_id
            ),
            static_summary=f"{data.agent} notes what was left behind on {data.channel.key}",
        )
    except asyncio.CancelledError:
        raise
    except Exception as err:  # background work: the items stay as they were, and decay
        workflow.logger.warning("residue pass did not run: %s", err)


async def _consolidate(
    data: ConversationInput, state: ConversationState, reason: FormationReason
) -> ChildWorkflowHandle[ConsolidationWorkflow, ConsolidationResult] | None:
    through = state.window[-1].turn_id
    consolidation_id = ulid_from_parts(_stamp(state), workflow.random().getrandbits(80))
    try:
        child = await workflow.start_child_workflow(
            ConsolidationWorkflow.run,
            ConsolidationInput(
                consolidation_id=consolidation_id,
                agent=data.agent,
                reason=reason,
                channel=data.channel,
                range=TurnRange(
                    conversation_id=data.conversation_id,
                    after_turn=state.consolidated_through,
                    through_turn=through,
                ),
            ),
            id=consolidation_workflow_id(consolidation_id),
            parent_close_policy=ParentClosePolicy.ABANDON,
            priority=BACKGROUND,
            search_attributes=names.search_attributes(
                agent=data.agent, channel=data.channel.key, conversation=data.conversation_id
            ),
            static_summary=f"{data.agent} remembers ({reason.value}) on {data.channel.key}",
        )
    except asyncio.CancelledError:
        raise
    except Exception as err:
        # The mark stays put: the next chunk or the close covers this range too.
        workflow.logger.warning("consolidation did not start: %s", err)
        return None
    state.consolidated_through = through
    state.tokens_since_consolidated = 0
    state.turns_since_consolidated = 0
    state.consolidations += 1
    return child


async def _observe(
    data: ConversationInput, state: ConversationState, after: str | None
) -> ChildWorkflowHandle[ObservationWorkflow, ObserveResult] | None:
    """Start learning facts about people from the range a consolidation just took.

    Beside consolidation rather than inside it: the range and cadence are the same (a chunk
    of exchanges, so extraction reads a whole stretch and costs a call per chunk, not per
    turn), while a failure of either leaves the other whole. Histories recorded before
    observations existed replay unchanged: the start is gated by the ``observations`` patch.
    The range ends where the consolidation's did.
    """
    through = state.consolidated_through
    if through is None or not up_front.conversation_patched(data, OBSERVATIONS_PATCH):
        return None
    observe_id = ulid_from_parts(_stamp(state), workflow.random().getrandbits(80))
    try:
        return await workflow.start_child_workflow(
            ObservationWorkflow.run,
            ObserveInput(
                observe_id=observe_id,
                agent=data.agent,
                conversation_id=data.conversation_id,
                after_turn=after,
                through_turn=through,
            ),
            id=observation_workflow_id(observe_id),
            parent_close_policy=ParentClosePolicy.ABANDON,
            priority=BACKGROUND,
            search_attributes=names.search_attributes(
                agent=data.agent, channel=data.channel.key, conversation=data.conversation_id
            ),
            static_summary=f"{data.agent} notes facts about people on {data.channel.key}",
        )
    except asyncio.CancelledError:
        raise
    except Exception as err:  # background work: the conversation goes on without it
        workflow.logger.warning("observation did not start: %s", err)
        return None
