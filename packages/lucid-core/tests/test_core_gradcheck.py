"""lucid.autograd.gradcheck / gradgradcheck catch wrong gradients and pass right ones."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
from lucid.autograd import Function, gradcheck, gradgradcheck
from lucid.autograd.gradcheck import GradcheckError


class WrongSquare(Function):
    """x^2 whose backward forgets the factor 2."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g * x


class BadSecondOrder(Function):
    """x^3 with a right first derivative whose own derivative is wrong (3 x^2 -> 3 |x| x)."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g * 3 * x.detach().abs() * x  # equals 3 x^2 for x > 0, derivative differs


def _x() -> Any:
    return lucid.tensor([[0.5, 1.5], [2.0, 0.7]], dtype=lucid.float64, requires_grad=True)


def test_passes_a_correct_gradient_with_several_inputs_and_outputs() -> None:
    a, b = _x(), _x() * 1.0
    b = b.detach().requires_grad_()
    assert gradcheck(lambda p, q: (p * q, (p @ q).exp()), (a, b))
    assert gradgradcheck(lambda p, q: (p * q, (p @ q).exp()), (a, b))


def test_reports_a_wrong_gradient() -> None:
    with pytest.raises(GradcheckError, match=r"output 0 with respect to input 0.*entry"):
        gradcheck(WrongSquare.apply, (_x(),))
    assert gradcheck(WrongSquare.apply, (_x(),), raise_exception=False) is False


def test_gradgradcheck_reports_a_wrong_second_derivative() -> None:
    assert gradcheck(BadSecondOrder.apply, (_x(),))  # first order is right for x > 0
    with pytest.raises(GradcheckError):
        gradgradcheck(BadSecondOrder.apply, (_x(),))


def test_non_float64_warns_and_no_grad_inputs_are_an_error() -> None:
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="not float64"):
        gradcheck(lambda t: t * 2, (x,), eps=1e-2, atol=1e-2, rtol=1e-2)
    with pytest.raises(ValueError, match="at least one input"):
        gradcheck(lambda t: t * 2, (lucid.ones(2, dtype=lucid.float64),))


def test_inputs_are_restored_and_global_rng_untouched() -> None:
    x = _x()
    before = x.numpy().copy() if not x.requires_grad else x.detach().numpy().copy()
    lucid.manual_seed(3)
    expected = lucid.randn(4).numpy()
    lucid.manual_seed(3)
    gradgradcheck(lambda t: (t * t).sum(), (x,))
    np.testing.assert_array_equal(lucid.randn(4).numpy(), expected)
    np.testing.assert_array_equal(x.detach().numpy(), before)


def test_non_differentiable_outputs_and_unused_inputs() -> None:
    x, y = _x(), _x().detach().requires_grad_()
    assert gradcheck(lambda p, q: (p.argmax(), p.sin()), (x, y))  # q unused: zero Jacobian
    assert gradcheck(lambda p: p.sum() * 0 + 1.0, (lucid.zeros(0, dtype=lucid.float64,
                                                                requires_grad=True),))  # fmt: skip


def test_gradcheck_takes_torchs_options() -> None:
    """torch's keyword options are taken (the conv-bn fusion tutorial passes
    ``fast_mode=False``): fast mode still compares the whole Jacobians, a backward that is
    wrong still fails, and the extra checks lucid does not run warn when asked for."""
    x = lucid.rand(2, 3, dtype=lucid.float64, requires_grad=True)
    assert gradcheck(lambda t: t * t, (x,), fast_mode=False, nondet_tol=0.0, masked=None)
    assert gradcheck(lambda t: t * t, (x,), fast_mode=True, check_undefined_grad=True)
    assert gradgradcheck(lambda t: t * t * t, (x,), fast_mode=True, check_rev_over_rev=True,
                         gen_non_contig_grad_outputs=False)  # fmt: skip

    class Wrong(Function):
        @staticmethod
        def forward(ctx: Any, t: Any) -> Any:
            return t * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 3

    with pytest.raises(GradcheckError):
        gradcheck(Wrong.apply, (x,), fast_mode=True)
    assert gradcheck(Wrong.apply, (x,), check_backward_ad=False)  # nothing compared
    assert not gradcheck(Wrong.apply, (x,), raise_exception=False, fast_mode=False)
    with pytest.warns(UserWarning, match="check_batched_grad=True is not run"):
        gradcheck(lambda t: t * t, (x,), check_batched_grad=True)
    with pytest.warns(UserWarning, match="check_fwd_over_rev=True is not run"):
        gradgradcheck(lambda t: t * t, (x,), check_fwd_over_rev=True)


@pytest.mark.parity
def test_gradcheck_options_match_torchs_signature() -> None:
    import inspect

    torch = pytest.importorskip("torch")
    for ours, theirs in ((gradcheck, torch.autograd.gradcheck),
                         (gradgradcheck, torch.autograd.gradgradcheck)):  # fmt: skip
        mine = inspect.signature(ours).parameters
        for name, p in inspect.signature(theirs).parameters.items():
            assert name in mine, name
            assert mine[name].default == p.default, name
