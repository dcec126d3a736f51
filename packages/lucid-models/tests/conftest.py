"""Fixtures of lucid-models' tests: ``mnist_small``, a small MNIST in the real IDX format.

The data are the first 512 training and 500 test images of real MNIST (the ``mnist_dir``
fixture of the repository's ``conftest.py``: ``data/mnist`` in a clone), rewritten as gzipped
IDX files in a temporary folder, so a ``lucid-train`` run reads the same files the real command
reads, in a few seconds.
"""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np
import pytest

MNIST_SMALL_SIZES = {"train": 512, "t10k": 500}  # images per IDX file prefix


def _write_idx(path: Path, array: np.ndarray) -> None:
    """IDX: magic (0, 0, 0x08 = ubyte, ndim), big-endian int32 dims, then the bytes."""
    header = struct.pack(">BBBB", 0, 0, 0x08, array.ndim)
    header += struct.pack(f">{array.ndim}i", *array.shape)
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(header + np.ascontiguousarray(array, dtype=np.uint8).tobytes())


@pytest.fixture(scope="session")
def mnist_small(tmp_path_factory: pytest.TempPathFactory, mnist_dir: Path) -> Path:
    """A folder with MNIST's four IDX files, of 512 training and 500 test images."""
    pytest.importorskip("lucid.data")
    from lucid.data.datasets import MNIST

    root = tmp_path_factory.mktemp("mnist")
    for prefix, n in MNIST_SMALL_SIZES.items():
        ds = MNIST(mnist_dir, train=prefix == "train")
        _write_idx(root / f"{prefix}-images-idx3-ubyte.gz", np.asarray(ds.data)[:n])
        _write_idx(root / f"{prefix}-labels-idx1-ubyte.gz", np.asarray(ds.targets)[:n])
    return root


TORCHVISION_VERSION = "0.28.0"


