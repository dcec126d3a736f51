"""PyTorch programs run on lucid with only their imports changed, and train.

Each program in `programs/` is plain PyTorch code. The test maps its import lines with
`tools/port_check` (the mapping a user would apply: `import torch` -> `import lucid as torch`,
torchvision -> `lucid.data`), runs its `main` and checks that the loss goes down. Where torch
is installed, the same program runs unmapped on torch from lucid's initial weights (saved to
.npz, loaded with `torch.from_numpy`) and the losses computed before any randomness enters
agree.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the folder's shared helpers

from port_tools import port_check  # type: ignore[import-not-found]  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = Path(__file__).resolve().parent / "programs"
TEXT = REPO_ROOT / "CONTRIBUTING.md"  # a small English text for the language models


def load_program(name: str, framework: str) -> types.ModuleType:
    """The program as a module; on lucid with its imports mapped, on torch as written."""
    path = PROGRAMS / f"{name}.py"
    source = path.read_text()
    if framework == "lucid":
        source = port_check().map_imports(source)
    module = types.ModuleType(f"program_{name}_{framework}")
    module.__file__ = str(path)
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module


MIXED_IMPORTS = """\
import torch
import torch.nn as nn
import torch.utils.data
from torch import (nn as N,
    optim)
import os, torchvision
from torchvision.utils import save_image
from . import sibling
def f():
    from torch.nn import functional as F  # inside a function
line_ten = 10
"""


def test_port_check_maps_import_lines_only_and_keeps_line_numbers() -> None:
    mapped = port_check().map_imports(MIXED_IMPORTS).splitlines()
    assert mapped[:3] == [
        "import lucid as torch",
        "import lucid.nn as nn",
        "import lucid.utils.data; import lucid as torch",
    ]
    assert mapped[3] == "from lucid import nn as N, optim \\" and mapped[4] == ""
    assert mapped[5:8] == [
        "import os; import lucid.data as torchvision",
        "from lucid.data.utils import save_image",
        "from . import sibling",
    ]
    assert mapped[9] == "    from lucid.nn import functional as F  # inside a function"
    assert mapped[10] == "line_ten = 10" and len(mapped) == len(MIXED_IMPORTS.splitlines())
    compile("\n".join(mapped), "<mapped>", "exec")


def test_port_check_maps_einops_torch_layers_to_lucids() -> None:
    # vit-pytorch's modules take Rearrange/Reduce from einops.layers.torch (torch modules);
    # einops itself stays (it works on lucid tensors through lucid's backend).
    source = (
        "from einops.layers.torch import Rearrange, Reduce\n"
        "import einops.layers.torch as L\n"
        "from einops import rearrange\n"
        "import einops.layers.torch\n"
        "import einops\n"
    )
    mapped = port_check().map_imports(source).splitlines()
    assert mapped == [
        "from lucid.nn.einops import Rearrange, Reduce",
        "import lucid.nn.einops as L",
        "from einops import rearrange",
        "import einops.layers.torch; import lucid.nn.einops",
        "import einops",
    ]
    assert port_check().map_module("einops.layers.torch") == "lucid.nn.einops"
    assert port_check().map_module("einops.layers") == "einops.layers"
    assert port_check().map_module("torch.nn.attention") == "lucid.nn.attention"


def test_port_check_runs_a_folder_with_its_local_modules(tmp_path: Path) -> None:
    program = tmp_path / "program"
    program.mkdir()
    (program / "model.py").write_text("import torch.nn as nn\nLayer = nn.Linear\n")
    (program / "main.py").write_text(
        "import os, sys\nimport torch\nfrom model import Layer\n"
        "print(torch.__name__, Layer.__module__.split('.')[0], sys.argv[1:], os.getcwd())\n"
    )
    tool = REPO_ROOT / "tools" / "port_check" / "port_check.py"
    work = tmp_path / "work"
    command = [sys.executable, str(tool), "--entry", "main.py", "--workdir", str(work)]
    done = subprocess.run(
        [*command, str(program), "--epochs", "1", "--show"],
        capture_output=True,
        text=True,
        cwd=program,  # the program runs from the caller's folder, as `python main.py` would
    )
    assert done.returncode == 0, done.stderr
    expected = ["lucid", "lucid", "['--epochs',", "'1',", "'--show']", str(program)]
    assert done.stdout.split() == expected
    assert (work / "model.py").read_text().startswith("import lucid.nn as nn\n")
    assert (program / "model.py").read_text().startswith("import torch.nn as nn\n")


# The module paths pytorch/examples' word_language_model lists for torch.load's safe_globals,
# reached by attribute from `import torch` alone.
TORCH_PATHS = [
    "nn.functional.relu",
    "nn.modules.activation.MultiheadAttention",
    "nn.modules.container.ModuleList",
    "nn.modules.dropout.Dropout",
    "nn.modules.linear.NonDynamicallyQuantizableLinear",
    "nn.modules.normalization.LayerNorm",
    "nn.modules.sparse.Embedding",
    "nn.modules.rnn.LSTM",
    "nn.modules.transformer.TransformerEncoderLayer",
    "serialization.safe_globals",
]


def test_torch_paths_are_reachable_as_attributes_of_lucid() -> None:
    reach = "for p in PATHS: functools.reduce(getattr, p.split('.'), lucid)"
    script = f"import functools, lucid\nPATHS = {TORCH_PATHS!r}\n{reach}\n"  # a fresh process
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def mnist_root(mnist_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root folder in torchvision's layout (root/MNIST/raw/*-ubyte.gz) over the real files."""
    root = tmp_path_factory.mktemp("torchvision_root")
    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for stem in ("train-images-idx3", "train-labels-idx1", "t10k-images-idx3", "t10k-labels-idx1"):
        found = sorted(mnist_dir.glob(f"{stem}-ubyte*"))
        assert found, f"no {stem}-ubyte[.gz] in {mnist_dir}"
        (raw / found[0].name).symlink_to(found[0])
    return root


