"""Who the operator is in the console: a stable speaker key, and a display name they may change.

The agent's directory knows a person by service, channel and speaker ID; the display name
travels with each message and the directory takes it as the person's name (unless an operator
curated it). So ``/rename`` changes only the name sent from then on: the agent sees the same
person, now called otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.contacts import clean_name
from schemas.events import Speaker
from schemas.text import InvalidTextError

MAX_DISPLAY_NAME = 80
"""A display name longer than this is refused: it is a name, not a message."""


def renamed(speaker: Speaker, name: str) -> Speaker:
    """``speaker`` under the display name ``name``, same key.

    Raises:
        InvalidTextError: The name is empty, too long, or holds control or invisible characters.
    """
    return Speaker(
        speaker_id=speaker.speaker_id,
        display_name=clean_name(name, what="the name", max_chars=MAX_DISPLAY_NAME),
    )


@dataclass(frozen=True)
class Command:
    """A line typed in the composer that starts with ``/``: its verb and the rest."""

    verb: str
    argument: str


COMMANDS = {
    "/rename": "/rename NAME  the name the agent sees for you (you stay the same person)",
    "/agent": "/agent HANDLE  talk with another agent",
    "/new": "/new  close this conversation and start a new one",
    "/trace": "/trace  the trace of the latest reply",
    "/people": "/people  the directory browser",
    "/help": "/help  these commands",
    "/quit": "/quit  leave the console",
}
"""The composer's commands, each with its one line of help."""


def command_of(text: str) -> Command | None:
    """The command ``text`` is, if it is one (``//`` at the start sends a literal ``/``)."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    verb, _, rest = stripped.partition(" ")
    return Command(verb=verb.lower(), argument=rest.strip())


__all__ = ["COMMANDS", "Command", "InvalidTextError", "command_of", "renamed"]
