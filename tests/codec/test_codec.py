"""The payload codec seals with the agent's key, opens with the key a payload names, and a
shredded key leaves its payloads unreadable while other agents' stay readable."""

from __future__ import annotations

import base64
import stat
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.converter import ActivitySerializationContext, WorkflowSerializationContext

from schemas.codec import get_codec_settings
from store.embedded import EmbeddedPostgres
from temporal.codec import ENCODING, KEY_ID, AgentPayloadCodec, PayloadShreddedError
from temporal.keyring import MASTER_KEY_FILE, Keyring, KeyringError, master_key
from tests.codec.conftest import NewAgent


def plain(text: str) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=text.encode())


def of_workflow(codec: AgentPayloadCodec, workflow_id: str) -> AgentPayloadCodec:
    return codec.with_context(
        WorkflowSerializationContext(namespace="default", workflow_id=workflow_id)
    )


async def test_a_payload_round_trips_and_is_ciphertext_in_between(
    codec: AgentPayloadCodec, new_agent: NewAgent
) -> None:
    agent = await new_agent()
    original = plain('{"text":"the owl flies at midnight"}')
    scoped = of_workflow(codec, f"agent/{agent}")
    [sealed] = await scoped.encode([original])
    assert sealed.metadata["encoding"] == ENCODING
    assert b"owl" not in sealed.data and b"owl" not in sealed.SerializeToString()
    # Decoding needs no context: the payload names its key (the Web UI has no workflow ID).
    assert await codec.decode([sealed]) == [original]
    # Sealing twice never happens: a sealed payload passes through encode as it is.
    assert await scoped.encode([sealed]) == [sealed]


async def test_a_shredded_agent_cannot_be_read_while_another_agent_still_can(
    codec: AgentPayloadCodec,
    keyring: Keyring,
    postgres: EmbeddedPostgres,
    master: bytes,
    new_agent: NewAgent,
) -> None:
    a, b = await new_agent(), await new_agent()
    [of_a] = await of_workflow(codec, f"agent/{a}").encode([plain('"secret of a"')])
    [of_b] = await of_workflow(codec, f"agent/{b}").encode([plain('"secret of b"')])
    assert of_a.metadata[KEY_ID] != of_b.metadata[KEY_ID]

    assert await keyring.shred(a) == 1

    with pytest.raises(PayloadShreddedError, match=f"payload shredded: the key of agent '{a}'"):
        await codec.decode([of_a])
    assert await codec.decode([of_b]) == [plain('"secret of b"')]
    # Another process (its own keyring, nothing cached) reads the same from the database.
    elsewhere = AgentPayloadCodec(Keyring(postgres.dsn, master, cache_seconds=0))
    with pytest.raises(PayloadShreddedError, match="shredded"):
        await elsewhere.decode([of_a])
    assert await elsewhere.decode([of_b]) == [plain('"secret of b"')]
    # The agent lives on with a fresh key; shredding again shreds that one.
    [again] = await of_workflow(codec, f"agent/{a}").encode([plain('"new"')])
    assert again.metadata[KEY_ID] != of_a.metadata[KEY_ID]
    assert await codec.decode([again]) == [plain('"new"')]


async def test_a_shred_in_one_process_is_refused_by_another_at_once(
    postgres: EmbeddedPostgres, master: bytes, new_agent: NewAgent
) -> None:
    agent = await new_agent()
    # A running process with the deployment's default settings, its key already in use.
    cache = get_codec_settings().key_cache_seconds
    worker = AgentPayloadCodec(Keyring(postgres.dsn, master, cache_seconds=cache))
    scoped = of_workflow(worker, f"agent/{agent}")
    [sealed] = await scoped.encode([plain('"x"')])
    assert await worker.decode([sealed]) == [plain('"x"')]

    await Keyring(postgres.dsn, master, cache_seconds=cache).shred(agent)

    with pytest.raises(PayloadShreddedError):
        await worker.decode([sealed])
    # What it seals next uses the agent's fresh key, never the shredded one.
    [fresh] = await scoped.encode([plain('"y"')])
    assert fresh.metadata[KEY_ID] != sealed.metadata[KEY_ID]
    assert await worker.decode([fresh]) == [plain('"y"')]


async def test_payloads_without_the_codec_encoding_pass_through(codec: AgentPayloadCodec) -> None:
    recorded = [plain('{"agent":"ada"}'), Payload(metadata={"encoding": b"binary/null"})]
    assert await codec.decode(recorded) == recorded


