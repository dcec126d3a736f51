"""``lucid.hub`` (``torch.hub``): checkpoints by url, and models from a folder's ``hubconf.py``.

Loading never goes to the network on its own: :func:`load_state_dict_from_url` reads the file
its url names from torch hub's cache (``get_dir()/checkpoints``, where a torch that ran on this
machine left it) or lucid's (``$LUCID_HOME/hub/checkpoints``), through ``lucid.load`` with
``weights_only=True`` (torch's pickles rebuilt by an allowlist, never run); without it the error
names the file and folder, and :func:`download_url_to_file` fetches it when asked (as torch's:
a temporary file next to the destination, the SHA-256 prefix checked, then moved into place, so
a failed download leaves nothing behind). :func:`load`, :func:`list` and :func:`help` run a
``hubconf.py`` from a local folder (``source="local"``; code you point at is code you run); lucid
fetches no repositories.
"""

from __future__ import annotations

import builtins
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from lucid import serialization

__all__ = ["checkpoint_dirs", "download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]  # fmt: skip

# torch hub's: a checkpoint's file name carries the first digits of its SHA-256 ("-b8a52dc0.")
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_READ_BYTES = 128 * 1024
_hub_dir: str | None = None


def _cache_home() -> Path:
    return Path(os.path.expanduser(os.environ.get("XDG_CACHE_HOME", "~/.cache")))


def get_dir() -> str:
    """``torch.hub.get_dir``: the hub folder, ``set_dir``'s, else ``$TORCH_HOME/hub``
    (``TORCH_HOME`` defaults to ``$XDG_CACHE_HOME/torch``, i.e. ``~/.cache/torch``)."""
    if _hub_dir is not None:
        return _hub_dir
    torch_home = os.environ.get("TORCH_HOME", str(_cache_home() / "torch"))
    return os.path.join(os.path.expanduser(torch_home), "hub")


def set_dir(d: str | os.PathLike[str]) -> None:
    """``torch.hub.set_dir``: use ``d`` as the hub folder."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def checkpoint_dirs() -> builtins.list[Path]:
    """Where checkpoints are looked for, in order: ``get_dir()/checkpoints`` (torch hub's) and
    lucid's ``$LUCID_HOME/hub/checkpoints`` (``~/.cache/lucid``)."""
    home = os.environ.get("LUCID_HOME", str(_cache_home() / "lucid"))
    lucid_home = Path(os.path.expanduser(home))
    return [Path(get_dir()) / "checkpoints", lucid_home / "hub" / "checkpoints"]


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None,
                         progress: bool = True) -> None:  # fmt: skip
    """``torch.hub.download_url_to_file``: the object at ``url`` saved as ``dst``, written to a
    temporary file in ``dst``'s folder and moved into place once complete (and, given
    ``hash_prefix``, once its SHA-256 digest starts with it); nothing is left on failure."""
    dst = os.path.expanduser(os.fspath(dst))
    folder = os.path.dirname(os.path.abspath(dst))
    request = urllib.request.Request(url, headers={"User-Agent": "lucid.hub"})
    prefix = os.path.basename(dst) + "."
    part = tempfile.NamedTemporaryFile(delete=False, dir=folder, prefix=prefix, suffix=".partial")
    try:
        digest = hashlib.sha256() if hash_prefix is not None else None
        with urllib.request.urlopen(request) as response:  # noqa: S310 - the user's url
            while True:
                chunk = response.read(_READ_BYTES)
                if not chunk:
                    break
                part.write(chunk)
                if digest is not None:
                    digest.update(chunk)
        part.close()
        if digest is not None and hash_prefix is not None:
            got = digest.hexdigest()
            if got[: len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{got}")')
        shutil.move(part.name, dst)
    finally:
        part.close()
        if os.path.exists(part.name):
            os.remove(part.name)


def load_state_dict_from_url(
    url: str,
    model_dir: str | os.PathLike[str] | None = None,
    map_location: Any = None,
    progress: bool = True,
    check_hash: bool = False,
    file_name: str | None = None,
    weights_only: bool = True,
) -> dict[str, Any]:
    """``torch.hub.load_state_dict_from_url`` without an implicit download: the file the url
    (or ``file_name``) names, read from ``model_dir`` or :func:`checkpoint_dirs`. As torch hub,
    a file already there is not hash-checked. ``weights_only`` defaults to True (torch's to
    False): a checkpoint's pickle is rebuilt from an allowlist, never run."""
    del progress, check_hash  # they concern a download, which happens only when asked for

    name = file_name or os.path.basename(urlparse(url).path)
    folders = [Path(model_dir)] if model_dir is not None else checkpoint_dirs()
    for folder in folders:
        path = folder / name
        if path.is_file():
            state = serialization.load(path, map_location=map_location or "cpu",
                                       weights_only=weights_only)  # fmt: skip
            if not isinstance(state, dict):
                raise TypeError(f"{path} holds a {type(state).__name__}, not a state dict")
            return state
    where = " or ".join(str(f) for f in folders)
    raise FileNotFoundError(
        f"checkpoint {name!r} not found in {where}: lucid downloads nothing unasked. Download "
        f"{url} and put it in {folders[0]} (where torch hub keeps it; TORCH_HOME moves it), e.g. "
        f"lucid.hub.download_url_to_file(url, {str(folders[0] / name)!r})"
    )


def _local_hubconf(repo_dir: str) -> Any:
    path = os.path.join(os.path.expanduser(repo_dir), "hubconf.py")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"hubconf.py not found in {repo_dir} (lucid.hub loads from a "
                                "local folder: source='local')")  # fmt: skip
    sys.path.insert(0, os.path.dirname(path))
    try:
        spec = importlib.util.spec_from_file_location("hubconf", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(os.path.dirname(path))
    missing = [d for d in getattr(module, "dependencies", []) or []
               if importlib.util.find_spec(d) is None]  # fmt: skip
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    return module


def _repo(repo_or_dir: str, source: str) -> Any:
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github" and not os.path.isdir(os.path.expanduser(repo_or_dir)):
        raise NotImplementedError(
            f"lucid.hub: {repo_or_dir!r} is a GitHub repository; lucid fetches no repositories "
            "(nor runs hubconf code written for torch). Clone it, make its hubconf.py use lucid, "
            "and pass the folder with source='local'"
        )
    return _local_hubconf(repo_or_dir)


def _entry(module: Any, model: str) -> Any:
    fn = getattr(module, model, None)
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


def list(github: str, force_reload: bool = False, skip_validation: bool = False,  # noqa: A001
         trust_repo: Any = "check", verbose: bool = True) -> builtins.list[str]:  # fmt: skip
    """``torch.hub.list``: the entrypoints (public callables) of a folder's ``hubconf.py``."""
    module = _repo(github, "github")
    return [n for n in dir(module) if callable(getattr(module, n)) and not n.startswith("_")]


def help(github: str, model: str, force_reload: bool = False,  # noqa: A001
         skip_validation: bool = False, trust_repo: Any = "check") -> str:  # fmt: skip
    """``torch.hub.help``: the docstring of a folder's ``hubconf.py`` entrypoint ``model``."""
    return _entry(_repo(github, "github"), model).__doc__ or ""


def load(repo_or_dir: str, model: str, *args: Any, source: str = "github",
         trust_repo: Any = "check", force_reload: bool = False, verbose: bool = True,
         skip_validation: bool = False, **kwargs: Any) -> Any:  # fmt: skip
    """``torch.hub.load``: ``model(*args, **kwargs)`` from the ``hubconf.py`` of the folder
    ``repo_or_dir`` (``source="local"``; a GitHub name raises: lucid fetches nothing)."""
    return _entry(_repo(repo_or_dir, source), model)(*args, **kwargs)
