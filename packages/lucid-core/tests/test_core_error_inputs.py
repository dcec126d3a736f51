"""Inputs torch rejects (its OpInfo ``error_inputs``): lucid raises the same exception class
with a message naming the bad argument, instead of returning a result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import lucid
import lucid.linalg

T = lucid.tensor


def _x() -> lucid.Tensor:
    return T([1.0, 2.0, 3.0])


TENSOR_ONLY = [
    lucid.atan2, lucid.fmax, lucid.fmin, lucid.logaddexp, lucid.maximum, lucid.minimum,
    lucid.logical_and, lucid.logical_or, lucid.logical_xor, lucid.hypot, lucid.isclose,
    lucid.ldexp,
]  # fmt: skip
SCALAR_FIRST = [
    *TENSOR_ONLY, lucid.eq, lucid.ne, lucid.lt, lucid.le, lucid.gt, lucid.ge, lucid.fmod,
    lucid.copysign, lucid.clamp_min, lucid.clamp_max, lucid.max, lucid.min, lucid.rsub,
]  # fmt: skip


@pytest.mark.parametrize("fn", TENSOR_ONLY, ids=lambda f: f.__name__)
def test_python_number_as_other_is_a_type_error(fn: Callable[..., Any]) -> None:
    with pytest.raises(TypeError, match=r"argument 'other' \(position 2\) must be Tensor, not int"):
        fn(_x(), 2)


@pytest.mark.parametrize("fn", SCALAR_FIRST, ids=lambda f: f.__name__)
def test_python_number_as_input_is_a_type_error(fn: Callable[..., Any]) -> None:
    with pytest.raises(TypeError, match=r"argument 'input' \(position 1\) must be Tensor, not int"):
        fn(2, _x())


def test_integer_pairs_and_heaviside_need_tensors() -> None:
    ints = T([4, 6])
    for fn in (lucid.gcd, lucid.lcm):
        with pytest.raises(TypeError, match="must be Tensor, not int"):
            fn(ints, 2)
    with pytest.raises(TypeError, match=r"argument 'values' \(position 2\)"):
        lucid.heaviside(_x(), 2)


@pytest.mark.parametrize("name", ["__radd__", "__rmul__", "__rand__", "__ror__", "__rxor__"])
def test_unbound_reflected_dunder_needs_a_tensor_self(name: str) -> None:
    with pytest.raises(TypeError, match=f"descriptor '{name}' requires a 'Tensor' object"):
        getattr(lucid.Tensor, name)(2, T([1, 2]))


def test_reflected_operators_still_work() -> None:
    assert (2 - _x()).tolist() == [1.0, 0.0, -1.0]
    assert (2 * _x()).tolist() == [2.0, 4.0, 6.0]
    assert (True & T([True, False])).tolist() == [True, False]


def test_arange_bounds_and_step_sign() -> None:
    for args in ((0, -3, 2), (0, 3, -2), (1549556900, 1549556828, 1989724)):
        with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent"):
            lucid.arange(*args)
    with pytest.raises(RuntimeError, match="unsupported range"):
        lucid.arange(0, float("inf"), 2)


def test_linspace_logspace_arguments() -> None:
    for fn in (lucid.linspace, lucid.logspace):
        with pytest.raises(
            TypeError, match=r"invalid combination of arguments - got \(int, int, float"
        ):
            fn(0, 3, 1.0)
        with pytest.raises(RuntimeError, match="only supports 0-dimensional start and end"):
            fn(T([1, 2]), T([3, 4]), 1)
        with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
            fn(0, 3, -1)


def test_random_fills_check_their_parameters() -> None:
    with pytest.raises(RuntimeError, match=r"normal expects std >= 0.0, but found std -1"):
        lucid.zeros(10).normal_(0, -1)
    with pytest.raises(RuntimeError, match=r"uniform_ expects to return a \[from, to\) range"):
        lucid.zeros(10).uniform_(3, -1)


def test_cov_negative_weights() -> None:
    with pytest.raises(RuntimeError, match="fweights cannot be negative"):
        lucid.cov(_x(), fweights=T([1, -1, 2]))
    with pytest.raises(RuntimeError, match="aweights cannot be negative"):
        lucid.cov(_x(), aweights=T([1.0, -1.0, 2.0]))


def test_shape_ops() -> None:
    with pytest.raises(RuntimeError, match="Input must be >= 1-d"):
        lucid.flipud(T(1.0))
    with pytest.raises(RuntimeError, match="needs at least 2 dimensions, got 0 dimensions"):
        lucid.renorm(T(1.0), 0.5, 0, 1.0)
    x = lucid.zeros(2, 3, 4, 5, 6)
    with pytest.raises(
        RuntimeError, match=r"movedim: repeated dim in `destination` \(\[0, 4, -5\]\)"
    ):
        lucid.movedim(x, (1, 0, 2), (0, 4, -5))
    with pytest.raises(RuntimeError, match=r"movedim: repeated dim in `source` \(\[0, 4, -5\]\)"):
        lucid.movedim(x, (0, 4, -5), (1, 0, 2))
    with pytest.raises(RuntimeError, match=r"source \(\[3, -3\] dims\) should contain"):
        lucid.movedim(x, (3, -3), (1, 0, -1))


def test_narrow_arguments() -> None:
    x = lucid.zeros(20, 10, 5)
    with pytest.raises(RuntimeError, match=r"start must be an 0-dim integral Tensor\."):
        x.narrow(1, T(True), 3)
    with pytest.raises(RuntimeError, match=r"start must be an 0-dim integral Tensor\."):
        x.narrow(1, T([1, 2]), 3)
    with pytest.raises(
        IndexError, match=r"start out of range \(expected to be in range of \[-10, 10\]"
    ):
        x.narrow(1, 11, 0)
    with pytest.raises(RuntimeError, match=r"narrow\(\) cannot be applied to a 0-dim tensor"):
        T(1.0).narrow(0, 0, 1)
    with pytest.raises(RuntimeError, match=r"length must be non-negative"):
        lucid.zeros(10).narrow(0, 0, -1)
    assert x.narrow(1, T(2), 3).shape == (20, 3, 5)


def test_index_add_source_shape() -> None:
    with pytest.raises(RuntimeError, match="source tensor shape must match self tensor shape"):
        lucid.index_add(lucid.zeros(3, 2), 0, T([0, 1]), T([1.0, 2.0]))
    out = lucid.index_add(lucid.zeros(3, 2), 0, T([0, 2]), lucid.ones(2, 2))
    assert out.tolist() == [[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]


def test_masked_fill_value_that_does_not_fit() -> None:
    with pytest.raises(RuntimeError, match="value cannot be converted to type .* without overflow"):
        lucid.zeros(2, 2).masked_fill(T(True), 1j)
    with pytest.raises(RuntimeError, match="value cannot be converted to type .* without overflow"):
        T([1, 2]).masked_fill(T(True), T(1 + 1j))


def test_isclose_tolerances() -> None:
    with pytest.raises(RuntimeError, match="rtol must be greater than or equal to zero"):
        lucid.isclose(T(1.0), T(1.0), rtol=-0.4, atol=1e-8)
    with pytest.raises(RuntimeError, match="atol must be greater than or equal to zero"):
        lucid.isclose(T(1.0), T(1.0), atol=-0.4, rtol=1e-5)


def test_linalg_cross_shapes() -> None:
    with pytest.raises(RuntimeError, match="inputs dimension -1 must have length 3"):
        lucid.linalg.cross(lucid.zeros(5, 3), lucid.zeros(5, 1))
    with pytest.raises(RuntimeError, match="inputs must have the same number of dimensions"):
        lucid.linalg.cross(lucid.zeros(5, 5, 3), lucid.zeros(5, 3))


def test_torch_exception_classes() -> None:
    with pytest.raises(RuntimeError, match="cov\\(\\): expected input to have two or fewer"):
        lucid.cov(lucid.zeros(2, 2, 2))
    with pytest.raises(RuntimeError, match="Input must be >= 2-d"):
        lucid.fliplr(lucid.zeros(3))
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        -T([True])  # noqa: B018
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        lucid.roll(T(1.0), 1, 0)
    for fn, name in ((lucid.hstack, "hstack"), (lucid.vstack, "vstack"), (lucid.dstack, "dstack")):
        with pytest.raises(RuntimeError, match=f"{name} expects a non-empty TensorList"):
            fn([])
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        lucid.amax(lucid.zeros(0, 3))
    with pytest.raises(IndexError, match="Expected reduction dim"):
        lucid.amax(lucid.zeros(0, 3), 0)
    assert (-T([1, 2])).tolist() == [-1, -2]


def test_polar_wants_tensors() -> None:
    with pytest.raises(TypeError, match="polar\\(\\): argument 'abs' must be Tensor, not int"):
        lucid.polar(2, lucid.ones(3))


# torch's messages and check order where its OpInfo error_inputs named them (errors gauge)
def test_reshape_of_no_elements_with_inferred_dim_is_ambiguous() -> None:
    msg = r"cannot reshape tensor of 0 elements into shape \[0, -1\] because the unspecified"
    for fn in (
        lambda t: t.reshape(0, -1),
        lambda t: t.view(0, -1),
        lambda t: lucid.view_copy(t, (0, -1)),
    ):
        with pytest.raises(RuntimeError, match=msg):
            fn(lucid.zeros(0, 5))
    assert lucid.zeros(0, 5).reshape(5, -1).shape == (5, 0)
    with pytest.raises(RuntimeError, match=r"shape '\[0, -1\]' is invalid for input of size 15"):
        lucid.zeros(3, 5).reshape(0, -1)


def test_narrow_copy_negative_length() -> None:
    x = lucid.zeros(10)
    msg = r"start \(0\) \+ length \(-1\) exceeds dimension size \(10\)\."
    with pytest.raises(RuntimeError, match=msg):
        lucid.narrow_copy(x, 0, 0, -1)
    with pytest.raises(RuntimeError, match=r"start \(7\) \+ length \(-1\)"):
        x.narrow_copy(0, -3, -1)
    with pytest.raises(RuntimeError, match="length must be non-negative"):
        lucid.narrow(x, 0, 0, -1)  # narrow keeps its own message, as torch's
    with pytest.raises(IndexError, match="start out of range"):
        lucid.narrow_copy(x, 0, 12, -1)


def test_zero_dim_inputs_have_no_dimension() -> None:
    s = lucid.tensor(1.0)
    for fn, d in ((lucid.fft.fft, -1), (lucid.fft.rfft, -1), (lucid.fft.ihfft, -1)):
        with pytest.raises(IndexError, match=f"Dimension specified as {d} but tensor has no"):
            fn(s)
    for fn in (lucid.fft.fft2, lucid.fft.rfftn, lucid.fft.irfft2):
        with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no"):
            fn(s, dim=(0,))
    for fn in (lucid.unbind, lucid.unbind_copy):
        with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no"):
            fn(lucid.tensor(1), 0)


def test_roll_needs_shifts() -> None:
    with pytest.raises(RuntimeError, match="`shifts` required"):
        lucid.roll(lucid.zeros(5), ())


def test_mean_dtype_messages_name_torch_scalar_types() -> None:
    with pytest.raises(RuntimeError, match="Input dtype must be .* Got: Long$"):
        lucid.zeros(3, dtype=lucid.int64).mean()
    with pytest.raises(RuntimeError, match="Optional dtype must be .* Got: Long$"):
        lucid.zeros(3).mean(dtype=lucid.int64)


def test_gather_checks_shapes_before_index_bounds() -> None:
    with pytest.raises(RuntimeError, match="Size does not match at dimension 0 expected index"):
        lucid.gather(lucid.zeros(1, 1), 1, lucid.ones(2, 2, dtype=lucid.int64))
    with pytest.raises(RuntimeError, match="index 1 is out of bounds for dimension 1"):
        lucid.gather(lucid.zeros(2, 1), 1, lucid.ones(1, 1, dtype=lucid.int64))


def test_multinomial_checks_in_torch_order() -> None:
    with pytest.raises(RuntimeError, match="prob_dist must be 1 or 2 dim"):
        lucid.multinomial(lucid.ones(1, 2, 3), 2)
    with pytest.raises(RuntimeError, match="multinomial expects Long tensor out, got: Double"):
        lucid.multinomial(lucid.ones(1, 2), 0, out=lucid.zeros(1, 2, dtype=lucid.float64))
    inf, nan = float("inf"), float("nan")
    for p, what in (([1, -1, inf], "< 0"), ([1, inf, -1], "= infinity or NaN"), ([nan, 1], "< 0")):
        with pytest.raises(RuntimeError, match=f"encountering probability entry {what}"):
            lucid.multinomial(lucid.tensor(p), 2, True)
    with pytest.raises(RuntimeError, match=r"sum of probabilities <= 0"):
        lucid.multinomial(lucid.tensor([[0.0, 0.0], [1.0, -1.0]]), 2, True)
    with pytest.raises(RuntimeError, match="contains either `inf`, `nan` or element < 0"):
        lucid.multinomial(lucid.tensor([1.0, -1.0]), 1, True)  # one sample: torch's other path
    assert lucid.multinomial(lucid.tensor([[1.0, 2.0], [0.0, 1.0]]), 3, True).shape == (2, 3)


def test_cov_weight_checks() -> None:
    x = lucid.ones(5)
    cases = (
        ({"fweights": lucid.ones(5, 5, dtype=lucid.int64)}, "fweights to have one or fewer"),
        ({"aweights": lucid.ones(5, 5)}, "aweights to have one or fewer dimensions"),
        (
            {"aweights": lucid.ones(2, dtype=lucid.int64)},
            "floating point dtype but got aweights with Long",
        ),
        (
            {"fweights": lucid.ones(1, dtype=lucid.int64)},
            r"fweights to have the same numel .* 1 != 5",
        ),
        ({"aweights": lucid.ones(1)}, "aweights to have the same numel"),
    )
    for kwargs, msg in cases:
        with pytest.raises(RuntimeError, match=msg):
            lucid.cov(x, **kwargs)


def test_gradient_spacing_and_dim_lengths() -> None:
    with pytest.raises(
        RuntimeError,
        match="spacing argument of length 1 and a dim argument of length 2",
    ):
        lucid.gradient(lucid.zeros(3, 3), spacing=[0.1], dim=(1, 0))
    with pytest.raises(RuntimeError, match="since dim argument was not given"):
        lucid.gradient(lucid.zeros(3, 3), spacing=[0.1])


def test_complex_and_dot_dtype_messages() -> None:
    f, i = lucid.ones(2), lucid.ones(2, dtype=lucid.int32)
    with pytest.raises(RuntimeError, match="Half, Float or Double tensors but got Float and Int"):
        lucid.complex(f, i)
    with pytest.raises(
        RuntimeError, match="scalar type Float but got scalar type Double for second"
    ):
        lucid.complex(f, f.double())
    with pytest.raises(
        RuntimeError, match="ComplexDouble but got scalar type ComplexFloat for argument 'out'"
    ):
        lucid.complex(f.double(), f.double(), out=lucid.zeros(2, dtype=lucid.complex64))
    with pytest.raises(
        RuntimeError,
        match="dot : expected both vectors to have same dtype, but found Float and Half",
    ):
        lucid.dot(lucid.ones(1), lucid.ones(3, dtype=lucid.float16))


def test_creation_and_linalg_argument_checks() -> None:
    with pytest.raises(
        RuntimeError,
        match=r"Dimension out of range \(expected to be between 0 and 0, but got 3 at index 0\)",
    ):
        lucid.empty_permuted((2,), (3,))
    with pytest.raises(RuntimeError, match="Duplicate dim not allowed"):
        lucid.empty_permuted((2, 3), (0, 0))
    with pytest.raises(
        RuntimeError, match="len\\(size\\) = 2 is not equal to len\\(physical_layout\\) = 1"
    ):
        lucid.empty_permuted((2, 3), (0,))
    assert lucid.empty_permuted((2, 3), (1, 0)).shape == (2, 3)
    s = lucid.tensor(1.0)
    with pytest.raises(RuntimeError, match=r"torch.ormqr: input must have at least 2 dimensions\."):
        lucid.ormqr(s, s, s)
    with pytest.raises(
        RuntimeError,
        match=r"tau.shape\[-1\] must be equal to min\(other.shape\[-2\], input.shape\[-1\]\)",
    ):
        lucid.ormqr(lucid.ones(5, 0), lucid.ones(5), lucid.ones(5, 5))
    with pytest.raises(
        RuntimeError, match="The size of bins must be equal to the innermost dimension"
    ):
        lucid.histogramdd(lucid.ones(5, 6), [1, 1, 1, 1, 1])
    x = lucid.ones(1, 2, 3)
    with pytest.raises(
        RuntimeError, match="Expected normalized_shape to be at least 1-dimensional"
    ):
        lucid.native_layer_norm(x, (), None, None, 1e-5)
    with pytest.raises(
        RuntimeError,
        match=r"Expected weight to be of same shape as normalized_shape, but got weight of",
    ):
        lucid.native_layer_norm(x, (1, 2, 3), lucid.ones(1, 2), None, 1e-5)
    with pytest.raises(RuntimeError, match="Expected bias to be of same shape"):
        lucid.native_layer_norm(x, (1, 2, 3), None, lucid.ones(1, 2), 1e-5)
