"""Timeouts and retry policies, named once per dependency and typed by the SDK.

Each value is a :class:`~temporalio.workflow.ActivityConfig` (regular activities) or a
:class:`~temporalio.workflow.LocalActivityConfig` (local activities), spread into the call
with the step's summary: ``execute_activity_method(X.step, data, **summarized(MODEL_CALL,
"...")``, so mypy checks every key against the call it goes to. (The SDK's configs hold
``summary`` and ``activity_id`` keys, so mypy refuses a config spread beside either given
separately.) Changing a value changes new commands only; recorded histories replay, since
timeouts and retry policies are not compared on replay.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from temporalio.common import Priority, RetryPolicy
from temporalio.workflow import ActivityConfig, LocalActivityConfig

from contract.provider_errors import NON_RETRYABLE


def summarized(
    config: ActivityConfig,
    summary: str,
    *,
    activity_id: str | None = None,
    priority: Priority | None = None,
) -> ActivityConfig:
    """``config`` with the summary the Web UI shows for this activity call.

    Args:
        config: The dependency's policy.
        summary: What the call does, in a few words.
        activity_id: A fixed activity ID (default: the SDK's sequence number).
        priority: A dispatch priority of its own (default: its workflow's).
    """
    options = config.copy()
    options["summary"] = summary
    if activity_id is not None:
        options["activity_id"] = activity_id
    if priority is not None:
        options["priority"] = priority
    return options


def summarized_local(config: LocalActivityConfig, summary: str) -> LocalActivityConfig:
    """``config`` with the summary the Web UI shows for this local activity call."""
    options = config.copy()
    options["summary"] = summary
    return options


BACKGROUND = Priority(priority_key=4)
"""Dispatch priority of the work no reply waits for (Temporal's default, for the rest, is 3).

Consolidation, observation, guardrails, deferred critique, maintenance and heartbeats start
with it; their activities and children inherit it. When tasks queue up (a restarted server or
worker draining its backlog, a burst of messages) Temporal hands out the message path's tasks
first, and the background catches up as soon as the queue is short again. It orders the queue
only: nothing is dropped, and an idle worker takes background tasks at once."""

ACTIVATION_TASK_TIMEOUT = timedelta(seconds=5)
"""An activation's workflow task timeout (the SDK's default is 10 s).

A task a killed worker had started comes back only after this timeout, and a message is most
often in its activation when the worker dies. An activation's history is short (about 50
events), so even a fresh worker under load replays it well within 5 s. The agent and its
conversations keep 10 s: a fresh worker's first task for them replays up to
``schemas.runs.HISTORY_LIMIT`` events."""

MODEL_NON_RETRYABLE = tuple(NON_RETRYABLE)
"""Provider errors that fail the same way every time (:mod:`contract.provider_errors`)."""

MODEL_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=5,
    non_retryable_error_types=list(MODEL_NON_RETRYABLE),
)

HEARTBEAT_EVERY_S = 2.0
"""How often a long step heartbeats (``activities.heartbeating``)."""

HEARTBEAT_FLUSH = timedelta(seconds=1)
"""The longest a worker holds back an activity's heartbeat (the SDK's
``max_heartbeat_throttle_interval``; by default it sends at most one per 80% of the heartbeat
timeout).

Model calls heartbeat every 2 s (``HEARTBEAT_EVERY_S``, by ``activities.heartbeating``). With
this, each heartbeat reaches Temporal as it is made, so a 5 s heartbeat timeout leaves 3 s of
slack; the SDK's throttle at a 10 s timeout sent one every 8 s and left 2."""

MODEL_CALL: ActivityConfig = {
    "start_to_close_timeout": timedelta(seconds=150),
    # The call heartbeats every 2 s: a worker that dies mid-call is noticed in 5 s, not 150.
    # A soak's worker kill mid-call cost the message 12 s at a 10 s timeout.
    "heartbeat_timeout": timedelta(seconds=5),
    "retry_policy": MODEL_RETRY,
}
"""A model provider call (regular activity: visible, retried with backoff).

Every model-call activity runs under a bounded policy with a heartbeat, so a worker that dies
mid-call (a native crash) costs one attempt and never a crash loop; the critic's and the
judge's calls take fewer attempts than this. ``tests/gateway/test_attempts.py`` checks every
model call in ``workflows/``."""

SELF_ASSESSMENT: ActivityConfig = {**MODEL_CALL, "start_to_close_timeout": timedelta(minutes=3)}
"""The heartbeat's self-assessment: a model call over recent memories, given longer."""

