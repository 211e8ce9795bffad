"""``generate_image`` acknowledges at once; ``RenderWorkflow`` renders through a local server
speaking the OpenAI images API, keeps the image, delivers it and meters one image."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from sqlmodel import col, select
from temporalio.client import Client, WorkflowHandle, WorkflowHistory

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from activities.tools.builtin.images import EDIT_TOOL_NAME, TOOL_NAME
from contract import names
from schemas.events import Outcome
from schemas.images import RenderResult
from schemas.models import TaskType
from store.tables import OutboxRow
from tests.autonomy.conftest import tool_calls
from tests.harness import Harness, Stack, record_new_histories, replayer, terminal
from tests.images.conftest import PNG, ImagesServer, images_worker
from tests.observability.fakes import RecordingMeter

HISTORIES = Path(__file__).parent / "histories"
NAME = "render"


def rules() -> list[ScriptRule]:
    return [
        ScriptRule(task="respond", after_tool=True, reply="It is on its way."),
        ScriptRule(
            task="respond",
            match="lighthouse",
            tool_calls=[
                ScriptToolCall(name=TOOL_NAME, arguments={"prompt": "A lighthouse at dusk."})
            ],
        ),
        ScriptRule(
            task="respond",
            match="brighter",
            tool_calls=[ScriptToolCall(name=EDIT_TOOL_NAME, arguments={"prompt": "Brighter."})],
        ),
        ScriptRule(task="respond", match="did it come", reply="You said: {last}"),
    ]


async def unprompted(harness: Harness, agent: str) -> list[OutboxRow]:
    async with harness.db.session() as session:
        rows = await session.exec(
            select(OutboxRow)
            .where(OutboxRow.agent == agent, col(OutboxRow.unprompted).is_(True))
            .order_by(col(OutboxRow.created_at))
        )
        return list(rows)


async def _render(
    harness: Harness, agent: str
) -> tuple[str, RenderResult, WorkflowHandle[Any, RenderResult]]:
    receipt = await harness.say(agent, "Please draw me a lighthouse.")
    marker = receipt.marker
    assert marker is not None and marker.outcome is Outcome.SPOKE
    assert marker.text == "It is on its way."  # the turn did not wait for the render
    [call] = await tool_calls(harness, str(marker.activation_id))
    assert call.name == TOOL_NAME and not call.is_error
    handle = harness.client.get_workflow_handle(
        names.render_workflow_id(call.id), result_type=RenderResult
    )
    return str(marker.activation_id), await handle.result(), handle


async def test_an_image_is_rendered_kept_delivered_noted_and_metered(
    client: Client, stack: Stack, images_server: ImagesServer, tmp_path: Path
) -> None:
    meter = RecordingMeter()
    async with images_worker(
        client, stack, images_server, tmp_path, rules=rules(), meters=[meter]
    ) as h:
        agent = (await h.create_agent()).handle
        activation, result, handle = await _render(h, agent)

        # Rendered through the endpoint with the configured model, kept under home/images.
        assert result.status == "done" and result.reference is not None
        assert await asyncio.to_thread(Path(result.reference).read_bytes) == PNG
        assert Path(result.reference).parent == tmp_path / "images" / agent
        [sent] = images_server.requests
        assert sent["model"] == "test-image" and sent["prompt"] == "A lighthouse at dusk."
        assert sent["size"] == "256x256" and sent["response_format"] == "b64_json"

        # Delivered to the conversation on its own, once, with the reference.
        [message] = await unprompted(h, agent)
        assert result.reference in message.text and message.channel_key == terminal().key
        # Its delivery run was started by the report itself, not left to the worker's sweep.
        delivery = h.client.get_workflow_handle(names.delivery_workflow_id(message.id))
        assert (await delivery.describe()).id == names.delivery_workflow_id(message.id)

        # One usage record for the image, priced per image, for the asking activation.
        [image] = [r for r in meter.records if r.stage == "image"]
        assert (image.units, image.cost_usd, image.model) == (1, 0.04, "test-image")
        assert (image.activation, image.agent) == (activation, agent)

        # Visible in the Web UI: a summary and the agent's search attribute.
        described = await handle.describe()
        assert described.typed_search_attributes.get(names.AGENT) == agent
        assert "lighthouse" in (await described.static_summary() or "")

        # Noted for the agent's next turn.
        await h.say(agent, "So, did it come?")
        latest = [r for r in h.provider.requests if r.task is TaskType.RESPOND][-1]
        prompt = latest.system + "\n".join(m.content for m in latest.messages)
        assert result.reference in prompt

        history: WorkflowHistory = await handle.fetch_history()
    record_new_histories(HISTORIES, {NAME: history})
    await replayer(client).replay_workflow(history)


async def test_an_endpoint_returning_500_is_retried_then_reported_to_the_conversation(
    client: Client, stack: Stack, images_server: ImagesServer, tmp_path: Path
) -> None:
    images_server.fail_with = 500
    meter = RecordingMeter()
    async with images_worker(
        client, stack, images_server, tmp_path, rules=rules(), meters=[meter]
    ) as h:
        agent = (await h.create_agent()).handle
        _, result, _ = await _render(h, agent)

        assert result.status == "failed" and "HTTP 500" in (result.error or "")
        assert len(images_server.requests) == 3  # the policy's three attempts
        [message] = await unprompted(h, agent)
        assert "could not render" in message.text and "HTTP 500" in message.text
        assert not [r for r in meter.records if r.stage == "image"]  # nothing drawn, no bill
        assert not (tmp_path / "images" / agent).exists()


async def test_an_image_answered_as_a_link_is_fetched_and_kept(
    client: Client, stack: Stack, images_server: ImagesServer, tmp_path: Path
) -> None:
    images_server.answer_with_url = True
    async with images_worker(client, stack, images_server, tmp_path, rules=rules()) as h:
        agent = (await h.create_agent()).handle
        _, result, _ = await _render(h, agent)

    assert result.status == "done" and result.reference is not None
    assert await asyncio.to_thread(Path(result.reference).read_bytes) == PNG


async def test_a_refused_request_is_not_retried(
    client: Client, stack: Stack, images_server: ImagesServer, tmp_path: Path
) -> None:
    images_server.fail_with = 400
    async with images_worker(client, stack, images_server, tmp_path, rules=rules()) as h:
        agent = (await h.create_agent()).handle
        _, result, _ = await _render(h, agent)

    assert result.status == "failed" and "refused" in (result.error or "")
    assert len(images_server.requests) == 1


async def test_the_most_recent_image_is_refined_through_the_edits_endpoint(
    client: Client, stack: Stack, images_server: ImagesServer, tmp_path: Path
) -> None:
    meter = RecordingMeter()
    async with images_worker(
        client, stack, images_server, tmp_path, rules=rules(), meters=[meter]
    ) as h:
        agent = (await h.create_agent()).handle
        early = await h.say(agent, "Please make it brighter.")  # nothing to edit yet
        assert early.marker is not None
        [refused] = await tool_calls(h, str(early.marker.activation_id))
        assert refused.is_error and "no image to edit yet" in str(refused.result)

        _, first, _ = await _render(h, agent)
        receipt = await h.say(agent, "Now make it brighter.")
        assert receipt.marker is not None
        [call] = await tool_calls(h, str(receipt.marker.activation_id))
        handle = client.get_workflow_handle(
            names.render_workflow_id(call.id), result_type=RenderResult
        )
        edited = await handle.result()

        assert edited.status == "done" and edited.reference != first.reference
        edit = images_server.requests[-1]
        assert edit["path"] == "/v1/images/edits"
        assert b"Brighter." in edit["form"] and PNG in edit["form"]  # the earlier render went up
        assert f"{first.render_id}.png".encode() in edit["form"]
        assert len([r for r in meter.records if r.stage == "image"]) == 2
        [_, message] = await unprompted(h, agent)
        assert str(edited.reference) in message.text
        assert "image edit" in (await (await handle.describe()).static_summary() or "")


async def test_the_recorded_render_history_replays(client: Client) -> None:
    path = HISTORIES / f"{NAME}.json"
    assert path.exists(), f"record it with PERSYN_RECORD_HISTORIES=1 ({path.name})"
    history = WorkflowHistory.from_json(f"{NAME}-recorded", path.read_text())
    await replayer(client).replay_workflow(history)
