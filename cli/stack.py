"""``persyn up``, ``persyn down``, ``persyn status``: the embedded stack (or an existing one)."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Annotated

import typer

from cli.common import friendly_errors
from schemas.settings import Settings, get_settings
from workers.process import start_supervisor

if TYPE_CHECKING:
    from usecases.inboxes import InboxView
    from workers.stack import ComponentStatus, EmbeddedStack


def _table(components: list[ComponentStatus]) -> str:
    rows = [("component", "health", "address", "pid", "detail")] + [
        (c.name, "ok" if c.healthy else "DOWN", c.address, str(c.pid or "-"), c.detail)
        for c in components
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _sandbox_line() -> str:
    """Whether agents can run code, or why not, in one line (it never fails the status)."""
    from activities.sandbox import sandbox_availability
    from cli.common import run

    availability = run(sandbox_availability(get_settings().sandbox))
    return "Sandbox: " + ("available" if availability.available else availability.reason)


def _seconds(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}s" if value < 120 else f"{value / 60:.1f}min"


def inbox_lines(views: list[InboxView]) -> list[str]:
    """The agents' inboxes, one line each, and the event in flight beneath a busy one."""
    lines = []
    for view in views:
        if not view.reachable:
            lines.append(f"  {view.agent}: inbox not answering ({view.problem})")
            continue
        waited = _seconds(view.oldest_waiting_seconds)
        lines.append(f"  {view.agent}: {view.queued} queued, oldest waiting {waited}")
        lines += _call_lines(view)
        flight = view.in_flight
        if flight is None:
            continue
        attempt = f", attempt {flight.attempt}" if flight.attempt > 1 else ""
        lines.append(
            f"    in flight: event {flight.event_id} for {_seconds(view.in_flight_seconds)}; "
            f"step '{flight.step}'{attempt} for {_seconds(view.step_seconds)}"
        )
        if flight.last_error:
            lines.append(f"    last error: {flight.last_error}")
        lines += [f"    {detail}" for detail in view.run_details]
    return lines


def _call_lines(view: InboxView) -> list[str]:
    """The live call holding the agent's lock, in words, and how long it has held it."""
    if view.call is None:
        return []
    said = view.call.describe()
    if view.call.since is None:
        line = f"    {said[:1].upper()}{said[1:]}: takes the lock when the event in flight ends"
    else:
        line = (
            f"    {said[:1].upper()}{said[1:]} for {_seconds(view.call_seconds)}: "
            "other channels wait for it"
        )
    waiting = f"    {view.calls_waiting} more call(s) waiting for the lock"
    return [line, *([waiting] if view.calls_waiting else [])]


def _inboxes(agent: str | None) -> list[InboxView] | None:
    """Every agent's inbox (or one's), or ``None`` when Temporal or the store cannot say."""
    from cli.common import run
    from temporal.client import connect
    from usecases.agents import list_agents
    from usecases.inboxes import inbox_views

    settings = get_settings()

    async def read() -> list[InboxView]:
        handles = [agent] if agent else [a.handle for a in await list_agents(settings=settings)]
        client = await connect(settings, ready_within=2)
        return await inbox_views(client, handles)

    try:
        return run(read())
    except Exception:  # status reports what it can; the components above say what is down
        return None


def _detected_mind(settings: Settings) -> Settings:
    """The settings after looking for a model server on this machine, when that is the choice.

    The record it leaves in the home makes the supervisor, the worker and ``persyn status``
    resolve the same mind (``schemas.detected_server``).
    """
    from workers import detect  # its HTTP client loads only for the look

    if not detect.may_detect(settings):
        return settings
    detect.record(settings, detect.detect(settings))
    get_settings.cache_clear()
    return get_settings()


@friendly_errors
def up() -> None:
    """Start Temporal, PostgreSQL, migrations, the worker and the local model (skipping what runs).

    The worker and the model server run under a supervisor that restarts them if they die.
    """
    started = time.perf_counter()
    settings = _detected_mind(get_settings())
    # The supervisor, and with it the worker, goes first: its imports run beside our own.
    supervisor = start_supervisor(settings)
    from usecases.mind import describe as describe_mind
    from workers.stack import EmbeddedStack

    components = EmbeddedStack(settings).up(supervisor=supervisor)
    typer.echo(_table(components))
    typer.echo("\n".join(describe_mind(settings)))
    typer.echo(f"ready in {time.perf_counter() - started:.1f}s")
    if settings.embedded:
        typer.echo(f"Temporal Web UI: {settings.ui_url}")
    if not all(c.healthy for c in components):
        raise typer.Exit(1)


REMEMBER_TIMEOUT_S = 20.0
"""How long ``persyn down`` waits for open conversations to start remembering."""


@friendly_errors
def down(
    quick: Annotated[
        bool,
        typer.Option(
            "--quick", help="Stop at once: open conversations remember at their close instead."
        ),
    ] = False,
) -> None:
    """Stop the worker and model server, then Temporal and PostgreSQL; data persists for `up`.

    First every open conversation starts forming its memory of what was said since its last
    one, as of now; those memories finish at the next `persyn up` if need be.
    """
    from workers.stack import EmbeddedStack

    settings = get_settings()
    stack = EmbeddedStack(settings)
    if not quick:
        typer.echo(_remember_before_stopping(settings, stack))
    stack.down()
    typer.echo("stopped")


def _remember_before_stopping(settings: Settings, stack: EmbeddedStack) -> str:
    """Ask the open conversations to remember now; one line saying what came of it."""
    from cli.common import run
    from usecases.remembering import remember_open_conversations

    if not all(c.healthy for c in stack.status()):
        return "memories: not asked for (the stack is not all up); they form at each close"
    try:
        asked = run(remember_open_conversations(settings, timeout_s=REMEMBER_TIMEOUT_S))
    except Exception as err:  # stopping matters more than remembering early
        return f"memories: not asked for ({str(err)[:200]}); they form at each close"
    if not (asked.started or asked.nothing or asked.unanswered):
        return "memories: no open conversations"
    count = len(asked.started)
    line = f"memories: forming for {count} open conversation{'' if count == 1 else 's'}"
    if asked.started:
        line += " (they finish at the next persyn up if need be)"
    if asked.unanswered:
        line += f"; {len(asked.unanswered)} did not answer and remember at their close"
    return line


@friendly_errors
def status(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    agent: Annotated[
        str | None, typer.Option("--agent", help="Show only this agent's inbox.")
    ] = None,
) -> None:
    """Each component's health, address and PID, the Web UI URL, and every agent's inbox.

    An inbox shows how many events are queued and how long the oldest has waited; a busy one
    shows the event in flight, its step, attempt and last error, and what its runs are doing.
    """
    from usecases.mind import describe as describe_mind
    from workers.stack import EmbeddedStack

    settings = get_settings()
    components = EmbeddedStack(settings).status()
    views = _inboxes(agent) if all(c.healthy for c in components) or agent else None
    if as_json:
        shown: dict[str, object] = {
            "components": [c.model_dump() for c in components],
            "mind": describe_mind(settings),
            "inboxes": [v.model_dump(mode="json") for v in views or []],
        }
        typer.echo(json.dumps(shown, indent=2))
    else:
        typer.echo(_table(components))
        typer.echo("\n".join(describe_mind(settings)))
        if settings.embedded:
            typer.echo(f"Temporal Web UI: {settings.ui_url}")
        typer.echo(_sandbox_line())
        if views is not None:
            typer.echo("Inboxes:" if views else "Inboxes: no agents yet")
            for line in inbox_lines(views):
                typer.echo(line)
    if not all(c.healthy for c in components):
        raise typer.Exit(1)
