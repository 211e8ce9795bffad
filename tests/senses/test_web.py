"""The web API carries pictures and recordings: upload, then name them in a message.

A real worker, Temporal, PostgreSQL and the web channel under uvicorn, called over HTTP; the
vision model and the transcriber are the local server speaking OpenAI's protocols. Media are
their tenant's: another token naming them is refused as naming unknown ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from tests.fakes.provider_server import FakeProviderServer
from tests.harness import Stack
from tests.senses.conftest import OGG, png, senses_worker
from tests.webchannel.web import serving
from usecases.tokens import create_token

REPLY = ScriptRule(task="respond", reply="Here is what I have of it: {last}")


async def test_a_picture_uploaded_over_the_web_is_described_in_the_reply(
    client: Client, stack: Stack, fake: FakeProviderServer, tmp_path: Path
) -> None:
    fake.transcript = "Bring the ladder on Sunday."
    async with senses_worker(
        client,
        stack,
        tmp_path,
        server=fake,
        vision="openai-compatible",
        transcribe=True,
        rules=[REPLY],
    ) as h:
        agent = (await h.create_agent()).handle
        settings = stack.settings(home=tmp_path, task_queue=h.task_queue)
        async with serving(settings, client) as web, web.http() as http:
            files = {"file": ("kite.png", png(), "image/png")}
            uploaded = await http.post(f"/v1/agents/{agent}/media", files=files)
            assert uploaded.status_code == 201, uploaded.text
            picture = uploaded.json()
            assert picture["kind"] == "image" and picture["size"] == len(png())
            heard = await http.post(
                f"/v1/agents/{agent}/media",
                content=OGG,
                headers={"Content-Type": "application/octet-stream"},
            )
            assert heard.status_code == 201 and heard.json()["kind"] == "audio"

            message = {
                "channel": "garden",
                "speaker": {"speaker_id": "u-1"},
                "text": "What is this, and what did I say?",
                "images": [picture["media_id"]],
                "recordings": [heard.json()["media_id"]],
            }
            posted = await http.post(
                f"/v1/agents/{agent}/messages", json=message, headers={"Prefer": "wait=30"}
            )
            assert posted.status_code == 200, posted.text
            reply = posted.json()["marker"]["text"]
            assert "A red kite over a green hill." in reply
            assert "Bring the ladder on Sunday." in reply


async def test_without_a_vision_model_the_web_reply_is_honest(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with senses_worker(client, stack, tmp_path, rules=[REPLY]) as h:
        agent = (await h.create_agent()).handle
        settings = stack.settings(home=tmp_path, task_queue=h.task_queue)
        async with serving(settings, client) as web, web.http() as http:
            files = {"file": ("kite.png", png(), "image/png")}
            media_id = (await http.post(f"/v1/agents/{agent}/media", files=files)).json()[
                "media_id"
            ]
            message = {
                "channel": "garden",
                "speaker": {"speaker_id": "u-1"},
                "text": "Look!",
                "images": [media_id],
            }
            posted = await http.post(
                f"/v1/agents/{agent}/messages", json=message, headers={"Prefer": "wait=30"}
            )
            assert "you cannot see it: no vision model is set" in posted.json()["marker"]["text"]


async def test_media_are_their_tenants_and_hostile_uploads_are_refused_in_a_line(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with senses_worker(client, stack, tmp_path) as h:
        agent = (await h.create_agent()).handle
        settings = stack.settings(home=tmp_path, task_queue=h.task_queue)
        async with serving(settings, client, messages_per_minute=0) as web:
            _, other = await create_token(settings=settings, name="other", agents=[agent])
            async with web.http() as mine, web.http(other) as theirs:
                files = {"file": ("kite.png", png(), "image/png")}
                media_id = (await mine.post(f"/v1/agents/{agent}/media", files=files)).json()[
                    "media_id"
                ]
                message = {
                    "channel": "garden",
                    "speaker": {"speaker_id": "u-1"},
                    "text": "Look at this.",
                    "images": [media_id],
                }
                stolen = await theirs.post(f"/v1/agents/{agent}/messages", json=message)
                assert stolen.status_code == 404
                assert stolen.json()["detail"] == (
                    f"images: there is no picture {media_id} uploaded by you for agent "
                    f"{agent!r}: upload it first (POST .../media)"
                )
                as_audio = {**message, "images": [], "recordings": [media_id]}
                assert (
                    (await mine.post(f"/v1/agents/{agent}/messages", json=as_audio))
                    .json()["detail"]
                    .startswith(f"recordings: there is no recording {media_id}")
                )

                refusals: list[tuple[dict[str, tuple[str, bytes, str]], int, str]] = [
                    (files_of(b"#!/bin/sh\necho hi\n", "pic.png"), 422, "not a picture"),
                    (files_of(png(100_000, 100_000), "bomb.png"), 413, "(senses.max_pixels)"),
                    (files_of(b"", "empty.png"), 422, "the upload is empty"),
                    ({"other": ("x", b"123", "text/plain")}, 422, "no 'file' field"),
                ]
                for upload, status, words in refusals:
                    refused = await mine.post(f"/v1/agents/{agent}/media", files=upload)
                    assert refused.status_code == status, refused.text
                    detail = refused.json()["detail"]
                    assert words in detail and "\n" not in detail
                garbled = await mine.post(
                    f"/v1/agents/{agent}/media",
                    content=b"--x\r\nnonsense",
                    headers={"Content-Type": "multipart/form-data; boundary=y"},
                )
                assert garbled.status_code == 422
                assert "multipart form cannot be read" in garbled.json()["detail"]

                huge = await mine.post(
                    f"/v1/agents/{agent}/media",
                    content=b"\x89PNG\r\n\x1a\n" + bytes(50 * 1024 * 1024),
                    headers={"Content-Type": "application/octet-stream"},
                )
                assert huge.status_code == 413
                assert "(20,000,000, images.max_sent_bytes)" in huge.json()["detail"]


def files_of(content: bytes, name: str) -> dict[str, tuple[str, bytes, str]]:
    return {"file": (name, content, "image/png")}


async def test_a_picture_attached_on_the_chat_page_is_described_in_the_reply(
    client: Client, stack: Stack, fake: FakeProviderServer, tmp_path: Path
) -> None:
    from tests.webchannel.test_browser import _browser_missing

    if (missing := _browser_missing()) is not None:
        pytest.skip(missing)
    from playwright.async_api import async_playwright, expect

    from tests.webchannel.test_browser import CHROMIUM

    picture = tmp_path / "kite.png"
    picture.write_bytes(png())
    async with senses_worker(
        client, stack, tmp_path, server=fake, vision="openai-compatible", rules=[REPLY]
    ) as h:
        agent = (await h.create_agent()).handle
        settings = stack.settings(home=tmp_path, task_queue=h.task_queue)
        async with serving(settings, client) as web, async_playwright() as pw:
            browser = await pw.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
            )
            try:
                page = await browser.new_page()
                await page.goto(web.base_url + "/")
                await page.fill("#token", web.token)
                await page.fill("#agent", agent)
                await page.click("#connect")
                await expect(page.locator("#attach")).to_be_enabled(timeout=20_000)
                await page.set_input_files("#attach", str(picture))
                await page.fill("#text", "what is this?")
                await page.press("#text", "Enter")
                log = page.locator("#log")
                await expect(log).to_contain_text("you> what is this? [kite.png]")
                await expect(log).to_contain_text("A red kite over a green hill.", timeout=60_000)
            finally:
                await browser.close()
