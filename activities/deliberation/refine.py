"""The refine activity: candidate, objections and retrieved memories to a final response.

Spec §4 step 5. The refiner gets the original prompt (persona, standing constraints, retrieved
context, dialog) with the revision instructions, the draft, the objections and the records
appended to its volatile end, so a provider can reuse the cached stable prefix; it answers the
person directly. When the event asked for streaming, the pass streams as the ``revise`` phase
(Appendix B).
"""

from __future__ import annotations

from temporalio import activity

from activities.context.fencing import DRAFT, MEMORY, OBJECTIONS, fence
from activities.deliberation.calls import clip, stored_prompt, token_stream
from activities.deliberation.records import records_in_context, render_records
from activities.drafts import with_candidate
from activities.gateway.activity_call import complete
from activities.gateway.gateway import ModelGateway
from activities.prompts import load
from schemas.deliberation import Objection, RefineInput, Refinement
from schemas.models import ChatMessage, ModelRequest, TaskType, instructions
from store.db import Database

DRAFT_CHARS = 12_000


def render_objections(objections: list[Objection]) -> str:
    """Objections as a numbered list for the refiner (and for parked conclusions)."""
    lines = []
    for number, o in enumerate(objections, start=1):
        severity = f", severity {o.severity}" if o.severity is not None else ""
        span = f' "{clip(o.span, 300)}"' if o.span else ""
        fix = f" Suggested: {clip(o.correction, 400)}" if o.correction else ""
        lines.append(f"{number}. [{o.type}{severity}]{span}: {clip(o.explanation, 600)}{fix}")
    return "\n".join(lines)


class RefineActivities:
    """The refinement pass."""

    def __init__(self, db: Database, gateway: ModelGateway) -> None:
        self._db = db
        self._gateway = gateway

    async def request(self, data: RefineInput) -> ModelRequest:
        """The refiner's request for ``data``."""
        row = await stored_prompt(self._db, data.prompt_id)
        records = records_in_context(row.extra, instructions(row.system, row.messages))
        # Persyn's own "(none ...)" note stays outside the fence, as for the critics.
        shown = fence(render_records(records), MEMORY) if records else render_records(records)
        revision = "\n\n".join(
            [
                load("deliberation/refine.md"),
                "Your draft:\n" + fence(clip(data.candidate, DRAFT_CHARS), DRAFT),
                "The objections:\n" + fence(render_objections(data.objections), OBJECTIONS),
                "The records you were shown:\n" + shown,
            ]
        )
        return ModelRequest(
            task=TaskType.REFINE,
            system=f"{row.system}\n\n{revision}",
            messages=[ChatMessage.model_validate(m) for m in row.messages],
        )

    @activity.defn(name="deliberation.refine")
    async def refine(self, data: RefineInput) -> Refinement:
        """The final response with every objection remediated.

        Raises:
            ApplicationError: A provider failure (transient ones are retried by Temporal).
        """
        data = await with_candidate(self._db, data)
        request = await self.request(data)
        async with token_stream(self._db.dsn, data.stream) as on_delta:
            response = await complete(self._gateway, request, on_delta=on_delta)
        text = response.text.strip()
        if not text:
            # An empty revision would turn an answer into silence by accident: keep the draft
            # (by reference when it came as one, so its text stays out of history).
            kept = "" if data.draft_id is not None else data.candidate
            return Refinement(text=kept, changed=False, model=response.model)
        return Refinement(text=text, changed=text != data.candidate.strip(), model=response.model)
