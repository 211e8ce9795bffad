"""``persyn memory search|index|reindex``: read and maintain an agent's searchable dialog."""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, datetime, timedelta
from typing import Annotated

import typer

from activities.memory.encoder import EncoderUnavailableError
from activities.memory.encoders.dimensions import DimensionMismatchError
from cli.common import UserError, echo_err, friendly_errors, run
from schemas.memory_search import DialogHit, DialogSearchQuery
from schemas.settings import get_settings
from usecases import dialog

app = typer.Typer(help="Search and maintain what agents remember of dialog.", no_args_is_help=True)

_AGE = re.compile(r"^(\d+(?:\.\d+)?)([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_time(value: str | None, *, end_of_day: bool = False) -> datetime | None:
    """An age (``30m``, ``24h``, ``7d``, ``2w``) or an ISO date or time; naive means UTC.

    A bare date given as an upper bound means the end of that day.

    Raises:
        UserError: Neither form.
    """
    if value is None:
        return None
    text = value.strip()
    match = _AGE.match(text)
    if match:
        return datetime.now(UTC) - timedelta(**{_UNITS[match.group(2)]: float(match.group(1))})
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UserError(
            f"cannot read the time {value!r}: use an age like 24h or 7d, or an ISO date "
            "like 2024-03-01 or 2024-03-01T12:00"
        ) from None
    if end_of_day and re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        when += timedelta(days=1, microseconds=-1)
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _line(hit: DialogHit, width: int) -> str:
    head = f"{hit.score:6.3f}  {hit.at:%Y-%m-%d %H:%M}  {hit.channel}  {hit.speaker_name}: "
    body = " ".join(hit.text.split())
    room = max(20, width - len(head))
    return head + (body if len(body) <= room else body[: room - 1] + "…")


@app.command()
@friendly_errors
def search(
    query: Annotated[str, typer.Argument(help="What to look for (ranks the results).")] = "",
    agent: Annotated[str, typer.Option("--agent", help="The agent's handle.")] = "",
    keyword: Annotated[
        str | None,
        typer.Option(help='Only turns matching these words ("a phrase", -not, or).'),
    ] = None,
    regex: Annotated[
        str | None,
        typer.Option(help="Only turns whose text matches (case-insensitive; (?c) to match case)."),
    ] = None,
    since: Annotated[str | None, typer.Option(help="Not before: 7d, 24h or 2024-03-01.")] = None,
    until: Annotated[str | None, typer.Option(help="Not after: 7d, 24h or 2024-03-31.")] = None,
    tag: Annotated[
        list[str] | None, typer.Option(help="Only turns with this tag (repeat).")
    ] = None,
    channel: Annotated[
        list[str] | None, typer.Option(help="Only this channel, service:channel or ID (repeat).")
    ] = None,
    limit: Annotated[int, typer.Option(help="Most results to show (1-200).")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Search an agent's stored dialog: ranked by words and meaning, narrowed by filters."""
    if not agent:
        raise UserError("which agent? add --agent HANDLE (see `persyn agent list`)")
    spec = DialogSearchQuery(
        agent=agent,
        query=query,
        keyword=keyword,
        regex=regex,
        since=parse_time(since),
        until=parse_time(until, end_of_day=True),
        tags=tag or [],
        limit=limit,
    )
    if not (spec.ranking_text or spec.regex or spec.tags or spec.since or spec.until):
        raise UserError("give a query, or at least one of --keyword, --regex, --tag, --since")
    result = run(dialog.search_dialog(settings=get_settings(), spec=spec, channels=channel or []))
    if as_json:
        typer.echo(json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False))
        return
    if result.notice:
        echo_err(f"note: {result.notice}")
    if not result.hits:
        typer.echo("no matching dialog")
        return
    width = shutil.get_terminal_size((120, 24)).columns
    for hit in result.hits:
        typer.echo(_line(hit, width))


@app.command()
@friendly_errors
def index(
    agent: Annotated[str, typer.Option("--agent", help="The agent's handle.")],
    limit: Annotated[int, typer.Option(help="Most turns to embed in this run.")] = 100_000,
) -> None:
    """Embed the agent's dialog turns that have no embedding yet."""
    try:
        done = run(dialog.index_dialog(settings=get_settings(), agent=agent, limit=limit))
    except EncoderUnavailableError as err:
        raise UserError(f"{err}: start the encoder, then run this again") from None
    typer.echo(f"embedded {done:,} turns")


@app.command()
@friendly_errors
def reindex(
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
) -> None:
    """Re-encode every memory and dialog turn with the configured encoder (after changing it)."""
    if not yes:
        typer.confirm(
            "Resize the vector columns and re-encode all stored memories and dialog?", abort=True
        )
    try:
        done = run(
            dialog.reindex(
                settings=get_settings(),
                progress=lambda table, n: echo_err(f"{table}: {n:,} re-encoded"),
            )
        )
    except (EncoderUnavailableError, DimensionMismatchError) as err:
        raise UserError(f"{err}: fix the encoder, then run this again (it resumes)") from None
    typer.echo(f"re-encoded {done['memory_records']:,} memories and {done['dialog_turns']:,} turns")
