"""Whether this home's workers serve, as a submission asks it (:mod:`usecases.presence`).

A worker serves while its liveness beacon is fresh (:func:`workers.health.serving`); one the
supervisor runs and is restarting is given the time a restart takes before its absence is said.
"""

from __future__ import annotations

from temporalio.client import Client

from schemas.settings import Settings
from workers.health import serving
from workers.supervisor_state import read_state

RESTART_GRACE_S = 15.0
"""How long a supervised worker may be away (the supervisor restarting it) before we say so."""


class HomePresence:
    """The presence of the workers ``settings``'s home runs, or of any worker Temporal lists."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    async def serving(self, client: Client) -> bool:
        """Whether some worker serves the task queue right now (see :func:`health.serving`)."""
        return await serving(self._settings, client)

    def grace(self) -> float:
        """The restart grace while a supervisor runs; none without one (nothing would restart)."""
        return RESTART_GRACE_S if read_state(self._settings) is not None else 0.0
