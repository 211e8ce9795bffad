"""A week in an hour: the §9 acceptance run.

One agent lives through a compressed week on a private stack: a history imported with memory
formation (the first meeting, six days back; a plan at the office; small talk culled later),
sessions on three channels (terminal kitchen, web office, team chat), a reminder that fires on
a Temporal Schedule, maintenance culling, its heartbeat deleted, and a full restart of every
process. Each of §9's eleven behaviours is a small function (``systemtests/acceptance/recall.py``,
``systemtests/acceptance/conduct.py``) listed in :data:`BEHAVIOURS` in the order the week runs them;
each says in its docstring what it holds to and returns its evidence.

With the scripted model (the default) the model's words are canned: the run proves the
machinery carries each behaviour. ``--provider local`` (or any configured provider) runs the
same week with a real model and is reported separately: its wording is judged lexically.

Usage: ``python -m systemtests.acceptance [--provider scripted|local|...] [--record]``; exits 1 if a
behaviour fails ("not available" is not a failure: the feature is not in the tree).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

from temporalio.client import Client

from activities.gateway.base import Provider
from activities.gateway.providers.scripted import Script, ScriptedProvider
from schemas.agents import AgentConfig
from schemas.imports import ImportFormat
from schemas.models import ProviderName
from systemtests.acceptance import script
from systemtests.acceptance.conduct import (
    converses_with_an_agent,
    declines_a_request,
    dormant_without_heartbeat,
    messages_unprompted,
    pushes_back,
    survives_restart,
    wakes_when_spoken_to,
)
from systemtests.acceptance.recall import (
    culls_but_keeps_important,
    hedges_weak_memory,
    no_false_recollection,
    recall_differs_by_channel,
    recalls_first_meeting,
)
from systemtests.acceptance.week import AGENT, FAILS, HOLDS, NOT_AVAILABLE, Verdict, Week
from systemtests.acceptance.world import world
from usecases.importing import import_dialog

__all__ = ["BEHAVIOURS", "FAILS", "HOLDS", "NOT_AVAILABLE", "render", "run_week"]

Behaviour = Callable[[Week], Awaitable[Verdict]]

BEHAVIOURS: list[tuple[str, Behaviour]] = [
    ("recalls the first meeting in its own words", recalls_first_meeting),
    ("retrieves different memories per channel", recall_differs_by_channel),
    ("says it has no memory of what never happened", no_false_recollection),
    ("hedges a weak memory and checks the raw record", hedges_weak_memory),
    ("pushes back on a flawed premise", pushes_back),
    ("declines a request it could fulfil, with reasons", declines_a_request),
    ("sends a message nobody prompted (reminder)", messages_unprompted),
    ("converses with another agent until it stops", converses_with_an_agent),
    ("culls memory but keeps what it rated important", culls_but_keeps_important),
    ("goes dormant when its heartbeat is deleted", dormant_without_heartbeat),
    ("survives a full restart with its identity", survives_restart),
    ("wakes when spoken to after the restart", wakes_when_spoken_to),
]
"""The eleven behaviours of §9 in the order the week runs them (the last is split in two)."""


# -- the week -----------------------------------------------------------------------------------


async def prologue(week: Week, home: Path) -> None:
    """Day one: the agent, its imported past (remembered), and a first hello on each channel."""
    await week.world.new_agent(AGENT, config=AgentConfig())
    history = home / "history.jsonl"
    lines = script.history_lines(datetime.now(UTC))
    history.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    _, consolidations = await import_dialog(
        settings=week.world.settings,
        path=history,
        agent=AGENT,
        fmt=ImportFormat.JSONL,
        embed=True,
        consolidate=True,
    )
    client: Client = week.world.client
    for workflow_id in consolidations:
        await client.get_workflow_handle(workflow_id).result()


async def run_week(home: Path, *, provider: str = "scripted") -> list[tuple[str, Verdict]]:
    """Live the week in ``home`` and judge every behaviour; a behaviour that raises fails."""
    providers: dict[ProviderName, Provider] | None = None
    if provider == "scripted":
        providers = {ProviderName.SCRIPTED: ScriptedProvider(Script(rules=script.week_rules()))}
    inline = {
        "channels": {"terminal": "inline", "web": "inline", "chat": "inline"},
        # The adversarial lens every time: its one job is to object (the drawn lens is random).
        "lenses": ["adversarial"],
    }
    overrides: dict[str, object] = {
        "provider": provider,
        "deliberation": inline,
        # Culling in a compressed week: a low-rated memory is old after a few seconds.
        "memory": {"cull_after_days": 0.0001},
    }
    results: list[tuple[str, Verdict]] = []
    async with world(home, providers=providers, overrides=overrides) as running:
        week = Week(world=running, real_model=provider != "scripted")
        await prologue(week, home)
        for name, behaviour in BEHAVIOURS:
            try:
                found = await behaviour(week)
            except Exception as err:  # a broken step fails its behaviour, not the week
                found = Verdict(FAILS, f"raised {type(err).__name__}: {str(err)[:160]}")
            results.append((name, found))
    return results


def render(results: list[tuple[str, Verdict]], provider: str) -> str:
    """One line per behaviour: status, name, evidence."""
    held = sum(1 for _, v in results if v.status == HOLDS)
    lines = [f"Provider {provider}: {held} of {len(results)} hold.", ""]
    lines += [f"- [{v.status}] {name}: {v.evidence}" for name, v in results]
    return "\n".join(lines)


def failed(results: list[tuple[str, Verdict]]) -> bool:
    """Whether any behaviour failed (not available is not a failure)."""
    return any(v.status == FAILS for _, v in results)


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m systemtests.acceptance", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--provider", default="scripted", help="scripted, local, or another.")
    parser.add_argument("--record", action="store_true", help="Append the result to RESULTS.md.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="persyn-week-") as tmp:
        home = Path(tmp)
        home.chmod(0o755)  # the embedded PostgreSQL runs as another user
        results = asyncio.run(run_week(home, provider=args.provider))
    text = render(results, args.provider)
    if args.record:
        from bench.harness import record

        record(f"Acceptance week (§9): {args.provider} provider", text)
    else:
        print(text)
    sys.stdout.flush()
    os._exit(1 if failed(results) else 0)
