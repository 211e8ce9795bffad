"""Finding the best model server already running on this machine.

Many people who try a local agent already run a model server: Ollama, LM Studio, llama.cpp's
server or vLLM, each on its usual port and each speaking OpenAI's protocol. With
``PERSYN_PROVIDER=auto`` and no key, ``persyn up`` asks each address in
``PERSYN_LOCAL_SERVERS`` for its models, picks the largest chat model any of them serves, and
records it in the home (``schemas.detected_server``); only when none answers does the built-in
tiny model serve. Each probe is bounded (a refused port answers at once, a silent one after
``PROBE_TIMEOUT_S``), and anything that does not answer like a model server is passed over.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime
from urllib.parse import urlsplit

import httpx

from schemas.detected_server import KNOWN_PORTS, SIZE, DetectedServer, billions, record_path
from schemas.settings import Settings
from store.private_files import replace_private

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 0.5
"""How long one address may take to answer before it counts as absent."""

NOT_CHAT = re.compile(r"embed|rerank|whisper|tts|bge-|e5-|minilm|clip|moderation", re.IGNORECASE)
"""Model names that serve something other than chat."""


def may_detect(settings: Settings) -> bool:
    """Whether the configuration leaves the choice of mind to what the machine has."""
    if settings.provider != "auto" or not settings.local_servers:
        return False
    if settings.anthropic_api_key is not None or settings.openai_api_key is not None:
        return False
    # A base URL the operator set wins; one the last detection filled in is looked at again.
    return settings.openai_base_url is None or settings.detected is not None


def detect(settings: Settings) -> DetectedServer | None:
    """The best chat model served at any of ``settings.local_servers``, or ``None``."""
    own = settings.local_model_port  # the built-in server, if a stack of ours runs it
    found: list[tuple[float, DetectedServer]] = []
    with httpx.Client(timeout=PROBE_TIMEOUT_S) as client:
        for address in settings.local_servers:
            if urlsplit(address).port == own:
                continue
            try:
                found.extend(_models_at(client, address.rstrip("/")))
            except (httpx.HTTPError, ValueError, KeyError, TypeError) as err:
                log.debug("no model server at %s: %s", address, err)
    if not found:
        return None
    return max(found, key=lambda pair: pair[0])[1]


def record(settings: Settings, server: DetectedServer | None) -> None:
    """Write ``server`` as the home's record, or remove the record when there is none."""
    path = record_path(settings.home)
    if server is None:
        path.unlink(missing_ok=True)
        return
    replace_private(path, server.model_dump_json(indent=2).encode())


def _models_at(client: httpx.Client, root: str) -> list[tuple[float, DetectedServer]]:
    """Every chat model at ``root`` with its size in billions (0 when unknown)."""
    port = urlsplit(root).port
    server = KNOWN_PORTS.get(port or 0, "an OpenAI-compatible server")
    sizes = _ollama_sizes(client, root)
    if sizes:
        server = "Ollama"
    answer = client.get(f"{root}/v1/models")
    answer.raise_for_status()
    now = datetime.now(UTC)
    models: list[tuple[float, DetectedServer]] = []
    for entry in answer.json()["data"]:
        name = str(entry["id"])
        if not name or NOT_CHAT.search(name):
            continue
        parameters = sizes.get(name) or _size_in_name(name)
        models.append(
            (
                _billions(parameters),
                DetectedServer(
                    server=server,
                    base_url=f"{root}/v1",
                    model=name,
                    parameters=parameters,
                    detected_at=now,
                ),
            )
        )
    return models


def _ollama_sizes(client: httpx.Client, root: str) -> dict[str, str]:
    """Ollama's own listing gives each model's size; other servers have no such route."""
    try:
        answer = client.get(f"{root}/api/tags")
        if answer.status_code != 200:
            return {}
        listing = answer.json().get("models") or []
    except (httpx.HTTPError, ValueError, AttributeError):
        return {}
    sizes: dict[str, str] = {}
    for model in listing:
        details = model.get("details") or {}
        if isinstance(details, dict) and details.get("parameter_size"):
            sizes[str(model.get("name") or model.get("model"))] = str(details["parameter_size"])
    return sizes


def _size_in_name(name: str) -> str | None:
    """A size written in the model's name ("qwen2.5-7b-instruct": "7B"), if any."""
    match = SIZE.search(name)
    return f"{match.group(1)}{match.group(2).upper()}" if match else None


def _billions(parameters: str | None) -> float:
    return billions(parameters) or 0.0
