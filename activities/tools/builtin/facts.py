"""Quick facts: a small key/value scratchpad about a person, or about the agent itself."""

from __future__ import annotations

from pydantic import BaseModel, Field

from activities.tools.builtin.deps import ToolDeps
from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun
from schemas.autonomy import QuickFact
from schemas.text import InvalidTextError, clean_text
from store.queries.contacts import find_contacts, known_contacts
from store.queries.goals import count_facts, delete_fact, get_facts, put_fact

SELF = "self"
_SUBJECT = "'self' for yourself, or a contact's name or ID."


async def subject_of(deps: ToolDeps, agent: str, who: str) -> str:
    """The stored subject for ``who``: ``self`` or a person's ID.

    Raises:
        ToolError: No such contact, or several by that name.
    """
    if who.strip().lower() in {SELF, "me", "myself"}:
        return SELF
    async with deps.db.session() as session:
        found = await find_contacts(session, agent=agent, who=who)
        if not found:
            names = ", ".join(await known_contacts(session, agent=agent)) or "nobody yet"
            raise ToolError(f"no contact matches {who!r}; people you know: {names}")
    if len(found) > 1:
        listed = ", ".join(f"{c.name} ({c.person_id})" for c in found)
        raise ToolError(f"{who!r} could be several people: {listed}; use an ID")
    return found[0].person_id


def _clean(value: str, what: str, limit: int) -> str:
    try:
        return clean_text(value, what=what, max_chars=limit)
    except InvalidTextError as err:
        raise ToolError(str(err)) from None


class FactList(BaseModel):
    """Facts."""

    facts: list[QuickFact]


class RememberFactInput(ToolInput):
    """Input of ``remember_fact``."""

    subject: str = Field(description=_SUBJECT)
    key: str = Field(description="A short key, e.g. 'birthday' or 'preferred name'.")
    value: str = Field(description="The fact.")


class _FactTool(Tool):
    def __init__(self, deps: ToolDeps) -> None:
        self._deps = deps


class RememberFact(_FactTool):
    """Set a quick fact."""

    name = "remember_fact"
    description = (
        "Keep a stable fact about someone or about yourself in your scratchpad (key to value); "
        "the same key replaces the old value."
    )
    input_model = RememberFactInput
    output_model = QuickFact

    async def run(self, call: ToolRun, args: RememberFactInput) -> QuickFact:
        """Store it."""
        agent = call.context.agent
        subject = await subject_of(self._deps, agent, args.subject)
        key = _clean(args.key, "key", 64).lower()
        value = _clean(args.value, "value", 500)
        limit = self._deps.settings.autonomy.max_facts_per_subject
        async with self._deps.db.session() as session:
            known = {f.key for f in await get_facts(session, agent=agent, subjects=[subject])}
            full = await count_facts(session, agent=agent, subject=subject) >= limit
            if key not in known and full:
                raise ToolError(f"{limit} facts about this subject already: forget some first")
            await put_fact(session, agent=agent, subject=subject, key=key, value=value, at=call.now)
        return QuickFact(subject=subject, key=key, value=value, updated_at=call.now)


class RecallFactsInput(ToolInput):
    """Input of ``recall_facts``."""

    subject: str | None = Field(default=None, description=f"{_SUBJECT} Omit for every fact.")


class RecallFacts(_FactTool):
    """Read quick facts."""

    name = "recall_facts"
    description = "Read your scratchpad of quick facts, about one subject or all."
    input_model = RecallFactsInput
    output_model = FactList

    async def run(self, call: ToolRun, args: RecallFactsInput) -> FactList:
        """Read them."""
        agent = call.context.agent
        subjects = None
        if args.subject is not None:
            subjects = [await subject_of(self._deps, agent, args.subject)]
        async with self._deps.db.session() as session:
            return FactList(facts=await get_facts(session, agent=agent, subjects=subjects))


class ForgetFactInput(ToolInput):
    """Input of ``forget_fact``."""

    subject: str = Field(description=_SUBJECT)
    key: str


class ForgetFact(_FactTool):
    """Forget a quick fact."""

    name = "forget_fact"
    description = "Remove a fact from your scratchpad."
    input_model = ForgetFactInput

    async def run(self, call: ToolRun, args: ForgetFactInput) -> dict[str, bool]:
        """Forget it."""
        agent = call.context.agent
        subject = await subject_of(self._deps, agent, args.subject)
        async with self._deps.db.session() as session:
            gone = await delete_fact(session, agent=agent, subject=subject, key=args.key.lower())
        if not gone:
            raise ToolError(f"there is no fact {args.key!r} about {args.subject}")
        return {"forgotten": True}


def fact_tools(deps: ToolDeps) -> list[Tool]:
    """The quick-fact tools."""
    return [RememberFact(deps), RecallFacts(deps), ForgetFact(deps)]
