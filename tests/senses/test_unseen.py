"""With no vision or transcription model, the agent is told plainly what it cannot perceive.

On the real embedded stack. On a plan that confirms without the model (the tiny model's),
the platform itself answers that it cannot see or hear what was sent, so no reply describes a
picture nobody saw.
"""

from __future__ import annotations

from pathlib import Path

from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from schemas.events import InboundEvent, Modality, Outcome
from schemas.models import TaskType
from tests.harness import Stack, event
from tests.senses.conftest import OGG, png, senses_worker
from usecases.images import keep_sent_picture
from usecases.recordings import keep_sent_recording
from usecases.shred import shred_agent

INVENTED = "What a lovely sunset over the sea!"


async def test_without_models_the_turn_says_the_picture_and_recording_were_not_perceived(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with senses_worker(client, stack, tmp_path) as h:
        agent = (await h.create_agent()).handle
        picture = await keep_sent_picture(settings=h.deps.settings, agent=agent, content=png())
        voice = await keep_sent_recording(settings=h.deps.settings, agent=agent, content=OGG)
        sent = event("Look and listen.").model_copy(
            update={
                "images": [picture.image_id],
                "recordings": [voice.audio_id],
                "modality": Modality.IMAGE,
            }
        )
        receipt = await h.send(agent, InboundEvent.model_validate(sent.model_dump()))
        assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE

        turn = h.provider.last(TaskType.RESPOND).messages[-1].content
        assert turn == (
            "Look and listen.\n"
            f"[picture sent: image {picture.image_id}] (you cannot see it: no vision model is "
            "set; tell them so, and do not guess what it shows)\n"
            f"[recording sent: audio {voice.audio_id}] (you cannot hear it: no transcription "
            "model is set; tell them so, and do not guess what it says)"
        )
        assert not [r for r in h.provider.requests if r.task is TaskType.CAPTION]


async def test_on_a_plan_that_confirms_without_the_model_the_platform_says_it_cannot_see(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    # The scripted model stands in for the tiny one, and would invent a description.
    plan = {"scripted": {"confirm_done": True, "offer_tools": False}}
    async with senses_worker(
        client,
        stack,
        tmp_path,
        rules=[ScriptRule(task="respond", reply=INVENTED)],
        overrides={"call_plans": plan},
    ) as h:
        agent = (await h.create_agent()).handle
        picture = await keep_sent_picture(settings=h.deps.settings, agent=agent, content=png())
        sent = event("What do you see in my photo?").model_copy(
            update={"images": [picture.image_id], "modality": Modality.IMAGE}
        )
        receipt = await h.send(agent, InboundEvent.model_validate(sent.model_dump()))

        marker = receipt.marker
        assert marker is not None and marker.outcome is Outcome.SPOKE
        assert marker.text == (
            "I can't see the picture you sent, so I can't tell you what's in it. "
            "Could you tell me in words?"
        )
        assert INVENTED not in (marker.text or "")


async def test_shredding_an_agent_deletes_the_pictures_and_recordings_kept_for_it(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with senses_worker(client, stack, tmp_path) as h:
        agent = (await h.create_agent()).handle
        other = (await h.create_agent()).handle
        settings = h.deps.settings
        mine = await keep_sent_picture(settings=settings, agent=agent, content=png())
        await keep_sent_recording(settings=settings, agent=agent, content=OGG)
        theirs = await keep_sent_picture(settings=settings, agent=other, content=png())

        report = await shred_agent(settings=settings, handle=agent)

        assert report.media_removed and not mine.path.exists()
        assert not (tmp_path / "audio" / agent).exists()
        assert theirs.path.exists()  # another agent's are its own
        assert not (await shred_agent(settings=settings, handle=agent)).media_removed
