"""``persyn memory list|show|forget|sensitivity|cull``: the operator's view of agents' memories.

Forgetting withdraws a record from recall and leaves an audit entry; it never cascades: the
records derived from it are listed, and kept. Culling is what the maintenance schedule does
every hour, run now (``--dry-run`` shows what would go).
"""

from __future__ import annotations

import getpass
import json
from typing import Annotated

import typer

from cli import memory_search
from cli.common import UserError, friendly_errors, run
from schemas.ids import check_handle, check_ulid
from schemas.memory import MemoryRecordPublic, Sensitivity
from schemas.memory_formation import MemoryAction
from schemas.settings import get_settings
from schemas.text import clean_text
from usecases import folding, memory

app = typer.Typer(
    help="Inspect and withdraw agents' memories; search and index their dialog.",
    no_args_is_help=True,
)

AgentOption = Annotated[str, typer.Option("--agent", "-a", help="The agent's handle.")]
OwnerOption = Annotated[
    str | None,
    typer.Option(
        "--agent", "-a", help="The agent's handle: refuse a memory that is not this agent's."
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _operator() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "operator"


def _line(record: MemoryRecordPublic, width: int = 72) -> str:
    text = " ".join(record.summary.split())
    return text if len(text) <= width else text[: width - 3] + "..."


@app.command("list")
@friendly_errors
def list_(
    agent: AgentOption,
    channel: Annotated[
        str | None, typer.Option(help="Only this channel, as service:channel.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=10_000, help="At most this many.")] = 20,
    everything: Annotated[bool, typer.Option("--all", help="Include forgotten memories.")] = False,
    as_json: JsonOption = False,
) -> None:
    """An agent's memories, newest first."""
    found = run(
        memory.list_memories(
            settings=get_settings(),
            agent=check_handle(agent),
            channel=channel,
            limit=limit,
            include_forgotten=everything,
        )
    )
    if as_json:
        rows = [{**r.model_dump(mode="json"), "channel_key": key} for r, key in found]
        typer.echo(json.dumps(rows, indent=2))
        return
    if not found:
        typer.echo(
            f"no memories for {agent} yet: they form when a conversation closes, after its "
            "idle time (30 minutes unless the agent's idle_minutes says otherwise); what a "
            'person asks it to remember ("please remember ...") is kept at once, as a quick fact'
        )
        return
    for record, key in found:
        mark = "  [forgotten]" if record.forgotten_at else ""
        if record.level > 1:
            mark += f"  [level {record.level}]"
        elif record.folded_into:
            mark += f"  [folded into {record.folded_into}]"
        typer.echo(
            f"{record.id}  {record.created_at:%Y-%m-%d %H:%M}  {record.importance:>2}/10  "
            f"{(record.emotion or '-'):<10}  {key}  {_line(record)}{mark}"
        )


def _missing(record_id: str) -> UserError:
    return UserError(f"there is no memory {record_id}: see `persyn memory list --agent HANDLE`")


@app.command()
@friendly_errors
def show(
    record_id: Annotated[str, typer.Argument(metavar="ID", help="The memory's ID.")],
    agent: OwnerOption = None,
    as_json: JsonOption = False,
) -> None:
    """One memory: what it says, where it came from, what derives from it, its audit trail."""
    wanted = check_ulid(record_id, what="memory id")
    owner = check_handle(agent) if agent is not None else None
    found = run(memory.memory_detail(settings=get_settings(), record_id=wanted, agent=owner))
    if found is None:
        raise _missing(wanted)
    if as_json:
        typer.echo(found.model_dump_json(indent=2))
        return
    r = found.record
    state = f"forgotten {r.forgotten_at:%Y-%m-%d %H:%M}" if r.forgotten_at else "remembered"
    if any(entry.action is MemoryAction.CULL for entry in found.audit):
        state = "culled: deleted, shown from its audit entry"
    typer.echo(f"id:           {r.id}  ({state})")
    typer.echo(f"agent:        {r.agent}  channel {found.channel_key or r.channel_id}")
    typer.echo(f"conversation: {r.conversation_id or '-'}  turns {r.turn_first} .. {r.turn_last}")
    typer.echo(f"created:      {r.created_at:%Y-%m-%d %H:%M:%S %Z}")
    typer.echo(f"importance:   {r.importance}/10   emotion: {r.emotion or '-'}")
    typer.echo(f"sensitivity:  {r.sensitivity.value}   vector: {'yes' if found.embedded else 'no'}")
    typer.echo(f"tags:         {', '.join(r.tags) or '-'}")
    typer.echo(f"participants: {', '.join(r.participants) or '-'}")
    typer.echo(f"derived from: {', '.join(found.derived_from) or '-'}")
    if r.level > 1:
        typer.echo(f"level:        {r.level} (a recollection folded from the memories above)")
    if r.folded_into:
        typer.echo(f"folded into:  {r.folded_into}")
    typer.echo(f"summary:\n  {r.summary or '(erased when it was withdrawn)'}")
    for d in found.derived:
        typer.echo(f"derived:      {d.id}  {_line(d, 60)}")
    for entry in found.audit:
        why = f": {entry.reason}" if entry.reason else ""
        typer.echo(
            f"audit:        {entry.at:%Y-%m-%d %H:%M} {entry.action.value} by {entry.actor}{why}"
        )


@app.command()
@friendly_errors
def forget(
    record_id: Annotated[str, typer.Argument(metavar="ID", help="The memory's ID.")],
    agent: OwnerOption = None,
    reason: Annotated[str | None, typer.Option(help="Why, for the audit trail.")] = None,
    by: Annotated[str | None, typer.Option(help="Who asks (default: your user name).")] = None,
    as_json: JsonOption = False,
) -> None:
    """Withdraw a memory from recall; keeps an audit entry and says what derived from it."""
    wanted = check_ulid(record_id, what="memory id")
    owner = check_handle(agent) if agent is not None else None
    why = clean_text(reason, what="reason", max_chars=1000) if reason is not None else None
    actor = clean_text(by, what="--by", max_chars=200) if by is not None else _operator()
    result = run(
        memory.forget(
            settings=get_settings(), record_id=wanted, agent=owner, actor=actor, reason=why
        )
    )
    if result is None:
        raise _missing(wanted)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    if result.already:
        typer.echo(
            f"{wanted} was already forgotten ({result.audit.at:%Y-%m-%d %H:%M} by "
            f"{result.audit.actor}); nothing changed"
        )
    else:
        typer.echo(f"forgot {wanted}: its text is erased everywhere Persyn kept it")
        typer.echo(f"audit entry {result.audit.id} by {actor}")
    for above in result.dissolved:
        typer.echo(f"forgot the recollection {above} folded from it; its other memories fold again")
    if not result.derived:
        typer.echo("no memories derive from it")
        return
    typer.echo(f"{len(result.derived)} memories derive from it and were kept:")
    for d in result.derived:
        typer.echo(f"  {d.id}  {_line(d, 64)}")


@app.command()
@friendly_errors
def sensitivity(
    record_id: Annotated[str, typer.Argument(metavar="ID", help="The memory's ID.")],
    level: Annotated[
        str,
        typer.Argument(metavar="LEVEL", help="public, private, confidential or restricted."),
    ],
    reason: Annotated[str, typer.Option(help="Why, for the audit trail (required).")],
    agent: OwnerOption = None,
    by: Annotated[str | None, typer.Option(help="Who asks (default: your user name).")] = None,
    as_json: JsonOption = False,
) -> None:
    """Override who may hear a memory again; audited, and recall honours it at once."""
    wanted = check_ulid(record_id, what="memory id")
    levels = ", ".join(s.value for s in Sensitivity)
    if level.strip().lower() not in {s.value for s in Sensitivity}:
        raise UserError(f"unknown sensitivity {level!r}: use one of {levels}")
    owner = check_handle(agent) if agent is not None else None
    why = clean_text(reason, what="reason", max_chars=1000)
    actor = clean_text(by, what="--by", max_chars=200) if by is not None else _operator()
    result = run(
        memory.change_sensitivity(
            settings=get_settings(),
            record_id=wanted,
            sensitivity=Sensitivity(level.strip().lower()),
            agent=owner,
            actor=actor,
            reason=why,
        )
    )
    if result is None:
        raise _missing(wanted)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    now = result.record.sensitivity.value
    if result.audit is None:
        typer.echo(f"{wanted} is already {now}; nothing changed")
        return
    typer.echo(f"{wanted}: {result.before.value} -> {now}; recall applies it from the next prompt")
    typer.echo(f"audit entry {result.audit.id} by {actor}")


@app.command()
@friendly_errors
def cull(
    agent: AgentOption,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would go; delete nothing.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Delete memories rated below memory.cull_below and older than memory.cull_after_days."""
    result = run(
        memory.cull(
            settings=get_settings(),
            agent=check_handle(agent),
            dry_run=dry_run,
            actor=f"operator:{_operator()}",
        )
    )
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    verb = "would cull" if result.dry_run else "culled"
    typer.echo(
        f"{verb} {result.count} memories of {agent} rated below {result.below}/10 and created "
        f"before {result.cutoff:%Y-%m-%d %H:%M %Z}"
    )
    for item in result.records:
        text = " ".join(item.summary.split())[:64]
        typer.echo(
            f"  {item.record_id}  {item.importance:>2}/10  {item.created_at:%Y-%m-%d}  {text}"
        )


@app.command()
@friendly_errors
def fold(
    agent: AgentOption,
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait for the pass to finish and say what it did.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Fold memories into recollections now (maintenance does it hourly): L1 into L2 into L3."""
    settings = get_settings()
    workflow_id, result = run(
        folding.fold_now(settings=settings, agent=check_handle(agent), wait=wait)
    )
    if as_json:
        body = {"workflow_id": workflow_id, **(result.model_dump(mode="json") if result else {})}
        typer.echo(json.dumps(body, indent=2))
        return
    if result is None:
        typer.echo(f"folding {agent}'s memories as {workflow_id}: see it in the Web UI")
        return
    more = " (more were ready: the pass goes on)" if result.continued else ""
    typer.echo(f"folded {len(result.folded)} recollections for {agent}{more}")
    for recollection in result.folded:
        typer.echo(f"  {recollection}")
    if result.skipped:
        typer.echo(f"{result.skipped} batches changed while folding: they fold at the next pass")


# One `memory` group: list/show/forget/cull beside search/index/reindex.
app.add_typer(memory_search.app)
