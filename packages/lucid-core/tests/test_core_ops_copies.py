"""The ``*_copy`` ops, torch's lower-level op names and top-level aliases (issue 29).

The op-table samples run every one of them through gradcheck and the MLX list; here: what a
sample cannot say (copies own their storage, complex copies, padding rows, errors, aliases).
"""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid._toplevel import INPLACE_FUNCTIONS


def _x(*shape: int, seed: int = 0) -> lucid.Tensor:
    return lucid.tensor(np.random.default_rng(seed).standard_normal(shape))


def test_a_copy_owns_its_storage() -> None:
    x = _x(3, 4)
    for out in (lucid.diagonal_copy(x), lucid.t_copy(x), lucid.view_copy(x, (12,))):
        out.add_(1.0)
    np.testing.assert_array_equal(x.numpy(), _x(3, 4).numpy())


def test_copies_equal_their_views() -> None:
    x = _x(2, 3, 4)
    np.testing.assert_array_equal(lucid.select_copy(x, 1, -1).numpy(), x[:, -1].numpy())
    np.testing.assert_array_equal(lucid.slice_copy(x, 2, 1, None, 2).numpy(), x[..., 1::2].numpy())
    got = lucid.split_with_sizes_copy(x, [1, 3], 2)
    assert isinstance(got, tuple) and [p.shape[2] for p in got] == [1, 3]
    assert lucid.expand_copy(x[:, :1, :1], (5, 2, 3, 4)).shape == (5, 2, 3, 4)


def test_complex_view_copies_round_trip() -> None:
    z = lucid.complex(_x(3), _x(3, seed=1))
    pairs = lucid.view_as_real_copy(z)
    assert pairs.shape == (3, 2) and pairs.dtype == lucid.float64
    np.testing.assert_array_equal(lucid.view_as_complex_copy(pairs).numpy(), z.numpy())


def test_nonzero_static_pads_and_cuts() -> None:
    x = lucid.tensor([[0, 1], [2, 0]])
    np.testing.assert_array_equal(
        lucid.nonzero_static(x, size=3).numpy(), [[0, 1], [1, 0], [-1, -1]]
    )
    np.testing.assert_array_equal(lucid.nonzero_static(x, size=1, fill_value=9).numpy(), [[0, 1]])
    with pytest.raises(RuntimeError, match="non-negative"):
        lucid.nonzero_static(x, size=-1)


def test_fill_takes_a_0d_tensor_and_passes_its_gradient() -> None:
    v = lucid.tensor(2.0, requires_grad=True)
    out = lucid.fill(_x(2, 3), v)
    np.testing.assert_array_equal(out.detach().numpy(), np.full((2, 3), 2.0))
    out.sum().backward()
    assert v.grad is not None and float(v.grad) == 6.0
    with pytest.raises(RuntimeError, match="0-dimension value tensor"):
        lucid.fill(_x(2), lucid.ones(2))


def test_split_with_sizes_names_the_sizes() -> None:
    with pytest.raises(RuntimeError, match=r"sum exactly to 5.*\[1, 3\]"):
        lucid.split_with_sizes(_x(5), [1, 3])


def test_empty_strided_and_permuted_check_their_layout() -> None:
    assert lucid.empty_strided((2, 3), (1, 2)).shape == (2, 3)
    assert lucid.empty_permuted((2, 3, 4), (2, 0, 1), dtype=lucid.int64).dtype == lucid.int64
    assert _x(2).new_empty_strided((3, 2), (2, 1)).dtype == lucid.float64
    with pytest.raises(RuntimeError, match="strides"):
        lucid.empty_strided((2, 3), (1,))
    with pytest.raises(RuntimeError, match="Duplicate dim not allowed"):
        lucid.empty_permuted((2, 3), (0, 0))


def test_top_level_inplace_functions_write_their_input() -> None:
    assert all(hasattr(lucid.Tensor, name) for name in INPLACE_FUNCTIONS)
    x = lucid.tensor([-1.0, 4.0])
    assert lucid.abs_(x) is x
    np.testing.assert_array_equal(lucid.sqrt_(x).numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(lucid.zero_(x).numpy(), [0.0, 0.0])
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        lucid.exp_([1.0])


def test_special_aliases_at_the_top_and_on_tensors() -> None:
    x = lucid.tensor([0.7, 1.5, 3.0])
    np.testing.assert_array_equal(x.polygamma(2).numpy(), lucid.special.polygamma(2, x).numpy())
    np.testing.assert_array_equal(
        lucid.mvlgamma(x + 1, 2).numpy(), lucid.special.multigammaln(x + 1, 2).numpy()
    )
    np.testing.assert_array_equal(x.i0().numpy(), lucid.special.i0(x).numpy())
    np.testing.assert_array_equal(
        lucid.igammac(x, x).numpy(), lucid.special.gammaincc(x, x).numpy()
    )
    y = x.clone()
    y.igamma_(x)
    np.testing.assert_array_equal(y.numpy(), lucid.special.gammainc(x, x).numpy())
    with pytest.raises(TypeError, match="argument 'other' \\(position 2\\) must be Tensor"):
        lucid.igamma(x, 2)
    np.testing.assert_allclose(x.__rdiv__(3).numpy(), 3 / x.numpy(), rtol=1e-15, atol=0)


def test_as_strided_reads_the_row_major_elements() -> None:
    x = np.arange(16.0)
    want = np.lib.stride_tricks.as_strided(x[1:], (3, 2), (8 * 4, 8 * 1))
    got = lucid.as_strided(lucid.tensor(x), (3, 2), (4, 1), 1)
    np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        lucid.as_strided(lucid.tensor(x), (3, 2), (8, 1))


def test_as_strided_scatter_writes_src_at_the_strided_positions() -> None:
    out = lucid.as_strided_scatter(lucid.zeros(3, 3), lucid.ones(2, 2), (2, 2), (1, 2))
    np.testing.assert_array_equal(out.numpy().reshape(-1), [1, 1, 1, 1, 0, 0, 0, 0, 0])
    with pytest.raises(RuntimeError, match="src size = \\[2\\]"):
        lucid.as_strided_scatter(lucid.zeros(3, 3), lucid.ones(2), (2, 2), (1, 2))


def test_top_level_functional_names_are_lucid_nn_functionals() -> None:
    from lucid._siblings import FUNCTIONAL_NAMES

    functional = pytest.importorskip("lucid.nn.functional")
    for name in FUNCTIONAL_NAMES:
        assert getattr(lucid, name) is getattr(functional, name), name
    x = lucid.tensor(_x(1, 2, 5).numpy().astype(np.float32))
    np.testing.assert_array_equal(lucid.dropout(x, 0.5, False).numpy(), x.numpy())
