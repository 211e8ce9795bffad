"""The poller as the stack runs it: its own process, started by the supervisor when configured."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from temporalio.client import Client

from schemas.telegram import TelegramSettings
from store.db import Database
from tests.channels.helpers import channel_worker
from tests.harness import Stack, unique, until
from tests.teamchat.chat import RULES
from tests.teamchat.fake_bot_api import TOKEN, serving
from workers.process import TELEGRAM
from workers.supervisor import children


def test_the_supervisor_runs_a_poller_only_for_a_configured_bot(stack: Stack) -> None:
    plain = stack.settings()
    configured = stack.settings(telegram=TelegramSettings(agent="ada", token_file="/run/tg"))

    assert TELEGRAM not in [child.name for child in children(plain)]
    [poller] = [child for child in children(configured) if child.name == TELEGRAM]
    assert poller.launch() == [sys.executable, "-m", "teamchat.telegram"]


async def test_the_poller_process_answers_a_chat_and_never_logs_the_token(
    client: Client, stack: Stack, db: Database, tmp_path: object
) -> None:
    agent = unique("tg")
    async with serving() as api, channel_worker(client, stack, rules=RULES) as harness:
        await harness.create_agent(agent, name="Persyn Test")
        token_file = stack.home / f"{agent}.token"
        token_file.write_text(TOKEN + "\n")
        env = {
            **os.environ,
            "PERSYN_HOME": str(stack.home),
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
