"""Helpers for recall through whole turns: a remembered exchange, and the prompt a turn used."""

from __future__ import annotations

from sqlalchemy import text

from activities.memory.encoders.local import LocalEncoder
from schemas.events import ChannelRef, Receipt
from schemas.recall import SurfacedMemories
from store.db import Database
from store.tables import PromptRow
from tests.memory.recall.records import add_channel, add_memory, person_of

SUMMARY = (
    "I promised Ada I would water her tomato plants every evening while she is in Lisbon, "
    "and she said the basil needs less water than the tomatoes."
)
QUESTION = "What did you promise to do for my tomato plants while I'm away?"


async def remember_tomatoes(
    db: Database, encoder: LocalEncoder, *, agent: str, channel: ChannelRef, speaker: str = "ada"
) -> str:
    """A private memory shared with ``speaker`` (who must have spoken on ``channel``)."""
    person = await person_of(db, agent, speaker)
    channel_id = await add_channel(db, agent, channel)
    [vector] = await encoder.encode([SUMMARY])
    return await add_memory(
        db,
        agent=agent,
        channel_id=channel_id,
        summary=SUMMARY,
        vector=vector,
        embed_model=encoder.name,
        participants=[person],
        emotion="engaged",
    )


async def respond_prompt(db: Database, receipt: Receipt) -> PromptRow:
    """The prompt the turn's respond step was generated from."""
    assert receipt.marker is not None and receipt.marker.activation_id is not None
    async with db.session() as session:
        connection = await session.connection()
        row = await connection.execute(
            text(
                "SELECT id FROM prompts WHERE activation_id = :a AND task = 'respond' "
                "ORDER BY id LIMIT 1"
            ),
            {"a": receipt.marker.activation_id},
        )
        prompt_id = row.scalar_one()
        prompt = await session.get(PromptRow, prompt_id)
    assert prompt is not None
    return prompt


def surfaced(prompt: PromptRow) -> SurfacedMemories:
    """What the memory source says it put in the prompt."""
    return SurfacedMemories.model_validate(prompt.extra["memory"])


def memory_block(system: str) -> str:
    """The memory block of a system instruction (blocks are separated by blank lines)."""
    start = system.index("Your memories")
    end = system.find("\n\n", start)
    return system[start:] if end < 0 else system[start:end]
