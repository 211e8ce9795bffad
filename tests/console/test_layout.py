"""The console's layout and keys: a composer with lines, history and paste; switching agent and
a new conversation, each a keystroke."""

from __future__ import annotations

from temporalio.client import Client, WorkflowExecutionStatus
from textual import events

from activities.gateway.providers.scripted import ScriptRule
from cli.console_app.agents_screen import AgentsScreen
from contract.names import conversation_workflow_id
from tests.console.helpers import SIZE, OfflineConsole, console, offline_session, send, settled
from tests.deliberation.helpers import new_agent, worker
from tests.harness import Stack, until


async def test_the_composer_takes_lines_history_and_paste(stack: Stack) -> None:
    app = OfflineConsole(offline_session(stack))
    async with app.run_test(size=SIZE) as pilot:
        composer = app.composer
        assert app.focused is composer
        await pilot.press("h", "i", "ctrl+j", "t", "h", "e", "r", "e")
        assert composer.text == "hi\nthere"
        await pilot.press("enter")
        app.post_message(events.Paste("pasted\nin two lines"))  # as the terminal sends it
        await pilot.pause()
        pasted = composer.text
        await pilot.press("enter")
        await pilot.press("up")
        newest = composer.text
        await pilot.press("up", "up")  # to its first line, then to the older one
        older = composer.text
        await pilot.press("down", "down")
        back = composer.text
        you = [line.text for line in app.transcript.lines("you")]
        layout = (
            app.transcript.region.y < composer.region.y,
            composer.region.bottom <= SIZE[1] - 1,  # above the footer, pinned at the bottom
            app.panel.region.x > composer.region.right - 1,
        )

    assert [e.text for e in app.sent] == ["hi\nthere", "pasted\nin two lines"]
    assert pasted == "pasted\nin two lines"
    assert you == ["Ada> hi\nthere", "Ada> pasted\nin two lines"]
    assert (newest, older, back) == ("pasted\nin two lines", "hi\nthere", "")
    assert layout == (True, True, True)


async def test_switching_agent_and_a_fresh_page_are_each_a_keystroke(
    client: Client, stack: Stack
) -> None:
    async with worker(client, stack, rules=[ScriptRule(task="respond", reply="Noted.")]) as h:
        first = await new_agent(h.db)
        second = await new_agent(h.db)
        app = console(stack, h, first)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "hello")
            await settled(app)
            await pilot.press("ctrl+n")
            await until(lambda: not app.transcript.turns())
            fresh = ([t.text for t in app.transcript.turns()], app.session.conversation_id)
            await pilot.press("f4")
            picker = app.screen
            assert isinstance(picker, AgentsScreen)
            await until(lambda: len(picker.choices.children) >= 2)
            handles = [getattr(item, "handle", None) for item in picker.choices.children]
            picker.choices.index = handles.index(second)
            await pilot.press("enter")
            await until(lambda: app.session.handle == second)
            await send(pilot, "hello again")
            await settled(app)
            [turn] = app.transcript.turns()
            title = str(app.title_bar.render())

    assert fresh == ([], None)
    assert turn.outcome is not None and turn.text == "Noted."
    assert f"({second})" in title


async def test_a_new_conversation_closes_the_open_one_and_the_next_message_opens_another(
    client: Client, stack: Stack
) -> None:
    async with worker(client, stack, rules=[ScriptRule(task="respond", reply="Noted.")]) as h:
        agent = await new_agent(h.db)
        app = console(stack, h, agent)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "hello")
            await settled(app)
            first = app.session.conversation_id
            assert first is not None
            await pilot.press("ctrl+n")
            await until(lambda: not app.transcript.turns())
            notice = [line.text for line in app.transcript.lines("notice")]
            closing = h.client.get_workflow_handle(conversation_workflow_id(first))

            async def closed() -> bool:
                described = await closing.describe()
                return described.status is WorkflowExecutionStatus.COMPLETED

            await until(closed)
            await send(pilot, "hello again")
            await settled(app)
            second = app.session.conversation_id

    assert any("a new conversation: the last one closes" in text for text in notice)
    assert second is not None and second != first
