"""What the `temporal` CLI of an integrator needs: the stack's address and codec endpoint."""

from __future__ import annotations

from dataclasses import dataclass

from tests.harness import Stack


@dataclass
class Edge(Stack):
    """The session's stack, with the URL of the codec endpoint serving it."""

    codec_endpoint: str
