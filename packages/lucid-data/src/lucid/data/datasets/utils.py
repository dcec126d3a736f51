"""Downloading and checking dataset files: mirrors, md5, atomic writes, safe extraction, and
the verdicts of checks already made (so that checking a large file costs once)."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import http.client
import json
import os
import shutil
import tarfile
import tempfile
import urllib.request
import zipfile
import zlib
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = [
    "IntegrityError",
    "calculate_md5",
    "check_integrity",
    "download_url",
    "extract_archive",
]

_CHUNK = 1 << 20
_USER_AGENT = "lucid-data"


class DownloadError(RuntimeError):
    """No mirror gave a file with the expected checksum."""


class IntegrityError(RuntimeError):
    """A dataset file that fails its checksum: corrupt (or not the file it is named as)."""


def md5_mismatch(what: str, expected: str, got: str) -> IntegrityError:
    return IntegrityError(
        f"{what}: md5 mismatch: expected {expected}, got {got}. The file is corrupt: delete it "
        "and download it again (download=True), or fetch a fresh copy by hand"
    )


# -- verdicts of checks already made ---------------------------------------------------------
# One small JSON file in the user's cache folder: {real path: {"size", "mtime_ns", "md5"}} of
# files that passed their check. A file whose size or mtime changed is checked again.
_MAX_VERDICTS = 200


def _verdicts_file() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "lucid" / "verified-files.json"


def _read_verdicts() -> dict[str, dict[str, object]]:
    try:
        verdicts = json.loads(_verdicts_file().read_text())
    except (OSError, ValueError):
        return {}
    return verdicts if isinstance(verdicts, dict) else {}


def _stamp(path: Path) -> dict[str, object]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def verified_md5(path: Path) -> str | None:
    """The md5 recorded when ``path`` passed its check, if it is unchanged since."""
    entry = _read_verdicts().get(str(path.resolve()))
    if not isinstance(entry, dict):
        return None
    if any(entry.get(key) != value for key, value in _stamp(path).items()):
        return None
    md5 = entry.get("md5")
    return md5 if isinstance(md5, str) else None


def record_verified(path: Path, md5: str) -> None:
    """Remember that ``path`` (as it is now) passed its check; silently skipped where the
    cache folder is not writable."""
    verdicts = _read_verdicts()
    verdicts.pop(str(path.resolve()), None)
    verdicts[str(path.resolve())] = {**_stamp(path), "md5": md5}
    kept = dict(list(verdicts.items())[-_MAX_VERDICTS:])
    with contextlib.suppress(OSError):
        with atomic_path(_verdicts_file()) as tmp:
            tmp.write_text(json.dumps(kept))


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


@dataclass
class ArchiveScan:
    """What one full pass over an archive found."""

    md5: str  # of the archive file
    members: dict[str, str]  # member name -> md5 of its bytes
    blobs: dict[str, bytes]  # the bytes of the members asked for


class _Tap:
    """A reader that feeds every byte it reads into ``digest``."""

    def __init__(self, f: IO[bytes], digest: hashlib._Hash) -> None:
        self.f, self.digest = f, digest

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        self.digest.update(data)
        return data


def _drain(f: _Tap | gzip.GzipFile) -> None:
    while f.read(_CHUNK):
        pass


def scan_archive(archive: Path, keep: Collection[str]) -> ArchiveScan:
    """Read a tar or tar.gz archive to its end in one pass: the md5 of the file and of each
    member, and the bytes of the members named in ``keep``. gzip's CRC and length of the whole
    stream are checked, so a damaged compressed archive cannot pass.

    Raises:
        IntegrityError: naming the archive, for a damaged or truncated archive.
    """
    digest = hashlib.md5(usedforsecurity=False)
    members: dict[str, str] = {}
    blobs: dict[str, bytes] = {}
    with open(archive, "rb") as raw:
        tap = _Tap(raw, digest)
        gzipped = raw.peek(2)[:2] == b"\x1f\x8b"
        stream = gzip.GzipFile(fileobj=tap, mode="rb") if gzipped else tap  # type: ignore[call-overload]
        try:
            with tarfile.open(fileobj=stream, mode="r|") as tf:  # type: ignore[call-overload]
                for member in tf:
                    f = tf.extractfile(member) if member.isfile() else None
                    if f is not None:
                        data = f.read()
                        members[member.name] = hashlib.md5(data, usedforsecurity=False).hexdigest()
                        if member.name in keep:
                            blobs[member.name] = data
            _drain(stream)  # the rest: gzip checks the CRC and length at the end
            _drain(tap)
        except (tarfile.TarError, OSError, EOFError, zlib.error) as e:
            raise IntegrityError(f"{archive}: corrupt or truncated archive ({e})") from None
    return ArchiveScan(digest.hexdigest(), members, blobs)


def _safe_members(tf: tarfile.TarFile, dest: Path) -> list[tarfile.TarInfo]:
    members = []
    for m in tf.getmembers():
        target = (dest / m.name).resolve()
        if not (m.isfile() or m.isdir()) or not target.is_relative_to(dest.resolve()):
            raise RuntimeError(f"refusing to extract {m.name!r}: a link or a path outside {dest}")
        members.append(m)
    return members


def _extract_zip(archive: str | os.PathLike[str], tmp: Path) -> None:
    with zipfile.ZipFile(archive) as zf:
        for name in zf.namelist():
            if not (tmp / name).resolve().is_relative_to(tmp.resolve()):
                raise RuntimeError(f"refusing to extract {name!r}: a path outside {tmp}")
        zf.extractall(tmp)  # noqa: S202 - members checked above


def extract_archive(archive: str | os.PathLike[str], dest: str | os.PathLike[str]) -> Path:
    """Extract a tar(.gz) or zip archive into ``dest``, all or nothing.

    Members are extracted into a temporary folder inside ``dest`` and each top-level entry is
    then moved into place, so an interrupted extraction leaves no half-written folder.
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest, prefix=".extract-"))
    try:
        if zipfile.is_zipfile(archive):
            _extract_zip(archive, tmp)
        else:
            with tarfile.open(archive, "r:*") as tf:
                tf.extractall(tmp, members=_safe_members(tf, tmp))  # noqa: S202 - checked
        for entry in tmp.iterdir():
            target = dest / entry.name
            if target.exists():
                shutil.rmtree(target) if target.is_dir() else target.unlink()
            os.replace(entry, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest
