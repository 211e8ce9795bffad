"""When a command ends, everything it started ends with it, escapes included.

A command starts work meant to outlive it (a ``setsid`` busy loop, which leaves the command's
session and process group, a plain background sleep, and a double-forked orphan in a session
of its own); the next command reads every process in the container from ``/proc``. The start
time of the container's first process shows it was not simply restarted between the two.
"""

from __future__ import annotations

import asyncio

from activities.sandbox.docker import DockerProvider
from tests.harness import until
from tests.sandbox.conftest import MakeProvider

BOOTED = "cut -d' ' -f22 /proc/1/stat"
"""When the container's first process started (a restart changes it)."""
LEFT_BEHIND = (
    "setsid sh -c 'while :; do :; done' >/dev/null 2>&1 &"
    " sleep 313 &"
    " (setsid sh -c 'sleep 317' &) ;"
    f" {BOOTED}"
)
STARTED = {"sh -c while :; do :; done", "sleep 313", "sh -c sleep 317", "sleep 317"}
"""The command lines of what ``LEFT_BEHIND`` starts."""


async def processes(provider: DockerProvider, agent: str) -> list[str]:
    """Every process's command line in ``agent``'s container, from /proc (what ps reads)."""
    listing = await provider.run(
        agent, "for d in /proc/[0-9]*; do tr '\\0' ' ' < $d/cmdline 2>/dev/null; echo; done"
    )
    return [line.strip() for line in listing.stdout.splitlines() if line.strip()]


async def test_what_a_command_started_in_the_background_ends_with_it(
    make_provider: MakeProvider, agent: str
) -> None:
    provider = make_provider()
    started = await provider.run(agent, LEFT_BEHIND)
    assert started.exit_code == 0 and started.stdout.strip().isdigit()

    left = [line for line in await processes(provider, agent) if line in STARTED]
    assert not left, f"still running after their command ended: {left}"
    booted = await provider.run(agent, BOOTED)
    assert booted.stdout == started.stdout, "the container was restarted, not cleaned"


async def test_a_command_ending_leaves_a_concurrent_commands_work_alone(
    make_provider: MakeProvider, agent: str
) -> None:
    provider = make_provider()
    await provider.provision(agent)
    long = asyncio.create_task(
        provider.run(agent, "sleep 331 & echo $! > long.pid; wait; echo long done")
    )

    async def long_started() -> bool:
        return (await provider.run(agent, "cat long.pid")).exit_code == 0

    await until(long_started, timeout=30)
    short = await provider.run(agent, "sleep 337 & echo short done")
    assert short.stdout == "short done\n"

    running = await processes(provider, agent)
    assert "sleep 331" in running and "sleep 337" not in running
    await provider.run(agent, "kill $(cat long.pid)")
    assert (await long).stdout == "long done\n"


async def test_work_is_ended_even_when_the_command_kills_what_would_end_it(
    make_provider: MakeProvider, agent: str
) -> None:
    # The command kills every ancestor it can see inside, the wrapper that would sweep after
    # it first, then the timeout under it, and leaves a sleep behind in a session of its own.
    provider = make_provider()
    killer = (
        "setsid sleep 347 >/dev/null 2>&1 & "
        "kill -9 $(awk '/^PPid/ {print $2}' /proc/$PPID/status) $PPID"
    )
    await provider.run(agent, killer)

    assert "sleep 347" not in await processes(provider, agent)
