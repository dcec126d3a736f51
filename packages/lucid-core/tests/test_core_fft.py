"""lucid.fft and complex tensors against NumPy, gradients by finite differences (complex128,
torch's convention: a complex input's gradient is dL/dx + i dL/dy of the real loss)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.fft as lfft
from lucid.autograd import gradcheck, gradgradcheck
from lucid.autograd.function import Function

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 6))
Z = X + 1j * RNG.standard_normal((3, 6))
C_IN = ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn")
R_IN = ("rfft", "ihfft", "rfft2", "rfftn")
ONESIDED = ("irfft", "hfft", "irfft2", "irfftn")
NORMS = (None, "backward", "forward", "ortho")


def close(a: Any, b: Any, atol: float = 1e-6, rtol: float = 1e-5) -> bool:
    return bool(np.allclose(np.asarray(a), np.asarray(b), atol=atol, rtol=rtol))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", C_IN + R_IN)
def test_forward_values_and_dtypes(name: str, norm: str | None) -> None:
    inp = X if name in R_IN else Z
    for dt, cdt in ((np.float32, lucid.complex64), (np.float64, lucid.complex128)):
        arr = inp.astype(dt) if name in R_IN else inp.astype(cdt.name)
        out = getattr(lfft, name)(lucid.tensor(arr), norm=norm)
        assert out.dtype is cdt
        assert close(out.numpy(), getattr(np.fft, name)(arr, norm=norm), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ONESIDED)
def test_onesided_inverse_values(name: str, norm: str | None) -> None:
    spec = np.fft.rfft(X)
    for n in (None, 7, 10):
        kw: dict[str, Any] = {}
        if n is not None:
            kw = {"n": n} if name in ("irfft", "hfft") else {"s": (3, n)}
        out = getattr(lfft, name)(lucid.tensor(spec.astype(np.complex64)), norm=norm, **kw)
        assert out.dtype is lucid.float32
        axes = {"axes": (0, 1)} if "s" in kw else {}
        ref = getattr(np.fft, name)(spec, norm=norm, **kw, **axes)
        assert close(out.numpy(), ref, atol=1e-4)


def test_n_and_s_and_dim() -> None:
    t = lucid.tensor(Z)
    assert close(lfft.fft(t, n=4, dim=0).numpy(), np.fft.fft(Z, n=4, axis=0))
    assert close(lfft.fft(t, n=3).numpy(), np.fft.fft(Z, n=3))
    assert close(lfft.fftn(t, s=(2, 8)).numpy(), np.fft.fftn(Z, s=(2, 8), axes=(0, 1)))
    assert close(lfft.fftn(t, dim=(0,)).numpy(), np.fft.fftn(Z, axes=(0,)))
    assert close(
        lfft.rfftn(lucid.tensor(X), s=(4, 5)).numpy(), np.fft.rfftn(X, s=(4, 5), axes=(0, 1))
    )
    assert close(lfft.fft2(t, s=(-1, 4)).numpy(), np.fft.fft2(Z, s=(3, 4)))
    with pytest.raises(ValueError, match="Invalid normalization mode"):
        lfft.fft(t, norm="bogus")
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        lfft.fft(t, n=0)
    with pytest.raises(RuntimeError, match="expects a real input"):
        lfft.rfft(t)


def test_integer_input_and_helpers() -> None:
    out = lfft.fft(lucid.tensor([1, 2, 3]))
    assert out.dtype is lucid.complex64
    assert close(lfft.fftfreq(5, d=0.5).numpy(), np.fft.fftfreq(5, d=0.5))
    assert close(lfft.fftfreq(6).numpy(), np.fft.fftfreq(6))
    assert close(lfft.rfftfreq(7, 2.0).numpy(), np.fft.rfftfreq(7, 2.0))
    assert lfft.fftfreq(4).dtype is lucid.float32
    a = np.arange(12.0).reshape(3, 4)
    assert close(lfft.fftshift(lucid.tensor(a)).numpy(), np.fft.fftshift(a))
    assert close(lfft.ifftshift(lucid.tensor(a), dim=1).numpy(), np.fft.ifftshift(a, axes=1))
    assert close(lfft.fftshift(lucid.tensor(a), dim=(0,)).numpy(), np.fft.fftshift(a, axes=0))


# -- gradients by finite differences (complex128) ----------------------------------------------


def _loss(f: Callable[[Any], Any], weights: Any) -> Callable[[Any], Any]:
    """A real loss of a (possibly complex) output: sum(Re(y) u + Im(y) v)."""

    def loss(t: Any) -> Any:
        y = f(t)
        u, v = weights(tuple(y.shape))
        if y.is_complex():
            return (y.real * u + y.imag * v).sum()
        return (y * u).sum()

    return loss


def fd_check(f: Callable[[Any], Any], inp: np.ndarray, eps: float = 1e-6) -> None:
    """The autograd gradient of a real loss of ``f`` against central differences, along the
    real and (for complex inputs) the imaginary direction of every element."""
    rng = np.random.default_rng(3)
    cache: dict[tuple[int, ...], tuple[Any, Any]] = {}

    def weights(shape: tuple[int, ...]) -> tuple[Any, Any]:
        if shape not in cache:
            cache[shape] = (lucid.tensor(rng.standard_normal(shape)),
                            lucid.tensor(rng.standard_normal(shape)))  # fmt: skip
        return cache[shape]

    loss = _loss(f, weights)
    t = lucid.tensor(inp, requires_grad=True)
    loss(t).backward()
    assert t.grad is not None
    grad = t.grad.numpy()
    num = np.zeros_like(inp)
    flat = num.reshape(-1)
    directions = (1.0, 1j) if np.iscomplexobj(inp) else (1.0,)
    for i in range(inp.size):
        for d in directions:
            step = np.zeros(inp.size, dtype=inp.dtype)
            step[i] = eps * d
            step = step.reshape(inp.shape)
            hi = loss(lucid.tensor(inp + step)).item()
            lo = loss(lucid.tensor(inp - step)).item()
            flat[i] += (hi - lo) / (2 * eps) * d
    assert close(grad, num, atol=1e-6, rtol=1e-5), (grad, num)


@pytest.mark.parametrize("norm", ("backward", "forward", "ortho"))
@pytest.mark.parametrize(
    ("name", "kw"),
    [("fft", {}), ("ifft", {"n": 4}), ("fft2", {}), ("ifftn", {"s": (2, 7)}),
     ("irfft", {}), ("irfft", {"n": 7}), ("hfft", {"n": 6}), ("irfftn", {}),
     ("irfft2", {"s": (3, 5)})],
)  # fmt: skip
def test_complex_input_grads(name: str, kw: dict[str, Any], norm: str) -> None:
    fd_check(lambda t: getattr(lfft, name)(t, norm=norm, **kw), Z[:2, :4].copy())


@pytest.mark.parametrize("norm", ("backward", "ortho"))
@pytest.mark.parametrize(
    ("name", "kw"),
    [("rfft", {}), ("rfft", {"n": 5}), ("rfft", {"n": 8}), ("ihfft", {}), ("rfftn", {}),
     ("rfft2", {"s": (3, 3)}), ("fft", {})],
)  # fmt: skip
def test_real_input_grads(name: str, kw: dict[str, Any], norm: str) -> None:
    fd_check(lambda t: getattr(lfft, name)(t, norm=norm, **kw), X[:2, :5].copy())


COMPLEX_FNS: list[tuple[str, Callable[[Any], Any]]] = [
    ("mul_conj_div", lambda t: t * t.conj() / (t + 2)),
    ("exp_log_sqrt", lambda t: t.exp() + t.log() * t.sqrt()),
    ("trig", lambda t: t.sin() * t.cos() + t.tanh()),
    ("abs", lambda t: t.abs()),
    ("sgn", lambda t: lucid.sgn(t)),
    ("angle", lambda t: lucid.angle(t)),
    ("real_imag", lambda t: t.real * t.imag),
    ("matmul_mH", lambda t: t @ t.mH),
    ("prod_mean", lambda t: t.prod(dim=1) + t.mean(0)[:2]),
    ("pow", lambda t: t**3),
    ("view_as_real", lambda t: lucid.view_as_real(t) ** 2),
    ("polar", lambda t: lucid.polar(t.abs(), lucid.angle(t))),
    ("mixed_real", lambda t: t * lucid.tensor([1.5, -2.0, 0.5])),
]


@pytest.mark.parametrize(("name", "fn"), COMPLEX_FNS, ids=[n for n, _ in COMPLEX_FNS])
def test_complex_op_grads(name: str, fn: Callable[[Any], Any]) -> None:
    fd_check(fn, Z[:2, :3].copy())


def test_real_leaf_through_complex() -> None:
    fd_check(lambda t: lucid.view_as_complex(t).exp(), X[:, :4].reshape(3, 2, 2).copy())
    fd_check(lambda t: lucid.complex(t, t * 2).abs(), X[:2, :3].copy())
    fd_check(lambda t: lucid.polar(t.abs() + 0.5, t), X[:2, :3].copy())
    fd_check(lambda t: t * lucid.tensor(Z[:2, :3]), X[:2, :3].copy())


def test_sgd_descends_on_complex_leaf() -> None:
    target = lucid.tensor(Z[0])
    w = lucid.zeros(6, dtype=lucid.complex128, requires_grad=True)
    losses = []
    for _ in range(20):
        loss = ((w - target).abs() ** 2).sum()
        losses.append(loss.item())
        loss.backward()
        assert w.grad is not None
        with lucid.no_grad():
            w -= 0.1 * w.grad
        w.grad = None
    assert losses[-1] < 1e-3 * losses[0]


# -- complex tensors --------------------------------------------------------------------------


def test_complex_parts_and_views() -> None:
    z = lucid.tensor(Z.astype(np.complex64))
    assert z.real.dtype is lucid.float32 and close(z.real.numpy(), Z.real)
    assert close(z.imag.numpy(), Z.imag)
    z.real[0, 0] = 5.0  # a view: writes reach z
    assert z[0, 0].item().real == 5.0
    z.imag = lucid.zeros(3, 6)
    assert close(z.imag.numpy(), 0)
    r = lucid.tensor(X)
    assert r.real is r
    with pytest.raises(RuntimeError, match="non-complex"):
        _ = r.imag
    assert close(lucid.conj(lucid.tensor(Z)).numpy(), Z.conj())
    assert close(lucid.conj_physical(lucid.tensor(Z)).numpy(), Z.conj())
    assert not lucid.is_conj(lucid.tensor(Z)) and lucid.resolve_conj(r) is r
    assert close(lucid.angle(lucid.tensor(Z)).numpy(), np.angle(Z))
    assert close(lucid.angle(lucid.tensor([-1.0, 2.0])).numpy(), [np.pi, 0])
    assert close(lucid.sgn(lucid.tensor(Z)).numpy(), Z / np.abs(Z))
    assert lucid.sgn(lucid.tensor([0j])).item() == 0
    with pytest.raises(RuntimeError, match="sgn"):
        lucid.sign(lucid.tensor(Z))
    vr = lucid.view_as_real(lucid.tensor(Z))
    assert vr.shape == (3, 6, 2) and close(vr.numpy()[..., 1], Z.imag)
    assert close(lucid.view_as_complex(vr).numpy(), Z)
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        lucid.view_as_complex(lucid.tensor(X))
    c = lucid.complex(lucid.tensor(X, dtype=lucid.float32), lucid.tensor(X, dtype=lucid.float32))
    assert c.dtype is lucid.complex64 and close(c.numpy(), X + 1j * X)
    with pytest.raises(RuntimeError, match="Float or Double"):
        lucid.complex(lucid.tensor([1]), lucid.tensor([2]))
    p = lucid.polar(lucid.tensor([2.0]), lucid.tensor([np.pi / 2]))
    assert p.dtype is lucid.complex64 and close(p.numpy(), [2j])
    assert lucid.tensor(Z).is_complex() and lucid.is_complex(lucid.tensor(Z))


def test_complex_save_load(tmp_path: Any) -> None:
    z = lucid.tensor(Z.astype(np.complex64))
    path = tmp_path / "z.lucid"
    lucid.save({"z": z, "w": lucid.tensor(Z)}, str(path))
    back = lucid.load(str(path))
    assert back["z"].dtype is lucid.complex64 and close(back["z"].numpy(), z.numpy())
    assert back["w"].dtype is lucid.complex128 and close(back["w"].numpy(), Z)


def test_rope_with_polar_and_view_as_complex() -> None:
    """LLaMA's rotary embedding: rotation by complex multiplication preserves norms and
    matches the rotate-half form written with real numbers."""
    dim, seq = 8, 5
    freqs = 1.0 / (10000 ** (lucid.arange(0, dim, 2).float() / dim))
    t = lucid.arange(seq).float()
    angles = lucid.outer(t, freqs)
    cis = lucid.polar(lucid.ones_like(angles), angles)
    x = lucid.tensor(RNG.standard_normal((2, seq, dim)), dtype=lucid.float32)
    xc = lucid.view_as_complex(x.reshape(2, seq, dim // 2, 2))
    out = lucid.view_as_real(xc * cis).flatten(2)
    xr = x.numpy().reshape(2, seq, dim // 2, 2)
    ang = angles.numpy()
    ref0 = xr[..., 0] * np.cos(ang) - xr[..., 1] * np.sin(ang)
    ref1 = xr[..., 0] * np.sin(ang) + xr[..., 1] * np.cos(ang)
    assert close(out.numpy(), np.stack([ref0, ref1], -1).reshape(2, seq, dim), atol=1e-5)


# -- windows and the short-time transform -----------------------------------------------------


@pytest.mark.parametrize("periodic", (True, False))
@pytest.mark.parametrize("n", (0, 1, 2, 7, 8))
def test_windows_match_numpy(n: int, periodic: bool) -> None:
    m = n + 1 if periodic else n
    refs: dict[str, Callable[[int], Any]] = {
        "hann_window": np.hanning, "hamming_window": np.hamming,
        "blackman_window": np.blackman, "bartlett_window": np.bartlett,
        "kaiser_window": lambda k: np.kaiser(k, 12.0),
    }  # fmt: skip
    for name, ref in refs.items():
        out = getattr(lucid, name)(n, periodic)
        assert out.dtype is lucid.float32 and tuple(out.shape) == (n,)
        want = np.ones(n) if n <= 1 else ref(m)[:n]
        assert close(out.numpy(), want, atol=1e-6), name
    assert lucid.hann_window(4, dtype=lucid.float64).dtype is lucid.float64
    with pytest.raises(RuntimeError, match="floating point"):
        lucid.hann_window(4, dtype=lucid.int64)


def _np_stft(x: np.ndarray, n_fft: int, hop: int, window: np.ndarray) -> Any:
    xp = np.pad(x, (n_fft // 2, n_fft // 2), mode="reflect")
    frames = np.stack([xp[i : i + n_fft] for i in range(0, len(xp) - n_fft + 1, hop)])
    return np.fft.rfft(frames * window).T


def test_stft_matches_numpy_and_istft_inverts() -> None:
    x = RNG.standard_normal(64)
    win = lucid.hann_window(16, dtype=lucid.float64)
    s = lucid.stft(lucid.tensor(x), 16, hop_length=4, window=win, return_complex=True)
    assert s.dtype is lucid.complex128
    assert close(s.numpy(), _np_stft(x, 16, 4, win.numpy()))
    back = lucid.istft(s, 16, hop_length=4, window=win, length=64)
    assert close(back.numpy(), x)
    batch = lucid.tensor(np.stack([x, -x]), dtype=lucid.float32)
    sb = lucid.stft(batch, 16, window=lucid.hann_window(16), return_complex=True)
    assert sb.dtype is lucid.complex64 and tuple(sb.shape) == (2, 9, 17)
    assert close(lucid.istft(sb, 16, window=lucid.hann_window(16)).numpy()[1], -x, atol=1e-5)
    with pytest.raises(RuntimeError, match="return_complex"):
        lucid.stft(lucid.tensor(x), 16)
    as_method = lucid.tensor(x).stft(16, hop_length=4, window=win, return_complex=True)
    assert close(as_method.istft(16, hop_length=4, window=win, length=64).numpy(), x)
    fd_check(lambda t: lucid.stft(t, 8, hop_length=3, window=lucid.hann_window(8,
             dtype=lucid.float64), return_complex=True), x[:20].copy())  # fmt: skip
    fd_check(
        lambda t: lucid.istft(t, 8, hop_length=2, window=lucid.ones(8, dtype=lucid.float64)),
        np.fft.rfft(x[:24].reshape(3, 8), axis=1).T.copy(),
    )


def test_complex_repr() -> None:
    assert repr(lucid.tensor([1 + 2j, 3 - 1j])) == "tensor([1.+2.j, 3.-1.j])"
    assert repr(lucid.tensor([0.5 - 1.25j], dtype=lucid.complex128)) == (
        "tensor([0.5000-1.2500j], dtype=lucid.complex128)"
    )


def test_complex_random_and_aliases() -> None:
    assert lucid.cfloat is lucid.complex64 and lucid.cdouble is lucid.complex128
    lucid.manual_seed(0)
    z = lucid.randn(20000, dtype=lucid.cfloat)
    assert z.dtype is lucid.complex64
    assert abs(z.real.var().item() - 0.5) < 0.03 and abs(z.imag.var().item() - 0.5) < 0.03
    u = lucid.rand(20000, dtype=lucid.cdouble)
    assert u.dtype is lucid.complex128 and 0 <= u.real.min().item() and u.imag.max().item() < 1


def test_linalg_eig_values_and_grads() -> None:
    a = RNG.standard_normal((2, 4, 4))
    lam, vec = lucid.linalg.eig(lucid.tensor(a))
    assert lam.dtype is lucid.complex128 and vec.dtype is lucid.complex128
    v, w = vec.numpy(), lam.numpy()
    assert close(a @ v, v * w[..., None, :], atol=1e-10)
    assert close(np.linalg.norm(v, axis=-2), 1.0)
    assert lucid.linalg.eigvals(lucid.tensor(a, dtype=lucid.float32)).dtype is lucid.complex64
    # losses that do not depend on the eigenvectors' phases
    fd_check(lambda t: lucid.linalg.eigvals(t), a[0].copy())
    fd_check(lambda t: lucid.linalg.eig(t).eigenvectors.abs() ** 2, a[0].copy())
    fd_check(lambda t: lucid.linalg.eigvals(t), Z[:, :3].copy())
    with pytest.raises(RuntimeError, match="ill-defined"):
        lucid.linalg.eig(lucid.tensor(a[0], requires_grad=True)).eigenvectors.real.sum().backward()


def test_complex_linalg_grads_and_refusals() -> None:
    a = Z[:, :3] + 3 * np.eye(3)
    fd_check(lambda t: lucid.linalg.inv(t), a.copy())
    fd_check(lambda t: lucid.linalg.det(t), a.copy())
    fd_check(lambda t: lucid.linalg.vector_norm(t, ord=3), a.copy())
    with pytest.raises(NotImplementedError, match="linalg.pinv: complex"):
        lucid.linalg.pinv(lucid.tensor(a))
    with pytest.raises(NotImplementedError, match="linalg.svd: the gradient"):
        lucid.linalg.svdvals(lucid.tensor(a, requires_grad=True))
    vals = lucid.linalg.svdvals(lucid.tensor(a))  # values without grad are torch's
    assert close(vals.numpy(), np.linalg.svd(a, compute_uv=False))


def test_gradcheck_takes_complex_inputs_and_outputs() -> None:
    z = lucid.tensor(Z[:2, :3].copy(), requires_grad=True)
    assert gradcheck(lambda t: lucid.fft.fft(t, norm="ortho"), (z,))
    assert gradcheck(lambda t: lucid.fft.irfft(t, n=5), (z,))
    assert gradcheck(lambda t: (t * t.conj()).exp() / (t + 3), (z,))
    assert gradgradcheck(lambda t: lucid.fft.fft(t) * t, (z,))

    class NoConj(Function):  # the real formula without torch's conjugate: must be caught
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (a,) = ctx.saved_tensors
            return g * a * 2

    assert not gradcheck(lambda t: NoConj.apply(t), (z,), raise_exception=False)
