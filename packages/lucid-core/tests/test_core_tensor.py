"""Tensor basics: factories, properties, conversions, dtype promotion, repr, the torch call forms
of the ops, and error messages that name what was expected and given."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid


# -- type promotion --------------------------------------------------------------------------------
def _operand(name: str) -> tuple[str, bool]:
    """``"float64/0"`` -> ``("float64", True)``: the dtype, and whether the tensor is 0-dim."""
    return name.removesuffix("/0"), name.endswith("/0")


def _promotion_rows(table: str) -> list[tuple[str, bool, str, bool, str]]:
    """(left, left is 0-dim, right, right is 0-dim, result) from rows ``left right result``."""
    rows = []
    for line in table.strip().splitlines():
        left, right, result = line.split()
        rows.append((*_operand(left), *_operand(right), result))
    return rows


# left, right -> result, per PyTorch's rules (``/0``: a zero-dim tensor): categories bool < int <
# float < complex; within one the wider wins; a zero-dim tensor only raises the category (then
# keeps its own dtype), never the width.
TENSOR_TENSOR = _promotion_rows("""
    int32      int64      int64
    uint8      int8       int16
    bool       int8       int8
    float16    float32    float32
    int64      float16    float16
    float32    float64    float64
    float32    float64/0  float32
    int32      int64/0    int32
    int32      float64/0  float64
    uint8      int64/0    uint8
    float16/0  float64/0  float64
    bool       float64/0  float64
