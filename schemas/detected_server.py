"""A model server found on this machine by ``persyn up``, as recorded in the home.

With ``PERSYN_PROVIDER=auto`` and no key, ``persyn up`` looks for an OpenAI-compatible server on
the usual local addresses (``workers.detect``) and records the one it will use here, so every
process of the stack (the supervisor, the worker, ``persyn status``) resolves the same mind from
the same home. The next ``persyn up`` looks again and rewrites or removes the record.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import AwareDatetime, BaseModel, Field, ValidationError

RECORD = "detected-model.json"
"""The record's name in the home."""

KNOWN_PORTS = {11434: "Ollama", 1234: "LM Studio", 8080: "llama.cpp's server", 8000: "vLLM"}
"""What usually listens on each default port; another port is "an OpenAI-compatible server"."""


SIZE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*([bm])(?![a-z])", re.IGNORECASE)
"""A model size as servers and model names write it: "7B", "0.5b", "135M"."""


def billions(parameters: str | None) -> float | None:
    """``parameters`` ("7B", "135M") in billions, or ``None`` when it names no size."""
    match = SIZE.search(parameters or "")
    if match is None:
        return None
    value = float(match.group(1))
    return value / 1000 if match.group(2).lower() == "m" else value


class DetectedServer(BaseModel):
    """An OpenAI-compatible server and the chat model Persyn uses on it."""

    server: str = Field(description="What it is, for people: 'Ollama', 'LM Studio', ...")
    base_url: str = Field(description="The OpenAI API root, ending in /v1.")
    model: str
    parameters: str | None = Field(default=None, description="Its size, when the server says.")
    context_window: int = Field(default=8192, gt=0)
    detected_at: AwareDatetime

    def billions(self) -> float | None:
        """Its size in billions of parameters, when the server or the model's name says."""
        return billions(self.parameters)

    def describe(self) -> str:
        """One line: which model, on what, where."""
        size = f", {self.parameters}" if self.parameters else ""
        return f"{self.model}{size} on {self.server} at {self.base_url}"


def record_path(home: Path) -> Path:
    """Where the record lives in ``home``."""
    return home / RECORD


def read_detected(home: Path) -> DetectedServer | None:
    """The recorded server, or ``None`` (none recorded, or a record that does not parse)."""
    try:
        return DetectedServer.model_validate_json(record_path(home).read_bytes())
    except (OSError, ValidationError, json.JSONDecodeError):
        return None
