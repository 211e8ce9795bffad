"""The ``/v1`` approval endpoints: the tool calls a token's own channels wait for, and decisions.

A token sees only the approvals asked in activations on its own channels (``web:<tenant>:...``)
of the agents it may use: another tenant's approval reads as an unknown one, as another
tenant's marker does. Channels are named as the integrator sent them, without the prefix.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request
from pydantic import BaseModel, ConfigDict, Field

from schemas.approvals import ApprovalDecision, PendingApproval, Why
from schemas.ids import ULID_PATTERN
from schemas.text import Name
from usecases import approvals
from usecases.errors import TemporalUnreachableError
from usecases.tokens import TokenPublic
from webchannel.body import parse, read_capped
from webchannel.models import Problem, inline_schema
from webchannel.routes import REFUSALS, Handle, State, Token, agent_for, checked_ulid
from webchannel.tenancy import SEPARATOR, SERVICE

router = APIRouter(prefix="/v1", tags=["approvals"])

ApprovalPath = Annotated[
    str, Path(description="The approval's ULID.", json_schema_extra={"pattern": ULID_PATTERN})
]


class WebDecision(BaseModel):
    """Approve or refuse one waiting tool call."""

    model_config = ConfigDict(extra="forbid")

    # Strict: JSON's true and false only, as the schema says.
    approve: bool = Field(strict=True, description="true runs the tool; false refuses it.")
    by: Name | None = Field(
        default=None,
        description="Who decides, as your system knows them (default: the token's name).",
    )
    why: Why | None = Field(default=None, description="Why, in a sentence (optional).")


def _prefix(token: TokenPublic) -> str:
    """The keys of the token's own channels start so."""
    return f"{SERVICE}:{token.tenant}{SEPARATOR}"


def _public(found: PendingApproval, token: TokenPublic) -> PendingApproval:
    return found.model_copy(update={"channel": found.channel.removeprefix(_prefix(token))})


def _unknown(approval_id: str) -> HTTPException:
    return HTTPException(404, f"there is no approval {approval_id} waiting on your channels")


@router.get(
    "/agents/{handle}/approvals",
    response_model=list[PendingApproval],
    responses=REFUSALS,
)
async def list_approvals(handle: Handle, token: Token, state: State) -> list[PendingApproval]:
    """The tool calls agent ``handle`` waits to have approved, asked on your channels.

    Oldest first. Each waits until its ``deadline``, then is refused by default.
    """
    handle = await agent_for(state, token, handle)
    found = await approvals.list_approvals(db=state.db, agent=handle, channel_prefix=_prefix(token))
    return [_public(item, token) for item in found]


@router.post(
    "/agents/{handle}/approvals/{approval_id}",
    response_model=ApprovalDecision,
    responses={
        **REFUSALS,
        409: {
            "model": Problem,
            "description": "It was decided the other way, expired, or its activation ended.",
        },
        413: {"model": Problem, "description": "The body is over the service's size cap."},
        503: {"model": Problem, "description": "Temporal could not be reached: retry."},
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": inline_schema(WebDecision)}},
        }
    },
)
async def decide_approval(
    handle: Handle, approval_id: ApprovalPath, request: Request, token: Token, state: State
) -> Any:
    """Approve (the tool runs, once) or refuse (the agent reads who refused and why).

    Idempotent: the same decision again returns the recorded one; the other way is a 409.
    """
    handle = await agent_for(state, token, handle)
    found = checked_ulid(approval_id, "approval id")
    raw = await read_capped(request, limit=state.max_body_bytes, timeout=state.body_timeout_s)
    decision = parse(raw, WebDecision)
    try:
        return await approvals.decide_approval(
            db=state.db,
            client=state.client,
            approval_id=found,
            approve=decision.approve,
            by=decision.by or token.name,
            why=decision.why,
            agent=handle,
            channel_prefix=_prefix(token),
        )
    except (approvals.UnknownApprovalError, approvals.OtherAgentsError):
        # Another agent's (or another tenant's) approval is not even said to exist.
        raise _unknown(found) from None
    except approvals.DecidedError as err:
        raise HTTPException(409, str(err)) from None
    except TemporalUnreachableError as err:
        raise HTTPException(503, f"{err}: retry", {"Retry-After": "5"}) from None
