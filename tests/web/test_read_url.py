"""read_url against a server the test starts on 127.0.0.1: extraction, caps and the SSRF guard."""

from __future__ import annotations

import time

import pytest

from activities.tools.registry import ToolError
from activities.tools.web.guard import UrlRefusedError, parse, resolve
from activities.tools.web.read_url import ReadUrl
from schemas.web import ReadUrlResult, WebSettings
from tests.web.conftest import call

LOCAL = WebSettings(allow_private=True, timeout_seconds=2.0, max_bytes=100_000)


async def test_a_page_is_read_as_its_main_text_without_boilerplate(site: str) -> None:
    result: ReadUrlResult = await call(ReadUrl(LOCAL), url=f"{site}/article")

    assert result.title == "Tides of Brittany"
    assert "fourteen metres" in result.text
    assert "Copyright footer" not in result.text and "Home | About" not in result.text
    assert not result.truncated


async def test_a_redirect_is_followed_to_its_target(site: str) -> None:
    result: ReadUrlResult = await call(ReadUrl(LOCAL), url=f"{site}/redirect")

    assert result.url == f"{site}/article"
    assert "fourteen metres" in result.text


async def test_the_checked_address_is_connected_to_under_the_name_asked_for(site: str) -> None:
    # The connection goes to the resolved address, and the server still sees the name.
    port = site.rsplit(":", 1)[1]
    result: ReadUrlResult = await call(ReadUrl(LOCAL), url=f"http://localhost:{port}/host")

    assert result.text == f"Host header: localhost:{port}"
    assert result.url == f"http://localhost:{port}/host"


async def test_loopback_is_refused_by_default(site: str) -> None:
    with pytest.raises(ToolError, match=r"127\.0\.0\.1.*PERSYN_WEB__ALLOW_PRIVATE"):
        await call(ReadUrl(WebSettings()), url=f"{site}/article")


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost/",
        "http://10.1.2.3/",
        "http://192.168.0.1/admin",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://0.0.0.0/",
    ],
)
async def test_non_global_addresses_are_refused_before_any_connection(url: str) -> None:
    with pytest.raises(UrlRefusedError, match="non-public address"):
        await resolve(parse(url), allow_private=False)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("file:///etc/passwd", "only http and https"),
        ("ftp://example.org/", "only http and https"),
        ("http:///nohost", "no host"),
        ("http://user:pw@example.org/", "credentials"),
    ],
)
async def test_hostile_urls_get_one_line_reasons(url: str, reason: str) -> None:
    with pytest.raises(ToolError, match=reason):
        await call(ReadUrl(LOCAL), url=url)


async def test_a_hanging_url_is_abandoned_at_the_time_cap(site: str) -> None:
    started = time.monotonic()
    with pytest.raises(ToolError, match="longer than 1 s"):
        await call(ReadUrl(LOCAL.model_copy(update={"timeout_seconds": 1.0})), url=f"{site}/hang")
    assert time.monotonic() - started < 3.0


async def test_an_oversized_body_is_cut_at_the_size_cap(site: str) -> None:
    result: ReadUrlResult = await call(ReadUrl(LOCAL), url=f"{site}/huge")

    assert result.truncated
    assert len(result.text) <= LOCAL.max_chars


async def test_a_binary_body_and_an_http_error_are_reported(site: str) -> None:
    with pytest.raises(ToolError, match="image/png, not text"):
        await call(ReadUrl(LOCAL), url=f"{site}/binary")
    with pytest.raises(ToolError, match="HTTP 404"):
        await call(ReadUrl(LOCAL), url=f"{site}/missing")
