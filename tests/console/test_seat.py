"""The operator's seat beyond one turn: identity, the directory, the trace, approvals, the panel."""

from __future__ import annotations

from pathlib import Path

from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from cli.console_app.approvals import ApprovalPrompt, WaitingAction
from cli.console_app.dialog_screen import DialogScreen
from cli.console_app.directory_screen import DirectoryScreen
from cli.console_app.trace_screen import TraceScreen
from schemas.events import Outcome
from schemas.models import TaskType
from tests.console.helpers import SIZE, Desk, console, send, settled
from tests.deliberation.helpers import new_agent, worker
from tests.harness import Stack, until
from tests.observability.helpers import finished, traced_worker, tracing_overrides
from usecases import contacts
from usecases.people import remembered_name


async def test_rename_changes_the_name_the_agent_sees_and_not_the_person(
    client: Client, stack: Stack
) -> None:
    rules = [ScriptRule(task="respond", reply="Hello, {last}")]
    async with worker(client, stack, rules=rules) as harness:
        handle = await new_agent(harness.db)
        app = console(stack, harness, handle, speaker="ada")
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "hello")
            await settled(app)
            before = await contacts.list_contacts(settings=app.session.settings, agent=handle)
            await send(pilot, "/rename Ada Lovelace")
            await send(pilot, "it is me again")
            await settled(app, 2)
            after = await contacts.list_contacts(settings=app.session.settings, agent=handle)
            prompt = harness.provider.last(TaskType.RESPOND)
            you = [line.text for line in app.transcript.lines("you")]
        # The next session (`persyn console` without --name) opens under the chosen name.
        restored = await remembered_name(
            settings=app.session.settings,
            agent=handle,
            channel=app.session.channel,
            speaker_id="ada",
        )
        stranger = await remembered_name(
            settings=app.session.settings,
            agent=handle,
            channel=app.session.channel,
            speaker_id="someone-new",
        )

    assert [c.name for c in before] == ["Ada"]
    assert [(c.person_id, c.name) for c in after] == [(before[0].person_id, "Ada Lovelace")]
    assert you == ["Ada> hello", "Ada Lovelace> it is me again"]
    assert app.session.speaker.speaker_id == "ada"
    assert (restored, stranger) == ("Ada Lovelace", None)
    # The agent's record of the person: one person, now called by the new name.
    assert [m.content for m in prompt.messages][-1] == "it is me again"


async def test_a_rename_to_an_empty_or_hostile_name_is_one_line_and_changes_nothing(
    client: Client, stack: Stack
) -> None:
    async with worker(client, stack) as harness:
        handle = await new_agent(harness.db)
        app = console(stack, harness, handle, speaker="ada")
        async with app.run_test(size=SIZE) as pilot:
            for name in ["", "   ", "Ada\x00", "Ada\u202egnirts", "Ada\nBob", "x" * 500]:
                await send(pilot, f"/rename {name}")
            errors = [line.text for line in app.transcript.lines("error")]

    assert app.session.speaker.display_name == "Ada"
    assert len(errors) == 6
    assert all(e.startswith("[not renamed: ") and "\n" not in e for e in errors)
    assert "empty" in errors[0] and "U+0000" in errors[2] and "U+202E" in errors[3]


async def test_the_directory_shows_people_channels_and_a_conversations_dialog(
    client: Client, stack: Stack
) -> None:
    rules = [ScriptRule(task="respond", reply="Noted: {last}")]
    async with worker(client, stack, rules=rules) as harness:
        handle = await new_agent(harness.db)
        app = console(stack, harness, handle, speaker="ada", channel="browse")
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "my cat is called Turnip")
            await settled(app)
            main = app.screen
            await pilot.press("f2")
            screen = app.screen
            assert isinstance(screen, DirectoryScreen)
            tree = screen.directory
            await until(lambda: screen.ready)
            await pilot.pause()
            await pilot.press("enter")  # the cursor starts on the first person: Ada
            await until(lambda: "identities:" in str(screen.detail.render()))
            person = str(screen.detail.render())
            await pilot.press("down", "down", "enter")  # Channels, then terminal:browse
            channel = tree.root.children[1].children[0]
            await until(lambda: channel.children)
            await pilot.press("down", "enter")  # its conversation
            await until(lambda: isinstance(app.screen, DialogScreen))
            dialog = app.screen
            assert isinstance(dialog, DialogScreen)
            await until(lambda: "Turnip" in str(dialog.body.render()))
            shown = str(dialog.body.render())
            await pilot.press("escape", "escape")
            back = app.screen

    assert person.startswith("Ada\n") and "terminal:browse as ada" in person
    assert "Ada: my cat is called Turnip" in shown
    assert "Wren: Noted: my cat is called Turnip" in shown and "(read-only)" in shown
    assert back is main


async def test_a_replys_trace_opens_with_the_data_persyn_trace_shows(
    stack: Stack, tmp_path: Path
) -> None:
    span_file = tmp_path / "spans.jsonl"
    async with traced_worker(stack, span_file) as (harness, traced):
        agent = await harness.create_agent(name="Wren")
        app = console(stack, harness, agent.handle, overrides=tracing_overrides(span_file))
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "tell me about the tides")
            await settled(app)
            [turn] = app.transcript.turns()
            assert turn.activation_id is not None
            await finished(harness.client, turn.activation_id)
            traced.flush()
            turn.focus()
            await pilot.press("t")
            screen = app.screen
            assert isinstance(screen, TraceScreen)
            await until(lambda: screen.found)
            shown = str(screen.body.render())

    assert shown.startswith(f"activation {turn.activation_id}")
    assert "turn:message" in shown and "outcome=spoke" in shown


async def test_an_action_waiting_for_approval_is_a_prompt_in_the_transcript(
    client: Client, stack: Stack
) -> None:
    desk = Desk([WaitingAction("01JD3M6Z8Q4N1V5X7B2C9E0F1G", "run_command", "pip install x")])
    async with worker(client, stack) as harness:
        handle = await new_agent(harness.db)
        app = console(stack, harness, handle, speaker="ada", desk=desk)
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: app.prompts)
            prompt = app.prompts["01JD3M6Z8Q4N1V5X7B2C9E0F1G"]
            assert isinstance(prompt, ApprovalPrompt)
            await until(lambda: app.focused is prompt)  # one key answers it
            await pilot.press("a")
            await until(lambda: prompt.decision is not None)
            await pilot.press("r")  # decided already: nothing more is sent

    assert desk.decisions == [("01JD3M6Z8Q4N1V5X7B2C9E0F1G", True, "ada")]
    assert prompt.status == "approved"


async def test_the_side_panel_shows_the_agents_state_and_the_conversations_cost(
    client: Client, stack: Stack
) -> None:
    async with worker(client, stack) as harness:
        handle = await new_agent(harness.db)
        app = console(stack, harness, handle)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "hello")
            await settled(app)
            [turn] = app.transcript.turns()
            await until(lambda: app.panel.state is not None and app.session.conversation_id)
            shown = str(app.panel.render())

    assert turn.outcome is Outcome.SPOKE
    for part in ("Now", "Goals (0)", "Reminders (0)", "Heartbeat:", "This conversation\n  $"):
        assert part in shown
