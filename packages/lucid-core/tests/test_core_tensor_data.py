"""``Tensor.data`` is PyTorch's (a detached Tensor sharing the storage, written through without a
version bump; assigning it swaps the storage) and ``Tensor.array`` is the native backend array,
on NumPy and, where it is installed, on MLX (whose in-place changes make new arrays)."""

from __future__ import annotations

import gc
import importlib.util
import weakref
from typing import Any

import numpy as np
import pytest

import lucid

HAS_MLX = importlib.util.find_spec("mlx") is not None and (
    importlib.util.find_spec("lucid.backends.mlx") is not None
)
DEVICES = [
    "cpu",
    pytest.param(
        "mlx", marks=[pytest.mark.mlx, pytest.mark.skipif(not HAS_MLX, reason="needs mlx")]
    ),
]


def _leaf(values: list[float], device: str) -> lucid.Tensor:
    return lucid.tensor(values, device=device, requires_grad=True)


def _np(t: lucid.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


# -- .array ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_array_is_the_native_array(device: str) -> None:
    t = lucid.tensor([1.0, 2.0], device=device)
    native = np.ndarray
    if device == "mlx":
        import mlx.core as mx

        native = mx.array
    assert isinstance(t.array, native)
    assert t.array is t._data and t.data.array is t.array
    with pytest.raises(AttributeError):
        t.array = t.array  # type: ignore[misc]


# -- .data: a detached Tensor on the same storage -------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_data_is_a_detached_tensor_on_the_same_storage(device: str) -> None:
    p = _leaf([1.0, 2.0, 3.0], device)
    y = p * 2
    for t in (p, y):
        d = t.data
        assert type(d) is lucid.Tensor and d is not t
        assert not d.requires_grad and d.grad_fn is None and d.is_leaf
        assert d.array is t.array and d.device == t.device and d.dtype is t.dtype


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_through_data_writes_through_without_a_version_bump(device: str) -> None:
    p = _leaf([1.0, 2.0, 3.0], device)
    version = p._version
    p.data.add_(1.0)  # allowed on a leaf that requires grad, with grad mode on
    p.data.mul_(lucid.tensor([1.0, 2.0, 3.0], device=device))
    p.data.copy_(p.data * 2)
    np.testing.assert_allclose(_np(p), [4.0, 12.0, 24.0], rtol=1e-6, atol=1e-6)
    assert p._version == version
    assert p.requires_grad and p.grad_fn is None and p.is_leaf


@pytest.mark.parametrize("device", DEVICES)
def test_saved_tensor_changed_through_data_is_used_at_backward(device: str) -> None:
    p = _leaf([1.0, 2.0, 3.0], device)
    loss = (p * p).sum()
    p.data.mul_(2.0)  # torch's footgun: not detected, backward sees the new values
    loss.backward()
    assert p.grad is not None
    np.testing.assert_allclose(_np(p.grad), [4.0, 8.0, 12.0], rtol=1e-6, atol=1e-6)
    q = _leaf([1.0, 2.0, 3.0], device)
    loss = (q * q).sum()
    q.detach().mul_(2.0)  # detach shares the version counter: this one is caught
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


@pytest.mark.parametrize("device", DEVICES)
def test_saved_output_changed_through_data_is_used_at_backward(device: str) -> None:
    x = _leaf([0.0, 1.0], device)
    y = x.exp()  # exp saves its output
    y.data.mul_(2.0)
    y.sum().backward()
    assert x.grad is not None
    np.testing.assert_allclose(_np(x.grad), 2 * np.exp([0.0, 1.0]), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_data_of_a_view_and_views_of_data_write_into_the_base(device: str) -> None:
    t = _leaf([[1.0, 2.0], [3.0, 4.0]], device)
    t[0].data.fill_(9.0)
    t.data[1] = lucid.tensor([7.0, 7.0], device=device)
    t.data[1].add_(1.0)
    np.testing.assert_allclose(_np(t), [[9.0, 9.0], [8.0, 8.0]], rtol=1e-6, atol=1e-6)
    assert t._version == 0


@pytest.mark.parametrize("device", DEVICES)
def test_torch_style_parameter_updates(device: str) -> None:
    p = _leaf([1.0, -2.0, 3.0], device)
    (p * p).sum().backward()
    assert p.grad is not None
    p.data.add_(p.grad, alpha=-0.25)
    np.testing.assert_allclose(_np(p), [0.5, -1.0, 1.5], rtol=1e-6, atol=1e-6)
    copy = p.data.clone()
    copy.zero_()
    np.testing.assert_allclose(p.data.numpy(), [0.5, -1.0, 1.5], rtol=1e-6, atol=1e-6)
    lucid.manual_seed(0)
    w = lucid.zeros(200, 50, device=device, requires_grad=True)
    w.data.normal_(0.0, 0.02)
    assert 0.015 < float(w.detach().std()) < 0.025 and w.requires_grad and w.grad_fn is None
    w.data.fill_(0.5)
    np.testing.assert_allclose(_np(w), np.full((200, 50), 0.5), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_through_detach_writes_through_and_bumps_the_shared_version(device: str) -> None:
    p = _leaf([1.0, 2.0], device)
    version = p._version
    p.detach().add_(1.0)
    p.detach()[1].mul_(2.0)
    np.testing.assert_allclose(_np(p), [2.0, 6.0], rtol=1e-6, atol=1e-6)
    assert p._version == version + 2


@pytest.mark.parametrize("device", DEVICES)
def test_chains_of_data_and_detach_write_through(device: str) -> None:
    p = _leaf([1.0, 2.0], device)
    p.data.data.add_(1.0)
    p.detach().data.mul_(2.0)
    p.data.detach()[0].fill_(0.0)
    np.testing.assert_allclose(_np(p), [0.0, 6.0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_detach_and_data_of_a_graph_result_keep_no_graph_alive(device: str) -> None:
    x = _leaf([1.0, 2.0], device)
    loss = (x * x).sum()
    kept = [loss.detach(), loss.data, loss.reshape(1)[0].detach()]
    ref = weakref.ref(loss)
    del loss
    gc.collect()
    assert ref() is None
    np.testing.assert_allclose([float(k) for k in kept], [5.0, 5.0, 5.0], rtol=1e-6, atol=1e-6)


# -- t.data = other swaps the storage -------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_assigning_data_swaps_the_storage(device: str) -> None:
    p = _leaf([1.0, 2.0, 3.0], device)
    ident = id(p)
    p.data = lucid.arange(6, device=device, dtype=lucid.float64).reshape(2, 3)
    assert id(p) == ident and p.shape == (2, 3) and p.dtype is lucid.float64
    assert p.requires_grad and p.is_leaf
    (p * 3).sum().backward()
    assert p.grad is not None
    np.testing.assert_allclose(_np(p.grad), np.full((2, 3), 3.0), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_an_earlier_data_does_not_write_into_swapped_storage(device: str) -> None:
    p = _leaf([1.0, 2.0], device)
    old = p.data
    p.data = lucid.tensor([5.0, 6.0], device=device)
    old.fill_(0.0)
    np.testing.assert_allclose(_np(p), [5.0, 6.0], rtol=1e-6, atol=1e-6)


def test_assigned_storage_is_shared_on_numpy() -> None:
    p = _leaf([1.0, 2.0], "cpu")
    src = lucid.tensor([5.0, 6.0])
    p.data = src
    src.add_(1.0)
    assert p.array is src.array
    np.testing.assert_allclose(_np(p), [6.0, 7.0], rtol=1e-6, atol=1e-6)
    d = p.data
    p.detach().add_(1.0)  # the other direction: on NumPy a .data sees later changes too
    np.testing.assert_allclose(d.numpy(), [7.0, 8.0], rtol=1e-6, atol=1e-6)


def test_assigning_a_non_tensor_is_a_type_error() -> None:
    p = _leaf([1.0, 2.0], "cpu")
    with pytest.raises(TypeError, match="must be set to a Tensor, but got ndarray"):
        p.data = np.zeros(2)  # type: ignore[assignment]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "make",
    [
        lambda d: lucid.ones(4, 3, device=d).sum(),  # a reduction's 0-dim result
        lambda d: lucid.tensor(2.0, device=d) * 3,  # an op on a 0-dim tensor
        lambda d: lucid.ones(4, 3, device=d, requires_grad=True).mean(),  # in a graph
    ],
)
def test_a_0_dim_result_shares_its_storage_with_data_detach_and_views(
    make: Any, device: str
) -> None:
    """NumPy gives a 0-dim result as an immutable scalar; torch's ``loss.data``,
    ``loss.detach()`` and views of a 0-dim tensor write through to it (found by the tutorial
    two_layer_net_module.py's ``loss.data``)."""
    writes = [
        (lambda t: t.data.add_(1), lambda v: v + 1),
        (lambda t: t.detach().fill_(2), lambda v: 2.0),
        (lambda t: t.view(1).mul_(10), lambda v: v * 10),
        (lambda t: t.reshape(1, 1).zero_(), lambda v: 0.0),
    ]
    if device == "cpu":  # MLX writes back through one view step only, and its views are copies
        writes.append((lambda t: t.unsqueeze(0)[0].add_(5), lambda v: v + 5))
    for write, want in writes:
        t = make(device)
        before = t.item()
        with lucid.no_grad():
            write(t)
        assert t.item() == pytest.approx(want(before), rel=1e-6, abs=1e-6)
    if device == "cpu":
        t = make(device)
        v = t.expand(3)
        with lucid.no_grad():
            t.fill_(5)
        assert v.tolist() == [5.0, 5.0, 5.0]  # a write to the base reaches its expanded view


def test_indexing_a_0_dim_tensor_raises_torchs_index_errors() -> None:
    x = lucid.ones(2, 2).sum()
    with pytest.raises(
        IndexError, match=r"^invalid index of a 0-dim tensor\. Use `tensor\.item\(\)`"
    ):
        x[0]
    with pytest.raises(IndexError, match=r"^slice\(\) cannot be applied to a 0-dim tensor\.$"):
        x[0:1]
    with pytest.raises(IndexError, match=r"^too many indices for tensor of dimension 0$"):
        x[None, 0]
    with pytest.raises(IndexError, match=r"^too many indices for tensor of dimension 1$"):
        lucid.ones(3)[1, 1]
    assert x[None].shape == (1,) and x[...].item() == 4.0
