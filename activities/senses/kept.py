"""What was perceived of a picture or recording, kept beside it so it is computed once.

A caption or transcript is written next to what it describes (``{id}.caption.json``,
``{id}.transcript.json``) with the model that wrote it. Only success is kept: a picture the
vision model failed on is described again the next time an event names it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from store.private_files import replace_private


@dataclass(frozen=True)
class Perception:
    """What a model said of a picture or recording, and which model said it."""

    model: str
    text: str


def kept_perception(path: Path) -> Perception | None:
    """The perception kept at ``path``; ``None`` when there is none or it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Perception(model=str(data["model"]), text=str(data["text"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def keep_perception(path: Path, perception: Perception) -> None:
    """Keep ``perception`` at ``path`` at once: a reader never sees half of it."""
    data = {"model": perception.model, "text": perception.text}
    replace_private(path, json.dumps(data, ensure_ascii=False).encode("utf-8"))
