"""IPv6 addresses that carry an IPv4 address are judged by the IPv4 address they carry.

A table of literal URLs goes through the guard as ``read_url`` uses it; Hypothesis then puts
every kind of non-public IPv4 address into every embedding form (with arbitrary bits wherever
the form leaves them free) and checks none comes out public, and that public ones stay public.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from activities.tools.web.addresses import is_public
from activities.tools.web.guard import UrlRefusedError, parse, resolve

V4 = ipaddress.IPv4Address
V6 = ipaddress.IPv6Address


def _rfc6052(prefix: str, length: int, v4: V4, suffix: int = 0) -> V6:
    """``v4`` embedded after ``prefix``/``length`` as RFC 6052 lays it out (bits 64-71 zero)."""
    value = int(V6(prefix)) & ~((1 << (128 - length)) - 1)
    bits = int(v4)
    if length == 96:
        return V6(value | bits)
    before = 64 - length
    after = 32 - before
    suffix_bits = 128 - 72 - after
    high, low = bits >> after, bits & ((1 << after) - 1)
    suffix &= (1 << suffix_bits) - 1
    return V6(value | (high << 64) | (low << suffix_bits) | suffix)


def _teredo(server: V4, client: V4, flags: int = 0, port: int = 0) -> V6:
    # The client's address and port are stored inverted (RFC 4380).
    inverted = ~int(client) & 0xFFFFFFFF
    return V6(
        (0x20010000 << 96)
        | (int(server) << 64)
        | ((flags & 0xFFFF) << 48)
        | ((~port & 0xFFFF) << 32)
        | inverted
    )


Form = Callable[[V4, int], V6]
"""An embedding of an IPv4 address; the int supplies bits the form leaves free."""

FORMS: dict[str, Form] = {
    "mapped": lambda v4, _: V6((0xFFFF << 32) | int(v4)),
    "translated": lambda v4, _: V6((0xFFFF << 48) | int(v4)),
    "compatible": lambda v4, _: V6(int(v4)),
    "nat64": lambda v4, _: _rfc6052("64:ff9b::", 96, v4),
    # A local-use NAT64 prefix: the operator's subnet bits are free in the /96 layout.
    "nat64-local/96": lambda v4, free: V6(
        int(V6("64:ff9b:1::")) | ((free & ((1 << 48) - 1)) << 32) | int(v4)
    ),
    "nat64-local/64": lambda v4, free: _rfc6052(f"64:ff9b:1:{free & 0xFFFF:x}::", 64, v4),
    "nat64-local/56": lambda v4, free: _rfc6052(f"64:ff9b:1:{free & 0xFF:x}00::", 56, v4),
    "nat64-local/48": lambda v4, _: _rfc6052("64:ff9b:1::", 48, v4),
    # 6to4: the site's subnet and interface bits are free.
    "6to4": lambda v4, free: V6((0x2002 << 112) | (int(v4) << 80) | (free & ((1 << 80) - 1))),
    "teredo-client": lambda v4, free: _teredo(V4("65.54.227.120"), v4, free, free >> 16),
    "teredo-server": lambda v4, free: _teredo(v4, V4("8.8.8.8"), free, free >> 16),
}

_NON_PUBLIC_V4 = [
    ipaddress.IPv4Network(network)
    for network in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
    )
]
non_public_v4 = (
    st.sampled_from(_NON_PUBLIC_V4)
    .flatmap(lambda net: st.integers(int(net.network_address), int(net.broadcast_address)).map(V4))
    .filter(lambda address: not is_public(address))
)
public_v4 = st.integers(0, 2**32 - 1).map(V4).filter(is_public)
free_bits = st.integers(0, 2**80 - 1)


@pytest.mark.parametrize(
    "host",
    [
        "::7f00:1",  # IPv4-compatible 127.0.0.1
        "::a00:1",  # IPv4-compatible 10.0.0.1
        "64:ff9b::7f00:1",  # NAT64 to 127.0.0.1
        "64:ff9b::a9fe:a9fe",  # NAT64 to the cloud metadata address
        "64:ff9b:1::c0a8:1",  # local-use NAT64 (/96) to 192.168.0.1
        "64:ff9b:1:a00:0:100::",  # local-use NAT64 (/48) to 10.0.0.1
        "2002:7f00:1::",  # 6to4 through 127.0.0.1
        "2002:c0a8:101:1::1",  # 6to4 through 192.168.1.1
        "::ffff:0:7f00:1",  # IPv4-translated 127.0.0.1
        "::ffff:7f00:1",  # IPv4-mapped 127.0.0.1
        "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, client 127.0.0.1
        "2001:0:a00:1:8000:63bf:f7f7:f7f7",  # Teredo, server 10.0.0.1
    ],
)
async def test_an_address_embedding_a_private_ipv4_is_refused(host: str) -> None:
    with pytest.raises(UrlRefusedError, match="non-public address"):
        await resolve(parse(f"http://[{host}]/"), allow_private=False)


@pytest.mark.parametrize(
    "host",
    [
        "64:ff9b::808:808",  # NAT64 to 8.8.8.8: what DNS64 gives an IPv6-only host
        "64:ff9b:1::808:808",  # the same through a local-use prefix
        "2002:808:808::1",  # 6to4 through 8.8.8.8
        "2001:0:4136:e378:8000:63bf:f7f7:f7f7",  # Teredo, server and client public
        "2606:4700:4700::1111",  # a plain global IPv6 address
    ],
)
async def test_an_address_embedding_a_public_ipv4_is_read(host: str) -> None:
    target = await resolve(parse(f"http://[{host}]/"), allow_private=False)

    assert target.addresses == (ipaddress.IPv6Address(host),)


@given(form=st.sampled_from(sorted(FORMS)), v4=non_public_v4, free=free_bits)
def test_no_embedding_of_a_non_public_ipv4_is_public(form: str, v4: V4, free: int) -> None:
    address = FORMS[form](v4, free)

    assert not is_public(address), f"{address} ({form} of {v4}) was judged public"


# The local-use layouts are left out: which one an operator uses is not in the address, so
# a public IPv4 whose bits also read as a private one under another layout is refused.
@given(
    form=st.sampled_from(sorted(name for name in FORMS if "local/" not in name)),
    v4=public_v4,
    free=free_bits,
)
def test_every_embedding_of_a_public_ipv4_is_public(form: str, v4: V4, free: int) -> None:
    address = FORMS[form](v4, free)

    assert is_public(address), f"{address} ({form} of {v4}) was judged non-public"
