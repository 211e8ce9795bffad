"""Whether an address is public, judging an IPv6 address that carries IPv4 by what it carries.

Several IPv6 forms embed an IPv4 address, and the network delivers a packet sent to one of
them to (or through) that IPv4 address: a NAT64 gateway translates ``64:ff9b::7f00:1`` into
127.0.0.1, a 6to4 relay unwraps ``2002:7f00:1::``, a host may still route IPv4-compatible
``::7f00:1`` to its own loopback. The standard library calls most of these global, because the
IPv6 prefix is; so each is judged here by the IPv4 addresses it embeds instead, and is public
only if every one of them is.
"""

from __future__ import annotations

import ipaddress

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_COMPATIBLE = ipaddress.IPv6Network("::/96")
"""IPv4-compatible (RFC 4291, deprecated): ``::a.b.c.d``; ``::`` and ``::1`` fall in too."""
_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
"""IPv4-translated (RFC 2765, SIIT): ``::ffff:0:a.b.c.d``."""
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
"""NAT64's well-known prefix (RFC 6052), used only with the IPv4 address in the last 32 bits."""
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
"""NAT64's local-use prefix (RFC 8215): the operator picks the layout within it."""
_LOCAL_LAYOUTS = (48, 56, 64)
"""RFC 6052 prefix lengths that fit inside the local-use /48, besides /96."""


def embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses ``address`` carries, by its form; empty when it carries none.

    IPv4-mapped, IPv4-translated, IPv4-compatible and well-known NAT64 addresses carry one in
    their last 32 bits, 6to4 one after the prefix, Teredo two (the server and the client). A
    local-use NAT64 address gives one candidate per RFC 6052 layout it is well formed for, since
    which one the operator uses is not visible in the address.
    """
    if address.ipv4_mapped is not None:
        return (address.ipv4_mapped,)
    if address.sixtofour is not None:
        return (address.sixtofour,)
    if address.teredo is not None:
        return address.teredo
    if any(address in network for network in (_COMPATIBLE, _TRANSLATED, _NAT64)):
        return (_last_32_bits(address),)
    if address in _NAT64_LOCAL:
        return _local_nat64(int(address))
    return ()


def is_public(address: IPAddress) -> bool:
    """Whether ``address`` (or every IPv4 address it embeds) is global and not multicast."""
    if isinstance(address, ipaddress.IPv6Address):
        carried = embedded_ipv4(address)
        if carried:
            return all(is_public(inner) for inner in carried)
    return address.is_global and not address.is_multicast


def _last_32_bits(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)


def _local_nat64(value: int) -> tuple[ipaddress.IPv4Address, ...]:
    """RFC 6052 candidates: the /96 layout always fits; the others when bits 64-71 are zero.

    In the shorter layouts the 32 IPv4 bits are split around bits 64-71 (which must be zero)
    and followed by a zero suffix; a layout whose zero bits are not zero is not the one in use.
    """
    candidates = [ipaddress.IPv4Address(value & 0xFFFFFFFF)]
    if (value >> 56) & 0xFF:  # bits 64-71, counted from the top
        return tuple(candidates)
    for length in _LOCAL_LAYOUTS:
        # The IPv4 bits start right after the prefix; 64 - length of them come before bits
        # 64-71 and the rest right after, then the suffix, which must be zero.
        before = 64 - length
        after = 32 - before
        suffix_bits = 128 - 72 - after
        if value & ((1 << suffix_bits) - 1):
            continue
        high = (value >> 64) & ((1 << before) - 1)
        low = (value >> suffix_bits) & ((1 << after) - 1)
        candidates.append(ipaddress.IPv4Address((high << after) | low))
    return tuple(candidates)
