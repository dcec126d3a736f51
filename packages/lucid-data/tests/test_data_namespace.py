"""``import torchvision`` makes torchvision.utils/datasets/transforms/tv_tensors attributes;
port_check writes ``import lucid.data as torchvision``, so lucid.data must reach them too."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_submodules_are_reachable_after_a_plain_import() -> None:
    # a fresh interpreter: in this one, other tests have imported the submodules already
    code = (
        "import lucid.data as torchvision\n"
        "assert callable(torchvision.utils.make_grid)\n"
        "assert torchvision.datasets.MNIST.__name__ == 'MNIST'\n"
        "assert callable(torchvision.transforms.functional.resize)\n"
        "assert torchvision.tv_tensors.BoundingBoxes.__name__ == 'BoundingBoxes'\n"
        "import lucid.utils.data, sys\n"
        "print('lucid.data.datasets' in sys.modules)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True"


def test_an_unknown_attribute_still_raises_attribute_error() -> None:
    import lucid.data

    with pytest.raises(AttributeError, match="has no attribute 'make_grid'"):
        lucid.data.make_grid  # noqa: B018
    assert not hasattr(lucid.data, "nope")
