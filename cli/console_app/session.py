"""The console's link to a deployment: who speaks to which agent where, through the use cases.

Everything the screens show is read here, and everything sent goes from here, through
``usecases/`` only: the console holds no agent logic. It reaches the deployment the settings
name, the embedded stack or an existing one, as every other command does; it keeps one store
and one Temporal client for its life, so a panel refreshed every few seconds opens nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from temporalio.client import Client

from cli import submission
from cli.common import UserError
from schemas.events import ChannelRef, InboundEvent, Receipt, Speaker
from schemas.ids import check_handle
from schemas.settings import Settings
from store.db import Database
from usecases import agents
from usecases.agent_state import AgentState, agent_state
from usecases.closing import close_conversation
from usecases.submission import build_event, connect_client
from usecases.turns import TurnProgress, activation_ended, turn_progress


@dataclass
class ConsoleSession:
    """The operator's seat: the agent, their speaker identity, the channel, and the connections.

    Args:
        settings: The deployment's settings.
        handle: The agent talked with.
        agent_name: Its name, as the transcript shows it.
        speaker: The operator: a stable key and the display name the agent sees.
        channel: The terminal channel the console speaks on.
    """

    settings: Settings
    handle: str
    agent_name: str
    speaker: Speaker
    channel: ChannelRef
    conversation_id: str | None = None
    _db: Database | None = field(default=None, repr=False)
    _client: Client | None = field(default=None, repr=False)

    @property
    def db(self) -> Database:
        """The store, opened on first use (its connections are made as they are needed)."""
        if self._db is None:
            self._db = Database(self.settings.database_dsn(), pool_size=2)
        return self._db

    async def client(self) -> Client:
        """Temporal, connected on first use.

        Raises:
            TemporalUnreachableError: Temporal did not answer for a while.
        """
        if self._client is None:
            self._client = await connect_client(settings=self.settings)
        return self._client

    def event(self, text: str) -> InboundEvent:
        """What the operator typed as an event on the console's channel, streamed.

        Raises:
            ValueError: The text breaks the event's rules (empty, too long, a NUL...).
        """
        return build_event(channel=self.channel, speaker=self.speaker, text=text, stream=True)

    async def submit(self, event: InboundEvent, on_no_worker: Callable[[str], None]) -> Receipt:
        """Send ``event`` and wait for its receipt, told when no worker serves meanwhile.

        Raises:
            UserError: Temporal stayed away (the line says what to do).
        """
        return await submission.submit(
            await self.client(),
            self.settings,
            handle=self.handle,
            event=event,
            on_no_worker=on_no_worker,
        )

    async def progress(self, event_id: str, known: list[str] | None = None) -> TurnProgress:
        """The event's activations (``known`` if found before), tool calls, woven conclusions."""
        return await turn_progress(
            db=self.db,
            client=await self.client(),
            handle=self.handle,
            event_id=event_id,
            known=known,
        )

    async def ended(self, activation_id: str, timeout: float) -> bool:
        """Wait for an activation to end (after its receipt); whether it did in time."""
        return await activation_ended(
            client=await self.client(), activation_id=activation_id, timeout=timeout
        )

    async def state(self) -> AgentState:
        """The agent's live state for the side panel."""
        return await agent_state(
            settings=self.settings,
            db=self.db,
            client=await self.client(),
            handle=self.handle,
            conversation_id=self.conversation_id,
        )

    async def new_conversation(self) -> bool:
        """Close this conversation (it is remembered as it closes); the next input opens one.

        Whether there was one open to close.
        """
        closing, self.conversation_id = self.conversation_id, None
        if closing is None:
            return False
        return await close_conversation(
            await self.client(), closing, reason="the operator started a new conversation"
        )

    async def switch_to(self, handle: str) -> None:
        """Talk with ``handle`` from now on.

        Raises:
            UserError: There is no such agent.
            InvalidIdError: ``handle`` is not a handle.
        """
        self.agent_name = await agent_name(self.settings, handle)
        self.handle = handle
        self.conversation_id = None

    async def aclose(self) -> None:
        """Close the store (the Temporal client holds nothing that needs closing)."""
        if self._db is not None:
            await self._db.aclose()
            self._db = None


async def agent_name(settings: Settings, handle: str) -> str:
    """The name of the agent ``handle``.

    Raises:
        UserError: There is no such agent.
        InvalidIdError: ``handle`` is not a handle.
    """
    check_handle(handle)
    agent = await agents.find_agent(settings=settings, handle=handle)
    if agent is None:
        raise UserError(f"there is no agent {handle!r}: create it with `persyn agent create`")
    return agent.name
