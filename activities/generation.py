"""The generation activities: a stored prompt through the model gateway, streamed best effort.

The activity ``generation.generate`` (:meth:`GenerationActivities.generate`) is one round of the
tool loop: the stored prompt plus the loop's extension (earlier calls and their results, from
PostgreSQL), with the registry's tools offered; the calls it returns are stored and referenced
by ID. Without tools it is a plain generation, exactly as before the tool loop existed.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.channels.stream import NotifySink
from activities.context.sources import DoneSource
from activities.deliberation.recollection import from_the_record, honest
from activities.gateway.base import DeltaCallback
from activities.gateway.errors import to_application_error
from activities.gateway.gateway import ModelGateway
from activities.heartbeating import heartbeating
from activities.memory.recall import SOURCE_NAME as MEMORY_SOURCE
from activities.recent import DRAFTS, PROMPTS
from activities.tools import rounds
from activities.tools.approvals import ApprovalPolicy
from activities.tools.registry import ToolRegistry
from contract.provider_errors import ProviderError
from schemas.activation import DraftRef, PromptRef
from schemas.ids import new_ulid
from schemas.models import CallPlan, ChatMessage, ModelRequest, ModelResponse, ToolCall
from schemas.streaming import StreamTarget
from schemas.tools import RespondInput, ToolCallRef, ToolGeneration
from store.db import Database
from store.queries.drafts import save_draft
from store.queries.runtime import load_prompt
from store.queries.tool_calls import load_extension, save_round
from store.tables.columns import utcnow

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PlatformLines:
    """What the platform says itself in a reply (``activities.context.sources.DoneSource``)."""

    confirmations: list[str] = field(default_factory=list)
    """Added after the model's words: what was done at the person's request."""
    answers: list[str] = field(default_factory=list)
    """Sent instead of the model's words: the platform answered the message itself."""
    recalled: list[tuple[str, str]] = field(default_factory=list)
    """The memories the model was shown, (summary, band), best first."""


