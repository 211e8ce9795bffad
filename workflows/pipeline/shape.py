"""Which patches an activation runs with, read from its input rather than written as markers.

``workflow.patched`` writes a marker and an upsert of ``TemporalChangeVersion`` (a visibility
write) into the history of every run that asks it. An activation is one run per message, so
each patch it asks costs every message two events and a visibility write, for as long as the
patch is in the code. Activations are started by their agent, though, which can say in the
activation's input which patches it was started with: ``ActivationInput.shape``. A run started
with a shape at or above a patch's entry in :data:`FOLDED` takes the patched branch without
asking; a run started before (shape 0, as every recorded history has) asks as it always did,
and replays from its markers. The input is in the history, so the branch is the same on every
replay.

A new patch in activation code is asked with ``workflow.patched`` as usual; folding it in is a
new shape: add it here with ``SHAPE + 1`` and raise :data:`SHAPE` (docs/operations.md, "The
life of a patch").
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from temporalio import workflow

from schemas.activation import ActivationInput

SHAPE = 1
"""The shape the agent starts activations with today."""

FOLDED: Mapping[str, int] = MappingProxyType(
    {
        "afford-reply-before-generating": 1,
        "reply-draft-by-reference": 1,
        "self-assessment-own-channel-only": 1,
        "guardrail-veto-attribute": 1,
        "emotion": 1,
        "degraded-outcome": 1,
        "reply-turn-id-from-run-start": 1,
        "deferred-deliberation-in-run": 1,
        "reply-steps-joined": 1,
    }
)
"""Each folded patch, with the first shape that takes its branch without asking."""


def folded(data: ActivationInput, patch: str) -> bool:
    """Whether ``data``'s shape takes ``patch``'s branch without asking (no marker written)."""
    shape = FOLDED.get(patch)
    return shape is not None and data.shape >= shape


def patched(data: ActivationInput, patch: str) -> bool:
    """``workflow.patched(patch)``, answered from the run's shape where it can be."""
    return folded(data, patch) or workflow.patched(patch)


def deprecate_patch(data: ActivationInput, patch: str) -> None:
    """``workflow.deprecate_patch(patch)``, for runs whose shape does not already fold it."""
    if not folded(data, patch):
        workflow.deprecate_patch(patch)
