"""Building the sandbox image locally, with no registry: a root filesystem, then an import.

Two recipes. ``python`` (the default) runs ``debootstrap --variant=minbase`` with
``python3-minimal`` from the Debian mirror the host's packages come from (about a minute,
~230 MB). ``busybox`` copies the host's static busybox into an empty root (well under a second,
~2 MB, no Python): enough for shell work and for the isolation tests. Either way ``/work``
belongs to the sandbox user, and the image carries no environment of the host's.
"""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Literal

from activities.sandbox.provider import SandboxError

Base = Literal["python", "busybox"]
BUSYBOX_PATHS = ("/bin/busybox", "/usr/bin/busybox")
DEBIAN_SUITE = "bookworm"
_SANDBOX_ID = 65534


class ImageBuildError(SandboxError):
    """The image could not be built; the message says what to install or change."""


def build_rootfs(base: Base, root: Path) -> None:
    """Fill ``root`` with the chosen recipe's files.

    Raises:
        ImageBuildError: A tool the recipe needs is missing, or it failed.
    """
    if base == "busybox":
        _busybox_root(root)
    else:
        _debian_root(root)
    (root / "work").mkdir(exist_ok=True)
    (root / "tmp").mkdir(exist_ok=True)
    etc = root / "etc"
    etc.mkdir(exist_ok=True)
    passwd = etc / "passwd"
    existing = passwd.read_text() if passwd.exists() else "root:x:0:0:root:/root:/bin/sh\n"
    if "nobody:" not in existing:
        passwd.write_text(existing + f"nobody:x:{_SANDBOX_ID}:{_SANDBOX_ID}::/work:/bin/sh\n")


def _busybox_root(root: Path) -> None:
    source = next((Path(p) for p in BUSYBOX_PATHS if Path(p).exists()), None)
    if source is None:
        raise ImageBuildError("busybox not found: install busybox-static (apt-get install)")
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, bin_dir / "busybox")
    applets = subprocess.run(
        [str(bin_dir / "busybox"), "--list"], capture_output=True, text=True, check=True
    ).stdout.split()
    if "sh" not in applets:
        raise ImageBuildError(f"{source} is not a static busybox: install busybox-static")
    for applet in applets:
        link = bin_dir / applet
        if not link.exists():
            link.symlink_to("busybox")
    (root / "usr").mkdir(exist_ok=True)
    (root / "usr" / "bin").symlink_to("../bin")


def _debian_root(root: Path) -> None:
    tool = shutil.which("debootstrap")
    if tool is None:
        raise ImageBuildError(
            "debootstrap not found: install it (apt-get install debootstrap), or build "
            "--base busybox"
        )
    done = subprocess.run(
        [
            tool,
            "--variant=minbase",
            "--include=python3-minimal",
            DEBIAN_SUITE,
            str(root),
            *_mirror(),
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise ImageBuildError(f"debootstrap failed: {tail[0]}")
    # Package caches and lists are dead weight in an image nothing installs into.
    for leftover in ("var/cache/apt/archives", "var/lib/apt/lists"):
        shutil.rmtree(root / leftover, ignore_errors=True)


def _mirror() -> list[str]:
    """The Debian mirror this host's apt uses, so a mirror-only network works too."""
    sources = Path("/etc/apt/sources.list.d/debian.sources")
    if sources.exists():
        for line in sources.read_text().splitlines():
            if line.startswith("URIs:"):
                return [line.split()[1]]
    return []


def pack_rootfs(root: Path, archive: Path) -> None:
    """Tar ``root``: ``/work`` owned by the sandbox user, ``/tmp`` sticky and open to all.

    Docker gives the tmpfs mounted on ``/tmp`` the mode of the image's directory, whatever the
    mount options say, so a ``0755`` root-owned ``tmp`` left ``TMPDIR=/tmp`` unwritable.
    """

    def owner(info: tarfile.TarInfo) -> tarfile.TarInfo:
        if info.name in ("work", "./work"):
            info.uid = info.gid = _SANDBOX_ID
            info.mode = 0o755
        elif info.name in ("tmp", "./tmp"):
            info.mode = 0o1777
        return info

    with tarfile.open(archive, "w") as tar:
        for entry in sorted(root.iterdir()):
            tar.add(entry, arcname=entry.name, filter=owner)


def build_image(base: Base, tag: str, *, docker_host: str | None = None) -> str:
    """Build the image and import it into the engine as ``tag``; returns its id.

    Raises:
        ImageBuildError: A recipe tool is missing, it failed, or the engine refused.
    """
    import docker
    from docker.errors import DockerException

    with tempfile.TemporaryDirectory(prefix="persyn-image-") as scratch:
        root = Path(scratch) / "root"
        root.mkdir()
        build_rootfs(base, root)
        archive = Path(scratch) / "rootfs.tar"
        pack_rootfs(root, archive)
        repository, _, version = tag.partition(":")
        try:
            client = (
                docker.DockerClient(base_url=docker_host, timeout=600)
                if docker_host
                else docker.from_env(timeout=600)
            )
            try:
                client.api.import_image_from_file(
                    str(archive),
                    repository=repository,
                    tag=version or "latest",
                    changes=["WORKDIR /work", "USER 65534:65534", 'CMD ["sh"]'],
                )
                image_id: str = client.images.get(tag).id
            finally:
                client.close()
        except DockerException as error:
            raise ImageBuildError(f"the Docker engine refused the image: {error}") from error
    return image_id
