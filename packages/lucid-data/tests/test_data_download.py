"""Downloads against a local HTTP server serving good, corrupt, truncated and missing files."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import pickle
import tarfile
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lucid.data.datasets import (
    CIFAR10,
    MNIST,
    DownloadError,
    RenderedSST2,
    download_url,
    extract_archive,
)

PAYLOAD = b"lucid " * 1000
MD5 = hashlib.md5(PAYLOAD).hexdigest()


class Handler(http.server.SimpleHTTPRequestHandler):
    """Serves files from ``directory``; under /short/ promises more bytes than it sends."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path.startswith("/short/"):
            self.send_response(200)
            self.send_header("Content-Length", str(len(PAYLOAD) + 100))
            self.end_headers()
            self.wfile.write(PAYLOAD)
            return
        super().do_GET()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    served = tmp_path / "served"
    (served / "good").mkdir(parents=True)
    (served / "corrupt").mkdir()
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), partial(Handler, directory=str(served))
    )
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", served
    finally:
        httpd.shutdown()
        httpd.server_close()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_mirrors_are_tried_in_order_until_one_is_good(
    server: tuple[str, Path], tmp_path: Path
) -> None:
    url, served = server
    (served / "good" / "f.bin").write_bytes(PAYLOAD)
    (served / "corrupt" / "f.bin").write_bytes(PAYLOAD[:-1] + b"!")
    dest = tmp_path / "out"
    mirrors = [
        f"{url}/missing/f.bin",
        f"{url}/corrupt/f.bin",
        f"{url}/short/f.bin",
        f"{url}/good/f.bin",
    ]
    path = download_url(mirrors, dest, "f.bin", MD5)
    assert path == dest / "f.bin" and path.read_bytes() == PAYLOAD
    assert leftovers(dest) == []


def test_all_mirrors_failing_leaves_nothing_and_explains(
    server: tuple[str, Path], tmp_path: Path
) -> None:
    url, served = server
    (served / "corrupt" / "f.bin").write_bytes(b"not it")
    dest = tmp_path / "out"
    mirrors = [f"{url}/missing/f.bin", f"{url}/corrupt/f.bin", f"{url}/short/f.bin"]
    with pytest.raises(DownloadError) as info:
        download_url(mirrors, dest, "f.bin", MD5)
    msg = str(info.value)
    assert "404" in msg and "md5 mismatch" in msg and "incomplete download" in msg
    assert all(m in msg for m in mirrors)
    assert f"place it at {dest / 'f.bin'}" in msg
    assert list(dest.iterdir()) == []


def test_truncated_download_without_md5_is_rejected(
    server: tuple[str, Path], tmp_path: Path
) -> None:
    url, _ = server
    with pytest.raises(DownloadError, match="incomplete download"):
        download_url(f"{url}/short/f.bin", tmp_path, "f.bin")
    assert not (tmp_path / "f.bin").exists()


def test_good_existing_file_is_kept_and_a_corrupt_one_replaced(
    server: tuple[str, Path], tmp_path: Path
) -> None:
    url, served = server
    (served / "good" / "f.bin").write_bytes(PAYLOAD)
    (tmp_path / "f.bin").write_bytes(PAYLOAD)
    assert download_url("http://127.0.0.1:9/unreachable", tmp_path, "f.bin", MD5).exists()
    (tmp_path / "f.bin").write_bytes(b"half a fil")
    download_url(f"{url}/good/f.bin", tmp_path, "f.bin", MD5)
    assert (tmp_path / "f.bin").read_bytes() == PAYLOAD


def test_unreachable_server_error_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match=r"(?s)Could not download f.bin .*127.0.0.1:9"):
        download_url(["http://127.0.0.1:9/f.bin"], tmp_path, "f.bin", MD5, timeout=2)


def _idx(arr: np.ndarray) -> bytes:
    dims = b"".join(int(d).to_bytes(4, "big") for d in arr.shape)
    return bytes([0, 0, 8, arr.ndim]) + dims + arr.astype(np.uint8).tobytes()


