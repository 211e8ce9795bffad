"""The poller as the stack runs it: its own process, started by the supervisor when configured."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.channels.telegram.bot import TelegramSetupError
from schemas.telegram import TelegramSettings
from store.db import Database
from teamchat.telegram.process import run_poller
from temporal.devserver import free_port
from tests.channels.helpers import channel_worker
from tests.harness import Stack, unique, until
from tests.teamchat.chat import RULES
from tests.teamchat.fake_bot_api import TOKEN, serving
from workers.channel_processes import TELEGRAM
from workers.health import channel_status
from workers.supervisor import children


def test_the_supervisor_runs_a_poller_only_for_a_configured_bot(stack: Stack) -> None:
    plain = stack.settings()
    configured = stack.settings(telegram=TelegramSettings(agent="ada", token_file="/run/tg"))

    assert TELEGRAM.name not in [child.name for child in children(plain)]
    [poller] = [child for child in children(configured) if child.name == TELEGRAM.name]
    assert poller.launch() == [sys.executable, "-m", "teamchat.telegram"]
    assert channel_status(plain, TELEGRAM) is None
    status = channel_status(configured, TELEGRAM)
    assert status is not None and not status.healthy
    assert status.detail == "not running: run `persyn up`"


async def test_the_poller_process_answers_a_chat_and_never_logs_the_token(
    client: Client, stack: Stack, db: Database, tmp_path: Path
) -> None:
    agent = unique("tg")
    async with serving() as api, channel_worker(client, stack, rules=RULES) as harness:
        await harness.create_agent(agent, name="Persyn Test")
        token_file = tmp_path / f"{agent}.token"
        token_file.write_text(TOKEN + "\n")
        env = {
            **os.environ,
            # A home of its own: beacons other tests left in the shared one would hide this
            # worker's pollers from the submit path.
            "PERSYN_HOME": str(tmp_path),
            "PERSYN_TEMPORAL_ADDRESS": stack.temporal_address,
            "PERSYN_DATABASE_URL": stack.dsn,
            "PERSYN_EMBEDDED": "false",
            "PERSYN_TASK_QUEUE": harness.task_queue,
            "PERSYN_LOG_LEVEL": "DEBUG",
            "PERSYN_TELEGRAM__AGENT": agent,
            "PERSYN_TELEGRAM__TOKEN_FILE": str(token_file),
            "PERSYN_TELEGRAM__BASE_URL": api.base_url,
            "PERSYN_TELEGRAM__POLL_TIMEOUT_SECONDS": "1",
        }
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "teamchat.telegram",
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            api.message("Hello from the other process")
            # The worker has no Telegram adapter here: the event's marker says it was answered.
            await until(lambda: "getUpdates" in api.calls and not api.updates, timeout=60)
        finally:
            process.send_signal(signal.SIGTERM)
            output, _ = await process.communicate()

    log = output.decode()
    assert process.returncode == 0, log
    assert f"polling Telegram as @persyn_test_bot for agent {agent}" in log
    assert "event" in log and "telegram:42" in log
    assert TOKEN not in log and TOKEN.split(":")[1] not in log


async def test_a_refused_token_or_a_missing_agent_stops_the_poller_in_one_line(
    stack: Stack, db: Database
) -> None:
    agent = unique("tg")
    async with serving() as api:
        wrong = stack.settings(
            telegram=TelegramSettings(agent=agent, token="999:wrong-secret", base_url=api.base_url)
        )
        missing = stack.settings(
            telegram=TelegramSettings(agent=agent, token=TOKEN, base_url=api.base_url)
        )

        with pytest.raises(TelegramSetupError) as refused:
            await run_poller(wrong)
        with pytest.raises(TelegramSetupError) as unknown:
            await run_poller(missing)

    assert "refused the bot token" in str(refused.value)
    assert "wrong-secret" not in str(refused.value)
    assert str(unknown.value).startswith(f"no agent '{agent}'")


async def test_a_poller_started_while_telegram_is_away_waits_and_stops_on_request(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="persyn.telegram")
    away = f"http://127.0.0.1:{free_port()}/bot"
    settings = stack.settings(
        telegram=TelegramSettings(agent="tg-away", token=TOKEN, base_url=away)
    )
    stop = asyncio.Event()
    running = asyncio.create_task(run_poller(settings, stop=stop))

    await until(lambda: "cannot start polling yet" in caplog.text, timeout=30)
    stop.set()
    await asyncio.wait_for(running, timeout=10)

    assert TOKEN not in caplog.text
