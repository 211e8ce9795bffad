"""``persyn replay FILE...``: replay exported histories against this code before deploying it.

Export a run's history with ``temporal workflow show --workflow-id ID --output json > FILE``
(or the Web UI's download), then replay it here: a history that fails is one whose run a
worker built from this code could not continue. The replayer is configured as the workers
are (the converter with the payload codec, the interceptors, the sandbox) and needs no
running Temporal. With the codec on it needs what a worker needs to seal and open payloads:
the deployment's database, which holds the agents' keys.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli.common import UserError, friendly_errors, run
from schemas.codec import get_codec_settings
from schemas.settings import Settings, get_settings


async def _keys_reachable(settings: Settings) -> None:
    """Fail in one line now, not once per history, when the codec's keys are out of reach."""
    from sqlalchemy.exc import OperationalError

    from usecases.store import check_store

    try:
        await check_store(settings)
    except OperationalError as err:
        first = str(err.orig or err).strip().splitlines()[0]
        raise UserError(
            f"the payload codec needs the agents' keys and cannot reach the database ({first}):"
            " run `persyn up` or set PERSYN_DATABASE_URL; histories recorded without the codec"
            " replay with --no-codec"
        ) from err


async def _replay(paths: list[Path], *, codec: bool) -> list[tuple[Path, str | None]]:
    """Each file with ``None`` when it replays, or the first line of why it does not."""
    from temporal.client import connect
    from workers.replay import HistoryFileError, load_history, replayer

    try:
        histories = [(path, load_history(path)) for path in paths]
    except HistoryFileError as err:
        raise UserError(str(err)) from err
    settings = get_settings()
    if codec:
        await _keys_reachable(settings)
    replaying = replayer(await connect(settings, codec=codec, lazy=True))
    results: list[tuple[Path, str | None]] = []
    for path, history in histories:
        try:
            await replaying.replay_workflow(history)
        except Exception as err:  # any failure of the workflow task is the verdict on this file
            message = str(err).strip().splitlines()
            results.append((path, message[0] if message else err.__class__.__name__))
        else:
            results.append((path, None))
    return results


@friendly_errors
def replay(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="History files as `temporal workflow show --output json` writes them.",
            show_default=False,
        ),
    ],
    codec: Annotated[
        bool | None,
        typer.Option(
            "--codec/--no-codec",
            help="Open sealed payloads with the agents' keys (default: PERSYN_CODEC_ENABLED).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Replay exported workflow histories against this code (before deploying it).

    Exit status 1 if any history would not continue on a worker built from this code.
    """
    sealed = get_codec_settings().enabled if codec is None else codec
    results = run(_replay(files, codec=sealed))
    for path, failure in results:
        typer.echo(f"ok      {path}" if failure is None else f"FAILED  {path}: {failure}")
    failed = sum(failure is not None for _, failure in results)
    if failed:
        typer.echo(
            f"{failed} of {len(results)} histories do not replay: gate the change with "
            "workflow.patched (docs/operations.md, Upgrading workers)",
            err=True,
        )
        raise typer.Exit(1)
