"""View ops that record nothing (``reshape``/``view``/``transpose``/``permute``/``split``,
``squeeze``/``unsqueeze``, and ``contiguous``' copy) skip their ``Function.apply`` on NumPy
(issue 30's generation path): the same arrays, the same view bookkeeping (base, shared version
counter), and the op path where a node is recorded or the ops are watched."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.autograd import observe_ops

VIEWS: dict[str, Callable[[Any], Any]] = {
    "reshape": lambda t: t.reshape(2, 3, 4),
    "reshape_infer": lambda t: t.reshape(-1, 12),
    "view": lambda t: t.view(6, 4),
    "view_tuple": lambda t: t.view((3, 8)),
    "transpose": lambda t: t.transpose(0, 1),
    "permute": lambda t: t.permute(1, 0),
    "mT": lambda t: t.mT,
    "split": lambda t: t.split(2, dim=1)[1],
    "split_sizes": lambda t: t.split([1, 3], dim=0)[1],
    "split_view": lambda t: t.split(2, dim=1)[0].view(4, 1, 2),  # a view of a strided piece
    "transpose_contiguous": lambda t: t.transpose(0, 1).contiguous(),
    "unsqueeze": lambda t: t.unsqueeze(1),
    "squeeze": lambda t: t.view(4, 1, 6).squeeze(1),
    "getitem_row": lambda t: t[2],
    "getitem_slices": lambda t: t[1:3, ::2],
    "getitem_none_ellipsis": lambda t: t[None, ..., -1],
    "getitem_of_a_view": lambda t: t.transpose(0, 1)[:, 1],
    "getitem_list": lambda t: t[:, [-1, 0]],  # advanced: a copy
    "getitem_mask": lambda t: t[lucid.tensor(np.arange(24).reshape(4, 6) % 3 == 0)],  # a copy
}
COPIES = {"transpose_contiguous", "getitem_list", "getitem_mask"}


def _source(requires_grad: bool = False) -> Any:
    data = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    return lucid.tensor(data, requires_grad=requires_grad)


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_unrecorded_view_matches_the_op_path(name: str) -> None:
    fn = VIEWS[name]
    x = _source()
    fast = fn(x)  # nothing requires grad: no node, no Function call
    seen: list[str] = []
    with observe_ops(lambda cls, *_: seen.append(cls.__name__)):  # the ops, watched
        slow = fn(_source())
    assert seen, "observe_ops must see the view ops (the fast path steps aside)"
    assert fast.shape == slow.shape and fast.dtype == slow.dtype
    np.testing.assert_array_equal(fast.numpy(), slow.numpy())
    assert fast.numpy().strides == slow.numpy().strides  # the same array calls: same layout
    assert fast.is_contiguous() == slow.is_contiguous()
    assert fast.grad_fn is None and not fast.requires_grad
    if name in COPIES:  # a copy, not a view
        assert fast._base is None and not np.shares_memory(fast.numpy(), x.numpy())
        return
    assert fast._base is x and np.shares_memory(fast.numpy(), x.numpy())
    assert (slow._base is None) == (fast._base is None)
    if name.startswith("getitem") and name != "getitem_of_a_view":
        # a direct indexing view keeps its node, as the op path's (its in-place rebase)
        assert fast._view_src is not None and fast._view_src[0] is x
        assert type(fast._view_src[1]) is type(slow._view_src[1])


def test_unrecorded_view_shares_the_version_counter() -> None:
    w = lucid.ones(3, 4, requires_grad=True)
    x = lucid.ones(3, 4)
    y = x * w  # saves x
    v = x.view(12)[2:]  # no node for the view: x needs no grad
    assert v._base is x
    v.add_(1.0)  # writes through to x and bumps its version
    assert x.numpy()[0, 2] == 2.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_unrecorded_views_under_no_grad_of_a_tensor_that_requires_grad() -> None:
    x = _source(requires_grad=True)
    with lucid.no_grad():
        q, k = x.split(3, dim=1)
        v = q.view(2, 2, 3).transpose(1, 2)
    assert v.grad_fn is None and not v.requires_grad and v._base is x
    np.testing.assert_array_equal(
        v.numpy(), x.detach().numpy()[:, :3].reshape(2, 2, 3).transpose(0, 2, 1)
    )
    assert k._base is x


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_with_grad_still_record_and_give_the_same_gradients(name: str) -> None:
    fn = VIEWS[name]
    x = _source(requires_grad=True)
    out = fn(x)
    assert out.grad_fn is not None
    weight = np.arange(out.numel(), dtype=np.float32).reshape(tuple(out.shape))
    (out * lucid.tensor(weight)).sum().backward()
    assert x.grad is not None
    # the same gradient through the arrays: scatter the weights back by the view's indices
    idx = fn(lucid.tensor(np.arange(24, dtype=np.float32).reshape(4, 6))).numpy()
    expect = np.zeros(24, dtype=np.float32)
    np.add.at(expect, idx.astype(np.int64).ravel(), weight.ravel())
    np.testing.assert_allclose(x.grad.numpy().ravel(), expect, rtol=0, atol=0)


def test_view_of_a_strided_piece_still_raises_where_torch_does() -> None:
    x = lucid.ones(4, 6)
    piece = x.transpose(0, 1)  # (6, 4), not row-major
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        piece.view(24)
    with pytest.raises(RuntimeError, match="invalid for input of size 24"):
        piece.view(5, 5)
    assert piece.reshape(24).shape == (24,)  # reshape copies instead


def test_views_keep_channels_last_names_on_the_op_path() -> None:
    x = lucid.ones(2, 3, 4, 5).to(memory_format=lucid.channels_last)
    y = lucid.ones(2, 3, 4, 5)
    v = y.permute(0, 2, 3, 1)  # a channels-last tensor exists: the op path
    np.testing.assert_array_equal(v.numpy(), np.ones((2, 4, 5, 3), np.float32))
    assert v._base is y
    assert x.is_contiguous(memory_format=lucid.channels_last)


def test_shape_and_dim_checks_still_raise() -> None:
    x = lucid.ones(4, 6)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        x.reshape(-1, -1)
    with pytest.raises(RuntimeError, match="invalid for input of size 24"):
        x.reshape(2, -2, 6)
    with pytest.raises(RuntimeError, match="invalid for input of size 24"):
        x.view(5, 4)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.transpose(0, 2)
    np.testing.assert_array_equal(x.transpose(-1, 0).numpy(), x.transpose(1, 0).numpy())
    assert x.transpose(True, 0).shape == (6, 4)  # a bool dim is an int, as in torch


@pytest.mark.parametrize("index", [1, (slice(None), 2)])
def test_in_place_write_to_a_no_grad_index_view_rebases_the_base_as_the_op_path(index: Any) -> None:
    results = []
    for watched in (False, True):
        base = lucid.zeros(3, 4)
        w = lucid.arange(1.0, 4.0 if index != 1 else 5.0, requires_grad=True)
        seen: list[str] = []
        if watched:  # the op path
            with observe_ops(lambda cls, *_: seen.append(cls.__name__)):
                v = base[index]
            assert "GetItem" in seen
        else:
            v = base[index]
        v.mul_(w)  # under autograd: the base takes the graph of base[index] = v * w
        v.add_(w)
        assert base.requires_grad and base.grad_fn is not None
        (base * lucid.arange(12.0).reshape(3, 4)).sum().backward()
        assert w.grad is not None
        results.append((base.detach().numpy().copy(), w.grad.numpy().copy()))
    for a, b in zip(results[0], results[1]):
        np.testing.assert_array_equal(a, b)


def test_index_errors_still_raise() -> None:
    x = lucid.ones(4, 6)
    with pytest.raises(IndexError):
        x[4]
    with pytest.raises(IndexError):
        x[:, [7]]
    with pytest.raises(IndexError):
        x[lucid.tensor([[True] * 7] * 4)]


def test_the_profiler_still_sees_no_grad_views() -> None:
    x = lucid.ones(4, 6)
    with lucid.profiler.profile() as prof:
        x.view(6, 4).transpose(0, 1)[1]
        x.split(3, dim=1)
    names = {e.name for e in prof.events()}
    for op in ("Reshape", "Permute", "GetItem", "Split"):
        assert f"lucid::{op}" in names
    assert x.view(6, 4)._base is x  # and the fast path is back after the block
