"""The reminders agents set, from the operator's side: list them, read one, cancel one.

Agents create and edit their reminders with their own tools; an operator reads them all and
cancels any one. Naming an agent narrows a request to that agent's reminders, and a reminder of
another agent is refused before anything changes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from activities.scheduling.reminders import ReminderError, Reminders
from schemas.autonomy import ReminderPublic
from schemas.ids import check_handle
from schemas.settings import Settings
from store.queries.agents import get_agent
from store.tables.columns import utcnow
from temporal.client import connect
from usecases.errors import NotTheAgentsError, UnknownAgentError, UseCaseError
from usecases.store import open_store

T = TypeVar("T")


class ReminderRefusedError(UseCaseError):
    """A reminder ID that is malformed or names no reminder."""


async def _with(
    settings: Settings, agent: str | None, act: Callable[[Reminders], Awaitable[T]]
) -> T:
    async with open_store(settings, pool_size=2) as db:
        if agent is not None:
            check_handle(agent)
            async with db.session() as session:
                if await get_agent(session, handle=agent) is None:
                    raise UnknownAgentError(agent)
        client = await connect(settings)
        try:
            return await act(Reminders(db, client, settings.autonomy))
        except ReminderError as err:
            # The activity speaks to the agent ("of yours"); an operator is not the agent.
            raise ReminderRefusedError(str(err).replace(" of yours", "")) from None


def _owned(reminder: ReminderPublic, agent: str | None) -> ReminderPublic:
    if agent is not None and reminder.agent != agent:
        raise NotTheAgentsError(
            what="reminder", plural="reminders", record_id=reminder.reminder_id, agent=agent
        )
    return reminder


async def list_reminders(
    *, settings: Settings, agent: str | None, include_finished: bool
) -> list[ReminderPublic]:
    """Reminders, oldest first: active ones unless ``include_finished``, every agent's unless named.

    Raises:
        UnknownAgentError: ``agent`` names no agent.
    """
    return await _with(
        settings, agent, lambda r: r.list(agent=agent, include_finished=include_finished)
    )


async def show_reminder(
    *, settings: Settings, reminder_id: str, agent: str | None = None
) -> ReminderPublic:
    """One reminder with its next firing.

    Raises:
        ReminderRefusedError: not a reminder ID, or no such reminder.
        UnknownAgentError: ``agent`` names no agent.
        NotTheAgentsError: the reminder is not ``agent``'s.
    """

    async def act(reminders: Reminders) -> ReminderPublic:
        return _owned(await reminders.show(agent=None, reminder_id=reminder_id), agent)

    return await _with(settings, agent, act)


async def cancel_reminder(
    *, settings: Settings, reminder_id: str, agent: str | None = None
) -> ReminderPublic:
    """Cancel a reminder and delete its schedule; it never fires again (idempotent).

    Raises:
        ReminderRefusedError: not a reminder ID, or no such reminder.
        UnknownAgentError: ``agent`` names no agent.
        NotTheAgentsError: the reminder is not ``agent``'s (nothing is cancelled).
    """

    async def act(reminders: Reminders) -> ReminderPublic:
        # Ownership is checked before anything changes: the wrong agent cancels nothing.
        _owned(await reminders.show(agent=None, reminder_id=reminder_id), agent)
        return await reminders.cancel(agent=None, reminder_id=reminder_id, now=utcnow())

    return await _with(settings, agent, act)
