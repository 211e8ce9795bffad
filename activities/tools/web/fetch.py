"""Fetch a page within the caps, connecting only to addresses the guard passed.

Redirects are followed here, one hop at a time, so each hop's resolved address is checked
before anything is sent to it. The connection goes to that address with the original name in
the Host header and TLS server name, so a second DNS answer is never consulted.

Every TLS certificate is verified against the name asked for, with the default bundle or the
configured ``web.ca_bundle``; there is no way to turn verification off.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

import httpx

from activities.tools.web.addresses import IPAddress
from activities.tools.web.body import ACCEPT_ENCODING, BodyError, read_capped
from activities.tools.web.guard import Target, UrlRefusedError, parse, resolve
from schemas.web import WebSettings

_REDIRECTS = {301, 302, 303, 307, 308}
_TEXT_TYPES = ("text/", "application/xhtml+xml", "application/xml", "application/json")


class FetchError(Exception):
    """The page could not be read; the message says why in one line."""


@dataclass(frozen=True)
class Page:
    """A fetched body, decompressed and cut at the size cap."""

    url: str
    content_type: str
    body: bytes
    truncated: bool
    encoding: str | None = None
    """The content coding the body came in (``gzip``, ``deflate``), if any."""


def _pinned_url(target: Target, address: IPAddress) -> str:
    host = str(address)
    if isinstance(address, ipaddress.IPv6Address):
        host = f"[{host}]"
    path = target.url.path or "/"
    query = f"?{target.url.query}" if target.url.query else ""
    return f"{target.url.scheme}://{host}:{target.port}{path}{query}"


def _host_header(target: Target) -> str:
    default = 443 if target.url.scheme == "https" else 80
    return target.host if target.port == default else f"{target.host}:{target.port}"


@functools.lru_cache(maxsize=8)
def _trusting(ca_bundle: Path) -> ssl.SSLContext:
    """A verifying TLS context that trusts the authorities in ``ca_bundle`` (read once)."""
    try:
        return ssl.create_default_context(cafile=str(ca_bundle))
    except (OSError, ssl.SSLError) as err:
        reason = getattr(err, "strerror", None) or str(err)
        raise FetchError(
            f"web.ca_bundle {ca_bundle} cannot be read as PEM certificates ({reason}): "
            "point it at a readable PEM file"
        ) from None


def _verification_failure(err: BaseException) -> ssl.SSLCertVerificationError | None:
    seen: BaseException | None = err
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _untrusted(host: str, failure: ssl.SSLCertVerificationError) -> FetchError:
    reason = failure.verify_message or str(failure)
    return FetchError(
        f"the TLS certificate of {host} could not be verified ({reason}): read_url does not "
        "read pages it cannot authenticate; if the site uses your own authority, name its "
        "PEM file in web.ca_bundle"
    )


async def _connect(client: httpx.AsyncClient, target: Target) -> httpx.Response:
    """Send the GET to each checked address in turn until one accepts the connection."""
    failure: httpx.ConnectError | None = None
    for address in target.addresses:
        request = client.build_request(
            "GET",
            _pinned_url(target, address),
            headers={"Host": _host_header(target), "Accept-Encoding": ACCEPT_ENCODING},
            extensions={"sni_hostname": target.host} if target.url.scheme == "https" else {},
        )
        try:
            return await client.send(request, stream=True)
        except httpx.ConnectError as err:
            untrusted = _verification_failure(err)
            if untrusted is not None:  # another address would show the same certificate
                raise _untrusted(target.host, untrusted) from None
            failure = err
    assert failure is not None  # resolve() never returns a target without addresses
    raise failure


async def _fetch(client: httpx.AsyncClient, url: str, settings: WebSettings) -> Page:
    for _ in range(settings.max_redirects + 1):
        target = await resolve(parse(url), allow_private=settings.allow_private)
        response = await _connect(client, target)
        try:
            if response.status_code in _REDIRECTS and "location" in response.headers:
                url = urljoin(url, response.headers["location"])
                continue
            if response.status_code >= 400:
                raise FetchError(f"{target.host} answered HTTP {response.status_code}")
            content_type = response.headers.get("content-type", "text/html").lower()
            if not content_type.startswith(_TEXT_TYPES):
                raise FetchError(f"the page is {content_type.split(';')[0]}, not text or HTML")
            try:
                body = await read_capped(response, settings.max_bytes)
            except BodyError as err:
                raise FetchError(str(err)) from None
            return Page(
                url=url,
                content_type=content_type,
                body=body.data,
                truncated=body.truncated,
                encoding=body.encoding,
            )
        finally:
            await response.aclose()
    raise FetchError(f"more than {settings.max_redirects} redirects")


async def fetch_page(url: str, settings: WebSettings) -> Page:
    """GET ``url`` with redirects, refusing non-global hops unless allowed.

    Raises:
        UrlRefusedError: A hop's address is not allowed, or the URL is not http(s).
        FetchError: A network error, an HTTP error, a non-text body or the time cap.
    """
    timeout = httpx.Timeout(settings.timeout_seconds)
    verify: ssl.SSLContext | bool = True
    if settings.ca_bundle is not None:
        verify = _trusting(settings.ca_bundle)
    # No environment proxies (a proxy would connect to the name itself, past the guard), and no
    # SSL_CERT_FILE from the environment either: what is trusted is what the settings say.
    async with httpx.AsyncClient(
        timeout=timeout, follow_redirects=False, trust_env=False, verify=verify
    ) as client:
        try:
            async with asyncio.timeout(settings.timeout_seconds):
                return await _fetch(client, url, settings)
        except TimeoutError:
            raise FetchError(
                f"the page took longer than {settings.timeout_seconds:g} s and was abandoned"
            ) from None
        except httpx.HTTPError as err:
            raise FetchError(f"could not read the page: {err or type(err).__name__}") from None


__all__ = ["FetchError", "Page", "UrlRefusedError", "fetch_page"]
