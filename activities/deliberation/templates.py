"""The counter-perspective template library (data files) and the rules of the constrained lens.

Templates live in ``activities/prompts/critique/<lens>.md``; each gives the critic its role and
criterion, and ``contract.md`` the output contract they share. The constrained lens checks
operator rules: conditionals in a YAML, JSON or TOML file (``deliberation.rules_file``), the
shipped ``rules.yaml`` by default. Editing either never touches workflow code.
"""

from __future__ import annotations

import json
import logging
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from activities.context.fencing import CANDIDATE, CONVERSATION, MEMORY, fence
from activities.deliberation.calls import clip
from activities.deliberation.records import ShownRecord, render_records
from activities.prompts import load
from schemas.deliberation import Lens
from schemas.models import ChatMessage

log = logging.getLogger(__name__)

SHIPPED_RULES = Path(__file__).parent.parent / "prompts" / "critique" / "rules.yaml"
DIALOG_MESSAGES = 6
"""Most recent messages of the conversation a critic sees besides the candidate."""
MESSAGE_CHARS = 1500
CANDIDATE_CHARS = 12_000


class RulesError(ValueError):
    """The rules file cannot be used; the message says what to fix."""


@dataclass(frozen=True)
class Rule:
    """One conditional: IF ``when`` holds for the reply, THEN ``then`` must hold too."""

    id: str
    when: str
    then: str


def _read(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.loads(text)
    if path.suffix == ".toml":
        return tomllib.loads(text)
    return yaml.safe_load(text)


def parse_rules(document: Any) -> list[Rule]:
    """Rules from a parsed file: ``{"rules": [{"id", "if", "then"}, ...]}``.

    Raises:
        RulesError: The document is not shaped like that.
    """
    items = document.get("rules") if isinstance(document, dict) else None
    if not isinstance(items, list) or not items:
        raise RulesError('expected a non-empty "rules" list')
    rules: list[Rule] = []
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict) or not item.get("if") or not item.get("then"):
            raise RulesError(f'rule {number} needs an "if" and a "then"')
        rule_id = str(item.get("id") or f"R{number}")
        rules.append(Rule(id=rule_id, when=str(item["if"]).strip(), then=str(item["then"]).strip()))
    return rules


def load_rules(path: Path | None) -> list[Rule]:
    """The operator's rules, or the shipped ones when unset or unusable (logged)."""
    if path is not None:
        try:
            return parse_rules(_read(path))
        except (OSError, ValueError, yaml.YAMLError) as err:
            # A broken rules file weakens one lens; it must not silence critique altogether.
            log.warning("rules file %s unusable (%s); using the shipped rules", path, err)
    return parse_rules(_read(SHIPPED_RULES))


def render_rules(rules: list[Rule]) -> str:
    """Rules as the constrained template lists them."""
    return "\n".join(f"- {r.id}: IF {r.when}, THEN {r.then}." for r in rules)


def critic_system(
    lens: Lens, *, max_objections: int, rules: list[Rule], records: list[ShownRecord]
) -> str:
    """The critic's system instruction for ``lens``."""
    body = load(f"critique/{lens.value}.md")
    if lens is Lens.CONSTRAINED:
        body = body.replace("{rules}", render_rules(rules))
    if lens is Lens.PROVENANCE:
        # Summaries paraphrase what people said: in the critic's system text too, they are
        # fenced as material (the "none" note is Persyn's own and stays outside).
        rendered = render_records(records)
        body = body.replace("{records}", fence(rendered, MEMORY) if records else rendered)
    contract = load("critique/contract.md").replace("{max}", str(max_objections))
    return f"{body}\n\n{contract}"


def critic_message(dialog: list[ChatMessage], candidate: str) -> ChatMessage:
    """The material a critic evaluates: the conversation's tail and the candidate reply."""
    lines = [
        f"{'Agent' if m.role == 'assistant' else 'Person'}: {clip(m.content, MESSAGE_CHARS)}"
        for m in dialog[-DIALOG_MESSAGES:]
    ]
    # Persyn's own note when there is nothing earlier stays outside the fence.
    conversation = fence("\n".join(lines), CONVERSATION) if lines else "(no earlier messages)"
    reply = fence(clip(candidate, CANDIDATE_CHARS), CANDIDATE)
    return ChatMessage(
        role="user",
        content=f"The conversation so far, most recent last:\n{conversation}\n\n"
        f"The candidate reply to evaluate:\n{reply}",
    )
