"""Pure parts of autonomy: exact arithmetic, timing checks, the registry, the loop's messages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from fractions import Fraction

import pytest

from activities.context.fencing import TOOL_RESULT, fence
from activities.scheduling.recurrence import RecurrenceError, check_at, check_cron, check_every
from activities.tools.builtin.arithmetic import ExpressionError, decimal_text, evaluate
from activities.tools.builtin.calculate import CalculateTool
from activities.tools.registry import ToolRegistry
from activities.tools.rounds import UNFINISHED, exchange
from schemas.models import ChatMessage, ProviderName, ToolCall, ToolExecutor, ToolSpec

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("1/3 + 1/6", Fraction(1, 2)),
        ("0.1 + 0.2", Fraction(3, 10)),
        ("2^-2", Fraction(1, 4)),
        ("-(-(-3))", -3),
        ("2 ** 3 ** 2", 512),  # right-associative, as in mathematics
        ("(1 + 2) * 3 - 4 / 5", Fraction(41, 5)),
        ("10 // 3 + 10 % 3", 4),
        ("sqrt(16/9)", Fraction(4, 3)),
        ("8 ** (1/3)", 2),
        ("factorial(20)", 2432902008176640000),
        ("gcd(12, 18) + lcm(4, 6)", 18),
        ("round(2/3, 3)", Fraction(667, 1000)),
        ("1_000 * 1.5e3", 1_500_000),
    ],
)
def test_arithmetic_is_exact(expression: str, value: Fraction | int) -> None:
    assert evaluate(expression) == value


@pytest.mark.parametrize(
    ("expression", "complaint"),
    [
        ("2 ** 1000000", "digits"),
        ("9 ** 9 ** 9", "digits"),  # refused before it is attempted
        ("2 ** (10 ** 9)", "digits"),
        ("1e999999", "beyond"),
        ("factorial(100000)", "factorial takes"),
        ("1/0", "division by zero"),
        ("sqrt(2)", "irrational"),
        ("(-8) ** (1/3)", "no exact"),
        ("(" * 100 + "1" + ")" * 100, "nests deeper"),
        ("2 +", "ends too soon"),
        ("3 3", "unexpected"),
        ("__import__('os')", "unexpected character"),
        ("open(1)", "unknown function"),
        ("", "empty"),
        ("1" * 1001, "longer than"),
    ],
)
def test_arithmetic_refuses_what_it_cannot_do_cheaply_and_exactly(
    expression: str, complaint: str
) -> None:
    # The huge ones are refused from an estimate, before any big number is built.
    with pytest.raises(ExpressionError, match=complaint):
        evaluate(expression)


def test_decimal_reading_of_an_exact_value() -> None:
    assert decimal_text(Fraction(1, 3)) == "0." + "3" * 50
    assert decimal_text(Fraction(41, 5)) == "8.2"


def test_reminder_times_must_be_in_the_future_and_not_absurdly_far() -> None:
    assert check_at(NOW + timedelta(hours=1), now=NOW, horizon_days=30) == NOW + timedelta(hours=1)
    with pytest.raises(RecurrenceError, match="in the past"):
        check_at(NOW - timedelta(minutes=1), now=NOW, horizon_days=30)
    with pytest.raises(RecurrenceError, match="more than 30 days"):
        check_at(NOW + timedelta(days=31), now=NOW, horizon_days=30)
    paris = datetime(2026, 11, 30, 11, 0)
    naive = check_at(paris, now=NOW, horizon_days=30, timezone="Europe/Paris")
    assert naive == datetime(2026, 11, 30, 10, 0, tzinfo=UTC)  # read in the agent's zone


@pytest.mark.parametrize(
    ("cron", "complaint"),
    [
        ("* * * * *", "every 1 minutes"),
        ("*/2 * * * *", "every 2 minutes"),
        ("*/0 * * * *", "positive"),
        ("61 * * * *", "outside"),
        ("0 9", "5 fields"),
        ("0 0 31 2 *", "never fires"),
        ("5-1 * * * *", "backwards"),
    ],
)
def test_absurd_recurrences_are_refused(cron: str, complaint: str) -> None:
    with pytest.raises(RecurrenceError, match=complaint):
        check_cron(cron, min_minutes=5)


def test_sane_recurrences_pass() -> None:
    assert check_cron("0 9 * * MON-FRI", min_minutes=5) == "0 9 * * MON-FRI"
    assert check_cron("@daily", min_minutes=5) == "0 0 * * *"
    assert check_every(90, min_minutes=5) == 90
    for minutes in (0.5, 10 * 366 * 24 * 60):
        with pytest.raises(RecurrenceError):
            check_every(minutes, min_minutes=5)


def test_the_registry_advertises_in_a_stable_order_and_the_local_model_gets_none() -> None:
    search = ToolSpec(
        name="web_search",
        description="Search.",
        executor=ToolExecutor.PROVIDER,
        provider=ProviderName.ANTHROPIC,
        provider_type="web_search_20250305",
    )
    registry = ToolRegistry([CalculateTool()], [search])
    assert [s.name for s in registry.specs(ProviderName.ANTHROPIC)] == ["calculate", "web_search"]
    assert [s.name for s in registry.specs(ProviderName.OPENAI)] == ["calculate"]
    assert registry.specs(ProviderName.LOCAL) == []
    assert registry.get("web_search") is None and registry.is_provider_tool("web_search")
    spec = registry.specs(ProviderName.OPENAI)[0]
    assert spec.input_schema["required"] == ["expression"] and spec.output_schema is not None
    with pytest.raises(ValueError, match="already registered"):
        registry.register(CalculateTool())


def test_every_call_is_answered_and_the_last_round_says_so() -> None:
    prompt = [ChatMessage(role="user", content="hi")]
    extension = [
        ChatMessage(role="user", content="my self-assessment"),
        ChatMessage(
            role="assistant",
            content="",
            tool_calls=[ToolCall(id="a", name="x"), ToolCall(id="b", name="y")],
        ),
        ChatMessage(role="tool", tool_call_id="b", content="ok"),
    ]
    messages = exchange(prompt, extension, final=True)
    assert [m.role for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assert messages[0].content == "hi\n\nmy self-assessment"  # consecutive user turns joined
    assert {m.tool_call_id: m.content for m in messages if m.role == "tool"} == {
        "a": UNFINISHED,
        "b": fence("ok", TOOL_RESULT),  # a result is outside data: fenced
    }