class GenerationActivities:
    """Model calls of the response pipeline.

    Args:
        db: Where prompts and the tool loop's records live.
        gateway: The model gateway.
        tools: The tools ``respond`` offers (none without a registry).
        max_tool_rounds: The tool loop's bound, reported to the workflow with each round.
        approvals: Which calls wait for a person's approval (none without a policy).
    """

    def __init__(
        self,
        db: Database,
        gateway: ModelGateway,
        tools: ToolRegistry | None = None,
        *,
        max_tool_rounds: int = 0,
        approvals: ApprovalPolicy | None = None,
    ) -> None:
        self._db = db
        self._gateway = gateway
        self._tools = tools
        self._max_rounds = max_tool_rounds
        self._approvals = approvals

    async def _request(self, prompt: PromptRef) -> tuple[ModelRequest, str | None, PlatformLines]:
        row = PROMPTS.get(prompt.prompt_id)
        if row is None:  # assembled in another worker, or before this one started
            async with self._db.autocommit() as session:
                row = await load_prompt(session, prompt_id=prompt.prompt_id)
        if row is None:
            raise ApplicationError(
                f"prompt {prompt.prompt_id} is missing",
                type="PromptMissing",
                non_retryable=True,
            )
        request = ModelRequest(
            task=prompt.task,
            system=row.system,
            messages=[ChatMessage.model_validate(m) for m in row.messages],
        )
        done = (row.extra or {}).get(DoneSource.name) or {}
        shown = ((row.extra or {}).get(MEMORY_SOURCE) or {}).get("records") or []
        lines = PlatformLines(
            confirmations=[str(line) for line in done.get("confirmations", [])],
            answers=[str(line) for line in done.get("answers", [])],
            recalled=[(str(m.get("summary", "")), str(m.get("band", ""))) for m in shown],
        )
        return request, row.activation_id, lines

    async def _complete(self, request: ModelRequest, stream: StreamTarget | None) -> ModelResponse:
        try:
            async with heartbeating(), contextlib.AsyncExitStack() as stack:
                on_delta: DeltaCallback | None = None
                if stream is not None:
                    try:
                        sink = await stack.enter_async_context(
                            NotifySink(self._db.dsn, stream.key, stream.phase)
                        )
                        on_delta = sink.delta
                    except Exception:
                        log.info("token stream unavailable; generating without it", exc_info=True)
                return await self._gateway.complete(request, on_delta=on_delta)
        except ProviderError as err:
            raise to_application_error(err) from err

    @activity.defn(name="generation.generate")
    async def generate(self, data: RespondInput) -> ToolGeneration:
        """One round of the response model: it answers, or asks for tools first.

        With ``data.tools == "offer"`` the registry's tools are advertised and the calls the
        model makes are stored (arguments and all) and returned by ID. With ``"final"`` the
        tools stay advertised but the model is told to answer in words, and any call it makes
        anyway is dropped. With ``"none"`` (the default, and every input recorded before the
        tool loop) this is a plain generation.

        Raises:
            ApplicationError: A classified provider failure; Temporal retries the transient ones.
        """
        request, activation_id, lines = await self._request(data.prompt)
        offer = data.tools != "none" and data.agent is not None and self._tools is not None
        if offer:
            request = await self._with_tools(request, data)
        answer = self._platform_answer(request, lines)
        if answer is not None:
            response = await self._answered(request, answer, data.stream)
        else:
            response = await self._complete(request, data.stream)
        calls = response.tool_calls if offer and data.tools == "offer" and request.tools else []
        # A provider-run tool that hit its own cap pauses the turn; sending it again resumes.
        paused = offer and response.finish_reason == "pause_turn"
        paused = paused and response.provider_content is not None
        refs: list[ToolCallRef] = []
        if calls or paused:
            assert data.agent is not None
            refs = await self._save_round(data, activation_id, response, calls)
        # The platform's own answer quotes the record itself: only the model's words are checked.
        text = response.text.strip()
        text, draft = (text if answer is not None else self._honest(request, text)), None
        if not calls and not paused:  # the final answer of the turn
            text = self._confirmed(request, text, lines.confirmations)
        if data.draft and data.agent is not None:
            # The answer stays in PostgreSQL; the activation's history carries its ID.
            draft = DraftRef(draft_id=new_ulid(), chars=len(text))
            await save_draft(
                self._db.lane,
                draft_id=draft.draft_id,
                agent=data.agent,
                activation_id=activation_id,
                text=text,
                created_at=utcnow(),
            )
            DRAFTS.keep(draft.draft_id, text)  # the review and the send read it next
            text = ""
        return ToolGeneration(
            text=text,
            draft=draft,
            model=response.model,
            provider=response.provider.value,
            finish_reason=response.finish_reason,
            usage=response.usage,
            tool_calls=refs,
            paused=paused and not refs,
            max_rounds=self._max_rounds,
        )

    def _honest(self, request: ModelRequest, text: str) -> str:
        """The reply, unless its plan checks recollections and one has nothing behind it."""
        plan = self._plan(request)
        if not plan.check_recollections or not text:
            return text
        checked = honest(text, request.system, request.messages)
        if checked != text:
            activity.logger.info("a recollection with no record behind it was not sent: %r", text)
        return checked

    def _plan(self, request: ModelRequest) -> CallPlan:
        """The call plan of the provider ``request`` goes to."""
        return self._gateway.registry.plan(self._gateway.binding(request).provider)

    def _platform_answer(self, request: ModelRequest, lines: PlatformLines) -> str | None:
        """The platform's own answer to the message, on plans too small to be asked.

        What it answered at admission (the time), on plans that confirm without the model;
        a request to recall, from the memory that holds it, on plans that check recollections.
        """
        plan = self._plan(request)
        if plan.confirm_done and lines.answers:
            return "\n\n".join(lines.answers)
        last = request.messages[-1] if request.messages else None
        if plan.check_recollections and last is not None and last.role == "user":
            return from_the_record(last.content, lines.recalled)
        return None

    async def _answered(
        self, request: ModelRequest, answer: str, stream: StreamTarget | None
    ) -> ModelResponse:
        """``answer`` as the model's reply, streamed like one: the model is not asked."""
        if stream is not None:
            try:
                async with NotifySink(self._db.dsn, stream.key, stream.phase) as sink:
                    await sink.delta(answer)
            except Exception:
                log.info("token stream unavailable; answering without it", exc_info=True)
        return ModelResponse(
            text=answer,
            model="platform",
            provider=self._gateway.binding(request).provider,
            finish_reason="stop",
        )

    def _confirmed(self, request: ModelRequest, text: str, confirmations: list[str]) -> str:
        """The reply, with what was done at the person's request, on plans that add it."""
        plan = self._plan(request)
        if not plan.confirm_done or not confirmations:
            return text
        return "\n\n".join([text, *confirmations]) if text else "\n\n".join(confirmations)

    async def _with_tools(self, request: ModelRequest, data: RespondInput) -> ModelRequest:
        assert self._tools is not None
        # Read even on the first round: a heartbeat's self-assessment is extended onto the prompt
        # before the first call.
        extension = await load_extension(self._db.lane, prompt_id=data.prompt.prompt_id)
        provider = self._gateway.binding(request).provider
        final = data.tools == "final"
        return request.model_copy(
            update={
                "messages": rounds.exchange(request.messages, extension, final=final),
                "tools": self._tools.specs(provider),
                "tool_choice": "none" if final else "auto",
            }
        )

    async def _save_round(
        self,
        data: RespondInput,
        activation_id: str | None,
        response: ModelResponse,
        calls: list[ToolCall],
    ) -> list[ToolCallRef]:
        assert data.agent is not None
        call_ids = [new_ulid() for _ in calls]
        turn = ChatMessage(
            role="assistant",
            content=response.text,
            tool_calls=calls,
            provider_content=response.provider_content,
        )
        async with self._db.session() as session:
            await save_round(
                session,
                agent=data.agent,
                prompt_id=data.prompt.prompt_id,
                activation_id=activation_id,
                round_=data.round,
                message=turn,
                call_ids=call_ids,
                at=utcnow(),
            )
        # Asked as the round is stored: a call that needs no approval costs no extra step.
        asks = (
            await self._approvals.asks(data.agent, calls)
            if self._approvals is not None
            else [None] * len(calls)
        )
        return [
            ToolCallRef(call_id=call_id, name=call.name, approval=ask)
            for call_id, call, ask in zip(call_ids, calls, asks, strict=True)
        ]
