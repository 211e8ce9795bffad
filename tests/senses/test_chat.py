"""``persyn chat`` sends pictures and recordings with ``/image PATH [words]`` and ``/audio``.

The chat loop runs in-process against a real worker, Temporal and PostgreSQL; its input is
the test's lines. A file refused at the door is said in one bracketed line, and the chat goes on.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from cli import talk
from cli.console import Console
from cli.talk import _converse
from schemas.events import ChannelRef, Speaker
from schemas.models import TaskType
from temporal.client import connect
from tests.fakes.provider_server import FakeProviderServer
from tests.harness import Stack
from tests.senses.conftest import OGG, png, senses_worker


def typing(monkeypatch: pytest.MonkeyPatch, lines: list[str]) -> None:
    said: Iterator[str] = iter(lines)

    def answer(_: str = "") -> str:
        try:
            return next(said)
        except StopIteration:
            raise EOFError from None

    # The module's own name, not builtins': the workflow sandbox restores builtins as it runs.
    monkeypatch.setattr(talk, "input", answer, raising=False)


async def test_chat_sends_a_picture_and_a_recording_and_refuses_a_bad_file_in_a_line(
    client: Client,
    stack: Stack,
    fake: FakeProviderServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "kite.png").write_bytes(png())
    (tmp_path / "note.ogg").write_bytes(OGG)
    (tmp_path / "fake.png").write_bytes(b"not a picture")
    fake.transcript = "See you at six."
    rules = [ScriptRule(task="respond", reply="heard: {last}")]
    async with senses_worker(
        client,
        stack,
        tmp_path,
        server=fake,
        vision="openai-compatible",
        transcribe=True,
        rules=rules,
    ) as h:
        agent = (await h.create_agent()).handle
        settings = h.deps.settings.model_copy(update={"task_queue": h.task_queue})
        typing(
            monkeypatch,
            [
                f'/image "{tmp_path / "kite.png"}" what is this?',
                f"/audio {tmp_path / 'note.ogg'}",
                f"/image {tmp_path / 'fake.png'}",
                "/image",
                "/quit",
            ],
        )
        out = io.StringIO()
        console = Console("Ada", live=False, out=out)
        here = ChannelRef(service="terminal", channel="console")
        await _converse(
            settings, await connect(settings), console, agent, Speaker(speaker_id="sam"), here
        )

        shown = out.getvalue()
        assert "A red kite over a green hill." in shown and "what is this?" in shown
        assert "(a recording)" in shown and "See you at six." in shown
        assert "[not sent: " in shown and "fake.png: not a PNG, JPEG or WebP picture" in shown
        assert "[not sent: /image needs a file: /image PATH [words]]" in shown
        assert len([r for r in h.provider.requests if r.task is TaskType.RESPOND]) == 2
