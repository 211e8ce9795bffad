"""The extraction and reconciliation requests, and the reply shapes they are constrained to.

Extraction is blind by construction: :func:`extraction_request` takes only the turns of the
exchange, so nothing already believed can reach its prompt. Reconciliation takes one proposal
and the subject's own candidate facts, labelled ``F1``, ``F2``... so a model names a target
without copying an ID.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from activities.context.fencing import DIALOG, OWN_WORDS, Provenance, fence
from activities.prompts import load
from schemas.models import ChatMessage, ModelRequest, TaskType
from schemas.observations import Action, Observation, ObservationProposal
from store.queries.memory_formation import RangeTurn

MAX_TRANSCRIPT_CHARS = 12_000
"""Most characters of dialog one extraction reads; the latest turns are kept."""

NOTES = Provenance(
    source="notes",
    origin="facts you noted earlier about this subject",
    trust="your own notes: they may be outdated or record what someone claimed",
)
NEW_FACT = Provenance(
    source="new_fact",
    origin="a fact you just noted from a conversation",
    trust="a claim from the conversation, not checked",
)

EXTRACTION_TASK = TaskType.OBSERVE
RECONCILIATION_TASK = TaskType.OBSERVE
"""Both calls run under the observe task: a fast model, metered apart from memory formation."""


class ExtractedFact(BaseModel):
    """One fact as the extraction call writes it."""

    model_config = ConfigDict(extra="forbid")

    subject: str = Field(min_length=1, max_length=200)
    type: str = Field(min_length=1, max_length=64)
    value: str = Field(min_length=1, max_length=2000)
    trust: Literal["self", "told", "inferred"]


class ExtractionReply(BaseModel):
    """The extraction call's answer."""

    model_config = ConfigDict(extra="forbid")

    facts: list[ExtractedFact] = Field(max_length=50)


class VerdictReply(BaseModel):
    """The reconciliation call's answer; ``target`` is a candidate's label (``F1``...)."""

    model_config = ConfigDict(extra="forbid")

    action: Action
    target: str | None = None
    reason: str = Field(min_length=1, max_length=500)


def transcript(turns: Sequence[RangeTurn], agent_name: str) -> str:
    """Each turn fenced as ``speaker: text``; the latest kept whole within the limit."""
    kept: list[str] = []
    room = MAX_TRANSCRIPT_CHARS
    for turn in reversed(turns):
        mine = turn.role == "agent"
        speaker = f"{agent_name} (you)" if mine else turn.speaker_name
        said = f"{speaker}: {turn.text}"
        # Only a latest turn longer than the whole limit is cut (from its start), inside
        # its fence, so no fence is ever cut.
        block = fence(said if kept else said[-room:], OWN_WORDS if mine else DIALOG)
        if kept and len(block) > room:
            kept.append("[...]")
            break
        kept.append(block)
        room -= len(block) + 1
    return "\n".join(reversed(kept))


def extraction_request(turns: Sequence[RangeTurn], *, agent_name: str, most: int) -> ModelRequest:
    """Ask for the facts in ``turns``, and nothing else: the call is blind to what is known."""
    system = load("observations/extract.md").replace("{name}", agent_name)
    return ModelRequest(
        task=EXTRACTION_TASK,
        system=system.replace("{max}", str(most)),
        messages=[ChatMessage(role="user", content=transcript(turns, agent_name))],
        temperature=0.0,
        response_schema=ExtractionReply.model_json_schema(),
    )


def label(index: int) -> str:
    """The label of the ``index``-th candidate (0-based): ``F1``, ``F2``..."""
    return f"F{index + 1}"


def reconciliation_request(
    proposal: ObservationProposal,
    candidates: Sequence[Observation],
    *,
    agent_name: str,
    subject_name: str,
) -> ModelRequest:
    """Ask what ``proposal`` does to the subject's own ``candidates``."""
    held = (
        "\n".join(
            f"{label(n)}: {c.type} = {c.value} ({c.trust}, {c.observed_at:%Y-%m-%d})"
            for n, c in enumerate(candidates)
        )
        or "(none)"
    )
    body = (
        f"Subject: {subject_name}\n\nHeld notes:\n{fence(held, NOTES)}\n\n"
        f"New fact:\n{fence(f'{proposal.type} = {proposal.value} ({proposal.trust})', NEW_FACT)}"
    )
    return ModelRequest(
        task=RECONCILIATION_TASK,
        system=load("observations/reconcile.md").replace("{name}", agent_name),
        messages=[ChatMessage(role="user", content=body)],
        temperature=0.0,
        response_schema=VerdictReply.model_json_schema(),
    )
