"""Where an agent's pictures are kept, and what counts as one.

Renders and the pictures people send live side by side under ``home/images/{agent}/``, each
named by its ULID with its type's suffix, so ``edit_image`` reaches either by ID and "the most
recent" is simply the greatest name. A picture is recognised by its first bytes, never by a
name or a declared type.
"""

from __future__ import annotations

from pathlib import Path

from store.private_files import replace_private

SUFFIXES = {".png": "image/png", ".jpg": "image/jpeg", ".webp": "image/webp"}
"""The kinds the images edit endpoint takes, by the suffix they are kept under."""


class NotAPictureError(ValueError):
    """Bytes that are not a PNG, JPEG or WebP picture."""


def picture_suffix(content: bytes) -> str:
    """The suffix ``content`` is kept under, from its signature.

    Raises:
        NotAPictureError: Not a PNG, JPEG or WebP picture.
    """
    if content.startswith(b"\x89PNG\r\n\x1a\n"):
        return ".png"
    if content.startswith(b"\xff\xd8\xff"):
        return ".jpg"
    if content[:4] == b"RIFF" and content[8:12] == b"WEBP":
        return ".webp"
    raise NotAPictureError("not a PNG, JPEG or WebP picture")


def find_image(root: Path, agent: str, image_id: str) -> Path | None:
    """The kept picture ``image_id`` of ``agent`` (a render or one a person sent), if any."""
    for suffix in SUFFIXES:
        path = root / agent / f"{image_id}{suffix}"
        if path.is_file():
            return path
    return None


def latest_image(folder: Path) -> str | None:
    """The ID of the newest picture in ``folder``: IDs are ULIDs, the greatest is newest."""
    if not folder.is_dir():
        return None
    found = sorted(p.stem for p in folder.iterdir() if p.suffix in SUFFIXES and p.is_file())
    return found[-1] if found else None


def keep(path: Path, content: bytes) -> None:
    """Write ``content`` to ``path`` at once: a reader never sees half a picture."""
    replace_private(path, content)
