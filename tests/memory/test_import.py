"""Import: the JSONL format and LoCoMo's JSON, idempotence, chronological IDs, bad files."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from activities.memory.encoders.null import NullEncoder
from schemas.ids import ulid_time
from schemas.imports import ImportFormat
from store.db import Database
from store.importer import ImportInputError, import_file
from store.queries.imports import ImportConflictError
from tests.memory.conftest import NewAgent


def line(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "conversation": "thread-1",
        "channel": {"service": "chat", "channel": "general"},
        "speaker": {"id": "u1", "name": "Ada"},
        "text": "Hello there",
        "at": "2024-03-01T10:00:00Z",
    }
    base.update(overrides)
    return base


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


async def stored(db: Database, agent: str) -> list[Any]:
    async with db.engine.connect() as connection:
        rows = await connection.execute(
            text(
                "SELECT d.id, d.conversation_id, d.text, d.at, d.role, d.speaker_id, d.person_id, "
                "d.tags, d.source_ref, d.embedding IS NOT NULL AS embedded, c.key "
                "FROM dialog_turns d JOIN channels c ON c.id = d.channel_id "
                "WHERE d.agent = :a ORDER BY d.id"
            ),
            {"a": agent},
        )
        return list(rows)


async def test_jsonl_import_is_chronological_and_idempotent(
    db: Database, new_agent: NewAgent, tmp_path: Path
) -> None:
    agent = await new_agent()
    rows = [
        line(text="First, from Ada", at="2024-03-01T10:00:00Z", tags=["greeting"], key="m1"),
        line(
            text="Reply from the agent",
            at="2024-03-01T10:00:05+00:00",
            role="agent",
            speaker={"id": "bot"},
        ),
        line(text="Same instant one", at="2024-03-01T10:00:09Z", speaker={"id": "u2"}),
        line(text="Same instant two", at="2024-03-01T10:00:09Z", speaker={"id": "u2"}),
        line(
            conversation="other",
            channel={"service": "chat", "channel": "random"},
            text="Elsewhere, earlier",
            at="2024-02-01T08:00:00",
        ),
    ]
    path = write_jsonl(tmp_path / "dialog.jsonl", rows)
    report = await import_file(db, agent=agent, path=path, encoder=None)
    assert report.format is ImportFormat.JSONL
    assert (report.conversations, report.turns, report.turns_added) == (2, 5, 5)
    assert report.conversations_added == 2
    turns = await stored(db, agent)
    assert [t.text for t in turns] == [
        "Elsewhere, earlier",
        "First, from Ada",
        "Reply from the agent",
        "Same instant one",
        "Same instant two",
    ]
    for turn in turns:  # every ID carries the original time
        assert ulid_time(turn.id) == turn.at
    first = turns[1]
    assert first.tags == ["greeting"] and first.source_ref == "m1" and first.key == "chat:general"
    assert first.person_id is not None and first.speaker_id == first.person_id
    assert turns[2].role == "agent" and turns[2].person_id is None and turns[2].speaker_id == agent
    assert ulid_time(first.conversation_id) == first.at  # conversation ID: its first turn's time

    again = await import_file(db, agent=agent, path=path, encoder=None)
    assert (again.turns_added, again.conversations_added) == (0, 0)
    assert len(await stored(db, agent)) == 5
    rows.append(line(text="A later addition", at="2024-03-01T11:00:00Z"))
    grown = await import_file(db, agent=agent, path=write_jsonl(path, rows), encoder=None)
    assert (grown.turns_added, grown.conversations_added) == (1, 0)
    async with db.engine.connect() as connection:
        count = (
            await connection.execute(
                text("SELECT turns, participants FROM conversations WHERE id = :id"),
                {"id": first.conversation_id},
            )
        ).one()
    assert count.turns == 5 and len(count.participants) == 2


async def test_import_embeds_turns_and_survives_an_absent_encoder(
    db: Database, new_agent: NewAgent, tmp_path: Path, encoder: Any
) -> None:
    agent = await new_agent()
    path = write_jsonl(tmp_path / "a.jsonl", [line(text="Embed me"), line(text="And me", key="k")])
    report = await import_file(db, agent=agent, path=path, encoder=encoder)
    assert report.turns_embedded == 2 and report.notice is None
    assert all(t.embedded for t in await stored(db, agent))

    other = await new_agent()
    report = await import_file(db, agent=other, path=path, encoder=NullEncoder())
    assert report.turns_added == 2 and report.turns_embedded == 0
    assert report.notice is not None and "index_turns" in report.notice
    assert not any(t.embedded for t in await stored(db, other))


def locomo_sample() -> list[dict[str, Any]]:
    return [
        {
            "sample_id": "conv-test",
            "conversation": {
                "speaker_a": "Jo",
                "speaker_b": "Sam",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    {"speaker": "Jo", "dia_id": "D1:1", "text": "I started pottery classes."},
                    {
                        "speaker": "Sam",
                        "dia_id": "D1:2",
                        "text": "Look at this!",
                        "blip_caption": "a photo of a red bowl",
                        "img_url": ["http://x/y.jpg"],
                    },
                ],
                "session_2_date_time": "10:04 am on 2 June, 2023",
                "session_2": [{"speaker": "Sam", "dia_id": "D2:1", "text": "Camping was fun."}],
            },
            "qa": [
                {
                    "question": "What did Jo start?",
                    "answer": "pottery",
                    "evidence": ["D1:1"],
                    "category": 4,
                }
            ],
        }
    ]


async def test_locomo_sessions_become_dated_conversations(
    db: Database, new_agent: NewAgent, tmp_path: Path
) -> None:
    agent = await new_agent()
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(locomo_sample()), encoding="utf-8")
    report = await import_file(db, agent=agent, path=path, encoder=None)
    assert report.format is ImportFormat.LOCOMO
    assert (report.conversations, report.turns_added) == (2, 3)
    turns = await stored(db, agent)
    assert [t.source_ref for t in turns] == ["D1:1", "D1:2", "D2:1"]
    assert turns[1].text == "Look at this! [image: a photo of a red bowl]"
    assert turns[0].at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert turns[2].at == datetime(2023, 6, 2, 10, 4, tzinfo=UTC)
    assert {t.key for t in turns} == {"locomo:conv-test"}
    assert len({t.conversation_id for t in turns}) == 2
    assert len({t.person_id for t in turns}) == 2  # Jo and Sam, one person each
    assert (await import_file(db, agent=agent, path=path)).turns_added == 0


BAD_JSONL = [
    (b'{"conversation": "c", oops}\n', "line 1: not JSON"),
    (json.dumps(line()).encode() + b"\n[1, 2]\n", "line 2: expected a JSON object"),
    (json.dumps({k: v for k, v in line().items() if k != "text"}).encode(), "line 1: text:"),
    (json.dumps(line(text="bad\u0000nul")).encode(), "line 1: text.*NUL"),
    (b'{"text": "\xff\xfe"}\n', "line 1: not valid UTF-8"),
    (b"ok\x00\n", "line 1: contains a NUL byte"),
    (json.dumps(line(text="x" * 40_000)).encode(), "line 1: text: .*40,000 characters"),
    (json.dumps(line(at="yesterday-ish")).encode(), "line 1: at:"),
    (
        json.dumps(line(channel={"service": "Bad Service!", "channel": "x"})).encode(),
        "line 1: channel.service",
    ),
    (json.dumps(line(surprise=1)).encode(), "line 1: surprise: Extra inputs"),
    (
        json.dumps(line()).encode()
        + b"\n"
        + json.dumps(line(channel={"service": "chat", "channel": "elsewhere"})).encode(),
        "line 2: conversation 'thread-1' was on channel",
    ),
    (
        json.dumps(line(key="a")).encode() + b"\n" + json.dumps(line(key="a", text="t")).encode(),
        "key 'a' repeats line 1",
    ),
    (b"\n\n  \n", "holds no turns"),
    (b"x" * (1024 * 1024 + 10), "line 1: .* bytes; a line may hold at most"),
]


@pytest.mark.parametrize(("content", "message"), BAD_JSONL)
async def test_malformed_jsonl_is_refused_whole_with_its_line(
    db: Database, new_agent: NewAgent, tmp_path: Path, content: bytes, message: str
) -> None:
    agent = await new_agent()
    good = json.dumps(line(conversation="fine", text="A fine first line")).encode() + b"\n"
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(ImportInputError, match=message) as caught:
        await import_file(db, agent=agent, path=path, fmt=ImportFormat.JSONL)
    assert "\n" not in str(caught.value)
    if content.strip():
        # A valid line before the bad one is not stored either: the file is checked whole.
        path.write_bytes(good + content)
        with pytest.raises(ImportInputError):
            await import_file(db, agent=agent, path=path, fmt=ImportFormat.JSONL)
    assert await stored(db, agent) == []


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d[0]["conversation"].update(session_1_date_time="soon"), "not a time like"),
        (lambda d: d[0]["conversation"]["session_1"].append("nope"), "turn 3: expected an object"),
        (lambda d: d[0]["conversation"]["session_2"][0].pop("dia_id"), "'dia_id' must be"),
        (lambda d: d[0]["conversation"]["session_2"][0].update(text=""), "text is empty"),
        (lambda d: d[0].pop("sample_id"), "'sample_id' must be"),
    ],
)
async def test_malformed_locomo_is_refused(
    db: Database, new_agent: NewAgent, tmp_path: Path, mutate: Any, message: str
) -> None:
    agent = await new_agent()
    data = locomo_sample()
    mutate(data)
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ImportInputError, match=message):
        await import_file(db, agent=agent, path=path)
    assert await stored(db, agent) == []


async def test_locomo_json_syntax_error_names_the_line(
    db: Database, new_agent: NewAgent, tmp_path: Path
) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[\n  {"sample_id": "x",\n  oops\n]', encoding="utf-8")
    with pytest.raises(ImportInputError, match="line 3: not JSON"):
        await import_file(db, agent=await new_agent(), path=path)


async def test_unknown_agent_and_missing_file(
    db: Database, new_agent: NewAgent, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [line()])
    with pytest.raises(ImportInputError, match="unknown agent 'nobody-here'"):
        await import_file(db, agent="nobody-here", path=path)
    with pytest.raises(ImportInputError, match="is not a file"):
        await import_file(db, agent=await new_agent(), path=tmp_path / "missing.jsonl")


async def test_a_conversation_id_of_another_agent_is_refused(
    db: Database, new_agent: NewAgent, tmp_path: Path
) -> None:
    first, second = await new_agent(), await new_agent()
    path = write_jsonl(tmp_path / "a.jsonl", [line(conversation="01HV5Z6Z8Q4N1V5X7B2C9E0F1G")])
    await import_file(db, agent=first, path=path)
    with pytest.raises(ImportConflictError, match="another agent or channel"):
        await import_file(db, agent=second, path=path)
    assert await stored(db, second) == []


async def test_after_conversation_hook_sees_each_new_conversation(
    db: Database, new_agent: NewAgent, tmp_path: Path
) -> None:
    seen: list[str] = []

    async def hook(conversation_id: str) -> None:
        seen.append(conversation_id)

    agent = await new_agent()
    path = write_jsonl(tmp_path / "a.jsonl", [line(), line(conversation="t2", text="x")])
    report = await import_file(db, agent=agent, path=path, after_conversation=hook)
    assert seen == report.conversation_ids and len(seen) == 2
    await import_file(db, agent=agent, path=path, after_conversation=hook)
    assert len(seen) == 2  # nothing new, nothing to consolidate
