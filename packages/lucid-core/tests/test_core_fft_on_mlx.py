"""lucid.fft and the complex ops on the MLX backend (complex64 only), against NumPy's results
on "cpu" for the same inputs."""

from __future__ import annotations

import numpy as np
import pytest

import lucid

pytestmark = pytest.mark.mlx
mx = pytest.importorskip("mlx.core")


def close(a: object, b: object, atol: float = 1e-5) -> bool:
    return bool(np.allclose(np.asarray(a), np.asarray(b), atol=atol, rtol=1e-4))


@pytest.mark.parametrize("name", ("fft", "ifft", "rfft", "ihfft", "fft2", "rfftn", "fftn"))
def test_fft_on_mlx_matches_cpu(name: str) -> None:
    x = lucid.tensor(np.random.default_rng(0).standard_normal((4, 8)), dtype=lucid.float32)
    for norm in (None, "ortho", "forward"):
        got = getattr(lucid.fft, name)(x.to("mlx"), norm=norm)
        assert got.device.type == "mlx" and got.dtype is lucid.complex64
        assert close(got.numpy(), getattr(lucid.fft, name)(x, norm=norm).numpy())


def test_inverse_real_transforms_and_grads_on_mlx() -> None:
    x = lucid.tensor(np.random.default_rng(1).standard_normal((3, 8)), dtype=lucid.float32)
    spec = lucid.fft.rfft(x)
    for name in ("irfft", "hfft", "irfft2"):
        got = getattr(lucid.fft, name)(spec.to("mlx"), norm="ortho")
        assert got.dtype is lucid.float32
        assert close(got.numpy(), getattr(lucid.fft, name)(spec, norm="ortho").numpy())
    w = x.clone().requires_grad_()
    wm = x.to("mlx").requires_grad_()
    lucid.fft.rfft(w, n=10).abs().sum().backward()
    lucid.fft.rfft(wm, n=10).abs().sum().backward()
    assert w.grad is not None and wm.grad is not None
    assert close(wm.grad.numpy(), w.grad.numpy(), atol=1e-4)


def test_complex_ops_on_mlx() -> None:
    z = lucid.tensor([1 + 2j, 3 - 1j, -2 + 0.5j])
    zm = z.to("mlx")
    for fn in (lucid.real, lucid.imag, lucid.conj, lucid.angle, lucid.sgn, lucid.abs,
               lucid.view_as_real):  # fmt: skip
        assert close(fn(zm).numpy(), fn(z).numpy()), fn.__name__
    with pytest.raises(TypeError, match="complex128"):
        lucid.tensor([1j], dtype=lucid.complex128).to("mlx")
    win = lucid.hann_window(8)
    sig = lucid.tensor(np.random.default_rng(2).standard_normal(40), dtype=lucid.float32)
    s = lucid.stft(sig.to("mlx"), 8, window=win.to("mlx"), return_complex=True)
    assert close(s.numpy(), lucid.stft(sig, 8, window=win, return_complex=True).numpy())
    back = lucid.istft(s, 8, window=win.to("mlx"), length=40)
    assert close(back.numpy(), sig.numpy(), atol=1e-4)


def test_linalg_eig_on_mlx() -> None:
    a = np.random.default_rng(3).standard_normal((4, 4)).astype(np.float32)
    lam, vec = lucid.linalg.eig(lucid.tensor(a).to("mlx"))
    assert lam.dtype is lucid.complex64 and lam.device.type == "mlx"
    v, w = vec.numpy(), lam.numpy()
    assert close(a @ v, v * w[None, :], atol=1e-4)
    want = np.sort_complex(np.linalg.eigvals(a.astype(np.float64)))
    assert close(np.sort_complex(w), want, atol=1e-4)
