"""PyTorch's module paths for nn classes, nn.parallel, and Module.cuda."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import lucid
import lucid.nn as nn


@pytest.mark.parametrize(
    ("path", "name", "obj"),
    [
        ("lucid.nn.modules.container", "Sequential", nn.Sequential),
        ("lucid.nn.modules.container", "ModuleList", nn.ModuleList),
        ("lucid.nn.modules.container", "ModuleDict", nn.ModuleDict),
        ("lucid.nn.modules.container", "ParameterList", nn.ParameterList),
        ("lucid.nn.modules.container", "ParameterDict", nn.ParameterDict),
        ("lucid.nn.modules.activation", "MultiheadAttention", nn.MultiheadAttention),
        ("lucid.nn.modules.module", "Module", nn.Module),
        ("lucid.nn.parallel", "DataParallel", nn.DataParallel),
    ],
)
def test_torch_paths_name_the_same_objects(path: str, name: str, obj: object) -> None:
    assert getattr(importlib.import_module(path), name) is obj


def test_non_dynamically_quantizable_linear_is_mhas_out_proj_class() -> None:
    from lucid.nn.modules.linear import NonDynamicallyQuantizableLinear

    assert issubclass(NonDynamicallyQuantizableLinear, nn.Linear)
    assert type(nn.MultiheadAttention(4, 2).out_proj) is NonDynamicallyQuantizableLinear
    assert not hasattr(nn, "NonDynamicallyQuantizableLinear")


def test_data_parallel_forwards_to_its_module_with_prefixed_state() -> None:
    inner = nn.Linear(3, 2)
    net = nn.DataParallel(inner, device_ids=[0])
    x = lucid.randn(4, 3)
    np.testing.assert_allclose(net(x).detach().numpy(), inner(x).detach().numpy(), rtol=0, atol=0)
    assert list(net.state_dict()) == ["module.weight", "module.bias"]
    assert net.module is inner and net.device_ids == []
    fresh = nn.DataParallel(nn.Linear(3, 2))
    fresh.load_state_dict(net.state_dict())
    np.testing.assert_allclose(
        fresh.module.weight.detach().numpy(), inner.weight.detach().numpy(), rtol=0, atol=0
    )


def test_distributed_data_parallel_import_names_the_package() -> None:
    try:
        importlib.import_module("lucid.distributed")
    except ImportError:
        pass
    else:  # pragma: no cover
        pytest.skip("lucid-distributed is installed")
    with pytest.raises(ImportError, match="pip install lucid-distributed"):
        from lucid.nn.parallel import DistributedDataParallel  # noqa: F401
    with pytest.raises(ImportError, match="nn.SyncBatchNorm comes with the lucid-distributed"):
        nn.SyncBatchNorm  # noqa: B018
    assert not hasattr(nn.parallel, "NoSuchWrapper")
    assert not hasattr(nn, "NoSuchLayer")


def test_module_cuda_raises_saying_what_to_use() -> None:
    with pytest.raises(AssertionError, match="no CUDA device.*'mlx'"):
        nn.Linear(2, 2).cuda()