def _torchvision_source() -> Path:
    """A folder holding torchvision's pure-Python package (``<folder>/torchvision``).

    ``LUCID_TORCHVISION_SRC`` names one; otherwise the wheel is fetched once with
    ``pip download torchvision==0.28.0 --no-deps`` into ``~/.cache/lucid-models-tests`` and
    unpacked there. torchvision is never installed: its model code is imported from the folder.
    """
    import os
    import subprocess
    import sys
    import zipfile

    env = os.environ.get("LUCID_TORCHVISION_SRC")
    if env:
        return Path(env)
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lucid-models-tests"
    src = cache / f"torchvision-{TORCHVISION_VERSION}"
    if (src / "torchvision" / "models" / "__init__.py").is_file():
        return src
    wheels = cache / "wheels"
    cmd = [sys.executable, "-m", "pip", "download", f"torchvision=={TORCHVISION_VERSION}",
           "--no-deps", "--quiet", "-d", str(wheels)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    found = sorted(wheels.glob(f"torchvision-{TORCHVISION_VERSION}-*.whl"))
    if done.returncode or not found:
        why = done.stderr.strip()[-200:]
        pytest.skip(f"torchvision {TORCHVISION_VERSION}'s source is not here and `pip download` "
                    f"failed ({why}); set LUCID_TORCHVISION_SRC")  # fmt: skip
    tmp = cache / f".unpack-{os.getpid()}"
    with zipfile.ZipFile(found[0]) as zf:
        zf.extractall(tmp, [n for n in zf.namelist() if n.startswith("torchvision/")])
    tmp.rename(src) if not src.exists() else None
    return src


@pytest.fixture(scope="session")
def tvm() -> object:
    """``torchvision.models`` 0.28, imported from its source with torch 2.13 (parity env).

    Its compiled ops do not load without the matching C++ extension: the modules that register
    them (``torchvision._meta_registrations``) are stubbed; the model code needs none of them.
    """
    import importlib
    import sys
    import types

    pytest.importorskip("torch")
    if "torchvision.models" not in sys.modules:
        src = str(_torchvision_source())
        if src not in sys.path:
            sys.path.append(src)
        stub = "torchvision._meta_registrations"
        sys.modules.setdefault(stub, types.ModuleType(stub))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module("torchvision.models")


TIMM_VERSION = "1.0.31"


def _timm_source() -> Path:
    """A folder holding timm's pure-Python package (``<folder>/timm``).

    ``LUCID_TIMM_SRC`` names one; otherwise the wheel is fetched once with
    ``pip download timm==1.0.31 --no-deps`` into ``~/.cache/lucid-models-tests`` and unpacked
    there. timm is never installed (it would pull a compiled torchvision that does not load with
    torch 2.13 here): its model code is imported from the folder, next to torchvision's source.
    """
    import os
    import subprocess
    import sys
    import zipfile

    env = os.environ.get("LUCID_TIMM_SRC")
    if env:
        return Path(env)
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lucid-models-tests"
    src = cache / f"timm-{TIMM_VERSION}"
    if (src / "timm" / "__init__.py").is_file():
        return src
    wheels = cache / "wheels"
    cmd = [sys.executable, "-m", "pip", "download", f"timm=={TIMM_VERSION}",
           "--no-deps", "--quiet", "-d", str(wheels)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    found = sorted(wheels.glob(f"timm-{TIMM_VERSION}-*.whl"))
    if done.returncode or not found:
        why = done.stderr.strip()[-200:]
        pytest.skip(f"timm {TIMM_VERSION}'s source is not here and `pip download` "
                    f"failed ({why}); set LUCID_TIMM_SRC")  # fmt: skip
    tmp = cache / f".unpack-timm-{os.getpid()}"
    with zipfile.ZipFile(found[0]) as zf:
        zf.extractall(tmp, [n for n in zf.namelist() if n.startswith("timm/")])
    tmp.rename(src) if not src.exists() else None
    return src


@pytest.fixture(scope="session")
def timm(tvm: object) -> object:
    """``timm`` 1.0.31, imported from its source with torch 2.13 (parity env).

    It imports torchvision, which comes from the ``tvm`` fixture's source with its compiled
    ops stubbed; its other needs (huggingface_hub, pyyaml, safetensors) come with the parity
    env's transformers. Build references with ``timm.create_model(name, pretrained=False)``.
    """
    import importlib
    import sys
    import warnings

    src = str(_timm_source())
    if src not in sys.path:
        sys.path.append(src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module("timm")


FACENET_VERSION = "2.6.0"


def _facenet_source() -> Path:
    """A folder holding facenet-pytorch's pure-Python package (``<folder>/facenet_pytorch``).

    ``LUCID_FACENET_SRC`` names one; otherwise the wheel is fetched once with
    ``pip download facenet-pytorch==2.6.0 --no-deps`` into ``~/.cache/lucid-models-tests`` and
    unpacked there (never installed: it pins an older torch).
    """
    import os
    import subprocess
    import sys
    import zipfile

    env = os.environ.get("LUCID_FACENET_SRC")
    if env:
        return Path(env)
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lucid-models-tests"
    src = cache / f"facenet-pytorch-{FACENET_VERSION}"
    if (src / "facenet_pytorch" / "models" / "inception_resnet_v1.py").is_file():
        return src
    wheels = cache / "wheels"
    cmd = [sys.executable, "-m", "pip", "download", f"facenet-pytorch=={FACENET_VERSION}",
           "--no-deps", "--quiet", "-d", str(wheels)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    found = sorted(wheels.glob(f"facenet_pytorch-{FACENET_VERSION}-*.whl"))
    if done.returncode or not found:
        why = done.stderr.strip()[-200:]
        pytest.skip(f"facenet-pytorch {FACENET_VERSION}'s source is not here and `pip download` "
                    f"failed ({why}); set LUCID_FACENET_SRC")  # fmt: skip
    tmp = cache / f".unpack-facenet-{os.getpid()}"
    with zipfile.ZipFile(found[0]) as zf:
        zf.extractall(tmp, [n for n in zf.namelist() if n.startswith("facenet_pytorch/")])
    tmp.rename(src) if not src.exists() else None
    return src


@pytest.fixture(scope="session")
def facenet_irv1() -> object:
    """facenet-pytorch 2.6.0's ``models.inception_resnet_v1`` module (parity env), imported from
    its source without running the package's ``__init__`` (which imports the MTCNN detector and
    torchvision's compiled ops)."""
    import importlib
    import sys
    import types

    pytest.importorskip("torch")
    pytest.importorskip("requests")
    pytest.importorskip("tqdm")
    root = _facenet_source() / "facenet_pytorch"
    for name, path in (("facenet_pytorch", root), ("facenet_pytorch.models", root / "models")):
        if name not in sys.modules:
            module = types.ModuleType(name)
            module.__path__ = [str(path)]
            sys.modules[name] = module
    return importlib.import_module("facenet_pytorch.models.inception_resnet_v1")
