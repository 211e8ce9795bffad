"""Which addresses ``read_url`` may reach: the resolved address of every hop is checked.

The check is on the address itself, after resolution, never on the name: a public name can
resolve to 127.0.0.1, and a name can answer differently the second time it is asked (DNS
rebinding). So the fetcher connects to the very address checked here, not to the name again.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from activities.tools.web.addresses import IPAddress, is_public


class UrlRefusedError(Exception):
    """A URL ``read_url`` will not fetch; the message says why in one line."""


@dataclass(frozen=True)
class Target:
    """One hop: the URL as given and the addresses it may connect to, in resolver order."""

    url: SplitResult
    host: str
    port: int
    addresses: tuple[IPAddress, ...]


def parse(url: str) -> SplitResult:
    """Split an http(s) URL, refusing anything else.

    Raises:
        UrlRefusedError: Not an absolute http or https URL with a host.
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https"):
        raise UrlRefusedError(
            f"only http and https URLs can be read, not {parts.scheme or 'none'!r}"
        )
    if not parts.hostname:
        raise UrlRefusedError(
            "the URL has no host: give an absolute URL such as https://example.org/"
        )
    if parts.username or parts.password:
        raise UrlRefusedError("URLs with credentials are not read")
    return parts


async def resolve(url: SplitResult, *, allow_private: bool) -> Target:
    """Resolve ``url``'s host to addresses that every check passed.

    All of the host's addresses must be public (unless ``allow_private``): a name that
    resolves to a public and a private address is refused rather than tried in turn. An IPv6
    address that embeds IPv4 (mapped, compatible, NAT64, 6to4, Teredo) is judged by the IPv4
    it embeds (``addresses.is_public``).

    Raises:
        UrlRefusedError: The host does not resolve, or resolves to a non-global address.
    """
    host = url.hostname or ""
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
    except socket.gaierror as err:
        raise UrlRefusedError(f"{host} does not resolve ({err.strerror})") from None
    # Without duplicates, in the resolver's order of preference.
    addresses = list(dict.fromkeys(ipaddress.ip_address(info[4][0]) for info in infos))
    if not addresses:
        raise UrlRefusedError(f"{host} does not resolve")
    if not allow_private:
        for address in addresses:
            if not is_public(address):
                raise UrlRefusedError(
                    f"{host} resolves to {address}, a loopback, private or otherwise "
                    "non-public address; set PERSYN_WEB__ALLOW_PRIVATE=true to allow it"
                )
    return Target(url=url, host=host, port=port, addresses=tuple(addresses))
