"""The structured transforms and biject_to / transform_to against torch.distributions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
from lucid import distributions as D

pytestmark = pytest.mark.parity


def _cases(lib: Any) -> list[tuple[str, Any, tuple[int, ...]]]:
    """(name, transform, input shape) built the same way in lucid and torch."""
    dd = lib.distributions
    tf = dd.transforms
    return [
        ("stick", tf.StickBreakingTransform(), (3, 4)),
        ("lower_cholesky", tf.LowerCholeskyTransform(), (2, 3, 3)),
        ("positive_definite", tf.PositiveDefiniteTransform(), (2, 3, 3)),
        ("corr_cholesky", tf.CorrCholeskyTransform(), (2, 6)),
        ("reshape", tf.ReshapeTransform((2, 3), (3, 2)), (4, 2, 3)),
        ("independent", tf.IndependentTransform(tf.ExpTransform(), 1), (3, 4)),
        ("cat", tf.CatTransform([tf.ExpTransform(), tf.SigmoidTransform()], 1, [2, 3]), (4, 5)),
        ("stack", tf.StackTransform([tf.ExpTransform(), tf.TanhTransform()], 1), (4, 2)),
        (
            "cdf",
            tf.CumulativeDistributionTransform(
                dd.Normal(lib.tensor(0.5, dtype=lib.float64), lib.tensor(2.0, dtype=lib.float64))
            ),
            (5,),
        ),
        ("biject_simplex", dd.biject_to(dd.constraints.simplex), (2, 3)),
        ("biject_interval", dd.biject_to(dd.constraints.interval(-1.0, 3.0)), (4,)),
        ("transform_pd", dd.transform_to(dd.constraints.positive_definite), (3, 3)),
        ("biject_real_vector", dd.biject_to(dd.constraints.real_vector), (3,)),
        ("biject_greater", dd.biject_to(dd.constraints.greater_than(2.0)), (3,)),
        ("biject_corr", dd.biject_to(dd.constraints.corr_cholesky), (3,)),
    ]


@pytest.mark.parametrize("index", range(15))
def test_transform_matches_torch(index: int) -> None:
    torch = pytest.importorskip("torch")
    name, ours, shape = _cases(lucid)[index]
    _, theirs, _ = _cases(torch)[index]
    x = np.random.default_rng(index).standard_normal(shape) * 0.7
    xl = lucid.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    yl, yt = ours(xl), theirs(xt)
    np.testing.assert_allclose(yl.detach().numpy(), yt.detach().numpy(), rtol=1e-9, atol=1e-12)
    if name in ("lower_cholesky", "positive_definite", "transform_pd"):  # torch has no Jacobian
        with pytest.raises(NotImplementedError):
            ours.log_abs_det_jacobian(xl, yl)
        ldl, ldt = yl.sum() * 0, yt.sum() * 0
    else:
        ldl, ldt = ours.log_abs_det_jacobian(xl, yl), theirs.log_abs_det_jacobian(xt, yt)
    np.testing.assert_allclose(ldl.detach().numpy(), ldt.detach().numpy(), rtol=1e-9,
                               atol=1e-12)  # fmt: skip
    if name not in ("lower_cholesky", "positive_definite", "transform_pd"):  # not injective
        np.testing.assert_allclose(ours.inv(yl).detach().numpy(), x, rtol=1e-7, atol=1e-9)
    (ldl.sum() + yl.sum()).backward()
    (ldt.sum() + yt.sum()).backward()
    np.testing.assert_allclose(xl.grad.numpy(), xt.grad.numpy(), rtol=1e-8, atol=1e-10)
    assert tuple(ours.forward_shape(shape)) == tuple(theirs.forward_shape(torch.Size(shape)))
    assert bool(ours.codomain.check(yl).all()) == bool(theirs.codomain.check(yt).all())
    assert ours.domain.event_dim == theirs.domain.event_dim
    assert ours.codomain.event_dim == theirs.codomain.event_dim


def test_registry_errors_and_decorator() -> None:
    class Odd(D.constraints.Constraint):
        pass

    with pytest.raises(NotImplementedError, match="Cannot transform Odd constraints"):
        D.biject_to(Odd())
    with pytest.raises(TypeError, match="Constraint subclass or instance"):
        D.biject_to.register(3, lambda c: D.transforms.ExpTransform())
    registry = D.constraint_registry.ConstraintRegistry()

    @registry.register(Odd)
    def _odd(c: Any) -> D.Transform:
        return D.transforms.ExpTransform()

    assert isinstance(registry(Odd()), D.transforms.ExpTransform)
    with pytest.raises(ValueError, match="different numbers of elements"):
        D.transforms.ReshapeTransform((2, 3), (4,))
