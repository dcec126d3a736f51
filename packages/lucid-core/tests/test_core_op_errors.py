"""Op errors that torch programs expect: view on a non-viewable layout, non-int sizes,
duplicate permute dims, cat of 0-d tensors (the messages are torch's)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid

VIEW_ERROR = "view size is not compatible with input tensor's size and stride"


def _grid() -> Any:
    return lucid.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a.T.view(12),
        lambda a: a.T.view(-1),
        lambda a: a[:, :2].view(6),
        lambda a: a.unsqueeze(1).expand(3, 2, 4).view(3, 8),
    ],
    ids=["transpose", "transpose -1", "column slice", "expand"],
)
def test_view_of_a_layout_that_cannot_be_viewed_asks_for_reshape(make: Any) -> None:
    with pytest.raises(RuntimeError, match=VIEW_ERROR) as info:
        make(_grid())
    assert "Use .reshape(...) instead." in str(info.value)


@pytest.mark.parametrize(
    ("make", "shape"),
    [
        (lambda a: a.view(12), (12,)),
        (lambda a: a.T.view(4, 3), (4, 3)),
        (lambda a: a.T.unsqueeze(0).view(1, 4, 3, 1), (1, 4, 3, 1)),
        (lambda a: a.permute(1, 0).view(2, 2, 3), (2, 2, 3)),
        (lambda a: a[:2].view(8), (8,)),
        (lambda a: a.T.contiguous().view(12), (12,)),
        (lambda a: (a.T * 2).view(12), (12,)),
        (lambda a: a.T.reshape(12), (12,)),
    ],
)
def test_view_where_torch_can_view(make: Any, shape: tuple[int, ...]) -> None:
    assert make(_grid()).shape == shape


def test_contiguous_copies_a_transposed_view_and_keeps_the_values() -> None:
    a = _grid()
    assert a.contiguous() is a
    c = a.T.contiguous()
    np.testing.assert_array_equal(c.numpy(), a.numpy().T)
    np.testing.assert_array_equal(c.view(12).numpy(), a.numpy().T.reshape(12))


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda: lucid.randn(2.5, 3), "float"),
        (lambda: lucid.zeros("3"), "str"),
        (lambda: lucid.ones((2, 2.0)), "float"),
        (lambda: lucid.empty(True, 2), "bool"),
    ],
)
def test_sizes_must_be_ints(make: Any, kind: str) -> None:
    with pytest.raises(TypeError, match=f"must be tuple of ints, but found element of type {kind}"):
        make()


def test_int_like_sizes_are_accepted() -> None:
    assert lucid.zeros(np.int64(2), 3).shape == (2, 3)
    assert lucid.randn([2, 3]).shape == (2, 3)


def test_permute_with_a_repeated_dim_says_so() -> None:
    with pytest.raises(RuntimeError, match=r"permute\(\): duplicate dims are not allowed."):
        _grid().permute(0, 0)
    with pytest.raises(RuntimeError, match=r"permute\(\): duplicate dims are not allowed."):
        _grid().permute(1, -1)
    with pytest.raises(RuntimeError, match="input.dim"):
        _grid().permute(0)


def test_cat_of_zero_dim_tensors_names_the_position() -> None:
    msg = r"zero-dimensional tensor \(at position 1\) cannot be concatenated"
    with pytest.raises(RuntimeError, match=msg):
        lucid.cat([lucid.tensor([1.0]), lucid.tensor(2.0)])
    with pytest.raises(RuntimeError, match=msg.replace("1", "0")):
        lucid.cat([lucid.tensor(1.0), lucid.tensor(2.0)])


@pytest.mark.parity
@pytest.mark.parametrize(
    "call",
    [
        "a.T.view(12)",
        "a[:, :2].view(6)",
        "a.permute(0, 0)",
        "lib.cat([lib.tensor(1.0), lib.tensor(2.0)])",
    ],
)
def test_messages_are_torchs(call: str) -> None:
    torch = pytest.importorskip("torch")
    messages = []
    for lib in (torch, lucid):
        a = lib.arange(12.0).reshape(3, 4)
        with pytest.raises(RuntimeError) as info:
            eval(call, {"a": a, "lib": lib})
        messages.append(str(info.value))
    assert messages[0] == messages[1]
