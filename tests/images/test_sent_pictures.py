"""A picture a person sends reaches the agent, which edits it through the images endpoint.

The channel keeps the picture first (``usecases.images``) and names it on the event; the agent
reads a note with its ID in the person's turn and calls ``edit_image`` with that ID. Runs on a
real worker, Temporal and PostgreSQL, against the local server speaking the OpenAI images API.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from activities.tools.builtin.images import EDIT_TOOL_NAME
from contract import names
from schemas.events import InboundEvent, Modality, Outcome, event_digest, person_text
from schemas.ids import new_ulid
from schemas.images import RenderResult
from schemas.models import TaskType
from temporal import inbox
from tests.autonomy.conftest import tool_calls
from tests.harness import Stack, event, unique
from tests.images.conftest import ImagesServer, images_worker
from tests.images.test_render import unprompted
from usecases.errors import UnknownAgentError
from usecases.images import PictureRefusedError, keep_sent_picture

JPEG = (
    b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    + b"\xff\xc0\x00\x0b\x08\x01\xe0\x02\x80\x01\x01\x11\x00"  # a frame: 640 x 480
    + b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00"
    + b"a sunset over the harbour" * 4
)
"""Enough of a JPEG to be recognised and measured by its header (nothing here decodes it)."""


async def test_a_sent_picture_is_seen_by_the_agent_and_edited_by_its_id(
    client: Client, stack: Stack, images_server: ImagesServer, tmp_path: Path
) -> None:
    async with images_worker(client, stack, images_server, tmp_path, rules=[]) as h:
        agent = (await h.create_agent()).handle
        kept = await keep_sent_picture(settings=h.deps.settings, agent=agent, content=JPEG)
        assert kept.path == tmp_path / "images" / agent / f"{kept.image_id}.jpg"
        edit = ScriptToolCall(
            name=EDIT_TOOL_NAME,
            arguments={"prompt": "Make the sky purple.", "render_ids": [kept.image_id]},
        )
        h.provider.script.rules[:] = [
            ScriptRule(task="respond", after_tool=True, reply="Purple it is, coming up."),
            ScriptRule(task="respond", match="purple", tool_calls=[edit]),
        ]

        sent = event("Here is my photo: can you make the sky purple?")
        sent = sent.model_copy(update={"images": [kept.image_id], "modality": Modality.IMAGE})
        receipt = await h.send(agent, InboundEvent.model_validate(sent.model_dump()))

        marker = receipt.marker
        assert marker is not None and marker.outcome is Outcome.SPOKE
        # The person's turn, as the model read it, names the picture by its ID.
        first = next(r for r in h.provider.requests if r.task is TaskType.RESPOND)
        assert f"[picture sent: image {kept.image_id}]" in first.messages[-1].content
        [call] = await tool_calls(h, str(marker.activation_id))
        assert call.name == EDIT_TOOL_NAME and not call.is_error
        handle = client.get_workflow_handle(
            names.render_workflow_id(call.id), result_type=RenderResult
        )
        edited = await handle.result()

        assert edited.status == "done" and edited.reference is not None
        [request] = images_server.requests
        assert request["path"] == "/v1/images/edits"
        form = request["form"]
        assert JPEG in form and f"{kept.image_id}.jpg".encode() in form
        assert b"image/jpeg" in form and b"Make the sky purple." in form
        [message] = await unprompted(h, agent)
        assert edited.reference in message.text


async def test_what_is_not_a_picture_or_too_large_is_refused_in_one_line(
    stack: Stack, tmp_path: Path
) -> None:
    settings = stack.settings(home=tmp_path, images={"max_sent_bytes": 2048})
    with pytest.raises(UnknownAgentError):
        await keep_sent_picture(settings=settings, agent=unique("nobody"), content=JPEG)
    with pytest.raises(PictureRefusedError, match=r"^not a PNG, JPEG or WebP picture: send"):
        await keep_sent_picture(settings=settings, agent="ada", content=b"%PDF-1.7 hello")
    with pytest.raises(PictureRefusedError, match=r"more than 2,048 \(images.max_sent_bytes\)"):
        await keep_sent_picture(settings=settings, agent="ada", content=JPEG * 100)
    assert not (tmp_path / "images").exists()


def test_the_event_names_pictures_by_id_and_old_events_read_as_before() -> None:
    plain = event("hello", event_id="01JD0000000000000000000000")
    assert person_text(plain) == "hello"
    # The digest the code before pictures computed for this event: a retry across the
    # upgrade is still recognised as a retry.
    assert event_digest(plain) == "f3ed7a7c3f58e5771d7d14a0656e3f5d"
    with_picture = plain.model_copy(update={"images": ["01JD0000000000000000000001"]})
    assert event_digest(with_picture) != event_digest(plain)
    assert person_text(with_picture) == "hello\n[picture sent: image 01JD0000000000000000000001]"

    raw = plain.model_dump(mode="json")
    for images, problem in (
        (["not-an-id"], "images.0"),
        ([new_ulid()] * 2, "repeated"),
        ([new_ulid() for _ in range(5)], "at most 4"),
    ):
        with pytest.raises(ValidationError, match=problem):
            InboundEvent.model_validate({**raw, "images": images})


async def test_the_agent_refuses_a_malformed_picture_reference_naming_the_field(
    client: Client, stack: Stack, images_server: ImagesServer, tmp_path: Path
) -> None:
    async with images_worker(client, stack, images_server, tmp_path, rules=[]) as h:
        handle = (await h.create_agent()).handle
        await inbox.start_agent(h.client, handle=handle, task_queue=h.task_queue)
        payload = {"event": {**event("look").model_dump(mode="json"), "images": ["../../etc"]}}

        with pytest.raises(WorkflowUpdateFailedError) as caught:
            agent = h.client.get_workflow_handle(names.agent_workflow_id(handle))
            await agent.execute_update(names.SUBMIT, payload, id=new_ulid())

        cause = caught.value.cause
        assert isinstance(cause, ApplicationError) and cause.non_retryable
        assert cause.message.startswith("invalid submit input: event.images.0:")
        assert "\n" not in cause.message
