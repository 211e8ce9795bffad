"""Dialog search: hybrid ranking, filters, compartments, hostile input, degraded encoders."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from sqlalchemy import text
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.memory.encoders.local import LocalEncoder
from activities.memory.encoders.null import NullEncoder
from activities.memory.search import (
    DialogSearch,
    DialogSearchActivities,
    SearchTimeoutError,
    index_turns,
)
from schemas.memory_search import DialogSearchQuery, IndexTurnsInput
from store.db import Database
from store.importer import import_file
from store.queries import search as sql
from store.queries.search import SearchInputError
from tests.memory.conftest import NewAgent

DIALOG = [
    ("general", "ada", "I adopted a rescue greyhound named Pixel last spring.", "2024-03-01", []),
    ("general", "bob", "Nice! Does Pixel get along with your cat?", "2024-03-01", []),
    ("general", "ada", "Mostly. The cat rules the house, honestly.", "2024-03-01", ["pets"]),
    ("general", "bob", "I'm training for the Berlin marathon in September.", "2024-04-10", []),
    ("general", "ada", "My sister bakes sourdough bread every Sunday morning.", "2024-05-20", []),
    ("general", "bob", "The quarterly tax filing is due on the 15th.", "2024-06-02", ["work"]),
    ("private", "ada", "My PIN code is 4921, keep it secret.", "2024-06-03", ["secret"]),
]


async def seed(db: Database, agent: str, tmp_path: Path, encoder: Any) -> dict[str, str]:
    rows = [
        {
            "conversation": f"{channel}-{day}",
            "channel": {"service": "chat", "channel": channel},
            "speaker": {"id": who, "name": who.title()},
            "text": body,
            "at": f"{day}T12:00:{i:02d}Z",
            "tags": tags,
            "key": f"t{i}",
        }
        for i, (channel, who, body, day, tags) in enumerate(DIALOG)
    ]
    path = tmp_path / "dialog.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    await import_file(db, agent=agent, path=path, encoder=encoder)
    async with db.engine.connect() as connection:
        found = await connection.execute(
            text("SELECT key, id FROM channels WHERE agent = :a"), {"a": agent}
        )
        return {str(r.key): str(r.id) for r in found}


@pytest.fixture
async def seeded(
    db: Database, new_agent: NewAgent, tmp_path: Path, encoder: LocalEncoder
) -> tuple[str, dict[str, str]]:
    agent = await new_agent()
    return agent, await seed(db, agent, tmp_path, encoder)


def refs(hits: list[Any]) -> list[str]:
    return [h.source_ref for h in hits]


async def test_hybrid_search_ranks_the_answer_first_with_both_scores(
    db: Database, encoder: LocalEncoder, seeded: tuple[str, dict[str, str]]
) -> None:
    agent, _ = seeded
    search = DialogSearch(db, encoder)
    hits = await search.search(agent, "What kind of dog did Ada adopt?", limit=3)
    assert hits[0].source_ref == "t0"
    assert hits[0].lexical > 0 and hits[0].semantic is not None and hits[0].score > 0
    # Meaning alone: no word of the query is in the turn about running.
    hits = await search.search(agent, "long distance running race", limit=2)
    assert "t3" in refs(hits)


async def test_neighbouring_turns_lend_context(
    db: Database, seeded: tuple[str, dict[str, str]]
) -> None:
    agent, _ = seeded
    # "Mostly." answers the question about Pixel and the cat; BM25F sees that through context.
    hits = await DialogSearch(db, None).search(agent, "Pixel", limit=5)
    assert set(refs(hits)[:3]) == {"t0", "t1", "t2"}
    assert hits[0].source_ref in {"t0", "t1"}


async def test_features_say_whose_turn_the_query_names(
    db: Database, seeded: tuple[str, dict[str, str]]
) -> None:
    agent, _ = seeded
    hits = await DialogSearch(db, None).search(agent, "Pixel", limit=2)
    ids = {h.source_ref: h.turn_id for h in hits}
    async with db.session() as session:
        found = await sql.turn_features(
            session, turn_ids=list(ids.values()), vector=None, model="", lexemes=["bob"]
        )
    assert found[ids["t1"]].speaker_named and not found[ids["t0"]].speaker_named
    assert found[ids["t0"]].cosine is None and found[ids["t0"]].neighbour_cosine is None


async def test_filters_keyword_regex_dates_tags(
    db: Database, encoder: LocalEncoder, seeded: tuple[str, dict[str, str]]
) -> None:
    agent, _ = seeded
    search = DialogSearch(db, encoder)
    assert refs(await search.search(agent, keyword='"sourdough bread"')) == ["t4"]
    assert refs(await search.search(agent, keyword="cat -rules")) == ["t1"]
    assert refs(await search.search(agent, regex=r"\d{4}", limit=10)) == ["t6"]
    assert refs(await search.search(agent, regex="(?c)pixel")) == []
    assert refs(await search.search(agent, regex="PIXEL")) == ["t1", "t0"]  # newest first
    may = await search.search(
        agent,
        "anything at all",
        since=datetime(2024, 5, 1, tzinfo=UTC),
        until=datetime(2024, 5, 31, tzinfo=UTC),
    )
    assert refs(may) == ["t4"]
    assert refs(await search.search(agent, tags=["pets"])) == ["t2"]
    assert refs(await search.search(agent, "cat", tags=["work"])) == ["t5"]  # the only one


async def test_channels_compartmentalise(
    db: Database, encoder: LocalEncoder, seeded: tuple[str, dict[str, str]]
) -> None:
    agent, channels = seeded
    search = DialogSearch(db, encoder)
    everywhere = await search.search(agent, "PIN code secret", limit=10)
    assert "t6" in refs(everywhere)
    general = await search.search(
        agent, "PIN code secret", channel_ids=[channels["chat:general"]], limit=10
    )
    assert "t6" not in refs(general)
    assert all(h.channel == "chat:general" for h in general)
    assert await search.search(agent, "PIN code", channel_ids=[]) == []


async def test_another_agents_dialog_is_invisible(
    db: Database, encoder: LocalEncoder, new_agent: NewAgent, seeded: tuple[str, dict[str, str]]
) -> None:
    _, channels = seeded
    stranger = await new_agent()
    search = DialogSearch(db, encoder)
    assert await search.search(stranger, "greyhound Pixel") == []
    with pytest.raises(SearchInputError, match="not one of agent"):
        await search.search(stranger, "Pixel", channel_ids=[channels["chat:general"]])


async def test_unavailable_encoder_degrades_to_lexical(
    db: Database, seeded: tuple[str, dict[str, str]]
) -> None:
    agent, _ = seeded
    result = await DialogSearch(db, NullEncoder()).run(
        DialogSearchQuery(agent=agent, query="greyhound named Pixel")
    )
    assert result.lexical_only and result.notice and "no encoder" in result.notice
    assert result.hits[0].source_ref == "t0" and result.hits[0].semantic is None


async def test_unknown_agent_and_channel(db: Database, seeded: tuple[str, dict[str, str]]) -> None:
    agent, _ = seeded
    search = DialogSearch(db, None)
    with pytest.raises(SearchInputError, match="unknown agent 'no-such-agent'"):
        await search.search("no-such-agent", "hello")
    with pytest.raises(SearchInputError, match="not one of agent"):
        await search.search(agent, "hello", channel_ids=["01HV5Z6Z8Q4N1V5X7B2C9E0F1G"])
    with pytest.raises(ValidationError, match="not a ULID"):
        await search.search(agent, "hello", channel_ids=["general"])


@pytest.mark.parametrize(
    ("pattern", "message"),
    [("(unclosed", "invalid regular expression"), ("a{2,1}", "invalid regular expression")],
)
async def test_invalid_regex_is_a_one_line_error(
    db: Database, seeded: tuple[str, dict[str, str]], pattern: str, message: str
) -> None:
    agent, _ = seeded
    with pytest.raises(SearchInputError, match=message) as caught:
        await DialogSearch(db, None).search(agent, regex=pattern)
    assert "\n" not in str(caught.value)


def test_oversized_and_empty_patterns_are_refused_before_the_database() -> None:
    with pytest.raises(ValidationError, match="the limit is 256"):
        DialogSearchQuery(agent="ada", regex="a" * 300)
    with pytest.raises(ValidationError, match="NUL"):
        DialogSearchQuery(agent="ada", regex="a\x00")
    with pytest.raises(ValidationError, match="empty"):
        DialogSearchQuery(agent="ada", regex="")


async def test_a_keyword_of_stop_words_is_refused(
    db: Database, seeded: tuple[str, dict[str, str]]
) -> None:
    agent, _ = seeded
    with pytest.raises(SearchInputError, match="no searchable word"):
        await DialogSearch(db, None).search(agent, keyword="the and of")


async def test_an_explosive_regex_is_cancelled_not_waited_for(
    db: Database, new_agent: NewAgent, tmp_path: Path
) -> None:
    agent = await new_agent()
    row = {
        "conversation": "c",
        "channel": {"service": "chat", "channel": "x"},
        "speaker": {"id": "u"},
        "text": "ab" * 400 + "c",
        "at": "2024-01-01T00:00:00Z",
    }
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(row), encoding="utf-8")
    await import_file(db, agent=agent, path=path)
    # Back-references defeat PostgreSQL's automaton: this backtracks for ages on that text.
    search = DialogSearch(db, None, timeout_seconds=1.0)
    with pytest.raises(SearchTimeoutError, match="regular expression"):
        await search.search(agent, regex=r"(.+)(.+)(.+)(.+)(.+)\5\4\3\2\1c")
    # The connection is usable afterwards: the timeout ended with the transaction.
    assert len(await search.search(agent, regex="^ab")) == 1


def test_date_ranges_are_checked_and_clamped() -> None:
    with pytest.raises(ValidationError, match="is after until"):
        DialogSearchQuery(
            agent="ada", since=datetime(2024, 2, 1, tzinfo=UTC), until=datetime(2024, 1, 1)
        )
    with pytest.raises(ValidationError, match="before 1970"):
        DialogSearchQuery(agent="ada", until=datetime(1900, 1, 1))
    with pytest.raises(ValidationError, match="far future"):
        DialogSearchQuery(agent="ada", since=datetime(9999, 1, 1))
    wide = DialogSearchQuery(agent="ada", since=datetime(1, 1, 1), until=datetime(9999, 12, 31))
    assert wide.since is None and wide.until is None  # bounds nothing can exceed are none
    naive = DialogSearchQuery(
        agent="ada", since=datetime(2024, 1, 1), until=datetime(2024, 1, 2, tzinfo=UTC)
    )
    assert naive.since == datetime(2024, 1, 1, tzinfo=UTC)
    with pytest.raises(ValidationError, match="less than or equal to 200"):
        DialogSearchQuery(agent="ada", query="x", limit=10_000)
    with pytest.raises(ValidationError, match="2,000"):
        DialogSearchQuery(agent="ada", query="word " * 1000)


async def test_index_turns_embeds_what_was_stored_without_vectors(
    db: Database, encoder: LocalEncoder, new_agent: NewAgent, tmp_path: Path
) -> None:
    agent = await new_agent()
    await seed(db, agent, tmp_path, None)
    search = DialogSearch(db, encoder)
    before = await search.search(agent, "long distance running race", limit=3)
    assert all(h.semantic is None for h in before)
    assert await index_turns(db, encoder, agent, limit=4) == 4
    assert await index_turns(db, encoder, agent) == len(DIALOG) - 4
    assert await index_turns(db, encoder, agent) == 0
    after = await search.search(agent, "long distance running race", limit=3)
    assert after[0].source_ref == "t3" and after[0].semantic is not None


async def test_bm25_statistics_follow_inserts_and_deletes(
    db: Database, seeded: tuple[str, dict[str, str]]
) -> None:
    agent, _ = seeded
    recount = """
        SELECT d.channel_id, u.lexeme, count(*) AS docs
        FROM dialog_turns d CROSS JOIN LATERAL unnest(tsvector_to_array(d.search_tsv)) u (lexeme)
        WHERE d.agent = :a GROUP BY 1, 2 ORDER BY 1, 2
    """
    kept = "SELECT channel_id, lexeme, docs FROM dialog_search_terms WHERE agent = :a ORDER BY 1, 2"
    totals = "SELECT sum(docs), sum(total_len) FROM dialog_search_stats WHERE agent = :a"
    actual = "SELECT count(*), sum(search_len) FROM dialog_turns WHERE agent = :a"
    async with db.engine.begin() as connection:
        assert (await connection.execute(text(recount), {"a": agent})).all() == (
            await connection.execute(text(kept), {"a": agent})
        ).all()
        assert (await connection.execute(text(totals), {"a": agent})).one() == (
            await connection.execute(text(actual), {"a": agent})
        ).one()
        await connection.execute(
            text("DELETE FROM dialog_turns WHERE agent = :a AND source_ref IN ('t0', 't6')"),
            {"a": agent},
        )
        assert (await connection.execute(text(recount), {"a": agent})).all() == (
            await connection.execute(text(kept), {"a": agent})
        ).all()
        assert (await connection.execute(text(totals), {"a": agent})).one()[0] == len(DIALOG) - 2


async def test_activities_fail_fast_on_user_errors_and_soft_on_the_encoder(
    db: Database, new_agent: NewAgent, tmp_path: Path
) -> None:
    agent = await new_agent()
    await seed(db, agent, tmp_path, None)
    activities = DialogSearchActivities(db, NullEncoder())
    environment = ActivityEnvironment()
    result = await environment.run(
        activities.search_dialog, DialogSearchQuery(agent=agent, query="greyhound")
    )
    assert result.lexical_only and result.hits[0].source_ref == "t0"
    with pytest.raises(ApplicationError) as caught:
        await environment.run(activities.search_dialog, DialogSearchQuery(agent=agent, regex="(("))
    assert caught.value.non_retryable and "invalid regular expression" in caught.value.message
    indexed = await environment.run(activities.index_turns, IndexTurnsInput(agent=agent))
    assert indexed.embedded == 0 and indexed.notice and "no encoder" in indexed.notice


@pytest.mark.parametrize(
    "query",
    ["O'Brien's back\\slash: & | ! <-> ( ) * 'quoted'", "the of and", "🙂🙂", "a" * 1999, "x:*"],
)
async def test_hostile_query_text_is_just_text(
    db: Database, seeded: tuple[str, dict[str, str]], query: str
) -> None:
    agent, _ = seeded
    hits = await DialogSearch(db, None).search(agent, query, limit=5)
    assert len(hits) <= 5
