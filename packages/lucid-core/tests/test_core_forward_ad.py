"""lucid.autograd.forward_ad: dual tensors' tangents equal J @ t (checked by finite differences
in float64 and against torch's forward mode), levels and checks as torch's."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.autograd.forward_ad as fwAD


def _f(x: lucid.Tensor, w: lucid.Tensor) -> lucid.Tensor:
    return (x.sin() * w).tanh() @ w.exp()


def test_tangent_matches_finite_differences() -> None:
    rng = np.random.default_rng(0)
    x0, w0 = rng.standard_normal((3, 4)), rng.standard_normal(4)
    tx, tw = rng.standard_normal((3, 4)), rng.standard_normal(4)
    with fwAD.dual_level():
        x = fwAD.make_dual(lucid.tensor(x0), lucid.tensor(tx))
        w = fwAD.make_dual(lucid.tensor(w0), lucid.tensor(tw))
        primal, tangent = fwAD.unpack_dual(_f(x, w))
    eps = 1e-6
    hi = _f(lucid.tensor(x0 + eps * tx), lucid.tensor(w0 + eps * tw)).numpy()
    lo = _f(lucid.tensor(x0 - eps * tx), lucid.tensor(w0 - eps * tw)).numpy()
    assert tangent is not None
    np.testing.assert_allclose(tangent.numpy(), (hi - lo) / (2 * eps), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(primal.numpy(), _f(lucid.tensor(x0), lucid.tensor(w0)).numpy(),
                               rtol=0, atol=0)  # fmt: skip


def test_levels_and_checks() -> None:
    x = lucid.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(x, lucid.ones(2))
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="different size than that of the original"):
            fwAD.make_dual(x, lucid.ones(3))
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
        d = fwAD.make_dual(x, lucid.full((2,), 3.0))
        assert fwAD.unpack_dual(d).tangent is not None
        assert fwAD.unpack_dual(x).tangent is None  # not a dual tensor
        y = d * d
        # unpacking twice works, and the graph still serves a backward afterwards
        first = fwAD.unpack_dual(y).tangent
        second = fwAD.unpack_dual(y).tangent
        assert first is not None and second is not None
        np.testing.assert_allclose(first.numpy(), [6.0, 12.0], rtol=0, atol=1e-6)
        np.testing.assert_allclose(second.numpy(), first.numpy(), rtol=0, atol=0)
    assert fwAD.unpack_dual(y).tangent is None  # the level is closed


@pytest.mark.parity
def test_matches_torch_forward_mode_on_a_module() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    w1, b1 = rng.standard_normal((5, 3)), rng.standard_normal(5)
    w2 = rng.standard_normal((2, 5))
    inp = rng.standard_normal((4, 3))
    tangents = [rng.standard_normal(a.shape) for a in (w1, b1, w2)]

    def run(lib: object) -> np.ndarray:
        fw = lib.autograd.forward_ad  # type: ignore[attr-defined]
        F = lib.nn.functional  # type: ignore[attr-defined]  # noqa: N806
        t = lib.tensor  # type: ignore[attr-defined]
        with fw.dual_level():
            p = [fw.make_dual(t(a), t(v)) for a, v in zip((w1, b1, w2), tangents)]
            out = F.linear(F.gelu(F.linear(t(inp), p[0], p[1])), p[2]).log_softmax(-1)
            return fw.unpack_dual(out).tangent.detach().numpy()  # type: ignore[no-any-return]

    np.testing.assert_allclose(run(lucid), run(torch), rtol=1e-9, atol=1e-10)


def test_make_dual_keeps_a_tangent_of_the_primals_layout() -> None:
    # forward_ad_usage.py asserts `unpack_dual(make_dual(p, t)).tangent is t`, and that a
    # transposed tangent is copied into the primal's layout (values kept)
    rng = np.random.default_rng(3)
    primal = lucid.tensor(rng.standard_normal((4, 4)).astype(np.float32))
    tangent = lucid.tensor(rng.standard_normal((4, 4)).astype(np.float32))
    with fwAD.dual_level():
        assert fwAD.unpack_dual(fwAD.make_dual(primal, tangent)).tangent is tangent
        alt = fwAD.unpack_dual(fwAD.make_dual(primal, tangent.T)).tangent
        assert alt is not None and alt is not tangent
        assert alt.stride() == primal.stride()
        np.testing.assert_allclose(alt.numpy(), tangent.numpy().T, rtol=0, atol=0)
        x = fwAD.make_dual(primal, tangent)
        got = fwAD.unpack_dual(x * x).tangent
        assert got is not None
        np.testing.assert_allclose(got.numpy(), 2 * primal.numpy() * tangent.numpy(),
                                   rtol=1e-6, atol=1e-6)  # fmt: skip
