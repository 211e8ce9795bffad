"""Snapshots of the console's main screens, read as a person would read them."""

from __future__ import annotations

from pathlib import Path

from activities.gateway.providers.scripted import ScriptRule
from cli.console_app.directory_screen import DirectoryScreen
from cli.console_app.trace_screen import TraceScreen
from tests.console.helpers import SIZE, console, send, settled
from tests.console.snapshots import masked, matches, screen_text
from tests.harness import Stack, until
from tests.observability.helpers import finished, traced_worker, tracing_overrides


async def test_the_main_directory_and_trace_screens(stack: Stack, tmp_path: Path) -> None:
    span_file = tmp_path / "spans.jsonl"
    rules = [ScriptRule(task="respond", reply="The tides follow the moon, twice a day.")]
    async with traced_worker(stack, span_file, rules=rules) as (harness, traced):
        agent = await harness.create_agent(handle="snapshot-wren", name="Wren")
        app = console(stack, harness, agent.handle, overrides=tracing_overrides(span_file))
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "tell me about the tides")
            await settled(app)
            await until(lambda: app.panel.state is not None and app.session.conversation_id)
            app.refresh_panel()
            await until(lambda: app.panel.state is not None and not app.panel.state.current)
            await pilot.pause()
            main = masked(screen_text(app))

            await pilot.press("f2")
            directory = app.screen
            assert isinstance(directory, DirectoryScreen)
            await until(lambda: directory.ready)
            await pilot.pause()
            await pilot.press("enter")
            await until(lambda: "identities:" in str(directory.detail.render()))
            await pilot.pause()
            people = masked(screen_text(app))
            await pilot.press("escape")

            [turn] = app.transcript.turns()
            assert turn.activation_id is not None
            await finished(harness.client, turn.activation_id)
            traced.flush()
            await pilot.press("f3")
            trace = app.screen
            assert isinstance(trace, TraceScreen)
            await until(lambda: trace.found)
            await pilot.pause()
            shown = masked(screen_text(app), collapse=True).splitlines()
            # The turn and its first step; background work after the reply races in its order.
            traced_text = "\n".join([*shown[:6], shown[-1]]) + "\n"

    assert matches("main", main), main
    assert matches("directory", people), people
    assert matches("trace", traced_text), traced_text
