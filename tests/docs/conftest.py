"""The documented commands run against the stack as production runs it: the codec on, its
endpoint beside it (the fixtures of ``tests/integration``, reused rather than copied)."""

from tests.integration.conftest import client, stack

__all__ = ["client", "stack"]
