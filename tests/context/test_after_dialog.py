"""What a turn changes goes after the dialog on plans with ``context_after_dialog``.

SmolLM2 read a 1,300-token prompt for 3.3 s before its first token, every turn: the recalled
memories and the clock came before the dialog, so nothing after the persona was the same from
one turn to the next. On the local plan the volatile blocks are stored as a system message
just before the newest message, and folded into it for the provider (``gateway.plans.folded``),
so the instructions and all the earlier dialog are an unchanged prefix a server's cache reuses.
"""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st
from temporalio.client import Client

from activities.context.assembler import fit, page_start
from activities.context.model import ContextBlock, Trim
from activities.gateway.plans import folded, shaped
from activities.gateway.providers.scripted import ScriptRule
from schemas.models import CallPlan, ChatMessage, ModelRequest, ProviderName, TaskType
from schemas.text import estimate_tokens
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


def _dialog(exchanges: int) -> list[ChatMessage]:
    messages = []
    for i in range(exchanges):
        messages.append(said("user", f"Message {i}: the tide was high at the pier today."))
        messages.append(said("assistant", f"Reply {i}: lovely, the pier is nice at high tide."))
    messages.append(said("user", "And now?"))
    return messages


def _starts(paged: bool) -> list[str]:
    """The first message kept at each turn of a growing dialog, 40 turns long."""
    starts = []
    for exchanges in range(1, 41):
        block = ContextBlock(source="dialog", messages=_dialog(exchanges), trim=Trim.OLDEST_FIRST)
        (kept,) = fit([block], budget=260, window=10_000, paged=paged)
        assert kept.messages is not None and kept.messages[-1].content == "And now?"
        assert sum(estimate_tokens(m.content) + 4 for m in kept.messages) <= 260
        starts.append(kept.messages[0].content)
    return starts


def test_a_paged_dialog_keeps_its_start_for_several_turns_and_always_fits() -> None:
    unpaged, paged = _starts(paged=False), _starts(paged=True)
    moves = [sum(a != b for a, b in itertools.pairwise(s)) for s in (unpaged, paged)]
    # Unpaged, once full, the start moves every turn; paged, it moves a page at a time.
    assert moves[0] >= 25 and moves[1] <= moves[0] // 2
    assert all(page_start(said("user", start), 2) for start in paged if start != unpaged[0])


async def test_a_plan_leaves_out_the_context_its_model_is_not_shown(
    client: Client, stack: Stack
) -> None:
    plan = CallPlan(context_after_dialog=True, confirm_done=True, omit_context=["clock", "done"])
    async with running_worker(
        client, stack, rules=RULES, settings_overrides={"call_plans": {ProviderName.SCRIPTED: plan}}
    ) as harness:
        agent = (await harness.create_agent()).handle
        asked = await harness.say(agent, "Please remember that I prefer tea.")
        (request,) = [r for r in harness.provider.requests if r.task is TaskType.RESPOND]

    everything = request.system + "".join(m.content for m in request.messages)
    assert "It is " not in everything and "(UTC)" not in everything
    assert "Kept, as they asked" not in everything
    assert request.messages[-1].content.endswith("Please remember that I prefer tea.")
    # What the left-out block leaves for the platform still reaches the person.
    assert asked.marker is not None
    assert asked.marker.text == 'Noted.\n\nNoted: you asked me to remember "I prefer tea".'
