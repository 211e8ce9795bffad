"""A prompt injection in a tool result and in imported dialog: fenced as untrusted in the
prompt, and flagged by the detector (and, for the tool result, by the default guardrail)."""

from __future__ import annotations

from pathlib import Path

from temporalio.client import Client

from activities.context.fencing import TOOL_RESULT
from activities.gateway.providers.scripted import ScriptRule
from activities.guardrails.injection import detect_injection
from activities.guardrails.rules import default_rules
from store.queries.guardrails import list_firings
from store.sql import execute
from tests.autonomy.conftest import autonomy_worker, tool_calls
from tests.fences import ATTACK, outside_fences
from tests.guardrails.helpers import guardrail_result
from tests.harness import Stack
from tests.memory.test_fenced_results import GARDEN, calls, fenced_result, imported, tool_round


async def test_injection_in_imported_dialog_and_tool_result_is_fenced_and_flagged(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    script = [
        ScriptRule(after_tool=True, reply="I found what Ada said."),
        ScriptRule(match="tomatoes", tool_calls=calls("search_memory", {"query": "tomatoes"})),
    ]
    async with autonomy_worker(client, stack, rules=script) as harness:
        agent = (await harness.create_agent()).handle
        conversation = await imported(harness, agent, tmp_path)
        receipt = await harness.say(agent, "What did Ada say about tomatoes?", channel=GARDEN)
        assert receipt.marker is not None and receipt.marker.activation_id is not None
        activation = receipt.marker.activation_id

        # In the prompt: the attack reached the model only inside the tool result's fence.
        request = tool_round(harness)
        fenced_result(request)
        whole = "\n".join([request.system, *(m.content for m in request.messages)])
        assert ATTACK not in outside_fences(whole)
        assert TOOL_RESULT.trust.startswith("outside data")

        # The detector flags the imported line as stored, and the tool result that carried it.
        async with harness.db.session() as session:
            texts = [
                row.text
                for row in await execute(
                    session,
                    "SELECT text FROM dialog_turns WHERE conversation_id = :c ORDER BY seq",
                    {"c": conversation},
                )
            ]
        flagged = [t for t in texts if detect_injection(t)]
        assert len(flagged) == 1 and ATTACK in flagged[0]
        assert {"override", "role_impersonation", "fence_escape"} <= set(
            detect_injection(flagged[0]).signals
        )
        (call,) = await tool_calls(harness, activation)
        assert call.result is not None and detect_injection(call.result)

        # The default guardrail saw it in the tool result, with the call as evidence.
        result = await guardrail_result(harness, activation)
        assert result.fired == ["prompt-injection"]
        async with harness.db.session() as session:
            (firing,) = await list_firings(session, agent=agent)
        assert firing.evidence == [call.id]
        assert firing.summary.startswith("injection attempt in tool search_memory")
    assert any(r.id == "prompt-injection" for r in default_rules().active(blocking=False))
