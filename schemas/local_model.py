"""Where the local model server listens: the one address its provider and its stack share.

The stack runs llama.cpp's OpenAI-compatible server in a process of its own
(:mod:`workers.model_server`); the ``local`` provider (``activities.gateway.factory``) is an
HTTP client of it. Both read the address here, below either of them.
"""

from __future__ import annotations

from schemas.settings import Settings

HOST = "127.0.0.1"
"""The server listens on loopback only: nothing but this home's worker calls it."""


def url_at(port: int) -> str:
    """The OpenAI API root (ends in ``/v1``) of a server on ``port``."""
    return f"http://{HOST}:{port}/v1"


def base_url(settings: Settings) -> str:
    """Where the ``local`` provider reaches the server (OpenAI API root, ends in ``/v1``)."""
    return url_at(settings.local_model_port)
