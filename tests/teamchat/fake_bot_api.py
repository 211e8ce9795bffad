"""A local stand-in for Telegram's Bot API, speaking its HTTP protocol to a real client.

Routes ``/bot<token>/<method>`` for getMe, getUpdates (offset confirms earlier updates,
timeout long-polls), sendMessage and getFile, and ``/file/bot<token>/<path>`` for the files a
photo or voice note names (``photo()``, ``voice()``), answering in Telegram's JSON shape
(``{"ok": true, "result": ...}`` or ``{"ok": false, "error_code": ..., "description": ...,
"parameters": {...}}``). Tests queue updates, script failures for sendMessage, delete
messages, and read what was sent.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from temporal.devserver import free_port
from tests.harness import until

TOKEN = "123456:TEST-token-never-logged"
BOT_USERNAME = "persyn_test_bot"
LIMIT = 4096


@dataclass
class Failure:
    """An error sendMessage answers once, in Telegram's shape."""

    status: int
    description: str
    parameters: dict[str, Any] | None = None


@dataclass
class FakeBotApi:
    """The server's state; the test drives it."""

    updates: list[dict[str, Any]] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    poll_failures: list[Failure] = field(default_factory=list)
    """Errors getUpdates answers first, one per call."""
    deleted: set[tuple[int, int]] = field(default_factory=set)
    send_attempts: int = 0
    calls: list[str] = field(default_factory=list)
    next_update_id: int = 1000
    bot_id: int = field(default_factory=lambda: random.randrange(10**6, 10**9))
    """Each fake is a different bot, so one test's saved offset is not another's."""
    next_message_id: int = 1
    files: dict[str, bytes] = field(default_factory=dict)
    """What each file ID holds (the ID is also its unique ID, and its path)."""
    fetched: list[str] = field(default_factory=list)
    """The file paths downloaded, in order."""
    base_url: str = ""
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)

    # -- what the test does ---------------------------------------------------------------------

    def push(self, update: dict[str, Any]) -> dict[str, Any]:
        """Queue a raw update (``update_id`` added if missing)."""
        update.setdefault("update_id", self.next_update_id)
        self.next_update_id = max(self.next_update_id, int(update["update_id"])) + 1
        self.updates.append(update)
        self._arrived.set()
        return update

    def message(
        self,
        text: str,
        *,
        chat_id: int = 42,
        chat_type: str = "private",
        user_id: int = 7,
        first_name: str = "Grace",
        reply_to: dict[str, Any] | None = None,
        entities: list[dict[str, Any]] | None = None,
        edited: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Queue a text message from a person (or, with ``edited``, an edit of one)."""
        if edited is not None:
            body = dict(edited, text=text, edit_date=int(time.time()) + 1)
            return self.push({"edited_message": body})
        chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
        if chat_type != "private":
            chat["title"] = "Test group"
        body = {
            "message_id": self._message_id(),
            "date": int(time.time()),
            "chat": chat,
            "from": {"id": user_id, "is_bot": False, "first_name": first_name},
            "text": text,
        }
        if reply_to is not None:
            body["reply_to_message"] = reply_to
        if entities is not None:
            body["entities"] = entities
        self.push({"message": body})
        return body

    def photo(self, content: bytes, *, caption: str | None = None, **sender: Any) -> dict[str, Any]:
        """Queue a photo (in two sizes, as Telegram sends one), with a caption if given."""
        body = self.message("", **sender)
        del body["text"]
        small, large = self._file(content[:32], "photos"), self._file(content, "photos")
        body["photo"] = [
            {**small, "width": 90, "height": 60},
            {**large, "width": 1280, "height": 853},
        ]
        if caption is not None:
            body["caption"] = caption
        return body

    def voice(self, content: bytes, **sender: Any) -> dict[str, Any]:
        """Queue a voice note (Ogg Opus, as Telegram records them)."""
        body = self.message("", **sender)
        del body["text"]
        body["voice"] = {**self._file(content, "voice"), "duration": 3, "mime_type": "audio/ogg"}
        return body

    def _file(self, content: bytes, folder: str) -> dict[str, Any]:
        file_id = f"{folder}-{len(self.files) + 1}"
        self.files[file_id] = content
        return {"file_id": file_id, "file_unique_id": file_id, "file_size": len(content)}

    def _message_id(self) -> int:
        self.next_message_id += 1
        return self.next_message_id - 1

    # -- the API --------------------------------------------------------------------------------

    async def _params(self, request: Request) -> dict[str, Any]:
        raw = await request.body()
        kind = request.headers.get("content-type", "")
        values: dict[str, Any] = dict(request.query_params)
        if raw and "json" in kind:
            values.update(json.loads(raw))
        elif raw:
            values.update(parse_qsl(raw.decode()))
        for key, value in list(values.items()):
            if isinstance(value, str) and value[:1] in "[{":
                values[key] = json.loads(value)
        return values

    async def handle(self, request: Request) -> JSONResponse:
        token, method = request.path_params["token"], request.path_params["method"]
        self.calls.append(method)
        if token != TOKEN:
            return _error(401, "Unauthorized")
        params = await self._params(request)
        if method == "getMe":
            return _ok(
                {
                    "id": self.bot_id,
                    "is_bot": True,
                    "first_name": "Persyn",
                    "username": BOT_USERNAME,
                }
            )
        if method == "getUpdates" and self.poll_failures:
            failure = self.poll_failures.pop(0)
            return _error(failure.status, failure.description, failure.parameters)
        if method == "getUpdates":
            return _ok(await self._get_updates(params))
        if method == "sendMessage":
            return self._send(params)
        if method == "getFile":
            file_id = str(params.get("file_id", ""))
            if file_id not in self.files:
                return _error(400, "Bad Request: invalid file_id")
            size = len(self.files[file_id])
            return _ok(
                {
                    "file_id": file_id,
                    "file_unique_id": file_id,
                    "file_size": size,
                    "file_path": f"files/{file_id}",
                }
            )
        return _error(404, "Not Found: method not found")

    async def download(self, request: Request) -> Response:
        if request.path_params["token"] != TOKEN:
            return _error(401, "Unauthorized")
        path = request.path_params["path"]
        self.fetched.append(path)
        content = self.files.get(path.removeprefix("files/"))
        if content is None:
            return _error(404, "Not Found")
        return Response(content, media_type="application/octet-stream")

    async def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset", 0) or 0)
        # Telegram forgets every update before the offset: it confirms them.
        self.updates = [u for u in self.updates if (_uid(u) or offset) >= offset]
        timeout = float(params.get("timeout", 0) or 0)
        if not self.updates and timeout > 0:
            self._arrived.clear()
            with suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), timeout)
        return list(self.updates[:100])

    def _send(self, params: dict[str, Any]) -> JSONResponse:
        self.send_attempts += 1
        if self.failures:
            failure = self.failures.pop(0)
            return _error(failure.status, failure.description, failure.parameters)
        chat_id = int(params["chat_id"])
        text = str(params.get("text", ""))
        if len(text.encode("utf-16-le")) // 2 > LIMIT:
            return _error(400, "Bad Request: message is too long")
        if not text.strip():
            return _error(400, "Bad Request: message text is empty")
        if chat_id == -404:
            return _error(400, "Bad Request: chat not found")
        if chat_id == 403:
            return _error(403, "Forbidden: bot was blocked by the user")
        reply = params.get("reply_parameters") or {}
        reply_to = reply.get("message_id")
        if reply_to is not None and (chat_id, int(reply_to)) in self.deleted:
            if not reply.get("allow_sending_without_reply"):
                return _error(400, "Bad Request: message to be replied not found")
            reply_to = None
        message = {
            "message_id": self._message_id(),
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private"},
            "from": {"id": self.bot_id, "is_bot": True, "first_name": "Persyn"},
            "text": text,
        }
        self.sent.append({"chat_id": chat_id, "text": text, "reply_to": reply_to, **message})
        return _ok(message)


def _uid(update: dict[str, Any]) -> int | None:
    value = update.get("update_id")
    return value if isinstance(value, int) else None


def _ok(result: Any) -> JSONResponse:
    return JSONResponse({"ok": True, "result": result})


def _error(status: int, description: str, parameters: dict[str, Any] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if parameters:
        body["parameters"] = parameters
    return JSONResponse(body, status_code=status)


@asynccontextmanager
async def serving() -> AsyncIterator[FakeBotApi]:
    """Run a fresh fake Bot API on a free port for the duration of the block."""
    api = FakeBotApi()
    app = Starlette(
        routes=[
            Route("/bot{token}/{method}", api.handle, methods=["GET", "POST"]),
            Route("/file/bot{token}/{path:path}", api.download, methods=["GET"]),
        ]
    )
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    task = asyncio.create_task(server.serve())
    await until(lambda: server.started or task.done(), timeout=10)
    if task.done():
        task.result()  # it could not start: say why
    api.base_url = f"http://127.0.0.1:{port}/bot"
    try:
        yield api
    finally:
        server.should_exit = True
        await task
