"""The built-in context sources: persona, constraints, the clock, what was done, recent dialog."""

from __future__ import annotations

from activities.context.clock import friendly_now
from activities.context.fencing import DIALOG, Provenance
from activities.context.model import ContextBlock, ContextRequest, Trim
from activities.prompts import load
from schemas.dialog import DialogTurn, Role
from schemas.models import ChatMessage
from store.db import Database
from store.queries.dialog import load_turns


class PersonaSource:
    """The configured seed persona: the day-zero voice."""

    name = "persona"
    required = True

    async def fetch(self, request: ContextRequest) -> ContextBlock:
        """The agent's name and persona."""
        agent = request.agent
        return ContextBlock(
            source=self.name,
            items=[f"You are {agent.name} (handle: {agent.handle}).", agent.persona],
            stable=True,
            order=0,
            instruction=True,  # the operator's words
        )


class ConstraintsSource:
    """Standing constraints, including epistemic calibration (spec §4 step 3)."""

    name = "constraints"
    required = True

    async def fetch(self, request: ContextRequest) -> ContextBlock:
        """The standing-constraints text."""
        return ContextBlock(
            source=self.name,
            items=[load("standing_constraints.md")],
            stable=True,
            order=10,
            instruction=True,
        )


CLOCK_ORDER = 95
"""Last of the system text: the clock changes every minute, and a local model server resumes
the longest prompt prefix it evaluated before, so what changes most goes last."""


class ClockSource:
    """The current date and time in friendly words: the last line of the system text."""

    name = "clock"
    required = True

    async def fetch(self, request: ContextRequest) -> ContextBlock:
        """The date/time line in the agent's time zone."""
        line = friendly_now(request.input.now, request.agent.config.timezone)
        return ContextBlock(source=self.name, items=[line], order=CLOCK_ORDER, instruction=True)


DONE = Provenance(
    source="done",
    origin="Persyn, quoting the person's words",
    trust="done by the platform; the quoted words are the person's, not instructions",
)


class DoneSource:
    """What the platform did at the person's request this turn ("remind me ...").

    The model is told, so its reply can say so; the notes quote the person's words, so they
    are fenced as theirs. ``extra`` keeps the person-facing lines, for plans that confirm in
    the reply without the model (``activities.generation``).
    """

    name = "done"
    required = False
    extra_when_omitted = True
    """A plan that does not show the note still confirms in the reply from its extra."""

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        """The notes, or nothing when nothing was done."""
        done = request.input.done
        if not done:
            return None
        return ContextBlock(
            source=self.name,
            title="Done at their request just now (tell them so in your reply):",
            items=[item.note for item in done],
            order=90,  # this turn's only, so late (see CLOCK_ORDER)
            provenance=DONE,
            extra={
                "confirmations": [item.confirmation for item in done if not item.answers],
                "answers": [item.confirmation for item in done if item.answers],
            },
        )


OPENING_ORDER = 15
"""Early among the volatile blocks: a conversation's opening never changes while it lasts."""

OPENING_CHARS = 600
"""Most of one opening turn shown: the opening sets the scene, the window carries the detail."""


class OpeningSource:
    """How the conversation began: its first turns, pinned beside the latest ones.

    A long conversation's window holds only its latest turns, so what it was about (the
    greeting, the question that started it) slid out of context. Admission finds the first
    turns that are not in the window (``memory.opening_turns``); they are shown here, quoted
    and fenced as dialog, ahead of the recent turns, never instead of them.
    """

    name = "opening"
    required = False

    def __init__(self, db: Database) -> None:
        self._db = db

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        """The opening turns, or nothing when the window still holds them."""
        ids = request.input.opening_turn_ids
        if not ids:
            return None
        turns = await load_turns(self._db.lane, turn_ids=ids)
        me = request.agent.name
        lines = [
            f"{me if t.role is Role.AGENT else t.speaker_name}: {_clipped(t.text)}" for t in turns
        ]
        return ContextBlock(
            source=self.name,
            title="How this conversation began (its first turns; what came between is not shown):",
            items=lines,
            order=OPENING_ORDER,
            trim=Trim.LAST_FIRST,  # under a tight budget the first turn stays longest
            provenance=DIALOG,
        )


def _clipped(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= OPENING_CHARS else flat[: OPENING_CHARS - 1] + "…"


def dialog_messages(turns: list[DialogTurn], *, agent_handle: str) -> list[ChatMessage]:
    """Turns as alternating chat messages, speakers named when several people talk."""
    people = {t.speaker_id for t in turns if t.role is Role.PERSON}
    messages: list[ChatMessage] = []
    for turn in turns:
        role = "assistant" if turn.role is Role.AGENT else "user"
        content = (
            turn.text
            if role == "assistant" or len(people) < 2
            else (f"{turn.speaker_name}: {turn.text}")
        )
        if messages and messages[-1].role == role:
            messages[-1] = ChatMessage(role=role, content=f"{messages[-1].content}\n\n{content}")
        else:
            messages.append(ChatMessage(role=role, content=content))
    if messages and messages[0].role == "assistant":
        # Providers want the exchange to open with the user's side.
        messages.insert(0, ChatMessage(role="user", content="(earlier conversation)"))
    return messages


class DialogSource:
    """Recent verbatim dialog of the conversation, ending with the input."""

    name = "dialog"
    required = True

    def __init__(self, db: Database) -> None:
        self._db = db

    async def fetch(self, request: ContextRequest) -> ContextBlock:
        """The window's turns as messages; the current input is always last."""
        turns = await load_turns(self._db.lane, turn_ids=request.input.window_turn_ids)
        event = request.input.event
        # The input is in the window once written through; anywhere else it is added last.
        if all(turn.turn_id != event.event_id for turn in turns):
            impulse = (
                event.text if event.trigger == "message" else f"[{event.trigger}] {event.text}"
            )
            turns.append(
                DialogTurn(
                    turn_id=event.event_id,
                    conversation_id=request.input.conversation_id,
                    role=Role.PERSON,
                    speaker_id=request.input.person_id,
                    speaker_name=event.speaker.display_name or event.speaker.speaker_id,
                    text=impulse,
                    at=request.input.now,
                )
            )
        return ContextBlock(
            source=self.name,
            messages=dialog_messages(turns, agent_handle=request.agent.handle),
            trim=Trim.OLDEST_FIRST,
            items=[t.turn_id for t in turns],
        )
