"""Downloading and checking dataset files: mirrors, md5, atomic writes, safe extraction."""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import os
import shutil
import tarfile
import tempfile
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["calculate_md5", "check_integrity", "download_url", "extract_archive"]

_CHUNK = 1 << 20
_USER_AGENT = "lucid-data"


class DownloadError(RuntimeError):
    """No mirror gave a file with the expected checksum."""


def calculate_md5(path: str | os.PathLike[str], chunk_size: int = _CHUNK) -> str:
    """The MD5 hex digest of the file at ``path``, read in chunks."""
    md5 = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        while chunk := f.read(chunk_size):
            md5.update(chunk)
    return md5.hexdigest()


def check_integrity(path: str | os.PathLike[str], md5: str | None = None) -> bool:
    """The file exists and (if ``md5`` is given) has that md5."""
    if not os.path.isfile(path):
        return False
    return md5 is None or calculate_md5(path) == md5


@contextlib.contextmanager
def atomic_path(final: Path) -> Iterator[Path]:
    """A temporary path next to ``final``, renamed onto it only if the block succeeds.

    A crash or an error leaves no partial file under the final name (a ``.part`` file is
    removed on error; one left by a killed process is never trusted: it has another name).
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.", suffix=".part")
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, final)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _fetch(url: str, dest: Path, md5: str | None, timeout: float) -> None:
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    digest = hashlib.md5(usedforsecurity=False)
    with atomic_path(dest) as tmp:
        with urllib.request.urlopen(request, timeout=timeout) as response, open(tmp, "wb") as f:
            expected = response.headers.get("Content-Length")
            size = 0
            while chunk := response.read(_CHUNK):
                digest.update(chunk)
                f.write(chunk)
                size += len(chunk)
        if expected is not None and size != int(expected):
            raise DownloadError(f"incomplete download: got {size} of {expected} bytes")
        if md5 is not None and digest.hexdigest() != md5:
            raise DownloadError(f"md5 mismatch: expected {md5}, got {digest.hexdigest()}")


def download_url(
    urls: str | Sequence[str],
    root: str | os.PathLike[str],
    filename: str,
    md5: str | None = None,
    timeout: float = 30.0,
) -> Path:
    """Download ``filename`` into ``root`` from the first of ``urls`` that works.

    A file already there with the right md5 is kept. Each download is checked against ``md5``
    and written atomically; a corrupt one is deleted and the next mirror tried.

    Raises:
        DownloadError: no mirror worked; the message lists each attempt and how to place the
            file by hand.
    """
    dest = Path(root) / filename
    if check_integrity(dest, md5):
        return dest
    candidates = [urls] if isinstance(urls, str) else list(urls)
    failures = []
    for url in candidates:
        try:
            _fetch(url, dest, md5, timeout)
            return dest
        except (OSError, DownloadError, ValueError, http.client.HTTPException) as e:
            failures.append(f"  {url}: {e}")
    tried = "\n".join(failures) or "  (no URL given)"
    raise DownloadError(
        f"Could not download {filename} (md5 {md5}). Tried:\n{tried}\n"
        f"Without network access, download it elsewhere and place it at {dest}."
    )


def _safe_members(tf: tarfile.TarFile, dest: Path) -> list[tarfile.TarInfo]:
    members = []
    for m in tf.getmembers():
        target = (dest / m.name).resolve()
        if not (m.isfile() or m.isdir()) or not target.is_relative_to(dest.resolve()):
            raise RuntimeError(f"refusing to extract {m.name!r}: a link or a path outside {dest}")
        members.append(m)
    return members


def extract_archive(archive: str | os.PathLike[str], dest: str | os.PathLike[str]) -> Path:
    """Extract a tar(.gz) archive into ``dest``, all or nothing.

    Members are extracted into a temporary folder inside ``dest`` and each top-level entry is
    then moved into place, so an interrupted extraction leaves no half-written folder.
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest, prefix=".extract-"))
    try:
        with tarfile.open(archive, "r:*") as tf:
            tf.extractall(tmp, members=_safe_members(tf, tmp))  # noqa: S202 - members checked
        for entry in tmp.iterdir():
            target = dest / entry.name
            if target.exists():
                shutil.rmtree(target) if target.is_dir() else target.unlink()
            os.replace(entry, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest
