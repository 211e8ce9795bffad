"""Step: generate the candidate response (spec §4 step 3).

The model call is a regular activity: every attempt is visible in the Web UI and transient
failures are retried with backoff. After the last attempt the agent degrades to a safe
fallback reply instead of failing.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError

from schemas.activation import (
    FALLBACK_REPLY,
    ActivationInput,
    Draft,
    GenerateInput,
    PromptRef,
    StreamTarget,
)
from workflows.policies import MODEL_CALL

with workflow.unsafe.imports_passed_through():
    from activities.generation import GenerationActivities


async def respond(data: ActivationInput, prompt: PromptRef) -> Draft:
    """The candidate reply, or the fallback if generation keeps failing."""
    event = data.event
    try:
        generation = await workflow.execute_activity_method(
            GenerationActivities.generate,
            GenerateInput(
                prompt=prompt,
                stream=StreamTarget(key=event.event_id) if event.stream else None,
            ),
            summary=f"generate a reply for {data.person_name}",
            **MODEL_CALL,
        )
    except ActivityError as err:
        workflow.logger.warning("generation failed after retries: %s", err.cause or err)
        return Draft(text=FALLBACK_REPLY, degraded=True)
    return Draft(text=generation.text, model=generation.model)
