"""A submission that cannot reach Temporal fails with the RPC error, and nothing else.

The SDK also hands that error to the update-with-start's start operation; left unread there,
asyncio prints it as a second traceback ("Future exception was never retrieved") when the
operation is collected: on the terminal of whoever ran ``persyn send`` during an outage.
"""

from __future__ import annotations

import gc
import logging
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.service import RetryConfig, RPCError

from temporal import inbox
from temporal.devserver import DevServer
from temporal.payload_converter import tolerant_data_converter
from tests.harness import event, until


async def test_a_server_gone_mid_session_fails_the_submission_once_and_quietly(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    # A server of its own, to stop: the client is connected, as a CLI's is, when it dies.
    dev, server = DevServer(
        port=0, ui_port=None, db_file=None, log_file=tmp_path / "t.log"
    ).start_on_free_port(detached=False)
    connected: list[Client] = []

    async def connect() -> bool:
        try:  # its port opens a moment before its frontend answers
            connected.append(
                await Client.connect(
                    f"127.0.0.1:{dev.port}",
                    data_converter=tolerant_data_converter,
                    retry_config=RetryConfig(max_retries=0),
                )
            )
        except RuntimeError:
            return False
        return True

    try:
        await until(connect, timeout=30)
        client = connected[0]
    finally:
        server.kill()
        server.wait()
    caplog.set_level(logging.ERROR, logger="asyncio")
    with pytest.raises(RPCError):
        await inbox.submit(client, handle="ada", event=event("hello"), task_queue="persyn")
    gc.collect()  # the start operation is gone with the failed call's frames
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]
