"""Telling what changed between two snapshots of a folder: kinds, lines, bytes and excerpts."""

from __future__ import annotations

import hashlib
import io
import tarfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from activities.sandbox.provider import FileState, SandboxError
from activities.sandbox.snapshots import EXCERPT_CHARS, changes, read_tree


def state(content: bytes, *, keep: bool = True) -> FileState:
    return FileState(hashlib.sha256(content).hexdigest(), len(content), content if keep else None)


def tree(files: dict[str, bytes]) -> io.BytesIO:
    """A tar of folder ``ws`` as the engine streams one."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        folder = tarfile.TarInfo("ws")
        folder.type = tarfile.DIRTYPE
        archive.addfile(folder)
        for path, content in files.items():
            info = tarfile.TarInfo(f"ws/{path}")
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
    buffer.seek(0)
    return buffer


def test_a_tree_is_read_by_relative_path_with_digests() -> None:
    files = {"a.md": b"one\n", "sub/b.bin": b"\x00\x01"}
    read = read_tree(tree(files))
    assert read == {path: state(content) for path, content in files.items()}


def test_added_modified_and_deleted_files_are_told_in_lines() -> None:
    before = {"keep.md": state(b"same\n"), "edit.md": state(b"a\nb\n"), "gone.md": state(b"x\n")}
    after = {"keep.md": state(b"same\n"), "edit.md": state(b"a\nB\nc\n"), "new.md": state(b"n\n")}
    found = {c.path: c for c in changes(before, after)}
    assert set(found) == {"edit.md", "gone.md", "new.md"}
    edit = found["edit.md"]
    assert (edit.kind, edit.lines_added, edit.lines_removed, edit.excerpt) == (
        "modified",
        2,
        1,
        "B\nc",
    )
    assert (found["gone.md"].kind, found["gone.md"].lines_removed) == ("deleted", 1)
    assert (found["new.md"].kind, found["new.md"].bytes_before, found["new.md"].bytes_after) == (
        "added",
        0,
        2,
    )


def test_binary_and_unkept_files_are_told_by_size_only() -> None:
    found = changes(
        {"big.txt": state(b"old", keep=False), "pic.png": state(b"\x00a")},
        {"big.txt": state(b"newer", keep=False), "pic.png": state(b"\x00b")},
    )
    assert [(c.path, c.lines_added, c.lines_removed, c.excerpt) for c in found] == [
        ("big.txt", 0, 0, ""),
        ("pic.png", 0, 0, ""),
    ]
    assert found[0].bytes_after == 5


def test_an_oversized_tree_is_refused_not_half_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("activities.sandbox.snapshots.MAX_FILES", 2)
    with pytest.raises(SandboxError, match="too large to attribute"):
        read_tree(tree({"a": b"1", "b": b"2", "c": b"3"}))


texts = st.lists(
    st.text(
        alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\r\n\x00"),
        max_size=20,
    )
)


@given(old=texts, new=texts)
def test_the_line_counts_add_up(old: list[str], new: list[str]) -> None:
    before, after = "\n".join(old).encode(), "\n".join(new).encode()
    found = changes({"f": state(before)}, {"f": state(after)})
    if before == after:
        assert found == []
        return
    [change] = found
    # Applying the counts to the old line count gives the new one.
    old_lines = len(before.decode().splitlines())
    new_lines = len(after.decode().splitlines())
    assert old_lines + change.lines_added - change.lines_removed == new_lines
    assert len(change.excerpt) <= EXCERPT_CHARS
