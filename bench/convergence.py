"""The right to silence between agents, judged on the tiny model's own replies.

Between two agents a reply that only agrees with or restates the message it answers is not sent
(``activities.deliberation.convergence``): silence ends a conversation that has converged. On
SmolLM2, ``persyn converse ada bo`` stopped before or after the first reply. This measures how
often the screen silences the model's replies at each turn of 20 two-agent openings: each
opening is answered by the local model as the second agent (persona, standing constraints,
the opening), then that reply by the first agent, for ``--turns`` turns. A turn the screen
would silence ends that conversation.

Usage: ``python -m bench.convergence [--turns 4] [--dry]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections import Counter
from datetime import UTC, datetime

from activities.context.clock import friendly_now
from activities.deliberation.convergence import adds_nothing
from activities.gateway.gateway import ModelGateway
from activities.gateway.providers.local import LocalProvider
from activities.gateway.registry import ModelRegistry
from activities.prompts import load
from bench.harness import model_server, record
from schemas.models import ChatMessage, ModelRequest, ProviderName, TaskType
from schemas.settings import Settings
from workers.model_server import default_model_path

ADA = "Ada is a lighthouse keeper who loves the sea, practical and warm."
BO = "Bo is a baker in the harbour town, chatty and curious about everything."
OPENINGS = [
    "Shall we plan the lighthouse open day together?",
    "What bread would suit a picnic on the cliffs?",
    "I think we should paint the harbour benches blue. What do you say?",
    "The storm last night knocked down the old fence. Can you help me fix it?",
    "Let's write a short welcome note for the new fisherman.",
    "Which day is best for the market this month?",
    "I'd like to try baking with seaweed. Is that a terrible idea?",
    "How should we share the cost of the new boat ramp?",
    "Could we run a night walk to see the lighthouse beam?",
    "What should the children's story hour be about this week?",
    "The ferry is late again. Should we complain to the council?",
    "I found an old map in the attic. Want to look at it with me?",
    "Let's agree on a recipe for the festival soup.",
    "Do you think we need more lifeguards this summer?",
    "I'm worried the bakery chimney is leaking. What would you check first?",
    "Shall we start a small library in the harbour office?",
    "What's the best way to teach knots to beginners?",
    "Could you help me choose a name for the new rowing club?",
    "The gulls keep stealing pastries. Any clever ideas?",
    "Let's plan a quiz night: what topics should we pick?",
]


def system(name: str, persona: str) -> str:
    return "\n\n".join(
        [
            f"You are {name}. {persona}",
            load("standing_constraints.md"),
            "You are talking with another agent on a shared channel.",
            friendly_now(datetime.now(UTC)),
        ]
    )


async def conversation(gateway: ModelGateway, opening: str, turns: int) -> tuple[int, str]:
    """How many replies were sent before the screen silenced one (``turns``: none was)."""
    speakers = [("Bo", BO), ("Ada", ADA)]
    answered, history = opening, [("Ada", opening)]
    for turn in range(turns):
        name, persona = speakers[turn % 2]
        messages = [
            ChatMessage(role="assistant" if who == name else "user", content=text)
            for who, text in history
        ]
        request = ModelRequest(
            task=TaskType.RESPOND, system=system(name, persona), messages=messages
        )
        reply = (await gateway.complete(request)).text.strip()
        reason = adds_nothing(reply, answered)
        if reason is not None:
            return turn, f"{name}: {reply[:100]!r} ({reason.split(';')[0]})"
        history.append((name, reply))
        answered = reply
    return turns, ""


async def main(turns: int, keep: bool) -> None:
    results = []
    async with model_server(default_model_path()) as server:
        registry = ModelRegistry.from_settings(Settings(provider="local"))
        gateway = ModelGateway(registry, {ProviderName.LOCAL: LocalProvider(server.base_url, 120)})
        try:
            for opening in OPENINGS:
                results.append(await conversation(gateway, opening, turns))
                print(results[-1])
        finally:
            await gateway.aclose()
    sent = Counter(n for n, _ in results)
    rows = [f"| {n} | {sent.get(n, 0)} |" for n in range(turns + 1)]
    examples = [f"- {why}" for _, why in results if why][:5]
    body = "\n".join(
        [
            f"SmolLM2-135M through the gateway on the local call plan, 20 openings between two "
            f"agents (Ada and Bo), up to {turns} replies each; the screen "
            "(`adds_nothing`) applied to each reply against the message it answers. Load "
            f"average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.",
            "",
            "| replies sent before the screen silenced one | conversations |",
            "|---|---|",
            *rows,
            "",
            f"Silenced at the first reply: {sent.get(0, 0)} of {len(results)}; conversations "
            f"that reached {turns} replies: {sent.get(turns, 0)}.",
            "",
            "Silenced replies (first five):",
            "",
            *examples,
        ]
    )
    if keep:
        record("Convergence screen on the tiny model's replies", body)
    else:
        print(body)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--dry", action="store_true", help="print, do not append to RESULTS.md")
    args = parser.parse_args()
    asyncio.run(main(args.turns, keep=not args.dry))
