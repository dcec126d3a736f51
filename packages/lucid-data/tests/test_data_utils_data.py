"""``lucid.utils.data`` is ``torch.utils.data``'s path to the very objects of ``lucid.data``."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import lucid
import lucid.data
import lucid.utils.data


def test_every_public_name_is_the_same_object() -> None:
    assert lucid.utils.data.__all__ == lucid.data.__all__
    for name in lucid.data.__all__:
        assert getattr(lucid.utils.data, name) is getattr(lucid.data, name), name


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("lucid.utils.data.dataloader", "DataLoader"),
        ("lucid.utils.data.dataloader", "default_collate"),
        ("lucid.utils.data.dataloader", "get_worker_info"),
        ("lucid.utils.data.dataset", "TensorDataset"),
        ("lucid.utils.data.dataset", "random_split"),
        ("lucid.utils.data.sampler", "RandomSampler"),
        ("lucid.utils.data.distributed", "DistributedSampler"),
    ],
)
def test_torchs_submodule_paths(module: str, name: str) -> None:
    assert getattr(importlib.import_module(module), name) is getattr(lucid.data, name)


def test_reachable_from_import_lucid_and_usable() -> None:
    ds = lucid.utils.data.TensorDataset(lucid.tensor(np.arange(6.0)), lucid.arange(6))
    train, val = lucid.utils.data.random_split(ds, [4, 2])
    x, y = next(iter(lucid.utils.data.DataLoader(train, batch_size=4)))
    assert x.shape == (4,) and y.shape == (4,) and len(val) == 2
