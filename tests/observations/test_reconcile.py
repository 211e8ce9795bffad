"""Reconciliation on a scripted fact history: the right active set, the chain intact.

The verdicts are scripted (what a reconciliation call would answer); what is under test is
that the store carries them out exactly: UPDATE and DELETE supersede, nothing is deleted,
and a verdict naming a fact it was not shown changes nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlmodel import col, select

from activities.observations.reconcile import apply_verdict, read_verdict
from schemas.ids import new_ulid
from schemas.observations import Observation, ObservationProposal, Reconciliation
from store.db import Database
from store.queries.observations import (
    active_observations,
    similar_active,
    supersede_chain,
)
from store.tables.observations import ObservationRow
from tests.memory.fake_embeddings import bag_of_words
from tests.observations.conftest import Cast

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _vector(text: str) -> list[float]:
    return bag_of_words(text, 384)


async def _learn(
    db: Database,
    cast: Cast,
    person: str,
    type_label: str,
    value: str,
    *,
    action: str,
    about: str | None = None,
    day: int = 0,
    trust: str = "self",
) -> str | None:
    """One step of the history: find candidates, then apply the scripted verdict.

    ``about`` picks the candidate the verdict targets by its value, as a model would.
    """
    proposal = ObservationProposal.model_validate(
        {
            "person_id": person,
            "type": type_label,
            "value": value,
            "trust": trust,
            "observed_at": T0 + timedelta(days=day),
        }
    )
    vector = _vector(f"{type_label} {value}")
    async with db.session() as session:
        candidates = await similar_active(
            session, agent=cast.agent, person_id=person, type_label=type_label, embedding=vector
        )
        target = next((c.id for c in candidates if c.value == about), None)
        verdict = Reconciliation.model_validate(
            {"action": action, "target": target, "reason": f"scripted {action.lower()}"}
        )
        return await apply_verdict(
            session,
            agent=cast.agent,
            proposal=proposal,
            verdict=verdict,
            candidates=candidates,
            embedding=vector,
        )


async def test_a_fact_history_ends_with_exactly_the_current_facts(db: Database, cast: Cast) -> None:
    una = cast.una
    await _learn(db, cast, una, "home_city", "lives in Leeds", action="ADD", day=0)
    await _learn(db, cast, una, "job", "works as a nurse", action="ADD", day=1)
    await _learn(db, cast, una, "pet", "has a dog called Rex", action="ADD", day=2, trust="told")
    await _learn(
        db, cast, una, "home_city", "lives in York", action="UPDATE", about="lives in Leeds", day=3
    )
    await _learn(
        db, cast, una, "job", "works as a teacher", action="UPDATE", about="works as a nurse", day=4
    )
    last_city = await _learn(
        db, cast, una, "home_city", "lives in Bath", action="UPDATE", about="lives in York", day=5
    )
    retracted = await _learn(
        db,
        cast,
        una,
        "pet",
        "never had a dog",
        action="DELETE",
        about="has a dog called Rex",
        day=6,
    )
    repeated = await _learn(db, cast, una, "job", "is a teacher", action="NOOP", day=7)

    assert retracted is None and repeated is None and last_city is not None
    async with db.session() as session:
        active = await active_observations(session, agent=cast.agent, person_ids=[una])
        chain = await supersede_chain(session, agent=cast.agent, observation_id=last_city)
        every = (
            await session.exec(
                select(ObservationRow)
                .where(ObservationRow.agent == cast.agent)
                .order_by(col(ObservationRow.id))
            )
        ).all()

    assert sorted((o.type, o.value) for o in active) == [
        ("home_city", "lives in Bath"),
        ("job", "works as a teacher"),
    ]
    # Bath replaced York, which replaced Leeds; the older two are kept, marked superseded.
    assert [(o.value, o.status) for o in chain] == [
        ("lives in Bath", "active"),
        ("lives in York", "superseded"),
        ("lives in Leeds", "superseded"),
    ]
    # Six records were written and none deleted: the dog is retired with its reason.
    assert len(every) == 6
    dog = next(r for r in every if r.type == "pet")
    assert (dog.status, dog.reason, dog.trust) == ("superseded", "scripted delete", "told")
    assert dog.superseded_at is not None


async def test_candidates_are_only_the_subjects_own_facts(db: Database, cast: Cast) -> None:
    await _learn(db, cast, cast.ned, "home_city", "lives in Leeds", action="ADD")
    await _learn(db, cast, cast.una, "home_city", "lives in York", action="ADD")
    async with db.session() as session:
        shown = await similar_active(
            session,
            agent=cast.agent,
            person_id=cast.una,
            type_label="home_city",
            embedding=_vector("home_city lives in Leeds"),
        )
    assert [o.value for o in shown] == ["lives in York"]


async def test_same_type_ranks_before_a_closer_vector_of_another_type(
    db: Database, cast: Cast
) -> None:
    await _learn(db, cast, cast.una, "home_city", "lives in Leeds", action="ADD")
    await _learn(db, cast, cast.una, "job", "works at a Leeds hospital", action="ADD")
    async with db.session() as session:
        shown = await similar_active(
            session,
            agent=cast.agent,
            person_id=cast.una,
            type_label="job",
            embedding=_vector("home_city lives in Leeds"),
        )
    assert [o.type for o in shown] == ["job", "home_city"]


async def test_a_verdict_naming_a_fact_it_was_not_shown_changes_nothing(
    db: Database, cast: Cast
) -> None:
    neds = await _learn(db, cast, cast.ned, "home_city", "lives in Leeds", action="ADD")
    proposal = ObservationProposal.model_validate(
        {
            "person_id": cast.una,
            "type": "home_city",
            "value": "lives in York",
            "trust": "self",
            "observed_at": T0,
        }
    )
    verdict = Reconciliation(action="UPDATE", target=neds, reason="hostile target")
    async with db.session() as session:
        written = await apply_verdict(
            session,
            agent=cast.agent,
            proposal=proposal,
            verdict=verdict,
            candidates=[],
            embedding=None,
        )
        active = await active_observations(
            session, agent=cast.agent, person_ids=[cast.una, cast.ned]
        )
    assert written is None
    assert [(o.person_id, o.value) for o in active] == [(cast.ned, "lives in Leeds")]


def test_a_reply_that_does_not_parse_is_not_guessed() -> None:
    held = Observation.model_validate(
        {
            "id": new_ulid(),
            "person_id": None,
            "type": "job",
            "value": "nurse",
            "trust": "self",
            "status": "active",
            "supersedes": None,
            "observed_at": T0,
        }
    )
    assert read_verdict('{"action": "MERGE", "reason": "x"}', [held]) is None
    assert read_verdict("ADD because new", [held]) is None
    assert read_verdict('{"action": "ADD", "reason": "new", "extra": 1}', [held]) is None
    parsed = read_verdict(
        '```json\n{"action": "UPDATE", "target": "f1", "reason": "moved"}\n```', [held]
    )
    assert parsed is not None and (parsed.action, parsed.target) == ("UPDATE", held.id)
    unknown = read_verdict('{"action": "DELETE", "target": "F7", "reason": "gone"}', [held])
    assert unknown is not None and unknown.target is None
