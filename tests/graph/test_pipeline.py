"""A closed stretch of conversation grows the knowledge graph, beside its observations.

A scripted model plays the extraction; the worker, Temporal and PostgreSQL are real.
"""

from __future__ import annotations

import json

from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from store.queries.graph import neighbourhood, nodes_named
from tests.graph.helpers_pipeline import converse
from tests.harness import Stack
from tests.memory.formation.helpers import formation_rules, formation_worker, new_agent

GRAPH = "knowledge graph"


def graph_reply() -> str:
    return json.dumps(
        {
            "entities": [
                {"name": "Ada", "type": "person"},
                {"name": "Leeds", "type": "place"},
            ],
            "relations": [
                {"source": "Ada", "relation": "lives_in", "target": "Leeds", "exclusive": True}
            ],
        }
    )


async def test_a_closed_conversation_puts_who_and_where_into_the_graph(
    client: Client, stack: Stack
) -> None:
    rules = [
        ScriptRule(task="observe", system_match=GRAPH, match="Leeds", reply=graph_reply()),
        *formation_rules(),
    ]
    async with formation_worker(client, stack, rules=rules) as harness:
        agent = await new_agent(harness.db, idle_minutes=0.1)
        await converse(harness, agent, "I live in Leeds these days.")

        async with harness.db.session() as session:
            (leeds,) = await nodes_named(session, agent=agent, names=["Leeds"])
            around = await neighbourhood(session, seeds=[leeds.node_id])

    extraction = [r for r in harness.provider.requests if GRAPH in r.system]
    assert len(extraction) == 1
    # The exchange reached the extraction fenced, as material.
    assert "I live in Leeds these days." in extraction[0].messages[0].content
    assert "<material" in extraction[0].messages[0].content
    assert leeds.type == "place"
    assert [e.type for e in around.edges] == ["lives_in"]
    assert {n.name for n in around.nodes} == {"Ada", "Leeds"}
