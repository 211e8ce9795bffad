"""Messages that take forgotten or expired content out of running workflows."""

from __future__ import annotations

from pydantic import AwareDatetime

from schemas.events import Wire


class ForgetTurns(Wire):
    """Signal to an open conversation: drop the window's turns said before ``before``.

    Sent by dialog retention, so the conversation's ``window`` query (and the state it carries
    through continue-as-new) no longer holds dialog the store has already dropped.
    """

    before: AwareDatetime
