"""Files Persyn writes are private and never reached through a planted link."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from store.private_files import (
    PrivatePathError,
    create_private,
    open_private,
    private_dir,
    replace_private,
)

SECRET = "root only\n"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim"
    path.write_text(SECRET)
    path.chmod(0o600)
    return path


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_a_new_file_and_its_directories_are_private(tmp_path: Path) -> None:
    path = tmp_path / "home" / "logs" / "worker.log"

    with open_private(path, "a") as out:
        out.write("one\n")
    with open_private(path, "ab") as out:
        out.write(b"two\n")

    assert path.read_text() == "one\ntwo\n"
    assert _mode(path) == 0o600
    assert _mode(path.parent) == 0o700
    assert _mode(path.parent.parent) == 0o700


def test_a_link_where_a_file_is_appended_is_not_followed(tmp_path: Path, victim: Path) -> None:
    path = tmp_path / "logs" / "codec.log"
    path.parent.mkdir()
    path.symlink_to(victim)

    with pytest.raises(PrivatePathError, match="symbolic link"):
        open_private(path, "a")
    with pytest.raises(PrivatePathError, match="symbolic link"):
        open_private(path, "w")

    assert victim.read_text() == SECRET


def test_a_hard_link_is_refused_before_anything_is_truncated(tmp_path: Path, victim: Path) -> None:
    path = tmp_path / "logs" / "spans.jsonl"
    path.parent.mkdir()
    os.link(victim, path)

    with pytest.raises(PrivatePathError, match="hard links"):
        open_private(path, "w")

    assert victim.read_text() == SECRET


def test_a_linked_directory_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "logs").symlink_to(elsewhere)

    with pytest.raises(PrivatePathError, match="not a directory"):
        open_private(tmp_path / "logs" / "worker.log", "a")

    assert list(elsewhere.iterdir()) == []


def test_a_directory_others_could_write_is_closed_and_an_old_file_tightened(
    tmp_path: Path,
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    logs.chmod(0o777)
    old = logs / "supervisor.log"
    old.write_text("from before\n")
    old.chmod(0o644)

    with open_private(old, "a") as out:
        out.write("now\n")

    assert _mode(logs) == 0o711
    assert _mode(old) == 0o600
    assert old.read_text() == "from before\nnow\n"


def test_a_shared_directory_like_tmp_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)

    with pytest.raises(PrivatePathError, match="shared"):
        private_dir(shared)


def test_a_replaced_file_replaces_a_link_instead_of_writing_through_it(
    tmp_path: Path, victim: Path
) -> None:
    path = tmp_path / "run" / "worker.pid"
    path.parent.mkdir()
    path.symlink_to(victim)

    replace_private(path, '{"pid": 1}')

    assert victim.read_text() == SECRET
    assert not path.is_symlink()
    assert path.read_text() == '{"pid": 1}'
    assert _mode(path) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["worker.pid"]


def test_a_created_file_is_written_once(tmp_path: Path) -> None:
    path = tmp_path / "home" / "key"

    assert create_private(path, "first\n")
    assert not create_private(path, "second\n")

    assert path.read_text() == "first\n"
    assert _mode(path) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["key"]
