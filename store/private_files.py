"""Files Persyn writes, opened so that no other account can redirect them.

Every file a Persyn process writes (logs, span files, the usage event log, PID files, the
supervisor's state, keys, the database password) is opened here. A process running as root
that appends to ``logs/codec.log`` in a directory another account can write would follow a
symbolic link planted there into any file on the machine. So:

- the directory is made private first: created ``0700``, owned by this account, with no read
  or write for group and others (an execute bit is kept: the embedded PostgreSQL's account
  must traverse the home to reach its data directory);
- the file is opened relative to that directory's descriptor, never through a symbolic link
  (``O_NOFOLLOW``), and refused if it is not a plain file with a single name;
- it ends up ``0600`` and owned by this account.

A path that is not safe raises :class:`PrivatePathError`, an ``OSError``, so code that fails
soft on I/O errors does so here too.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import pwd
import secrets
import stat
from pathlib import Path
from typing import BinaryIO, Literal, TextIO, cast, overload

FILE_MODE = 0o600
DIR_MODE = 0o700
_GROUP_OTHER_RW = 0o066

EMBEDDED_POSTGRES_ACCOUNT = "embedded_postgres"
"""The account the embedded PostgreSQL runs as under root. Older versions gave it the logs
directory; a root process takes such a directory back instead of refusing it."""

_OPEN_FLAGS = os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
# O_NONBLOCK: a FIFO planted where a file is expected must not hang the open.


class PrivatePathError(OSError):
    """A path Persyn would write is not safe to write; the message says what to fix."""


def _account(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _make_missing(path: Path) -> None:
    missing: list[Path] = []
    while not os.path.lexists(path):
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir(DIR_MODE)


def _open_dir(path: Path) -> int:
    """A descriptor of directory ``path``, made private; the caller closes it."""
    _make_missing(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR):
            raise PrivatePathError(
                f"{path} is not a directory (a symbolic link or a file): Persyn writes only "
                "into real directories; remove it"
            ) from None
        raise
    try:
        _secure_dir(fd, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _secure_dir(fd: int, path: Path) -> None:
    info = os.fstat(fd)
    me = os.geteuid()
    if info.st_uid != me:
        if me == 0 and _account(info.st_uid) == EMBEDDED_POSTGRES_ACCOUNT:
            os.fchown(fd, 0, 0)
            os.fchmod(fd, DIR_MODE)
            return
        raise PrivatePathError(
            f"{path} belongs to {_account(info.st_uid)}: Persyn writes only into directories "
            f"of its own account ({_account(me)}); chown it or choose another directory"
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & stat.S_ISVTX and mode & stat.S_IWOTH:
        raise PrivatePathError(
            f"{path} is shared by every account (like /tmp): choose a directory of its own"
        )
    if mode & _GROUP_OTHER_RW:
        os.fchmod(fd, mode & ~_GROUP_OTHER_RW)


def _secure_file(fd: int, path: Path) -> None:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise PrivatePathError(f"{path} is not a regular file: remove it")
    if info.st_nlink > 1:
        raise PrivatePathError(f"{path} has other names (hard links): remove it")
    me = os.geteuid()
    if info.st_uid != me:
        if me != 0:
            raise PrivatePathError(
                f"{path} belongs to {_account(info.st_uid)}: remove it, or chown it to "
                f"{_account(me)}"
            )
        os.fchown(fd, 0, 0)  # a single-named plain file in our own directory: take it
    if stat.S_IMODE(info.st_mode) != FILE_MODE:
        os.fchmod(fd, FILE_MODE)
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)


def _open_at(dir_fd: int, name: str, path: Path, flags: int) -> int:
    try:
        fd = os.open(name, flags, FILE_MODE, dir_fd=dir_fd)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise PrivatePathError(
                f"{path} is a symbolic link: Persyn never writes through one; remove it"
            ) from None
        if err.errno == errno.ENXIO:  # a FIFO with no reader
            raise PrivatePathError(f"{path} is not a regular file: remove it") from None
        raise
    try:
        _secure_file(fd, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def private_dir(path: Path) -> None:
    """Create ``path`` (``0700``) if missing, and make sure no other account can write it.

    Raises:
        PrivatePathError: ``path`` is a symbolic link or a file, or another account owns it.
    """
    os.close(_open_dir(path))


def private_fd(path: Path, *, append: bool = True) -> int:
    """A write descriptor of ``path`` (``0600``), created if missing, never through a link.

    Args:
        path: The file; its directory is created or made private first.
        append: Append to what is there; otherwise the file is emptied (after the checks,
            so a refused file is never truncated).

    Raises:
        PrivatePathError: A link, another kind of file, a file with other names, or a
            directory that is not private.
    """
    dir_fd = _open_dir(path.parent)
    try:
        fd = _open_at(dir_fd, path.name, path, _OPEN_FLAGS | os.O_CREAT)
    finally:
        os.close(dir_fd)
    if append:
        os.lseek(fd, 0, os.SEEK_END)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)
    else:
        os.ftruncate(fd, 0)
    return fd


@overload
def open_private(path: Path, mode: Literal["a", "w"]) -> TextIO: ...
@overload
def open_private(path: Path, mode: Literal["ab", "wb"]) -> BinaryIO: ...
def open_private(path: Path, mode: Literal["a", "w", "ab", "wb"]) -> TextIO | BinaryIO:
    """:func:`private_fd` as a file object: ``a``/``w`` (UTF-8 text) or ``ab``/``wb``."""
    fd = private_fd(path, append=mode.startswith("a"))
    if mode.endswith("b"):
        return cast("BinaryIO", os.fdopen(fd, mode))
    return cast("TextIO", os.fdopen(fd, mode, encoding="utf-8"))


def replace_private(path: Path, data: str | bytes) -> None:
    """Write ``path`` whole (``0600``): a reader sees the old content or the new, never half.

    The new content goes to a fresh file of a random name beside it (created exclusively, so
    nothing planted is written through), which is then renamed over ``path``; a link at
    ``path`` is replaced, not followed.

    Raises:
        PrivatePathError: The directory is not private.
    """
    content = data.encode() if isinstance(data, str) else data
    dir_fd = _open_dir(path.parent)
    partial = f".{path.name}.{secrets.token_hex(6)}"
    try:
        fd = _open_at(
            dir_fd, partial, path.with_name(partial), _OPEN_FLAGS | os.O_CREAT | os.O_EXCL
        )
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(content)
            os.replace(partial, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(partial, dir_fd=dir_fd)
            raise
    finally:
        os.close(dir_fd)


def create_private(path: Path, data: str | bytes) -> bool:
    """Write ``path`` (``0600``) only if it does not exist yet; whether this call wrote it.

    Written whole under another name, then linked into place: a process starting beside this
    one sees no file or a complete one, and the first link wins.
    """
    content = data.encode() if isinstance(data, str) else data
    dir_fd = _open_dir(path.parent)
    partial = f".{path.name}.{secrets.token_hex(6)}"
    try:
        fd = _open_at(
            dir_fd, partial, path.with_name(partial), _OPEN_FLAGS | os.O_CREAT | os.O_EXCL
        )
        with os.fdopen(fd, "wb") as file:
            file.write(content)
        try:
            os.link(partial, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        except FileExistsError:
            return False
        finally:
            os.unlink(partial, dir_fd=dir_fd)
        return True
    finally:
        os.close(dir_fd)


def overwrite_existing(path: Path, data: str) -> None:
    """Replace the content of existing file ``path`` in place, keeping its owner and mode.

    For a file in a directory another account owns (the embedded server's ``pg_hba.conf``
    in its data directory): it is not followed if it is a link, and refused if it has other
    names, so whoever owns the directory cannot aim this write elsewhere.

    Raises:
        PrivatePathError: ``path`` is a link, not a regular file, or has other names.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENXIO):
            raise PrivatePathError(f"{path} is not a regular file: remove it") from None
        raise
    with os.fdopen(fd, "wb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            raise PrivatePathError(f"{path} is not a regular file of one name: remove it")
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        os.ftruncate(fd, 0)
        file.write(data.encode())
