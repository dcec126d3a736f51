"""Call forms and edge inputs from torch's OpInfo samples that lucid refused or answered
differently (issue 29's gauge, "failing samples of present ops"), one test per class of fix."""

from __future__ import annotations

import numpy as np
import pytest

import lucid

RNG = np.random.default_rng(29)
TOL = {"rtol": 1e-6, "atol": 1e-6}


# --- Tensor.to's positional non_blocking/copy, the conversions' memory_format -----------------


def test_to_reads_positional_non_blocking_and_copy() -> None:
    x = lucid.tensor(RNG.standard_normal((2, 3)).astype(np.float32))
    y = x.to("cpu", lucid.float64, True, True)
    assert y.dtype is lucid.float64
    z = x.to(lucid.float32, False, True)  # copy=True gives a new tensor of the same dtype
    assert z is not x
    np.testing.assert_array_equal(z.numpy(), x.numpy())
    assert x.to(lucid.float32, False, False) is x
    assert x.to(x, False, True) is not x
    with pytest.raises(TypeError, match="at most 2 flags"):
        x.to(lucid.float32, True, True, True)
    with pytest.raises(TypeError, match="after a bool"):
        x.to(True, lucid.float32)


@pytest.mark.parametrize(
    "method, dtype",
    [("float", "float32"), ("double", "float64"), ("long", "int64"), ("int", "int32"),
     ("short", "int16"), ("char", "int8"), ("byte", "uint8"), ("bool", "bool"),
     ("half", "float16"), ("bfloat16", "bfloat16")],
)  # fmt: skip
def test_dtype_conversions_take_memory_format(method: str, dtype: str) -> None:
    x = lucid.tensor(RNG.standard_normal((2, 3, 4, 5)).astype(np.float32))
    y = getattr(x, method)(memory_format=lucid.channels_last)
    assert y.dtype is getattr(lucid, dtype)
    assert y.is_contiguous(memory_format=lucid.channels_last)
    assert getattr(x, method)(memory_format=lucid.preserve_format).shape == (2, 3, 4, 5)
    with pytest.raises(TypeError, match="memory_format"):
        getattr(x, method)(memory_format="channels_last")


# --- the add* BLAS ops on integer and bool tensors: torch casts beta and alpha first ----------


def test_addmv_family_keeps_integer_dtype_and_casts_the_scalars() -> None:
    i = lucid.tensor(np.array([10, 20, 30]))
    m = lucid.tensor(np.arange(6).reshape(3, 2))
    v = lucid.tensor(np.array([1, 2]))
    out = lucid.addmv(i, m, v, beta=0.2, alpha=0.6)  # both truncate to 0 as torch's do
    assert out.dtype is lucid.int64
    np.testing.assert_array_equal(out.numpy(), [0, 0, 0])
    np.testing.assert_array_equal(lucid.addmv(i, m, v, beta=2, alpha=3).numpy(), [26, 64, 102])
    b = lucid.tensor(np.arange(12).reshape(2, 3, 2))
    c = lucid.ones(2, 3, 3, dtype=lucid.int64)
    assert lucid.baddbmm(c, b, b.mT, beta=0.2, alpha=0.6).dtype is lucid.int64
    assert lucid.addbmm(c[0], b, b.mT, beta=1.5, alpha=1).dtype is lucid.int64
    f = lucid.addmv(i.double(), m.double(), v.double(), beta=0.5, alpha=0.5)
    np.testing.assert_allclose(f.numpy(), [6.0, 14.0, 22.0], **TOL)


def test_addr_of_bools_is_a_logical_or() -> None:
    inp = lucid.tensor(np.array([[True, False, False], [False, False, False]]))
    v1, v2 = lucid.tensor(np.array([True, False])), lucid.tensor(np.array([False, False, True]))
    out = lucid.addr(inp, v1, v2, beta=3, alpha=2)
    assert out.dtype is lucid.bool
    np.testing.assert_array_equal(out.numpy(), [[True, False, True], [False, False, False]])
    assert not lucid.addr(inp, v1, v2, beta=0, alpha=0).numpy().any()


# --- diag_embed's dim1/dim2, atleast_Nd of a list, randint_like's keywords --------------------


def test_diag_embed_places_the_diagonal_on_dim1_and_dim2() -> None:
    x = RNG.standard_normal((2, 3))
    got = lucid.diag_embed(lucid.tensor(x), offset=1, dim1=0, dim2=2).numpy()
    assert got.shape == (4, 2, 4)
    want = np.zeros((4, 2, 4))
    for b in range(2):
        want[:, b, :] = np.diag(x[b], 1)
    np.testing.assert_allclose(got, want, **TOL)
    swapped = lucid.diag_embed(lucid.tensor(x), offset=1, dim1=-1, dim2=-2).numpy()
    np.testing.assert_allclose(swapped, np.swapaxes(np.stack([np.diag(r, 1) for r in x]), 1, 2))
    with pytest.raises(RuntimeError, match="cannot be identical -2, -2"):
        lucid.diag_embed(lucid.tensor(x), dim1=-2, dim2=-2)
    with pytest.raises(IndexError, match=r"range of \[-3, 2\], but got 3"):
        lucid.diag_embed(lucid.tensor(x), dim1=3, dim2=0)


def test_diag_embed_dims_gradient_float64() -> None:
    x = lucid.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    assert lucid.autograd.gradcheck(lambda t: lucid.diag_embed(t, -1, 2, 0), (x,))


@pytest.mark.parametrize("fn, shapes", [
    ("atleast_1d", [(1,), (2,), (2, 2)]), ("atleast_2d", [(1, 1), (1, 2), (2, 2)]),
    ("atleast_3d", [(1, 1, 1), (1, 2, 1), (2, 2, 1)]),
])  # fmt: skip
def test_atleast_nd_takes_a_list_or_several_tensors(fn: str, shapes: list[tuple[int, ...]]) -> None:
    ts = [lucid.ones(()), lucid.ones(2), lucid.ones(2, 2)]
    for out in (getattr(lucid, fn)(ts), getattr(lucid, fn)(*ts), getattr(lucid, fn)(tuple(ts))):
        assert isinstance(out, tuple)
        assert [t.shape for t in out] == shapes
    assert getattr(lucid, fn)(ts[0]).shape == shapes[0]
    with pytest.raises(TypeError, match="expected Tensors, got int at position 1"):
        getattr(lucid, fn)([ts[0], 3])


def test_randint_like_takes_torchs_keywords() -> None:
    t = lucid.zeros(3, 4)
    out = lucid.randint_like(t, 10, dtype=lucid.int32, device="cpu")
    assert out.shape == (3, 4) and out.dtype is lucid.int32
    assert ((out.numpy() >= 0) & (out.numpy() < 10)).all()
    g1, g2 = lucid.Generator().manual_seed(3), lucid.Generator().manual_seed(3)
    a = lucid.randint_like(t, 2, 9, generator=g1)
    b = lucid.randint_like(t, 2, 9, generator=g2)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a.dtype is lucid.float32 and a.numpy().min() >= 2
