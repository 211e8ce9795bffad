"""The JSONL import format (docs/import-format.md): one turn per line."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from schemas.imports import ImportLine
from store.importer.model import (
    MAX_LINE_BYTES,
    ImportInputError,
    SourceConversation,
    SourceTurn,
    check_size,
)


def _reason(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def parse_jsonl(path: Path) -> list[SourceConversation]:
    """Read and validate a whole JSONL file.

    Raises:
        ImportInputError: The first problem found, with its line number.
    """
    check_size(path.stat().st_size, path.name)
    conversations: dict[str, SourceConversation] = {}
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            where = f"line {number}"
            if len(raw) > MAX_LINE_BYTES:
                raise ImportInputError(
                    f"{where}: {len(raw):,} bytes; a line may hold at most {MAX_LINE_BYTES:,}"
                )
            if b"\x00" in raw:
                raise ImportInputError(f"{where}: contains a NUL byte: remove it")
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise ImportInputError(
                    f"{where}: not valid UTF-8 (byte {err.start + 1}): re-encode the file as UTF-8"
                ) from None
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as err:
                raise ImportInputError(
                    f"{where}: not JSON ({err.msg}, column {err.colno})"
                ) from None
            if not isinstance(data, dict):
                raise ImportInputError(f"{where}: expected a JSON object, one turn per line")
            try:
                item = ImportLine.model_validate(data)
            except ValidationError as err:
                raise ImportInputError(f"{where}: {_reason(err)}") from None
            conversation = conversations.setdefault(
                item.conversation, SourceConversation(key=item.conversation, channel=item.channel)
            )
            if conversation.channel != item.channel:
                raise ImportInputError(
                    f"{where}: conversation {item.conversation!r} was on channel "
                    f"{conversation.channel.key!r}, here {item.channel.key!r}: "
                    "one conversation happens on one channel"
                )
            conversation.turns.append(
                SourceTurn(
                    where=where,
                    speaker_id=item.speaker.id,
                    speaker_name=item.speaker.name or item.speaker.id,
                    role=item.role,
                    text=item.text,
                    at=item.at,
                    tags=list(dict.fromkeys(item.tags)),
                    key=item.key,
                )
            )
    if not conversations:
        raise ImportInputError(f"{path.name} holds no turns")
    return list(conversations.values())
