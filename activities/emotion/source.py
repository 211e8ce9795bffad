"""The context source for the agent's emotional state: how it feels now, and lately.

A few words, fenced as the agent's own readings of itself: the state decayed to this moment
and the trajectory of this conversation (or, in a new one, the agent's latest readings). An
agent with no readings yet says nothing, so the block costs nothing until it has something
to say.
"""

from __future__ import annotations

from activities.context.fencing import Provenance
from activities.context.model import ContextBlock, ContextRequest, Trim
from activities.emotion.mood import MoodReader

EMOTION = Provenance(
    source="emotion",
    origin="your own readings of how you felt after recent exchanges",
    trust="your own state: let it colour your tone and choices, never your honesty",
)


class EmotionSource:
    """The current emotional state and the recent trajectory, in a few words."""

    name = "emotion"
    required = False

    def __init__(self, mood: MoodReader) -> None:
        self._mood = mood

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        """The state as of this input, or ``None`` before the first reading."""
        here = await self._mood.in_conversation(
            agent=request.agent.handle,
            now=request.input.now,
            conversation_id=request.input.conversation_id,
        )
        if here is None:
            return None
        steps = " -> ".join(r.top.value for r in here.trajectory)
        return ContextBlock(
            source=self.name,
            title="How you feel (your emotional state; it fades back to calm with time):",
            items=[f"Now: {here.state.words()}.", f"Lately, oldest first: {steps}."],
            order=44,
            # Under a tight budget the trajectory goes first, then the state itself.
            trim=Trim.LAST_FIRST,
            provenance=EMOTION,
        )