CRITIC_CALL: ActivityConfig = {
    **MODEL_CALL,
    "retry_policy": replace(
        MODEL_RETRY, maximum_interval=timedelta(seconds=10), maximum_attempts=3
    ),
}
"""A critic's or the refiner's model call: fewer attempts than a reply's, since a turn without
critique is a fine outcome and inline mode keeps someone waiting."""

JUDGE_CALL: ActivityConfig = {
    "start_to_close_timeout": timedelta(seconds=60),
    "heartbeat_timeout": MODEL_CALL["heartbeat_timeout"],
    # Someone is waiting for the reply: one retry, then the rule decides.
    "retry_policy": RetryPolicy(
        initial_interval=timedelta(milliseconds=500),
        maximum_attempts=2,
        non_retryable_error_types=list(MODEL_NON_RETRYABLE),
    ),
}
"""The engagement judgment's model call."""

TOOL_CALL: ActivityConfig = {
    # The tool's own timeout (settings) ends it well before this; this bounds a stuck worker.
    "start_to_close_timeout": timedelta(minutes=10),
    "retry_policy": RetryPolicy(
        initial_interval=timedelta(milliseconds=200),
        backoff_coefficient=2.0,
        maximum_interval=timedelta(seconds=10),
        maximum_attempts=5,
    ),
}
"""A tool call (regular activity, so each one shows in the Web UI under its tool's name)."""

DATABASE_RETRY = RetryPolicy(
    initial_interval=timedelta(milliseconds=200),
    backoff_coefficient=2.0,
    # A restarted PostgreSQL is back within seconds, and every agent's step waiting on it
    # resumes at its next attempt: at 5 s between attempts the soak's steps resumed up to 3 s
    # after the database was ready (a one-hour soak's PostgreSQL kill at 3229 s, in the history
    # of bench/RESULTS.md). An attempt against a database that is down costs a refused
    # connection.
    maximum_interval=timedelta(seconds=1),
    non_retryable_error_types=["UnknownAgent", "PromptMissing"],
)

DATABASE: LocalActivityConfig = {
    "start_to_close_timeout": timedelta(seconds=15),
    "schedule_to_close_timeout": timedelta(minutes=30),
    "retry_policy": DATABASE_RETRY,
}
"""A short PostgreSQL step, run as a local activity; retried until the database is back."""

PERMANENT_ERRORS = frozenset({"UnknownAgent", "PromptMissing", "DataError", "InvalidInput"})
"""Failures the same input always causes: no retry of a message-path step can help.

``DataError`` is what SQLAlchemy calls PostgreSQL refusing a value (a character it cannot hold,
a number out of range); the rest are Persyn's own refusals."""

MESSAGE_STEP_LIMIT = timedelta(minutes=2)
"""The longest one database step on the message path retries (``workflows.steps``).

A restarted PostgreSQL is back within seconds (the soak's worst recovery was 13.4 s), so two
minutes rides out any restart; past it the event ends with a ``failed`` marker naming the step,
and the agent goes on to the next event. Counted from the times the step's timers fired
(``workflows.steps.Elapsed``), so a step whose attempts each run to their timeout ends within
the limit and 45 s."""

ACTIVATION_RUN_LIMIT = timedelta(minutes=18)
"""The longest an activation may run (its run timeout, enforced by Temporal itself).

Its conversation's own step before it (``MESSAGE_STEP_LIMIT``) and this fit inside the agent's
20-minute activation deadline, so a turn that hangs for any reason (a provider that never
answers, a worker that keeps dying) ends as ``failed`` before the agent gives up on it, and the
conversation is free for the channel's next input."""

MESSAGE_STEP_MAX_INTERVAL = timedelta(seconds=5)
"""The longest pause between two attempts of a bounded step (from 0.2 s, doubling).

Each attempt the workflow makes costs about six history events; at the database's one-second
ceiling a two-minute outage grew an agent's history by 700 events. At five seconds it is about
30 attempts, and a database back from a restart is used within five seconds."""

MESSAGE_STEP: LocalActivityConfig = {
    "start_to_close_timeout": timedelta(seconds=15),
    "retry_policy": RetryPolicy(maximum_attempts=1),
}
"""One attempt of a database step on the message path; ``workflows.steps.bounded`` retries it,
counting attempts where the agent's ``status`` and the Web UI can see them."""

MESSAGE_PATH_DATABASE: LocalActivityConfig = {
    "start_to_close_timeout": timedelta(seconds=15),
    "schedule_to_close_timeout": MESSAGE_STEP_LIMIT,
    "retry_policy": replace(DATABASE_RETRY, non_retryable_error_types=sorted(PERMANENT_ERRORS)),
}
"""A database step inside an activation: retried for at most :data:`MESSAGE_STEP_LIMIT`, never
for a value PostgreSQL refused. The activation then fails, and its conversation releases the
agent with a ``failed`` marker naming the step."""

