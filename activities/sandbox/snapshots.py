"""A folder's files at one moment, and what changed between two such moments.

Shared workspaces (docs/tools.md) attribute each change to the agent whose sandbox step made
it by comparing a snapshot taken before the step with one taken after. A snapshot holds every
regular file's SHA-256 and size, and the bytes of small files, so a text file's change can be
told in lines and shown in part.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import tarfile
from dataclasses import dataclass
from typing import BinaryIO

from activities.sandbox.provider import FileState, SandboxError

KEEP_FILE_BYTES = 256 * 1024
"""Files up to this size are kept whole, so their changes are told in lines."""
KEEP_TOTAL_BYTES = 8 * 1024 * 1024
"""At most this much is kept per snapshot; larger files are told by size and digest only."""
MAX_TREE_BYTES = 512 * 1024 * 1024
"""A folder past this is not attributed: two full reads per step would cost too much."""
MAX_FILES = 20_000
EXCERPT_CHARS = 300


@dataclass(frozen=True)
class FileChange:
    """What happened to one file between two snapshots."""

    path: str
    kind: str
    """``added``, ``modified`` or ``deleted``."""
    bytes_before: int
    bytes_after: int
    lines_added: int
    lines_removed: int
    excerpt: str


def read_tree(stream: BinaryIO | io.RawIOBase) -> dict[str, FileState]:
    """The regular files of a tar stream of one folder, by path relative to that folder.

    Raises:
        SandboxError: The folder is past :data:`MAX_TREE_BYTES` or :data:`MAX_FILES`.
    """
    files: dict[str, FileState] = {}
    seen = kept = 0
    with tarfile.open(fileobj=stream, mode="r|") as archive:
        for member in archive:
            if not member.isfile():
                continue
            seen += member.size
            if seen > MAX_TREE_BYTES or len(files) >= MAX_FILES:
                raise SandboxError(
                    "the workspace is too large to attribute changes in "
                    f"(over {MAX_TREE_BYTES // 2**20} MB or {MAX_FILES} files)"
                )
            extracted = archive.extractfile(member)
            if extracted is None:
                continue
            digest = hashlib.sha256()
            keep = member.size <= KEEP_FILE_BYTES and kept + member.size <= KEEP_TOTAL_BYTES
            held = bytearray()
            while chunk := extracted.read(1 << 16):
                digest.update(chunk)
                if keep:
                    held += chunk
            kept += len(held)
            # The archive's first component is the folder itself.
            _, _, relative = member.name.partition("/")
            content = bytes(held) if keep else None
            files[relative] = FileState(digest.hexdigest(), member.size, content)
    return files


def changes(before: dict[str, FileState], after: dict[str, FileState]) -> list[FileChange]:
    """Each file added, modified or deleted from ``before`` to ``after``, by path."""
    found = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path), after.get(path)
        if old is not None and new is not None and old.digest == new.digest:
            continue
        kind = "added" if old is None else "deleted" if new is None else "modified"
        added, removed, excerpt = _lines(old, new)
        found.append(
            FileChange(
                path=path,
                kind=kind,
                bytes_before=old.size if old else 0,
                bytes_after=new.size if new else 0,
                lines_added=added,
                lines_removed=removed,
                excerpt=excerpt,
            )
        )
    return found


def _text(state: FileState | None) -> list[str] | None:
    if state is None:
        return []
    if state.content is None or b"\x00" in state.content:
        return None  # too large to keep, or not text
    try:
        return state.content.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return None


def _lines(old: FileState | None, new: FileState | None) -> tuple[int, int, str]:
    before, after = _text(old), _text(new)
    if before is None or after is None:
        return 0, 0, ""
    added: list[str] = []
    removed = 0
    # Past the two header lines, every line of a zero-context diff is a hunk marker, an
    # added line or a removed one.
    for line in list(difflib.unified_diff(before, after, n=0, lineterm=""))[2:]:
        if line.startswith("+"):
            added.append(line[1:])
        elif line.startswith("-"):
            removed += 1
    excerpt = "\n".join(added)
    if len(excerpt) > EXCERPT_CHARS:
        excerpt = excerpt[: EXCERPT_CHARS - 1] + "…"
    return len(added), removed, excerpt
