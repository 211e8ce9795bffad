"""LoCoMo's JSON (Maharana et al., 2024): long conversations between two people, in sessions.

Each sample becomes one channel (``locomo:<sample_id>``), each session a conversation at its
``session_N_date_time``, each speaker a person. An image turn is imported with its caption, and
every turn keeps its ``dia_id`` as ``source_ref`` so evaluation can map hits back.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from schemas.events import ChannelRef
from schemas.text import InvalidTextError, clean_text
from store.importer.model import ImportInputError, SourceConversation, SourceTurn, check_size

SERVICE = "locomo"


def parse_session_time(value: object, where: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` as an aware datetime (the data set gives no zone: UTC).

    Raises:
        ImportInputError: The value is not in that form.
    """
    if isinstance(value, str):
        try:
            return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
        except ValueError:
            pass
    raise ImportInputError(f"{where}: {value!r} is not a time like '1:56 pm on 8 May, 2023'")


def _text(turn: dict[str, Any], where: str) -> str:
    body = turn.get("text")
    caption = turn.get("blip_caption")
    if not isinstance(body, str) or (caption is not None and not isinstance(caption, str)):
        raise ImportInputError(f"{where}: 'text' (and any 'blip_caption') must be strings")
    combined = f"{body} [image: {caption}]" if caption else body
    try:
        return clean_text(combined, what="text")
    except InvalidTextError as err:
        raise ImportInputError(f"{where}: {err}") from None


def _session(
    sample_id: str, channel: ChannelRef, conversation: dict[str, Any], n: int
) -> SourceConversation:
    where = f"{sample_id} session_{n}"
    at = parse_session_time(conversation.get(f"session_{n}_date_time"), f"{where}_date_time")
    turns = conversation[f"session_{n}"]
    if not isinstance(turns, list):
        raise ImportInputError(f"{where}: expected a list of turns")
    session = SourceConversation(key=f"{sample_id}/session_{n}", channel=channel)
    for index, turn in enumerate(turns, start=1):
        here = f"{where} turn {index}"
        if not isinstance(turn, dict):
            raise ImportInputError(f"{here}: expected an object")
        speaker, dia_id = turn.get("speaker"), turn.get("dia_id")
        if not isinstance(speaker, str) or not speaker.strip() or len(speaker) > 200:
            raise ImportInputError(f"{here}: 'speaker' must be a name of 1-200 characters")
        if not isinstance(dia_id, str) or not dia_id.strip() or len(dia_id) > 200:
            raise ImportInputError(f"{here}: 'dia_id' must be a string of 1-200 characters")
        session.turns.append(
            SourceTurn(
                where=here,
                speaker_id=speaker.strip(),
                speaker_name=speaker.strip(),
                role="person",
                text=_text(turn, here),
                at=at,
                key=dia_id.strip(),
            )
        )
    return session


def parse_locomo(path: Path) -> list[SourceConversation]:
    """Read and validate a whole LoCoMo file.

    Raises:
        ImportInputError: The first problem found, with where it is.
    """
    check_size(path.stat().st_size, path.name)
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as err:
        raise ImportInputError(f"{path.name}: not valid UTF-8 (byte {err.start + 1})") from None
    except json.JSONDecodeError as err:
        raise ImportInputError(f"line {err.lineno}: not JSON ({err.msg})") from None
    if not isinstance(data, list):
        raise ImportInputError(f"{path.name}: expected a JSON list of LoCoMo samples")
    sessions: list[SourceConversation] = []
    for position, sample in enumerate(data, start=1):
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise ImportInputError(f"sample {position}: expected an object with a 'conversation'")
        sample_id = sample.get("sample_id")
        if not isinstance(sample_id, str) or not sample_id.strip() or len(sample_id) > 150:
            raise ImportInputError(f"sample {position}: 'sample_id' must be a short string")
        channel = ChannelRef(service=SERVICE, channel=sample_id.strip())
        conversation = sample["conversation"]
        n = 1
        while f"session_{n}" in conversation:
            session = _session(sample_id.strip(), channel, conversation, n)
            if session.turns:  # an empty session is no conversation
                sessions.append(session)
            n += 1
        if n == 1:
            raise ImportInputError(f"sample {position} ({sample_id}): no session_1")
    if not sessions:
        raise ImportInputError(f"{path.name} holds no LoCoMo samples")
    return sessions
