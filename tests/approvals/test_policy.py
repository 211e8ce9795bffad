"""The approval policy: its defaults, explicit rules per tool and per agent, and its settings.

The pure function first (no server), then the one default that needs the database: a message
to someone who never talked with the agent waits, one to someone who did does not.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from activities.tools.approvals import tool_facts
from activities.tools.builtin.code import TOOL_NAME as RUN_CODE
from activities.tools.builtin.code import RunCodeInput
from activities.tools.registry import Tool, ToolRun
from activities.voice.tools import PlaceCall
from schemas.approvals import (
    ApprovalSettings,
    ApprovalStatus,
    ApprovalWhen,
    CallFacts,
    approval_when,
    needs_approval,
)
from schemas.events import ChannelRef, Speaker
from schemas.models import TaskType
from schemas.settings import Settings
from store.queries.people import resolve_speaker
from tests.approvals.conftest import AFTER_TOOL, Bell, approvals_worker, saying, waiting
from tests.autonomy.conftest import tool_calls
from tests.harness import Harness, Stack, terminal
from usecases import approvals

DEFAULTS = ApprovalSettings()


def test_by_default_only_the_risky_calls_wait() -> None:
    assert needs_approval(DEFAULTS, agent="ada", facts=CallFacts(tool="calculate")) is None
    reason = needs_approval(DEFAULTS, agent="ada", facts=CallFacts(tool="mcp__fs__rm", mcp=True))
    assert reason is not None and "not allowed outright" in reason
    reason = needs_approval(
        DEFAULTS, agent="ada", facts=CallFacts(tool="run_code", sandbox_network=True)
    )
    assert reason is not None and "network" in reason
    reason = needs_approval(
        DEFAULTS, agent="ada", facts=CallFacts(tool="message_contact", new_contact="Carol")
    )
    assert reason == "message_contact writes to Carol, who never talked with the agent"
    assert DEFAULTS.timeout_for("ada") == 600


def test_placing_a_phone_call_waits_by_default_and_a_rule_or_setting_lets_it_ring() -> None:
    facts = tool_facts(PlaceCall.name, sandbox_network=False)
    assert needs_approval(DEFAULTS, agent="ada", facts=facts) == "place_call rings a person's phone"
    assert approval_when(DEFAULTS, agent="ada", facts=facts, writes_to_contacts=False) is (
        ApprovalWhen.ALWAYS
    )
    allowed = ApprovalSettings(agents={"ada": {"tools": {"place_call": "never"}}})
    assert needs_approval(allowed, agent="ada", facts=facts) is None
    assert needs_approval(ApprovalSettings(phone_calls=False), agent="ada", facts=facts) is None


def test_an_agents_rules_win_over_the_deployments_and_an_exact_name_over_a_pattern() -> None:
    settings = ApprovalSettings(
        tools={"mcp__*": "never", "calculate": "always"},
        agents={"ada": {"tools": {"mcp__fs__*": "always", "calculate": "never"}}},
    )
    mcp = CallFacts(tool="mcp__fs__rm", mcp=True)
    assert needs_approval(settings, agent="bob", facts=mcp) is None
    assert needs_approval(settings, agent="ada", facts=mcp) is not None
    assert needs_approval(settings, agent="bob", facts=CallFacts(tool="calculate")) is not None
    assert needs_approval(settings, agent="ada", facts=CallFacts(tool="calculate")) is None
    off = settings.model_copy(update={"enabled": False})
    assert needs_approval(off, agent="ada", facts=mcp) is None


rules = st.dictionaries(st.text(min_size=1, max_size=12), st.sampled_from(["always", "never"]))


@given(tool=st.text(max_size=30), found=rules, mcp=st.booleans(), network=st.booleans())
def test_an_explicit_rule_always_decides(
    tool: str, found: dict[str, str], mcp: bool, network: bool
) -> None:
    found = {key: value for key, value in found.items() if key.strip()}
    settings = ApprovalSettings.model_validate({"tools": found})
    facts = CallFacts(tool=tool, mcp=mcp, sandbox_network=network, new_contact="Carol")
    rule = settings.rule_for("ada", tool)
    reason = needs_approval(settings, agent="ada", facts=facts)
    if rule == "never":
        assert reason is None
    else:
        # Without a "never", the defaults hold: the call writes to someone new, so it waits.
        assert reason is not None


@given(
    tool=st.text(max_size=30),
    found=rules,
    switches=st.fixed_dictionaries(
        {
            "enabled": st.booleans(),
            "new_contacts": st.booleans(),
            "sandbox_network": st.booleans(),
            "mcp": st.booleans(),
        }
    ),
    mcp=st.booleans(),
    network=st.booleans(),
    writes=st.booleans(),
)
def test_what_tools_list_says_is_what_the_policy_does(
    tool: str,
    found: dict[str, str],
    switches: dict[str, bool],
    mcp: bool,
    network: bool,
    writes: bool,
) -> None:
    found = {key: value for key, value in found.items() if key.strip()}
    settings = ApprovalSettings.model_validate({"tools": found, **switches})
    facts = CallFacts(tool=tool, mcp=mcp, sandbox_network=network)
    when = approval_when(settings, agent="ada", facts=facts, writes_to_contacts=writes)
    # What any call waits for, and what a call to someone new waits for.
    anyone = needs_approval(settings, agent="ada", facts=facts) is not None
    someone_new = (
        writes
        and needs_approval(
            settings, agent="ada", facts=facts.model_copy(update={"new_contact": "Carol"})
        )
        is not None
    )
    if when in (ApprovalWhen.ALWAYS, ApprovalWhen.WITH_NETWORK):
        assert anyone
    elif when is ApprovalWhen.FIRST_CONTACT:
        assert not anyone and someone_new
    else:
        assert not anyone and not someone_new


def test_persyn_toml_sets_rules_per_agent_and_refuses_a_bad_one_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERSYN_HOME", str(tmp_path))
    (tmp_path / "persyn.toml").write_text(
        """
