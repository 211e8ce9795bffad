"""Call plans: how each provider runs each stage, sized to the model behind it.

A hosted model takes the pipeline as written. A small CPU model does not: long generations
cost seconds per hundred tokens, it loops without repetition penalties, and its grammar
compiler has limits. Its plan samples with penalties and stop sequences, caps every stage's
length (a reply sized for chat, read from a short prompt; a yes/no verdict in a few tokens),
clamps every schema, quotes memory formation little dialog, cuts repeated sentences (in
formation replies' text fields too), ends a capped reply on a full sentence, offers no tools
(it cannot use them) and skips critique, refinement and the decide judgment (a
135M-parameter critic or judge adds latency, not judgment; the decide rule answers whoever
addressed the agent). ``PERSYN_CALL_PLANS`` (or ``[call_plans.<provider>]`` in
``persyn.toml``) replaces a provider's plan whole; see ``docs/models.md``.
"""

from __future__ import annotations

from typing import Any

from activities.gateway.schema_limits import clamp_schema
from schemas.models import (
    CallPlan,
    ChatMessage,
    GrammarLimits,
    ModelRequest,
    ProviderName,
    Sampling,
    StagePlan,
    TaskType,
)

SMALL_MODEL_STOPS = ["<|im_end|>", "<|im_start|>", "<end_of_turn>", "\nUser:"]
"""Where a small model's turn ends, whatever chat template it was trained on."""


def local_plan() -> CallPlan:
    """The plan of the embedded llama.cpp model (SmolLM2-135M by default)."""
    return CallPlan(
        prose=Sampling(
            temperature=0.7,
            top_p=0.9,
            top_k=40,
            repeat_penalty=1.3,
            frequency_penalty=0.3,
            presence_penalty=0.2,
            stop=SMALL_MODEL_STOPS,
        ),
        # Penalties would push a model off the quotes and braces JSON needs again and again.
        structured=Sampling(top_p=0.9, repeat_penalty=1.0, stop=SMALL_MODEL_STOPS[:2]),
        stages={
            # Measured on a fresh install: replies of 160 tokens took 7 to 8 s and drifted
            # after their first sentences; 96 (about 70 words) is a chat reply in ~4 s.
            TaskType.RESPOND: StagePlan(max_output_tokens=96, max_input_tokens=1536),
            TaskType.REFINE: StagePlan(run=False, max_output_tokens=96),
            TaskType.CRITIQUE: StagePlan(run=False, max_output_tokens=256, max_string_chars=160),
            # Measured: SmolLM2's verdicts silenced 2 of 6 replies to direct questions.
            TaskType.DECIDE: StagePlan(run=False, max_output_tokens=64, max_string_chars=100),
            # SmolLM2's memories missed every fact, copied the prompt or took the person's
            # facts as its own, and were rated 1/10: formation writes the plain record and
            # rates it by the fixed rubric instead (activities.memory.formation.plain).
            TaskType.SUMMARIZE: StagePlan(
                run=False, max_output_tokens=200, max_string_chars=500, max_transcript_tokens=1200
            ),
            TaskType.RATE: StagePlan(
                run=False, max_output_tokens=160, max_string_chars=160, max_transcript_tokens=0
            ),
            TaskType.CLASSIFY: StagePlan(
                max_output_tokens=200, max_string_chars=32, max_transcript_tokens=0
            ),
            # Facts about people (and the knowledge graph): SmolLM2 fitted the extraction schema
            # on none of its tries ("no reply fitted its schema"), so it is not asked.
            TaskType.OBSERVE: StagePlan(run=False, max_output_tokens=200),
            # Residue asks for judgement (what still holds, in descriptive words) that the
            # memory summary showed it does not have; nothing is left behind on this plan.
            TaskType.RESIDUE: StagePlan(run=False, max_output_tokens=200),
            # Folding retells many memories in one; the summary stage showed SmolLM2 loses the
            # facts of one. Recollections are written without it (activities.memory.folding).
            TaskType.FOLD: StagePlan(run=False, max_output_tokens=400),
            # A second call before every reply would double its wait; its memories are shown
            # line by line, deduplicated and marked (activities.memory.synthesis).
            TaskType.RECALL: StagePlan(run=False, max_output_tokens=300),
            # Eight numbers from a few turns: short, and off the reply's path.
            TaskType.EMOTION: StagePlan(max_output_tokens=120, max_transcript_tokens=400),
        },
        grammar=GrammarLimits(max_string_chars=500, max_array_items=8),
        cut_repetition=True,
        end_on_sentence=True,
        offer_tools=False,
        # Its critics are off (too small to judge), so the provenance gate runs without a model.
        check_recollections=True,
        # It may not mention the reminder it was told was set: the reply says so without it.
        confirm_done=True,
        # Measured on an imported month of gardening and puppy talk: SmolLM2 marked 7 of 30
        # memories restricted (never recalled again), 3 confidential and 1 public. Its labels
        # are noise; every memory is private (who took part may hear it) unless a channel's
        # floor or the operator says otherwise.
        judge_sensitivity=False,
        # Reading a 1,300-token prompt took it 3.3 s before the first token; with the volatile
        # blocks after the dialog the server reads only what is new since the last reply.
        context_after_dialog=True,
        # Just before the person's message it copies what it sees: it began 3 replies in 30
        # with the clock line ("Beneficial, 3:07 in the afternoon (UTC).") and never read the
        # hour from it, and opened others with the emotion block's title or the done note's
        # fence. The time is told from the clock without it (activities.asked_for), what was
        # done is confirmed without it (confirm_done), and its mood never showed in its words.
        omit_context=["clock", "done", "emotion"],
        # Asked to greet a caller, it answered "Greet grace, I'm glad to see you're enjoying the
        # music." (tried on a call to the default stack): the platform says hello for it.
        greet_plainly=True,
    )


