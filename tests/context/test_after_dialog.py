"""What a turn changes goes after the dialog on plans with ``context_after_dialog``.

SmolLM2 read a 1,300-token prompt for 3.3 s before its first token, every turn: the recalled
memories and the clock came before the dialog, so nothing after the persona was the same from
one turn to the next. On the local plan the volatile blocks are stored as a system message
just before the newest message, and folded into it for the provider (``gateway.plans.folded``),
so the instructions and all the earlier dialog are an unchanged prefix a server's cache reuses.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from temporalio.client import Client

from activities.gateway.plans import folded, shaped
from activities.gateway.providers.scripted import ScriptRule
from schemas.models import CallPlan, ChatMessage, ModelRequest, ProviderName, TaskType
from tests.harness import Stack, running_worker


def said(role: str, text: str) -> ChatMessage:
    return ChatMessage.model_validate({"role": role, "content": text})


def test_a_system_message_is_folded_into_the_persons_message_after_it() -> None:
    hi, hello = said("user", "hi"), said("assistant", "hello")
    messages = [hi, hello, said("system", "CTX"), said("user", "q")]
    assert folded(messages) == [hi, hello, said("user", "CTX\n\nq")]


def test_a_system_message_before_a_reply_or_at_the_end_becomes_the_persons_turn() -> None:
    assert folded([said("system", "A"), said("assistant", "x")]) == [
        said("user", "A"),
        said("assistant", "x"),
    ]
    last = [said("user", "q"), said("system", "B")]
    assert folded(last) == [said("user", "q"), said("user", "B")]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["user", "assistant", "system"]),
            # What a stored message may hold: no control characters (the schema refuses them).
            st.text(st.characters(exclude_categories=["Cc", "Cs"]), max_size=40),
        ),
        max_size=10,
    )
)
def test_no_provider_is_sent_a_system_message_and_nothing_is_lost(
    turns: list[tuple[str, str]],
) -> None:
    messages = [said(role, text) for role, text in turns]
    request = ModelRequest(task=TaskType.RESPOND, system="S", messages=messages)
    sent = shaped(request, CallPlan()).messages
    assert all(m.role != "system" for m in sent)
    for message in messages:
        assert any(message.content in m.content for m in sent)


PLAN = {ProviderName.SCRIPTED: CallPlan(context_after_dialog=True)}
RULES = [ScriptRule(task=TaskType.RESPOND.value, match="", reply="Noted.")]


async def test_the_instructions_and_the_earlier_dialog_are_the_same_prefix_each_turn(
    client: Client, stack: Stack
) -> None:
    async with running_worker(
        client, stack, rules=RULES, settings_overrides={"call_plans": PLAN}
    ) as harness:
        agent = (await harness.create_agent()).handle
        await harness.say(agent, "I grow tomatoes on my balcony.")
        await harness.say(agent, "They ripened last week.")
        first, second = [r for r in harness.provider.requests if r.task is TaskType.RESPOND]

    # The clock changes every turn: it reaches the model with the newest message, not before.
    assert "It is " not in first.system and "It is " not in second.system
    assert first.messages[-1].content.rstrip().endswith("I grow tomatoes on my balcony.")
    assert "It is " in first.messages[-1].content
    assert second.system == first.system
    # Everything the first prompt held before its newest message opens the second unchanged.
    assert second.messages[: len(first.messages) - 1] == first.messages[:-1]
    assert [m.role for m in second.messages] == ["user", "assistant", "user"]
    assert "I grow tomatoes on my balcony." in second.messages[0].content
    assert second.messages[1].content == "Noted."