[approvals]
timeout_seconds = 300
tools = { "mcp__files__read_*" = "never" }

[approvals.agents.ada]
timeout_seconds = 60
tools = { message_contact = "never", calculate = "always" }
"""
    )
    settings = Settings().approvals
    assert settings.timeout_for("ada") == 60 and settings.timeout_for("bob") == 300
    assert settings.rule_for("ada", "calculate") == "always"
    assert settings.rule_for("bob", "mcp__files__read_text") == "never"

    for bad, named in (
        ('[approvals]\ntools = { calculate = "sometimes" }', "approvals.tools.calculate"),
        ("[approvals]\ntimeout_seconds = 3600", "approvals.timeout_seconds"),
        ('[approvals.agents."not a handle"]\ntimeout_seconds = 60', "approvals.agents"),
    ):
        (tmp_path / "persyn.toml").write_text(bad)
        with pytest.raises(ValidationError) as caught:
            Settings()
        assert named in str(caught.value)


def tell(name: str) -> ScriptRule:
    return ScriptRule(
        task="respond",
        match=f"tell {name}",
        after_tool=False,
        tool_calls=[
            ScriptToolCall(name="message_contact", arguments={"contact": name, "text": "Hello."})
        ],
    )


async def test_a_message_to_someone_never_written_to_waits_and_to_a_known_one_does_not(
    client: Client, stack: Stack
) -> None:
    rules = [AFTER_TOOL, tell("ada"), tell("carol")]
    async with approvals_worker(client, stack, bell=Bell(), approvals={}, rules=rules) as harness:
        agent = (await harness.create_agent()).handle
        await harness.say(agent, "Hi, I'm Ada.")  # Ada talked with the agent
        # Carol is a contact (an identity on a channel), but she never talked with the agent.
        async with harness.db.session() as session:
            await resolve_speaker(
                session,
                agent=agent,
                channel=ChannelRef(service="terminal", channel="carol"),
                speaker=Speaker(speaker_id="carol", display_name="Carol"),
                seen_at=datetime.now(UTC),
            )

        to_ada = await harness.say(agent, "Tell ada hello.", speaker="bob", channel=terminal("b"))
        assert to_ada.marker is not None
        [call] = await tool_calls(harness, str(to_ada.marker.activation_id))
        assert not call.is_error and json.loads(str(call.result))["contact"] == "Ada"

        said = saying(harness, agent, "Tell carol hello.")
        [asked] = await waiting(harness, agent)
        assert asked.tool == "message_contact"
        assert asked.reason == "message_contact writes to Carol, who never talked with the agent"
        assert '"contact": "carol"' in asked.arguments
        await approvals.decide_approval(
            db=harness.db, client=client, approval_id=asked.approval_id, approve=False, by="Ann"
        )
        receipt = await said
        assert receipt.marker is not None and "refused by Ann" in str(receipt.marker.text)


NO_ENGINE = {"docker_host": "unix:///nonexistent/docker.sock"}
"""No engine answers, so the real ``run_code`` is not registered; :class:`StandIn` is."""


class StandIn(Tool):
    """``run_code`` as the registry offers it, counting its runs; no sandbox runs anything."""

    name = RUN_CODE
    description = "Run code in your sandbox."
    input_model = RunCodeInput

    def __init__(self) -> None:
        self.runs: list[str] = []

    async def run(self, call: ToolRun, args: RunCodeInput) -> dict[str, str]:
        self.runs.append(call.call_id)
        return {"status": "started"}


RUN = ScriptRule(
    task="respond",
    match="compute",
    after_tool=False,
    tool_calls=[ScriptToolCall(name=RUN_CODE, arguments={"task": "Fetch the weather."})],
)


def _ran(harness: Harness) -> str:
    """What the model read last as a tool's result (its round after the call)."""
    [*_, last] = [
        r
        for r in harness.provider.requests
        if r.task is TaskType.RESPOND and r.messages and r.messages[-1].role == "tool"
    ]
    return last.messages[-1].content