def compatible_plan() -> CallPlan:
    """The plan of a server of the user's own (Ollama, LM Studio, llama.cpp, vLLM).

    The hosted pipeline as written, with schemas clamped: these servers compile a schema into
    a grammar, and llama-cpp-python's died (SIGSEGV) on a string of ``maxLength`` 2000 while
    one of 1000 compiled; the memory summary asks for 8000.
    """
    return CallPlan(grammar=GrammarLimits(max_string_chars=1000, max_array_items=16))


SMALL_MODEL_BILLIONS = 1.0
"""A server's model below this size runs on the small-model plan (``local_plan``)."""


def default_plan(provider: ProviderName, *, billions: float | None = None) -> CallPlan:
    """The plan ``provider`` runs under unless the settings replace it.

    ``billions`` is the size of a server's model when known (a server found by ``persyn
    up``): a small one is planned as the built-in model is, since it judges and follows a
    long prompt no better. Measured: SmolLM2 found on a server, on the hosted plan, took
    59 to 63 s a reply (critique, decide and whole-range formation each a model call).
    """
    if provider is ProviderName.LOCAL:
        return local_plan()
    if provider is ProviderName.OPENAI_COMPATIBLE:
        small = billions is not None and billions < SMALL_MODEL_BILLIONS
        return local_plan() if small else compatible_plan()
    return CallPlan()


def shaped(request: ModelRequest, plan: CallPlan) -> ModelRequest:
    """``request`` as ``plan`` runs it: capped, sampled, its schema clamped, tools or not."""
    stage = plan.stage(request.task)
    update: dict[str, Any] = {}
    cap = stage.max_output_tokens
    if cap is not None:
        update["max_output_tokens"] = min(request.max_output_tokens or cap, cap)
    if request.sampling is None:
        update["sampling"] = plan.structured if request.response_schema else plan.prose
    if request.response_schema is not None and plan.grammar is not None:
        update["response_schema"] = clamp_schema(
            request.response_schema, plan.grammar, max_string_chars=stage.max_string_chars
        )
    if request.tools and not plan.offer_tools:
        update["tools"] = []
    if any(m.role == "system" for m in request.messages):
        update["messages"] = folded(request.messages)
    return request.model_copy(update=update) if update else request


def folded(messages: list[ChatMessage]) -> list[ChatMessage]:
    """``messages`` with each system message folded into the person's message after it.

    The context a plan puts after the dialog (``context_after_dialog``) is stored as its own
    system message; no provider is sent one mid-conversation (Anthropic refuses them, and
    many chat templates insist the roles alternate), and the tokens before it are the same
    either way, which is what a prompt cache reuses.
    """
    kept: list[ChatMessage] = []
    pending: list[str] = []
    for message in messages:
        if message.role == "system":
            pending.append(message.content)
            continue
        if pending and message.role == "user":
            message = message.model_copy(
                update={"content": "\n\n".join([*pending, message.content])}
            )
        elif pending:
            kept.append(ChatMessage(role="user", content="\n\n".join(pending)))
        pending = []
        kept.append(message)
    if pending:
        kept.append(ChatMessage(role="user", content="\n\n".join(pending)))
    return kept
