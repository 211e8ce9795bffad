"""The codec endpoint decodes for the Web UI: Temporal's remote codec protocol, CORS for the
UI's origin, shredded payloads shown as a placeholder, a bad request answered in one line."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.protobuf import json_format
from temporalio.api.common.v1 import Payload, Payloads
from temporalio.converter import WorkflowSerializationContext

from temporal.codec import AGENT_META, ENCODING, KEY_ID, AgentPayloadCodec, PayloadShreddedError
from temporal.codec_server import AGENT_HEADER, CodecServer
from temporal.devserver import DevServer, free_port
from temporal.keyring import Keyring
from tests.codec.conftest import NewAgent
from tests.harness import unique, until

UI = "http://127.0.0.1:8233"


@pytest.fixture
def server(codec: AgentPayloadCodec) -> Iterator[CodecServer]:
    running = CodecServer(codec, port=0, origins=frozenset({UI}))
    running.start()
    yield running
    running.stop()


def body(*payloads: Payload) -> str:
    return json_format.MessageToJson(Payloads(payloads=payloads))


def payloads_of(response: httpx.Response) -> list[Payload]:
    return list(json_format.Parse(response.text, Payloads()).payloads)


async def post(server: CodecServer, path: str, content: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http:
        return await http.post(
            path,
            content=content,
            headers={"Content-Type": "application/json", "X-Namespace": "default", "Origin": UI},
        )


async def test_the_ui_gets_sealed_payloads_decoded(
    server: CodecServer, codec: AgentPayloadCodec, keyring: Keyring, new_agent: NewAgent
) -> None:
    agent, other = await new_agent(), await new_agent()
    original = Payload(metadata={"encoding": b"json/plain"}, data=b'{"text":"hello there"}')
    sealed = []
    for handle in (agent, other):
        scoped = codec.with_context(
            WorkflowSerializationContext(namespace="default", workflow_id=f"agent/{handle}")
        )
        sealed += await scoped.encode([original])
    await keyring.shred(other)

    response = await post(server, "/decode", body(*sealed))

    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == UI
    opened, shredded = payloads_of(response)
    assert opened == original
    assert json.loads(shredded.data).startswith(f"[payload shredded: the key of agent '{other}'")


async def post_as(
    server: CodecServer, path: str, content: str, headers: dict[str, str]
) -> httpx.Response:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http:
        return await http.post(
            path, content=content, headers={"Content-Type": "application/json", **headers}
        )


async def test_encode_seals_with_the_key_of_the_agent_the_payload_is_for(
    server: CodecServer, codec: AgentPayloadCodec, keyring: Keyring, new_agent: NewAgent
) -> None:
    by_url, by_header, by_meta = await new_agent(), await new_agent(), await new_agent()
    text = Payload(metadata={"encoding": b"json/plain"}, data=b'"a signal from the UI"')
    tagged = Payload(
        metadata={"encoding": b"json/plain", AGENT_META: by_meta.encode()}, data=b'"hi"'
    )

    [for_url] = payloads_of(await post(server, f"/agents/{by_url}/encode", body(text)))
    header = {AGENT_HEADER: by_header}
    [for_header] = payloads_of(await post_as(server, "/encode", body(text), header))
    [for_meta] = payloads_of(await post(server, "/encode", body(tagged)))

    assert for_url.metadata["encoding"] == ENCODING and b"signal" not in for_url.data
    for sealed, agent in ((for_url, by_url), (for_header, by_header), (for_meta, by_meta)):
        assert sealed.metadata[KEY_ID].decode() == (await keyring.own_key(agent)).id
    opened = await codec.decode([for_url, for_header, for_meta])
    assert opened[:2] == [text, text]
    assert AGENT_META not in opened[2].metadata and opened[2].data == b'"hi"'
    # Sealed by a client, it goes with its agent's key all the same.
    await keyring.shred(by_url)
    with pytest.raises(PayloadShreddedError):
        await codec.decode([for_url])


async def test_encode_refuses_an_agent_the_client_names_that_does_not_exist(
    server: CodecServer,
) -> None:
    text = Payload(metadata={"encoding": b"json/plain"}, data=b'"a signal from the UI"')
    nobody = unique("nobody")

    response = await post(server, f"/agents/{nobody}/encode", body(text))

    assert response.status_code == 400
    assert response.json()["error"].startswith(f"there is no agent '{nobody}'")
    # An agent only its JSON names is not the client's word: sealed, for the worker to refuse.
    named_inside = Payload(
        metadata={"encoding": b"json/plain"}, data=f'{{"handle":"{nobody}"}}'.encode()
    )
    inside = await post(server, "/encode", body(named_inside))
    assert inside.status_code == 200
    assert payloads_of(inside)[0].metadata["encoding"] == ENCODING


async def test_the_browser_preflight_is_allowed_for_the_ui_origin_only(
    server: CodecServer,
) -> None:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http:
        allowed = await http.options(
            "/decode",
            headers={
                "Origin": UI,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type,x-namespace",
            },
        )
        foreign = await http.options("/decode", headers={"Origin": "http://evil.example"})
    assert allowed.status_code == 204
    assert allowed.headers["Access-Control-Allow-Origin"] == UI
    assert "x-namespace" in allowed.headers["Access-Control-Allow-Headers"].lower()
    assert "Access-Control-Allow-Origin" not in foreign.headers


@pytest.mark.parametrize(
    ("path", "content", "status", "says"),
    [
        ("/decode", "not json", 400, 'send {"payloads": [...]}'),
        ("/decode", '{"payloads": 3}', 400, 'send {"payloads": [...]}'),
        ("/other", "{}", 404, "POST /encode or /decode"),
    ],
)
async def test_a_bad_request_gets_one_line_that_says_what_to_send(
    server: CodecServer, path: str, content: str, status: int, says: str
) -> None:
    response = await post(server, path, content)
    assert response.status_code == status
    assert says in response.json()["error"]


@pytest.mark.parametrize("length", [str(64 * 2**20), "-5", "lots"])
def test_a_body_too_large_or_unsized_is_refused_before_it_is_read(
    server: CodecServer, length: str
) -> None:
    # A raw request: HTTP clients refuse to send a Content-Length the body does not have.
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
        conn.sendall(
            f"POST /decode HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"Content-Length: {length}\r\n\r\n{{}}".encode()
        )
        reply = conn.makefile("rb").read().decode()
    assert reply.startswith("HTTP/1.0 413") or reply.startswith("HTTP/1.1 413")
    assert "send a Content-Length of at most" in reply


async def test_the_dev_server_points_its_web_ui_at_the_endpoint(tmp_path: Path) -> None:
    endpoint = "http://127.0.0.1:8234"
    ui_port = free_port()
    dev = DevServer(
        port=free_port(),
        ui_port=ui_port,
        db_file=None,
        log_file=tmp_path / "temporal.log",
        ui_codec_endpoint=endpoint,
    )
    process = dev.start(detached=False)
    settings: dict[str, Any] = {}
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{ui_port}") as http:

            async def ui_settings() -> bool:
                try:
                    response = await http.get("/api/v1/settings")
                except httpx.TransportError:
                    return False
                if response.status_code == 200:
                    settings.update(response.json())
                return response.status_code == 200

            await until(ui_settings, timeout=30)
    finally:
        process.terminate()
        process.wait(10)
    assert settings["Codec"]["Endpoint"] == endpoint


async def test_a_foreign_host_reads_nothing(
    server: CodecServer, codec: AgentPayloadCodec, new_agent: NewAgent
) -> None:
    # DNS rebinding: a page on evil.example whose name now points at 127.0.0.1 sends its Host.
    agent = await new_agent()
    scoped = codec.with_context(
        WorkflowSerializationContext(namespace="default", workflow_id=f"agent/{agent}")
    )
    [sealed] = await scoped.encode([Payload(metadata={"encoding": b"json/plain"}, data=b'"pin"')])

    evil = f"evil.example:{server.port}"
    rebound = await post_as(
        server, "/decode", body(sealed), {"Host": evil, "Origin": f"http://{evil}"}
    )
    assert rebound.status_code == 421
    assert b"pin" not in rebound.content
    assert "Access-Control-Allow-Origin" not in rebound.headers
    assert "PERSYN_CODEC_ALLOWED_HOSTS" in rebound.json()["error"]
    # The endpoint's own names answer.
    for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}"):
        own = await post_as(server, "/decode", body(sealed), {"Host": host})
        assert own.status_code == 200 and payloads_of(own)[0].data == b'"pin"'


async def test_a_configured_token_is_required_and_other_origins_get_no_cors(
    codec: AgentPayloadCodec,
) -> None:
    guarded = CodecServer(codec, port=0, origins=frozenset({UI}), token="s3cret")
    guarded.start()
    try:
        payload = body(Payload(metadata={"encoding": b"json/plain"}, data=b'"x"'))
        missing = await post_as(guarded, "/decode", payload, {})
        wrong = await post_as(guarded, "/decode", payload, {"Authorization": "Bearer nope"})
        right = await post_as(
            guarded, "/decode", payload, {"Authorization": "Bearer s3cret", "Origin": UI}
        )
        elsewhere = await post_as(
            guarded, "/decode", payload, {"Authorization": "Bearer s3cret", "Origin": "http://x"}
        )
    finally:
        guarded.stop()
    assert (missing.status_code, wrong.status_code, right.status_code) == (401, 401, 200)
    assert "Authorization: Bearer" in missing.json()["error"]
    assert right.headers["Access-Control-Allow-Origin"] == UI
    assert "Access-Control-Allow-Origin" not in elsewhere.headers