""")

TENSOR_SCALAR = [
    ("float32", 2.5, "float32"),
    ("float16", 2.5, "float16"),
    ("float64", 2, "float64"),
    ("int32", 2.5, "float32"),
    ("int8", 5, "int8"),
    ("uint8", 3, "uint8"),
    ("bool", 1, "int64"),
    ("bool", 1.5, "float32"),
    ("bool", True, "bool"),
    ("float32", 1j, "complex64"),
    ("float64", 1j, "complex128"),
]


@pytest.mark.parametrize("left,left0,right,right0,expected", TENSOR_TENSOR)
def test_tensor_tensor_promotion(
    left: str, left0: bool, right: str, right0: bool, expected: str
) -> None:
    a = lucid.zeros(() if left0 else (2,), dtype=getattr(lucid, left))
    b = lucid.zeros(() if right0 else (2,), dtype=getattr(lucid, right))
    assert (a + b).dtype is getattr(lucid, expected)
    assert (b * a).dtype is getattr(lucid, expected)


@pytest.mark.parametrize("dtype,scalar,expected", TENSOR_SCALAR)
def test_tensor_scalar_promotion(dtype: str, scalar: object, expected: str) -> None:
    a = lucid.zeros(2, dtype=getattr(lucid, dtype))
    assert (a + scalar).dtype is getattr(lucid, expected)
    assert (scalar + a).dtype is getattr(lucid, expected)


def test_promote_types_and_defaults() -> None:
    assert lucid.promote_types(lucid.uint8, lucid.int8) is lucid.int16
    assert lucid.promote_types(lucid.float16, lucid.bfloat16) is lucid.float32
    assert lucid.tensor([1.0]).dtype is lucid.float32
    assert lucid.tensor([1]).dtype is lucid.int64
    assert lucid.tensor([True]).dtype is lucid.bool
    assert (lucid.tensor([1, 2]) / 2).dtype is lucid.float32
    assert lucid.tensor([1, 2]).sum().dtype is lucid.int64
    assert lucid.tensor([True, True]).sum().item() == 2


def test_float32_stays_float32_through_a_chain() -> None:
    x = lucid.randn(3, 4)
    y = ((x * 0.5 + 1) ** 2 / 3.0 - x.exp()).mean(0).abs().sqrt()
    y = lucid.where(y > 0.1, y, 0.0).clamp(0, 10) @ lucid.ones(4)
    assert y.dtype is lucid.float32


# -- factories -------------------------------------------------------------------------------------
def test_factories_shapes_dtypes_devices() -> None:
    assert lucid.zeros(2, 3).shape == (2, 3) and lucid.zeros((2, 3)).dtype is lucid.float32
    assert lucid.ones([4], dtype=lucid.int32).dtype is lucid.int32
    assert lucid.full((2,), 7).dtype is lucid.int64
    assert lucid.full((2,), 7.0).dtype is lucid.float32
    assert lucid.full((2,), True).dtype is lucid.bool
    assert lucid.empty(3, device="cpu").device == "cpu"
    np.testing.assert_array_equal(lucid.arange(5).numpy(), np.arange(5))
    assert lucid.arange(0, 1, 0.25).dtype is lucid.float32
    np.testing.assert_allclose(
        lucid.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5), rtol=1e-7, atol=1e-7
    )
    np.testing.assert_array_equal(lucid.eye(2, 3).numpy(), np.eye(2, 3))
    like = lucid.zeros_like(lucid.ones(2, dtype=lucid.float64))
    assert like.dtype is lucid.float64 and like.shape == (2,)
    assert lucid.ones_like(like, dtype=lucid.int8).dtype is lucid.int8
    assert lucid.full_like(like, 3.0).tolist() == [3.0, 3.0]


def test_factories_with_requires_grad() -> None:
    for t in (
        lucid.zeros(2, requires_grad=True),
        lucid.ones(2, requires_grad=True),
        lucid.randn(2, requires_grad=True),
        lucid.rand(2, requires_grad=True),
        lucid.tensor([1.0], requires_grad=True),
        lucid.arange(0.0, 2.0, requires_grad=True),
        lucid.linspace(0, 1, 3, requires_grad=True),
        lucid.eye(2, requires_grad=True),
        lucid.full((2,), 1.0, requires_grad=True),
    ):
        assert t.requires_grad and t.is_leaf


def test_random_factories() -> None:
    lucid.manual_seed(0)
    a = lucid.randn(1000)
    lucid.manual_seed(0)
    assert lucid.equal(a, lucid.randn(1000))
    assert abs(a.mean().item()) < 0.15 and abs(a.std().item() - 1) < 0.1
    r = lucid.rand(1000, dtype=lucid.float64)
    assert r.dtype is lucid.float64 and 0 <= r.min().item() and r.max().item() < 1
    k = lucid.randint(0, 5, (100,))
    assert k.dtype is lucid.int64 and set(k.tolist()) <= set(range(5))
    with pytest.raises(RuntimeError, match="not implemented for 'int64'"):
        lucid.randn(2, dtype=lucid.int64)


def test_negative_dimension_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="negative dimension"):
        lucid.zeros(2, -1)


# -- properties and conversions --------------------------------------------------------------------
def test_properties_and_conversions() -> None:
    t = lucid.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.shape == (2, 3) and t.ndim == 2 and t.dim() == 2 and len(t) == 2
    assert t.size() == (2, 3) and t.size(1) == 3 and t.size(-1) == 3 and t.numel() == 6
    assert t.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert t[1, 2].item() == 6.0 and isinstance(t[1, 2].item(), float)
    assert isinstance(t.numpy(), np.ndarray)
    assert t.double().dtype is lucid.float64 and t.long().dtype is lucid.int64
    assert t.int().dtype is lucid.int32 and t.bool().dtype is lucid.bool
    assert t.float().dtype is lucid.float32 and t.half().dtype is lucid.float16
    assert t.to(lucid.float64).dtype is lucid.float64 and t.to("cpu") is t
    assert t.to(lucid.ones(1, dtype=lucid.int8)).dtype is lucid.int8
    c = t.clone()
    c.add_(1)
    assert t[0, 0].item() == 1.0
    assert float(lucid.tensor(2.5)) == 2.5 and int(lucid.tensor(3)) == 3
    assert [v.item() for v in lucid.tensor([1, 2])] == [1, 2]


def test_item_and_numpy_errors() -> None:
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        lucid.ones(2).item()
    with pytest.raises(RuntimeError, match="requires grad"):
        lucid.ones(2, requires_grad=True).numpy()
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(lucid.ones(2))


# -- repr (PyTorch's format) -----------------------------------------------------------------------
def test_repr_like_pytorch() -> None:
    assert repr(lucid.tensor([1.0, 2.5])) == "tensor([1.0000, 2.5000])"
    assert (
        repr(lucid.tensor([[7.0, 10.0], [15.0, 22.0]]))
        == "tensor([[ 7., 10.],\n        [15., 22.]])"
    )
    assert repr(lucid.tensor(3.0)) == "tensor(3.)"
    assert repr(lucid.tensor([1e-5, 1e5])) == "tensor([1.0000e-05, 1.0000e+05])"
    assert repr(lucid.tensor([1, 2, 300])) == "tensor([  1,   2, 300])"
    assert repr(lucid.tensor([True, False])) == "tensor([ True, False])"
    assert repr(lucid.zeros(2, dtype=lucid.int32)) == "tensor([0, 0], dtype=lucid.int32)"
    assert repr(lucid.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(lucid.ones(2, requires_grad=True)) == "tensor([1., 1.], requires_grad=True)"
    x = lucid.ones(2, requires_grad=True)
    assert repr(x * 2) == "tensor([2., 2.], grad_fn=<MulBackward0>)"
    assert repr(lucid.tensor([math.nan, 1.0, math.inf])) == "tensor([nan, 1., inf])"
    long = repr(lucid.arange(2000))
    assert "..." in long and long.startswith("tensor([   0,    1,    2,  ..., 1997, 1998, 1999])")


# -- the call forms PyTorch users write ------------------------------------------------------------
def test_torch_call_forms() -> None:
    x = lucid.arange(6.0).reshape(2, 3)
    assert lucid.reshape(x, (3, 2)).shape == (3, 2) and x.reshape(3, 2).shape == (3, 2)
    assert x.view(-1).shape == (6,) and x.reshape([6]).shape == (6,)
    assert x.permute(1, 0).shape == (3, 2) and lucid.permute(x, (1, 0)).shape == (3, 2)
    assert lucid.equal(x.flip(0), lucid.flip(x, [0]))
    assert lucid.equal(x.flip(0, 1), lucid.flip(x, (0, 1)))
    assert x.repeat(2, 1).shape == (4, 3) and x.repeat((1, 2)).shape == (2, 6)
    assert x.sum(dim=(0, 1), keepdim=True).shape == (1, 1)
    assert x.sum(1).tolist() == [3.0, 12.0] and lucid.sum(x, dim=0).tolist() == [3.0, 5.0, 7.0]
    values, indices = lucid.max(x, dim=1)
    assert values.tolist() == [2.0, 5.0] and indices.tolist() == [2, 2]
    assert lucid.max(x, 1, keepdim=True).values.shape == (2, 1)
    assert x.max().item() == 5.0 and lucid.min(x).item() == 0.0
    assert lucid.maximum(x, lucid.tensor(2.0)).tolist() == [[2.0, 2.0, 2.0], [3.0, 4.0, 5.0]]
    assert lucid.max(x, lucid.full((3,), 4.0)).tolist() == [[4.0, 4.0, 4.0], [4.0, 4.0, 5.0]]
    assert lucid.where(x > 2, x, 0.0).tolist() == [[0.0, 0.0, 0.0], [3.0, 4.0, 5.0]]
    assert lucid.where(x > 2, 1.0, 0.0).dtype is lucid.float32
    assert lucid.where(x > 2, 1, 0).dtype is lucid.int64
    assert x.transpose(0, 1).shape == (3, 2) and x.T.shape == (3, 2) and x.mT.shape == (3, 2)
    assert x.unsqueeze(0).shape == (1, 2, 3) and x.unsqueeze(0).squeeze().shape == (2, 3)
    assert x.flatten().shape == (6,) and x.unflatten(1, (3, 1)).shape == (2, 3, 1)
    assert x.var(dim=1, correction=0).tolist() == pytest.approx([2 / 3, 2 / 3], rel=1e-6, abs=1e-12)
    assert x.std(unbiased=False).item() == pytest.approx(np.arange(6.0).std(), rel=1e-6, abs=1e-12)
    assert [t.shape for t in x.split(2, dim=1)] == [(2, 2), (2, 1)]
    assert [t.shape for t in lucid.chunk(x, 3, 1)] == [(2, 1)] * 3
    assert len(x.unbind()) == 2 and lucid.stack(x.unbind(1), 1).tolist() == x.tolist()
    assert lucid.cat((x, x), dim=-1).shape == (2, 6)
    assert lucid.concatenate([x, x]).shape == (4, 3)
    assert x.argmax().item() == 5 and x.argmax(dim=1).tolist() == [2, 2]
    assert x.all().item() is False and x.any(dim=1).tolist() == [True, True]
    assert x.prod(1).tolist() == [0.0, 60.0] and x.cumsum(1)[1].tolist() == [3.0, 7.0, 12.0]
    assert lucid.dot(lucid.ones(3), lucid.ones(3)).item() == 3.0
    assert lucid.einsum("ij->ji", x).shape == (3, 2)
    assert x.norm().item() == pytest.approx(math.sqrt(55), rel=1e-6, abs=1e-12)
    assert x.logsumexp(dim=1).shape == (2,)
    assert x.clamp(min=1, max=3).tolist() == [[1.0, 1.0, 2.0], [3.0, 3.0, 3.0]]
    assert x.clip(max=1.0).max().item() == 1.0
    assert x.masked_fill(x > 3, -1.0).tolist() == [[0.0, 1.0, 2.0], [3.0, -1.0, -1.0]]


def test_indexing_forms() -> None:
    x = lucid.arange(12).reshape(3, 4)
    assert x[1].tolist() == [4, 5, 6, 7]
    assert x[:, 1].tolist() == [1, 5, 9]
    assert x[..., -1].tolist() == [3, 7, 11]
    assert x[None, 0].shape == (1, 4)
    assert x[[0, 2]].shape == (2, 4)
    assert x[lucid.tensor([0, 2]), lucid.tensor([1, 3])].tolist() == [1, 11]
    assert x[x > 9].tolist() == [10, 11]
    assert x[1:, ::2].tolist() == [[4, 6], [8, 10]]


# -- errors that name what was expected and what was given -----------------------------------------
def test_shape_errors_are_clear() -> None:
    a, b = lucid.ones(2, 3), lucid.ones(4, 5)
    with pytest.raises(
        RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"
    ):
        a @ b
    with pytest.raises(RuntimeError, match=r"shape '\[4, 4\]' is invalid for input of size 6"):
        a.reshape(4, 4)
    broadcast = r"size of tensor a \(3\) must match the size of tensor b \(5\) at non-singleton dim"
    with pytest.raises(RuntimeError, match=broadcast):
        a + b
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        lucid.cat([a, b])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        lucid.stack([a, b])
    with pytest.raises(
        IndexError,
        match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
    ):
        a.sum(2)
    with pytest.raises(RuntimeError, match="The expanded size"):
        a.expand(3, 3)
    with pytest.raises(
        RuntimeError, match="split_with_sizes expects split_sizes to sum exactly to 3"
    ):
        a.split([1, 1], 1)
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        lucid.pad(a, (1,))
    with pytest.raises(RuntimeError, match="Padding size should be less than"):
        lucid.pad(a, (3, 3), mode="reflect")
    with pytest.raises(RuntimeError, match="1D tensors expected"):
        lucid.dot(a, a)
    with pytest.raises(RuntimeError, match="Index tensor must have the same number of dimensions"):
        a.gather(1, lucid.tensor([0]))
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        a.clamp()


def test_zero_dim_float32_with_python_scalars_without_weak_scalars(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """NumPy < 2 promotes a float32 0-d array with a Python float to float64: the ops wrap
    the scalar for such backends so that the result stays float32 (docs/performance.md, item 7)."""
    backend = lucid.tensor(1.0).backend
    monkeypatch.setattr(type(backend), "weak_python_scalars", False)
    x = lucid.tensor(2.0, requires_grad=True)
    y = (x * 1.5 + 2 - 0.5) / 3.0
    assert y.dtype is lucid.float32 and y.item() == pytest.approx(1.5, rel=1e-6, abs=1e-12)
    y.backward()
    assert x.grad.item() == pytest.approx(0.5, rel=1e-6, abs=1e-12)


def test_empty_dim_tuple_reduces_everything_like_torch() -> None:
    x = lucid.tensor([[1.0, -2.0], [0.0, 3.0]])
    assert x.sum(dim=()).item() == 2.0 and x.mean(dim=[]).item() == 0.5
    assert lucid.amax(x).item() == 3.0 and x.flip([]).tolist() == x.tolist()


def test_format_and_contains() -> None:
    assert f"{lucid.tensor(2.5):.2f}" == "2.50"
    assert f"{lucid.tensor([1.0])}" == "tensor([1.])"
    assert 2 in lucid.tensor([1, 2]) and 5 not in lucid.tensor([1, 2])


def test_numpy_of_a_full_reduction_is_an_array() -> None:
    s = lucid.ones(2, 3).sum()
    assert isinstance(s.numpy(), np.ndarray) and s.numpy().shape == () and s.item() == 6.0


def test_tensors_hash_by_identity_after_the_binder_attaches_eq() -> None:
    # The binder writes __eq__ (elementwise, as torch); a class that defines __eq__ loses its
    # __hash__, which must not be copied onto Tensor: tensors are dict keys and set members.
    a, b = lucid.ones(2), lucid.ones(2)
    table = {a: "a", b: "b"}
    assert table[a] == "a" and table[b] == "b" and len({a, b, a}) == 2
    assert hash(a) == id(a)


def test_bound_methods_are_named_as_tensor_methods() -> None:
    assert lucid.Tensor.add_.__qualname__ == "Tensor.add_"
    assert lucid.Tensor.__add__.__doc__ is None or "add" in lucid.Tensor.__add__.__qualname__
    assert lucid.Tensor.sum is lucid.sum  # op methods are the ops themselves
