"""``brief_on`` in a real turn: the agent reads its dossier on the speaker, written once."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from schemas.observations import ObservationProposal
from store.queries.observations import record_observation
from store.tables import Person
from tests.autonomy.conftest import autonomy_worker
from tests.autonomy.test_builtin_tools import AFTER_TOOL, on, said
from tests.harness import Stack

BRIEF = "Ada is a nurse who lives in Leeds, by her own account."


async def test_brief_on_reads_a_dossier_written_once_from_the_facts(
    client: Client, stack: Stack
) -> None:
    rules = [
        ScriptRule(task="observe", system_match="briefing", reply=BRIEF),
        on("brief me", ("brief_on", {"person": "Ada"})),
        on("who am i", ("brief_on", {"person": "Zanzibar"})),
        AFTER_TOOL,
    ]
    async with autonomy_worker(client, stack, rules=rules) as harness:
        agent = await harness.create_agent()
        await said(harness, agent.handle, "hello")  # Ada is met
        async with harness.db.session() as session:
            (ada,) = [p for p in await _people(session, agent.handle) if p.display_name == "Ada"]
            await record_observation(
                session,
                agent=agent.handle,
                proposal=ObservationProposal(
                    person_id=ada.id,
                    type="job",
                    value="works as a nurse",
                    trust="self",
                    observed_at=datetime.now(UTC),
                ),
                embedding=None,
            )

        first = await said(harness, agent.handle, "brief me on Ada please")
        second = await said(harness, agent.handle, "brief me again")
        unknown = await said(harness, agent.handle, "who am i talking to")

    assert first == [{"person": "Ada", "facts": 1, "brief": BRIEF}]
    assert second == first
    briefs = [r for r in harness.provider.requests if r.task.value == "observe"]
    assert len(briefs) == 1  # the second answer was the kept brief
    assert "works as a nurse" in briefs[0].messages[0].content
    assert len(unknown) == 1 and "Zanzibar" in str(unknown[0])


async def _people(session: AsyncSession, agent: str) -> list[Person]:
    return list((await session.exec(select(Person).where(Person.agent == agent))).all())