def _args(name: str, mnist_root: Path, out: Path) -> list[str]:
    if name == "mnist_cnn":
        return ["--data-root", str(mnist_root), "--save-model", str(out / "cnn.pt")]
    if name == "mnist_vae":
        return ["--data-root", str(mnist_root), "--out-dir", str(out)]
    return ["--text", str(TEXT)]


PROGRAM_NAMES = ["mnist_cnn", "mnist_vae", "char_lstm", "tiny_gpt"]


def _went_down(losses: list[float]) -> bool:
    return float(np.mean(losses[-5:])) < float(np.mean(losses[:5]))


@pytest.mark.parametrize("name", PROGRAM_NAMES)
def test_program_trains_on_lucid_with_only_imports_changed(
    name: str, mnist_root: Path, tmp_path: Path
) -> None:
    result = load_program(name, "lucid").main(_args(name, mnist_root, tmp_path))
    losses = result["losses"]
    assert all(np.isfinite(losses)), losses
    assert _went_down(losses), f"{name}: the training loss did not go down: {losses}"
    if "eval_after" in result:
        assert result["eval_after"] < result["eval_before"], result


def test_tiny_gpt_with_compile_matches_its_eager_losses(mnist_root: Path, tmp_path: Path) -> None:
    # nanoGPT's compile=True: the same program, the model through torch.compile (lucid.compile)
    args = [*_args("tiny_gpt", mnist_root, tmp_path), "--steps", "4"]
    eager = load_program("tiny_gpt", "lucid").main(args)
    compiled = load_program("tiny_gpt", "lucid").main([*args, "--compile"])
    assert compiled["losses"] == eager["losses"] and compiled["eval_before"] == eager["eval_before"]
    log = compiled["model"]._compiled_forward.log
    assert all(e.program is not None and e.program.arrays is not None for e in log)
    assert any(e.program.arrays.bwd is not None for e in log)  # the training signature's


