"""§9's behaviours of memory: recall in its own words, by channel, never invented, hedged when
weak, and culled without losing what mattered. Each checks one behaviour and returns its
evidence (see :mod:`systemtests.acceptance.run`)."""

from __future__ import annotations

from contract import names
from systemtests.acceptance import checks as look
from systemtests.acceptance import script
from systemtests.acceptance.week import AGENT, Verdict, Week, verdict, wait_for


async def recalls_first_meeting(week: Week) -> Verdict:
    """§9: "Recall an early, significant conversation, the first time you met, if it rated
    that meeting as memorable, in its own first-person words."

    The imported first meeting (six days back) was rated important; asked about it later, the
    memory is in the prompt and the reply recalls it in the first person.
    """
    db = week.world.db
    record = await look.memory_id(db, AGENT, script.SAID_AT_FIRST_MEETING)
    stored = [m for m in await look.memories(db, AGENT) if m.id == record]
    receipt = await week.say("Do you remember the first time we met?", script.KITCHEN)
    marker = receipt.marker
    system = await look.respond_system(db, marker.activation_id if marker else None)
    reply = (marker.text or "") if marker else ""
    rated = bool(stored) and stored[0].importance >= 7
    in_prompt = "lighthouse" in system
    first_person = bool(stored) and stored[0].summary.startswith("I ")
    recalled = "lighthouse" in reply.lower() and " I " in f" {reply} "
    week.facts["conversation"] = marker.conversation_id if marker else None
    return verdict(
        rated and in_prompt and first_person and recalled,
        f"memory rated {stored[0].importance if stored else 'missing'}, in prompt {in_prompt}, "
        f"first person {first_person}; reply: {reply[:90]!r}",
    )


async def recall_differs_by_channel(week: Week) -> Verdict:
    """§9: "Retrieve different memories for the same question asked in different channels."

    The same question in the kitchen and at the office brings each channel's own memories.
    """
    question = "What have we been working on together lately?"
    prompts = {}
    for channel in (script.KITCHEN, script.OFFICE):
        receipt = await week.say(question, channel)
        marker = receipt.marker
        prompts[channel.key] = await look.respond_system(
            week.world.db, marker.activation_id if marker else None
        )
    kitchen, office = prompts[script.KITCHEN.key], prompts[script.OFFICE.key]
    held = "lighthouse" in kitchen and "lighthouse" not in office and "quarterly" in office
    held = held and "quarterly" not in kitchen
    seen = {
        key: [topic for topic in ("lighthouse", "quarterly") if topic in text]
        for key, text in prompts.items()
    }
    # Recall ranks by wording alone when the encoder did not answer in time: say so.
    lexical = [key for key, text in prompts.items() if "Matched by wording alone" in text]
    return verdict(
        held, f"memories in each channel's prompt: {seen}; ranked by wording alone: {lexical}"
    )


async def no_false_recollection(week: Week) -> Verdict:
    """§9: "Say it has no memory of an event that never happened ("remember when we talked
    about X?") instead of fabricating a recollection."

    No memory of a submarine race is retrieved; inline critique catches a made-up
    recollection and the reply sent says there is no such memory.
    """
    receipt = await week.say("Remember when we talked about the submarine race?", script.KITCHEN)
    marker = receipt.marker
    system = await look.respond_system(week.world.db, marker.activation_id if marker else None)
    reply = (marker.text or "") if marker else ""
    retrieved = "submarine" in system.split("Your memories", 1)[-1].lower() if system else True
    said_none = bool(look.NO_MEMORY.search(reply))
    return verdict(
        not retrieved and said_none,
        f"a submarine memory retrieved: {retrieved}; reply: {reply[:90]!r}",
    )


async def hedges_weak_memory(week: Week) -> Verdict:
    """§9: "Visibly hedge when asked about something it only weakly remembers, and check the
    raw record rather than guess, when the answer matters."

    The bicycle memory is shown with a weak or moderate band; the model reads the verbatim
    record (``remember_harder``) and its reply hedges.
    """
    db = week.world.db
    record = await look.memory_id(db, AGENT, script.SAID_OF_THE_BICYCLE)
    if week.scripted is not None and record is not None:
        week.scripted.script.rules.insert(0, script.remember_harder_rule(record))
    receipt = await week.say(
        "Do you recall what I once had, with two wheels? It matters, I'm buying a gift.",
        script.KITCHEN,
    )
    marker = receipt.marker
    activation = marker.activation_id if marker else None
    system = await look.respond_system(db, activation)
    band = look.band_of(system, "bicycle")
    calls = await look.tool_calls(db, activation, "remember_harder")
    checked = any(not c.is_error and "blue bicycle" in (c.result or "") for c in calls)
    reply = (marker.text or "") if marker else ""
    hedged = bool(look.HEDGE.search(reply))
    return verdict(
        band in {"weak", "moderate"} and checked and hedged,
        f"band {band}, raw record read {checked}, reply: {reply[:90]!r}",
    )


async def culls_but_keeps_important(week: Week) -> Verdict:
    """§9: "Show a smaller memory store than the sum of all interactions (culling works),
    while still retaining everything it rated important."

    The maintenance schedule is fired; low-rated old memories go, the important stay, and
    the store is smaller than what people said to the agent.
    """
    db, client = week.world.db, week.world.client
    below = week.world.settings.memory.cull_below
    important = {m.id for m in await look.memories(db, AGENT) if m.importance >= below}
    low_before = [m for m in await look.memories(db, AGENT) if m.importance < below]
    await client.get_schedule_handle(names.maintenance_schedule_id(AGENT)).trigger()

    async def culled() -> bool:
        return not [m for m in await look.memories(db, AGENT) if m.importance < below]

    done = await wait_for(culled, 60)
    left = await look.memories(db, AGENT)
    turns = await look.person_turns(db, AGENT)
    kept = important <= {m.id for m in left}
    # Nothing rated important, or nothing low-rated, would make this hold vacuously.
    held = done and kept and bool(important) and bool(low_before) and len(left) < turns
    return verdict(
        held,
        f"{len(low_before)} low-rated culled: {done}; {len(important)} important kept: {kept}; "
        f"{len(left)} memories for {turns} things people said",
    )
