"""read_url over HTTPS to a server whose certificate the test made: verified, never skipped.

The server listens on 127.0.0.1, so every test allows the operator's own network
(``allow_private``): the SSRF guard is not what is under test here, the certificate check is.
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from activities.tools.registry import ToolError
from activities.tools.web.read_url import ReadUrl
from schemas.web import ReadUrlResult, WebSettings
from tests.web.conftest import _Handler, call
from tests.web.tls import Certificates, make_certificates


@pytest.fixture
def certificates(tmp_path: Path) -> Certificates:
    return make_certificates(tmp_path)


@pytest.fixture
def secure_site(certificates: Certificates) -> Iterator[str]:
    """``https://localhost:PORT`` serving the test site with the test authority's certificate."""
    release = threading.Event()
    handler = type("Handler", (_Handler,), {"release": release})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificates.server_chain, certificates.server_key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://localhost:{server.server_address[1]}"
    release.set()
    server.shutdown()
    server.server_close()


def _settings(**extra: object) -> WebSettings:
    return WebSettings.model_validate({"allow_private": True, "timeout_seconds": 5.0, **extra})


async def test_an_unknown_authority_is_refused_by_default_in_one_line(secure_site: str) -> None:
    with pytest.raises(ToolError) as refused:
        await call(ReadUrl(_settings()), url=f"{secure_site}/article")

    message = str(refused.value)
    assert message.startswith("the TLS certificate of localhost could not be verified (")
    assert "web.ca_bundle" in message and "\n" not in message


async def test_the_configured_authority_is_trusted(
    secure_site: str, certificates: Certificates
) -> None:
    result: ReadUrlResult = await call(
        ReadUrl(_settings(ca_bundle=certificates.ca)), url=f"{secure_site}/article"
    )

    assert result.url == f"{secure_site}/article" and "fourteen metres" in result.text


async def test_a_trusted_authority_does_not_vouch_for_another_name(
    secure_site: str, certificates: Certificates
) -> None:
    # The same server under its address: the certificate names only localhost.
    port = secure_site.rsplit(":", 1)[1]
    with pytest.raises(ToolError, match=r"certificate of 127\.0\.0\.1 could not be verified"):
        await call(
            ReadUrl(_settings(ca_bundle=certificates.ca)), url=f"https://127.0.0.1:{port}/article"
        )


async def test_an_unreadable_bundle_is_named(tmp_path: Path) -> None:
    broken = tmp_path / "not-a-bundle.pem"
    broken.write_text("not a certificate")
    with pytest.raises(ToolError, match=r"web\.ca_bundle .*not-a-bundle\.pem cannot be read"):
        await call(ReadUrl(_settings(ca_bundle=broken)), url="https://localhost:1/article")
