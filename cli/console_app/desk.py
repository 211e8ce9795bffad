"""The approvals desk the console uses: the approvals use case, where this deployment has it."""

from __future__ import annotations

import importlib
import logging

from cli.console_app.approvals import ApprovalDesk
from schemas.settings import Settings

log = logging.getLogger(__name__)


def approvals_desk(settings: Settings) -> ApprovalDesk | None:
    """The desk over ``usecases.approvals``; ``None`` when it is not installed here."""
    try:
        importlib.import_module("usecases.approvals")
    except ImportError as err:
        log.info("approvals are not available: %s", err)
        return None
    return None