def test_mnist_download_true_fetches_checks_and_reads(
    server: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, served = server
    rng = np.random.default_rng(0)
    contents = {
        "train-images-idx3-ubyte.gz": gzip.compress(_idx(rng.integers(0, 255, (6, 28, 28)))),
        "train-labels-idx1-ubyte.gz": gzip.compress(_idx(rng.integers(0, 9, 6))),
        "t10k-images-idx3-ubyte.gz": gzip.compress(_idx(rng.integers(0, 255, (2, 28, 28)))),
        "t10k-labels-idx1-ubyte.gz": gzip.compress(_idx(rng.integers(0, 9, 2))),
    }
    for name, data in contents.items():
        (served / "good" / name).write_bytes(data)
        (served / "corrupt" / name).write_bytes(data[:-3])
    resources = [(n, hashlib.md5(d).hexdigest()) for n, d in contents.items()]
    monkeypatch.setattr(MNIST, "resources", resources)
    monkeypatch.setattr(MNIST, "mirrors", [f"{url}/corrupt/", f"{url}/good/"])
    root = tmp_path / "root"
    ds = MNIST(root, download=True)
    assert len(ds) == 6 and len(MNIST(root, train=False)) == 2
    raw = root / "MNIST" / "raw"
    assert sorted(p.name for p in raw.iterdir()) == sorted(contents)
    monkeypatch.setattr(MNIST, "mirrors", ["http://127.0.0.1:9/"])
    assert len(MNIST(root, download=True)) == 6  # present: nothing fetched


def test_mnist_download_offline_says_how_to_place_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(MNIST, "mirrors", ["http://127.0.0.1:9/"])
    with pytest.raises(DownloadError, match=r"place it at .*MNIST/raw/train-images-idx3-ubyte.gz"):
        MNIST(tmp_path, download=True)
    assert leftovers(tmp_path / "MNIST" / "raw") == []


def _tgz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _cifar_archive() -> bytes:
    rng = np.random.default_rng(1)
    files = {
        f"data_batch_{i}": {
            "data": rng.integers(0, 255, (2, 3072), dtype=np.uint8),
            "labels": [i, 0],
        }
        for i in range(1, 6)
    }
    files["test_batch"] = {"data": np.zeros((1, 3072), np.uint8), "labels": [3]}
    files["batches.meta"] = {"label_names": [f"k{i}" for i in range(10)]}
    return _tgz({f"cifar-10-batches-py/{k}": pickle.dumps(v, protocol=2) for k, v in files.items()})


def test_cifar_download_true_fetches_verifies_and_extracts(
    server: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, served = server
    archive = _cifar_archive()
    (served / "good" / "cifar-10-python.tar.gz").write_bytes(archive)
    (served / "corrupt" / "cifar-10-python.tar.gz").write_bytes(archive[:100])
    monkeypatch.setattr(CIFAR10, "tgz_md5", hashlib.md5(archive).hexdigest())
    monkeypatch.setattr(
        CIFAR10,
        "urls",
        [f"{url}/corrupt/cifar-10-python.tar.gz", f"{url}/good/cifar-10-python.tar.gz"],
    )
    ds = CIFAR10(tmp_path, download=True)
    assert len(ds) == 10 and ds.classes[0] == "k0"
    assert (tmp_path / "cifar-10-batches-py" / "data_batch_3").is_file()
    assert (tmp_path / "cifar-10-python.tar.gz").read_bytes() == archive
    assert leftovers(tmp_path) == []


def test_one_archive_dataset_fetches_only_when_asked_and_missing(
    server: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The download check the one-archive datasets share (RenderedSST2's here): download=False
    never fetches, download=True fetches and extracts once, a wrong archive is not found."""
    url, served = server
    archive = _tgz(
        {f"rendered-sst2/test/{c}/{i}.png": b"png" for i, c in enumerate(["negative", "positive"])}
    )
    (served / "good" / "rendered-sst2.tgz").write_bytes(archive)
    (served / "corrupt" / "rendered-sst2.tgz").write_bytes(_tgz({"other/x.png": b"png"}))
    monkeypatch.setattr(RenderedSST2, "_MD5", None)
    monkeypatch.setattr(RenderedSST2, "_URL", f"{url}/good/rendered-sst2.tgz")
    root = tmp_path / "data"
    with pytest.raises(RuntimeError, match="RenderedSST2 needs negative/ and positive/"):
        RenderedSST2(root, split="test")
    assert not root.exists() or not any(root.iterdir())
    ds = RenderedSST2(root, split="test", download=True)
    assert len(ds) == 2
    assert [label for _, label in ds._samples] == [0, 1]
    assert (root / "rendered-sst2.tgz").read_bytes() == archive
    (served / "good" / "rendered-sst2.tgz").unlink()  # present now: nothing is fetched again
    (root / "rendered-sst2.tgz").unlink()
    assert len(RenderedSST2(root, split="test", download=True)) == 2
    monkeypatch.setattr(RenderedSST2, "_URL", f"{url}/corrupt/rendered-sst2.tgz")
    with pytest.raises(RuntimeError, match=r"Dataset not found: RenderedSST2.*corrupt/rendered"):
        RenderedSST2(tmp_path / "elsewhere", split="test", download=True)


def test_extract_archive_refuses_paths_outside_the_destination(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 1
        tf.addfile(info, io.BytesIO(b"x"))
    (tmp_path / "bad.tar.gz").write_bytes(buf.getvalue())
    with pytest.raises(RuntimeError, match="refusing to extract '../escape.txt'"):
        extract_archive(tmp_path / "bad.tar.gz", tmp_path / "dest")
    assert not (tmp_path / "escape.txt").exists()
    assert list((tmp_path / "dest").iterdir()) == []
