"""A token is a tenant: the channel names it uses are its own.

An integrator posts on channel ``support``; the agent hears it on ``web:<tenant>:support``,
where ``<tenant>`` is the token's tenant ID. A person is looked up by service, channel and
speaker ID, so speaker ``u-17`` of one tenant is another person than ``u-17`` of the next, and
everything keyed by the channel (conversations, memories, the outbox, streams, replays,
messages kept for pickup) is the tenant's by construction. Nothing outside this module sees
the prefix: responses name the channel as the integrator sent it.
"""

from __future__ import annotations

from schemas.events import ChannelRef
from usecases.tokens import TokenPublic

SERVICE = "web"
"""The web channel's service name."""

SEPARATOR = ":"

MAX_NAME_CHARS = 200 - 26 - len(SEPARATOR)
"""The longest channel name an integrator may use: the tenant prefix takes the rest."""


class ChannelNameError(ValueError):
    """A channel name too long to carry its tenant's prefix; the message says the limit."""


def tenant_channel(token: TokenPublic, name: str) -> ChannelRef:
    """The agent's channel for ``token``'s channel ``name``.

    Raises:
        pydantic.ValidationError: ``name`` breaks the channel-name rule.
        ChannelNameError: ``name`` is too long to carry the prefix.
    """
    checked = ChannelRef(service=SERVICE, channel=name).channel
    if len(checked) > MAX_NAME_CHARS:
        raise ChannelNameError(
            f"channel name {checked[:40]!r}... is {len(checked)} characters long "
            f"(at most {MAX_NAME_CHARS} on the web channel)"
        )
    return ChannelRef(service=SERVICE, channel=f"{token.tenant}{SEPARATOR}{checked}")


def public_name(channel: ChannelRef) -> str:
    """The name the integrator used for one of its channels (the tenant prefix removed)."""
    _, _, name = channel.channel.partition(SEPARATOR)
    return name or channel.channel
