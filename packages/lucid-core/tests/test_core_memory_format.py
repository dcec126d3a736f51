"""Memory formats: lucid.channels_last & co., strides and is_contiguous as torch reports them."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

import lucid

FORMATS = {
    "contiguous_format": lucid.contiguous_format,
    "channels_last": lucid.channels_last,
    "preserve_format": lucid.preserve_format,
}
SHAPES = [(2, 3, 4, 5), (1, 3, 4, 4), (2, 1, 3, 3), (2, 3, 1, 1)]


def _x(shape: tuple[int, ...], seed: int = 0) -> lucid.Tensor:
    return lucid.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def test_objects_as_torch() -> None:
    assert repr(lucid.channels_last) == "lucid.channels_last"
    assert isinstance(lucid.channels_last, lucid.memory_format)
    assert lucid.channels_last is not lucid.contiguous_format
    assert pickle.loads(pickle.dumps(lucid.channels_last)) is lucid.channels_last


def test_channels_last_is_nhwc_storage_values_unchanged() -> None:
    x = _x((2, 3, 4, 5))
    c = x.to(memory_format=lucid.channels_last)
    assert c.stride() == (60, 1, 15, 3)
    assert c.is_contiguous(memory_format=lucid.channels_last)
    assert not c.is_contiguous()
    np.testing.assert_array_equal(c.numpy(), x.numpy())
    assert c.array.base is not None and c.array.base.flags.c_contiguous  # an NHWC buffer
    assert c.contiguous().stride() == (60, 20, 5, 1)
    assert c.contiguous(memory_format=lucid.channels_last) is c
    assert c.to(memory_format=lucid.channels_last) is c
    assert x.contiguous() is x


def test_layout_survives_elementwise_ops_and_clone() -> None:
    c = _x((2, 3, 4, 5)).to(memory_format=lucid.channels_last)
    for y in (c + 1, c * c, c.relu(), c.exp(), c.clone(), c.detach(), c.to(lucid.float64)):
        assert y.is_contiguous(memory_format=lucid.channels_last), y
        assert not y.is_contiguous()
    flat = c.reshape(2, -1)  # reshape copies into row-major, as torch
    assert flat.is_contiguous()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        c.view(2, -1)
    assert c.permute(0, 2, 3, 1).is_contiguous()
    assert c.clone(memory_format=lucid.contiguous_format).is_contiguous()


def test_gradient_passes_through_format_change() -> None:
    x = _x((2, 3, 2, 2)).requires_grad_()
    (x.to(memory_format=lucid.channels_last) * 2).sum().backward()
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), 2.0, rtol=0, atol=0)


@pytest.mark.parametrize(
    "fn", ["empty_like", "zeros_like", "ones_like", "rand_like", "randn_like", "full_like"]
)
def test_like_functions_follow_memory_format(fn: str) -> None:
    x = _x((2, 3, 4, 5))
    c = x.to(memory_format=lucid.channels_last)
    make: Any = getattr(lucid, fn)
    args: tuple[Any, ...] = (7.0,) if fn == "full_like" else ()
    assert make(c, *args).is_contiguous(memory_format=lucid.channels_last)  # preserve_format
    assert make(x, *args).is_contiguous()
    assert make(x, *args, memory_format=lucid.channels_last).stride() == c.stride()
    assert make(c, *args, memory_format=lucid.contiguous_format).is_contiguous()
    if fn in ("zeros_like", "ones_like", "full_like"):
        value = {"zeros_like": 0.0, "ones_like": 1.0, "full_like": 7.0}[fn]
        assert (make(c, *args).numpy() == value).all()
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        make(_x((2, 3, 4)), *args, memory_format=lucid.channels_last)


def test_empty_takes_a_memory_format() -> None:
    assert lucid.empty(2, 3, 4, 5, memory_format=lucid.channels_last).stride() == (60, 1, 15, 3)
    assert lucid.empty(2, 3, 4, 5).is_contiguous()
    with pytest.raises(RuntimeError, match="unsupported memory format Preserve"):
        lucid.empty(2, 3, 4, 5, memory_format=lucid.preserve_format)


def test_bad_formats_raise_as_torch() -> None:
    t3 = _x((2, 3, 4))
    for call in (
        lambda: t3.contiguous(memory_format=lucid.channels_last),
        lambda: t3.to(memory_format=lucid.channels_last),
        lambda: t3.clone(memory_format=lucid.channels_last),
    ):
        with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
            call()
    with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d"):
        _x((2, 3, 4, 4)).to(memory_format=lucid.channels_last_3d)
    with pytest.raises(TypeError, match="must be lucid.memory_format, not str"):
        _x((2, 3, 4, 4)).contiguous(memory_format="channels_last")
    assert not t3.is_contiguous(memory_format=lucid.channels_last)


def test_channels_last_3d() -> None:
    x = _x((2, 3, 2, 4, 5))
    c = x.to(memory_format=lucid.channels_last_3d)
    assert c.stride() == (120, 1, 60, 15, 3)
    assert c.is_contiguous(memory_format=lucid.channels_last_3d)
    np.testing.assert_array_equal(c.numpy(), x.numpy())


def _torch_format(torch: Any, name: str) -> Any:
    return getattr(torch, name)


@pytest.mark.parity
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", ["contiguous_format", "channels_last"])
def test_strides_and_is_contiguous_vs_torch(shape: tuple[int, ...], name: str) -> None:
    torch = pytest.importorskip("torch")
    x = _x(shape)
    tx = torch.from_numpy(x.numpy().copy())
    ours, theirs = x.to(memory_format=FORMATS[name]), tx.to(memory_format=getattr(torch, name))
    sliced, tsliced = ours[:, :, :1], theirs[:, :, :1]
    empty = lucid.empty_like(ours)
    for a, b in ((ours, theirs), (ours + 1, theirs + 1), (ours.clone(), theirs.clone()),
                 (sliced, tsliced), (empty, torch.empty_like(theirs))):  # fmt: skip
        assert a.stride() == b.stride()
        assert a.is_contiguous() == b.is_contiguous()
        for f in ("channels_last", "contiguous_format", "preserve_format"):
            mine = a.is_contiguous(memory_format=FORMATS[f])
            assert mine == b.is_contiguous(memory_format=getattr(torch, f)), (f, a.stride())
        if a is not empty:  # values never change, only the layout
            np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parity
def test_channels_last_3d_vs_torch() -> None:
    torch = pytest.importorskip("torch")
    x = _x((2, 3, 2, 4, 5))
    c = x.to(memory_format=lucid.channels_last_3d)
    tc = torch.from_numpy(x.numpy().copy()).to(memory_format=torch.channels_last_3d)
    assert c.stride() == tc.stride()
    assert c.is_contiguous() == tc.is_contiguous()
    assert c.contiguous().stride() == tc.contiguous().stride()


def test_mlx_accepts_formats_and_reports_contiguous() -> None:
    pytest.importorskip("mlx.core")
    pytest.importorskip("lucid.backends.mlx")
    x = lucid.tensor(np.arange(96, dtype=np.float32).reshape(2, 3, 4, 4), device="mlx")
    c = x.to(memory_format=lucid.channels_last)  # MLX has no strides: contiguous_format
    assert c.stride() == (48, 16, 4, 1) and c.is_contiguous()
    assert not c.is_contiguous(memory_format=lucid.channels_last)
    assert lucid.zeros_like(x, memory_format=lucid.channels_last).device == x.device
    np.testing.assert_array_equal(c.numpy(), x.numpy())
    with pytest.raises(RuntimeError, match="required rank 4 tensor"):
        x[0].contiguous(memory_format=lucid.channels_last)