async def test_run_code_in_a_sandbox_with_a_network_waits_and_a_refusal_is_read(
    client: Client, stack: Stack
) -> None:
    sandbox = {**NO_ENGINE, "network": "research"}
    stand_in = StandIn()
    async with approvals_worker(
        client,
        stack,
        bell=stand_in,
        approvals={},
        rules=[AFTER_TOOL, RUN],
        overrides={"sandbox": sandbox},
    ) as harness:
        agent = (await harness.create_agent()).handle
        said = saying(harness, agent, "Please compute it in your sandbox.")
        [asked] = await waiting(harness, agent)
        assert asked.tool == RUN_CODE
        assert asked.reason == "run_code runs code in a sandbox with network access"
        assert '"task": "Fetch the weather."' in asked.arguments
        await approvals.decide_approval(
            db=harness.db,
            client=client,
            approval_id=asked.approval_id,
            approve=False,
            by="Grace",
            why="no network today",
        )
        receipt = await said

        assert receipt.marker is not None and receipt.marker.text is not None
        assert "refused by Grace: no network today" in receipt.marker.text
        # The model read it as the tool's result (fenced, as every tool result is).
        read = _ran(harness)
        assert '{"error": "refused by Grace: no network today"}' in read
        [call] = await tool_calls(harness, asked.activation_id)
        assert call.name == RUN_CODE and call.is_error
        [kept] = await approvals.list_approvals(db=harness.db, agent=agent, every_status=True)
        assert kept.status is ApprovalStatus.REFUSED
        assert stand_in.runs == []


async def test_run_code_in_a_sandbox_without_a_network_does_not_wait(
    client: Client, stack: Stack
) -> None:
    sandbox = {**NO_ENGINE, "network": "none"}
    stand_in = StandIn()
    async with approvals_worker(
        client,
        stack,
        bell=stand_in,
        approvals={},
        rules=[AFTER_TOOL, RUN],
        overrides={"sandbox": sandbox},
    ) as harness:
        agent = (await harness.create_agent()).handle
        # Answered without anyone deciding: the call went straight to the tool.
        receipt = await harness.say(agent, "Please compute it in your sandbox.")

        assert receipt.marker is not None and receipt.marker.text is not None
        [call] = await tool_calls(harness, str(receipt.marker.activation_id))
        assert call.name == RUN_CODE and not call.is_error
        assert stand_in.runs == [call.id]
        assert await approvals.list_approvals(db=harness.db, agent=agent, every_status=True) == []