def test_cnn_checkpoint_and_vae_images_are_written(mnist_root: Path, tmp_path: Path) -> None:
    import lucid

    result = load_program("mnist_cnn", "lucid").main(
        [*_args("mnist_cnn", mnist_root, tmp_path), "--steps", "2"]
    )
    saved = lucid.load(tmp_path / "cnn.pt")
    assert sorted(saved) == sorted(result["model"].state_dict())
    load_program("mnist_vae", "lucid").main(
        [*_args("mnist_vae", mnist_root, tmp_path), "--steps", "2"]
    )
    for image in ("reconstruction.png", "sample.png"):
        assert (tmp_path / image).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# The losses that do not depend on a framework's random stream, per program, and the extra
# arguments that make them so (no dropout, no shuffling).
PARITY: dict[str, tuple[list[str], Callable[[dict[str, Any]], list[float]]]] = {
    "mnist_cnn": (
        ["--dropout", "0", "--no-shuffle", "--steps", "3"],
        lambda r: [r["eval_before"], *r["losses"], r["eval_after"]],
    ),
    "mnist_vae": (["--steps", "1"], lambda r: [r["eval_before"]]),
    "char_lstm": (
        ["--dropout", "0", "--steps", "3"],
        lambda r: [r["eval_before"], *r["losses"], r["eval_after"]],
    ),
    "tiny_gpt": (["--steps", "1"], lambda r: [r["eval_before"]]),
}


def _torchvision_stand_in(torch: types.ModuleType) -> types.ModuleType:
    """What the programs use of torchvision, on torch tensors, for where it is not installed.

    MNIST's files are read by lucid.data's reader (numpy images until the transform) and
    images are written by lucid.data's PNG writer; the tensor transforms are torch's maths.
    """
    from lucid.data import datasets, transforms, utils

    def to_tensor(img: np.ndarray) -> Any:
        return torch.from_numpy(np.array(img, np.float32) / 255.0).unsqueeze(0)

    def normalize(mean: list[float], std: list[float]) -> Callable[[Any], Any]:
        m, s = torch.tensor(mean).view(-1, 1, 1), torch.tensor(std).view(-1, 1, 1)
        return lambda t: (t - m) / s

    vision = types.ModuleType("torchvision")
    vision.datasets = types.SimpleNamespace(MNIST=datasets.MNIST)  # type: ignore[attr-defined]
    vision.transforms = types.SimpleNamespace(  # type: ignore[attr-defined]
        Compose=transforms.Compose, ToTensor=lambda: to_tensor, Normalize=normalize
    )
    vision.utils = types.SimpleNamespace(save_image=utils.save_image)  # type: ignore[attr-defined]
    return vision


def _torchvision_installed() -> bool:
    try:
        importlib.metadata.distribution("torchvision")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.parity
@pytest.mark.parametrize("name", PROGRAM_NAMES)
def test_program_matches_torch_from_the_same_weights(
    name: str,
    mnist_root: Path,
    tmp_path: Path,
    torch: types.ModuleType,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # torchvision installed (not only its model sources on sys.path, as lucid-models' parity
    # tests put them there without its compiled ops) runs as it is; else the stand-in
    if not _torchvision_installed():
        vision = _torchvision_stand_in(torch)
        for sub in ("", ".datasets", ".transforms", ".utils"):
            monkeypatch.setitem(sys.modules, f"torchvision{sub}", getattr(vision, sub[1:], vision))
    extra, deterministic = PARITY[name]
    args = [*_args(name, mnist_root, tmp_path), *extra]
    init = str(tmp_path / "init.npz")
    ours = load_program(name, "lucid").main([*args, "--save-init", init])
    theirs = load_program(name, "torch").main([*args, "--init-from", init])
    np.testing.assert_allclose(deterministic(ours), deterministic(theirs), rtol=1e-5, atol=1e-5)
