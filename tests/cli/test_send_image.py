"""``persyn send --image``: what is not a picture is refused in one line before anything is sent.

The happy path (a kept picture named on the event, seen and edited by the agent) runs on a real
worker in ``tests/images/test_sent_pictures.py`` through the same use case.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from schemas.events import ChannelRef, Modality, Speaker
from usecases.submission import build_event


def _send(monkeypatch: pytest.MonkeyPatch, home: Path, picture: Path) -> tuple[int, str]:
    monkeypatch.setenv("PERSYN_HOME", str(home))
    from schemas.settings import get_settings

    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(app, ["send", "-a", "ada", "look", "--image", str(picture)])
    finally:
        get_settings.cache_clear()
    return result.exit_code, result.stderr


def test_a_file_that_is_not_a_picture_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a picture at all", encoding="utf-8")
    code, err = _send(monkeypatch, tmp_path / "home", notes)
    assert code == 1
    (line,) = err.splitlines()
    assert str(notes) in line and "PNG, JPEG or WebP" in line
    assert not (tmp_path / "home" / "images").exists()  # nothing kept


def test_a_missing_file_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    code, err = _send(monkeypatch, tmp_path / "home", tmp_path / "absent.png")
    assert code == 1
    (line,) = err.splitlines()
    assert line.startswith(f"error: cannot read {tmp_path / 'absent.png'}")


def test_an_event_with_pictures_names_them_and_says_so() -> None:
    here, who = ChannelRef(service="terminal", channel="console"), Speaker(speaker_id="sam")
    plain = build_event(channel=here, speaker=who, text="hi")
    assert plain.images == [] and plain.modality is Modality.TEXT
    image = "01M8RY3GSE9E4HYHV7G3G5D3AX"
    shown = build_event(channel=here, speaker=who, text="look", images=[image])
    assert shown.images == [image] and shown.modality is Modality.IMAGE