async def test_the_agent_comes_from_the_workflow_or_the_payload_and_is_remembered(
    codec: AgentPayloadCodec, keyring: Keyring, new_agent: NewAgent
) -> None:
    agent = await new_agent()
    own = (await keyring.for_agent(agent)).id.encode()
    # A child's start input names its agent; the conversation's later payloads follow it.
    conversation = of_workflow(codec, "conversation/01JCODEC00000000000000000")
    [start] = await conversation.encode([plain(f'{{"conversation_id":"x","agent":"{agent}"}}')])
    [later] = await conversation.encode([plain('{"text":"no agent named here"}')])
    assert start.metadata[KEY_ID] == own and later.metadata[KEY_ID] == own
    # An activity of that workflow, in a worker that only decoded its input so far.
    fresh = AgentPayloadCodec(keyring)
    activity = fresh.with_context(
        ActivitySerializationContext(
            namespace="default",
            activity_id="1",
            activity_type="t",
            activity_task_queue="q",
            workflow_id="activation/01JCODEC00000000000000001",
            workflow_type="ActivationWorkflow",
            is_local=False,
        )
    )
    [input_] = await of_workflow(codec, f"maintenance/{agent}-2026-12-01T10:00:00Z").encode(
        [plain('{"x":1}')]
    )
    assert input_.metadata[KEY_ID] == own
    await activity.decode([input_])
    [result] = await activity.encode([plain('{"ok":true}')])
    assert result.metadata[KEY_ID] == own


async def test_a_later_payload_cannot_move_a_workflow_under_another_agents_key(
    codec: AgentPayloadCodec, keyring: Keyring, new_agent: NewAgent
) -> None:
    owner, other = await new_agent(), await new_agent()
    conversation = of_workflow(codec, "conversation/01JCODEC00000000000000003")
    [start] = await conversation.encode([plain(f'{{"agent":"{owner}"}}')])
    # A signal from some client naming another agent is sealed for the workflow's own agent.
    [forged] = await conversation.encode([plain(f'{{"agent":"{other}","text":"hi"}}')])
    own = (await keyring.for_agent(owner)).id.encode()
    assert start.metadata[KEY_ID] == own and forged.metadata[KEY_ID] == own


async def test_payloads_of_no_known_agent_use_the_shared_key(
    codec: AgentPayloadCodec, keyring: Keyring
) -> None:
    shared = (await keyring.for_agent(None)).id.encode()
    [nobody] = await of_workflow(codec, "reminder/01JCODEC00000000000000002").encode(
        [plain('{"objective":"water the plants"}')]
    )
    # A handle with no agent behind it gets no key of its own (keys go with their agent).
    [ghost] = await of_workflow(codec, "agent/no-such-agent").encode([plain('"boo"')])
    assert nobody.metadata[KEY_ID] == shared and ghost.metadata[KEY_ID] == shared
    assert b"plants" not in nobody.data
    assert await codec.decode([nobody, ghost]) == [
        plain('{"objective":"water the plants"}'),
        plain('"boo"'),
    ]


async def test_an_altered_payload_is_refused(codec: AgentPayloadCodec, new_agent: NewAgent) -> None:
    agent = await new_agent()
    [sealed] = await of_workflow(codec, f"agent/{agent}").encode([plain('"x"')])
    sealed.data = sealed.data[:-1] + bytes([sealed.data[-1] ^ 1])
    with pytest.raises(ValueError, match="was altered"):
        await codec.decode([sealed])


def test_the_master_key_file_is_created_once_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "keys" / MASTER_KEY_FILE
    first = master_key(path, None)
    assert master_key(path, None) == first and len(first) == 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    configured = base64.b64encode(b"k" * 32).decode()
    assert master_key(path, configured) == b"k" * 32


@pytest.mark.parametrize("value", ["", "not base64!", base64.b64encode(b"short").decode()])
def test_a_malformed_master_key_is_refused_naming_the_setting(tmp_path: Path, value: str) -> None:
    with pytest.raises(KeyringError, match="PERSYN_CODEC_MASTER_KEY is not the base64 of 32"):
        master_key(tmp_path / MASTER_KEY_FILE, value)


def test_a_key_file_that_cannot_be_created_is_reported_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "not-a-directory").write_text("")
    with pytest.raises(KeyringError, match="cannot read or create the codec master key"):
        master_key(tmp_path / "not-a-directory" / MASTER_KEY_FILE, None)


async def test_another_master_key_cannot_unwrap_the_data_keys(
    codec: AgentPayloadCodec, postgres: EmbeddedPostgres, new_agent: NewAgent
) -> None:
    agent = await new_agent()
    [sealed] = await of_workflow(codec, f"agent/{agent}").encode([plain('"x"')])
    stranger = AgentPayloadCodec(Keyring(postgres.dsn, b"\0" * 32, cache_seconds=0))
    with pytest.raises(KeyringError, match="same PERSYN_CODEC_MASTER_KEY"):
        await stranger.decode([sealed])