GUARDRAIL_SCREEN: LocalActivityConfig = {
    "start_to_close_timeout": timedelta(minutes=1),
    "schedule_to_close_timeout": MESSAGE_STEP_LIMIT,
    "retry_policy": DATABASE_RETRY,
}
"""The background guardrails evaluated in the conversation (a rule may ask the model to rate
hostility, hence the minute). Bounded like a message-path step: the conversation's next turn
waits behind it, and a failed evaluation fires nothing (docs/guardrails.md)."""

DATABASE_ACTIVITY: ActivityConfig = {
    "start_to_close_timeout": timedelta(seconds=15),
    "schedule_to_close_timeout": timedelta(minutes=30),
    "retry_policy": DATABASE_RETRY,
}
"""The same PostgreSQL step as a regular activity (maintenance: visible in the Web UI)."""

DELIVERY_STEP: ActivityConfig = {
    **DATABASE_ACTIVITY,
    "retry_policy": replace(
        DATABASE_RETRY,
        non_retryable_error_types=[
            *(DATABASE_RETRY.non_retryable_error_types or []),
            "DeliveryRefused",
        ],
    ),
}
"""A delivery's PostgreSQL step (pacing, giving up): a row that is gone is not retried."""

DELIVERY_ATTEMPT: ActivityConfig = {
    "start_to_close_timeout": timedelta(seconds=60),
    "retry_policy": RetryPolicy(
        initial_interval=timedelta(seconds=1),
        backoff_coefficient=2.0,
        maximum_interval=timedelta(minutes=5),
        non_retryable_error_types=["DeliveryRefused"],
    ),
}
"""One attempt to deliver an outbox row through its adapter; the delivery workflow bounds the
whole with ``schedule_to_close_timeout`` (``DeliveryInput.give_up_seconds``). An adapter's
``retry_after`` overrides the next delay."""

ENCODER_STEP: ActivityConfig = {
    "start_to_close_timeout": timedelta(minutes=5),
    "schedule_to_close_timeout": timedelta(minutes=30),
    "retry_policy": DATABASE_RETRY,
}
"""A step that may call the encoder (which fails soft inside) and writes to PostgreSQL."""

READ_RUN: LocalActivityConfig = {
    "start_to_close_timeout": timedelta(seconds=10),
    "retry_policy": RetryPolicy(maximum_attempts=3),
}
"""Reading a run's description from the Temporal service (a local activity)."""

IMAGE_RENDER: ActivityConfig = {
    # The client's own timeout (images.timeout_seconds) ends an attempt first.
    "start_to_close_timeout": timedelta(minutes=31),
    "retry_policy": RetryPolicy(
        initial_interval=timedelta(seconds=2),
        backoff_coefficient=2.0,
        maximum_interval=timedelta(seconds=30),
        maximum_attempts=3,
        non_retryable_error_types=["ImageRefused"],
    ),
}
"""One image render through the images endpoint: a server error is tried three times."""

SANDBOX_STEP: ActivityConfig = {
    # The command's own wall-clock limit ends it first; this bounds a stuck worker.
    "start_to_close_timeout": timedelta(minutes=65),
    # A step heartbeats every 2 s: a killed worker's step is retried within 20 s.
    "heartbeat_timeout": timedelta(seconds=20),
    "retry_policy": RetryPolicy(
        initial_interval=timedelta(seconds=1),
        backoff_coefficient=2.0,
        maximum_interval=timedelta(seconds=30),
        maximum_attempts=5,
    ),
}
"""One tool call inside the sandbox environment (regular activity: each shows in the Web UI)."""

TEMPORAL_CALL: ActivityConfig = {
    "start_to_close_timeout": timedelta(seconds=30),
    "retry_policy": RetryPolicy(
        initial_interval=timedelta(seconds=1),
        backoff_coefficient=2.0,
        maximum_interval=timedelta(seconds=30),
        maximum_attempts=10,
    ),
}
"""A call to the Temporal service from an activity (deliver an impulse, delete a schedule)."""

WEBHOOK: ActivityConfig = {
    "start_to_close_timeout": timedelta(seconds=60),
    # A supervisor's endpoint may be down for a while: keep trying for about a day.
    "schedule_to_close_timeout": timedelta(hours=24),
    "retry_policy": RetryPolicy(
        initial_interval=timedelta(seconds=1),
        backoff_coefficient=2.0,
        maximum_interval=timedelta(minutes=10),
    ),
}
"""A POST to an operator's webhook (a guardrail firing): durable, retried with backoff."""
