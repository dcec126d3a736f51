"""nn.parallel.DataParallel and the nn module paths, compared with PyTorch's."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import lucid
import lucid.nn as nn

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")


def test_data_parallel_matches_torch_keys_and_outputs() -> None:
    theirs = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    ours = nn.DataParallel(nn.Linear(3, 2))
    state = {k: lucid.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    ours.load_state_dict(state)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(
        ours(lucid.tensor(x)).detach().numpy(),
        theirs(torch.tensor(x)).detach().numpy(),
        rtol=1e-6,
        atol=1e-6,
    )
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("nn.modules.container", "Sequential"),
        ("nn.modules.container", "ModuleDict"),
        ("nn.modules.activation", "MultiheadAttention"),
        ("nn.modules.linear", "NonDynamicallyQuantizableLinear"),
        ("nn.modules.module", "Module"),
        ("nn.parallel", "DataParallel"),
    ],
)
def test_the_paths_torch_has_exist(path: str, name: str) -> None:
    assert hasattr(importlib.import_module(f"torch.{path}"), name)
    assert hasattr(importlib.import_module(f"lucid.{path}"), name)


def test_mha_out_proj_class_name_matches() -> None:
    ours = type(nn.MultiheadAttention(4, 2).out_proj).__name__
    assert ours == type(torch.nn.MultiheadAttention(4, 2).out_proj).__name__
