"""lucid.fft and complex tensors against torch: values, dtypes, gradients, a Fourier-layer
model's first training steps and a LLaMA-style rotary embedding."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

RNG = np.random.default_rng(11)
X = RNG.standard_normal((3, 6))
Z = X + 1j * RNG.standard_normal((3, 6))
REAL_IN = ("rfft", "ihfft", "rfft2", "rfftn", "ihfft2", "ihfftn")
NAMES = ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
         "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn")  # fmt: skip


def close(a: Any, b: Any, atol: float = 1e-6, rtol: float = 1e-5) -> bool:
    return bool(np.allclose(np.asarray(a), np.asarray(b), atol=atol, rtol=rtol))


def tnp(t: Any) -> np.ndarray:
    return np.asarray(t.detach().resolve_conj().numpy())


def compare(fl: Callable[[Any], Any], ft: Callable[[Any], Any], inp: np.ndarray) -> None:
    """Values, dtype and the gradient of a real loss (weighted |y| or y) against torch."""
    a = lucid.tensor(inp, requires_grad=True)
    b = torch.tensor(inp, requires_grad=True)
    ya, yb = fl(a), ft(b)
    assert ya.dtype.name == str(yb.dtype).removeprefix("torch.")
    assert close(tnp(ya), tnp(yb))
    u = np.random.default_rng(0).standard_normal(tuple(yb.shape))
    la = (ya.abs() if ya.is_complex() else ya) * lucid.tensor(u)
    lb = (yb.abs() if yb.is_complex() else yb) * torch.tensor(u)
    la.sum().backward()
    lb.sum().backward()
    assert a.grad is not None and b.grad is not None
    assert close(a.grad.numpy(), tnp(b.grad))


@pytest.mark.parametrize("norm", (None, "forward", "ortho"))
@pytest.mark.parametrize("size", (None, 5, 8))
@pytest.mark.parametrize("name", NAMES)
def test_fft_matches_torch(name: str, size: int | None, norm: str | None) -> None:
    kw: dict[str, Any] = {}
    if size is not None:
        kw = {"s": (2, size)} if name[-1] in "2n" else {"n": size}
    inp = X if name in REAL_IN else Z
    compare(lambda t: getattr(lucid.fft, name)(t, norm=norm, **kw),
            lambda t: getattr(torch.fft, name)(t, norm=norm, **kw), inp)  # fmt: skip


@pytest.mark.parametrize("name", ("fft", "rfft", "ifft", "fftn"))
def test_fft_float32_dtypes(name: str) -> None:
    x = X.astype(np.float32)
    out, ref = getattr(lucid.fft, name)(lucid.tensor(x)), getattr(torch.fft, name)(torch.tensor(x))
    assert out.dtype is lucid.complex64 and ref.dtype == torch.complex64
    assert close(out.numpy(), tnp(ref), atol=1e-5, rtol=1e-4)
    back = lucid.fft.irfft(lucid.fft.rfft(lucid.tensor(x)))
    assert back.dtype is lucid.float32


def test_fft_helpers_match_torch() -> None:
    for n, d in ((5, 1.0), (8, 0.25)):
        assert close(lucid.fft.fftfreq(n, d).numpy(), torch.fft.fftfreq(n, d).numpy())
        assert close(lucid.fft.rfftfreq(n, d).numpy(), torch.fft.rfftfreq(n, d).numpy())
    a = np.arange(15.0).reshape(3, 5)
    for dim in (None, 0, (1,), (0, 1)):
        assert close(lucid.fft.fftshift(lucid.tensor(a), dim).numpy(),
                     torch.fft.fftshift(torch.tensor(a), dim).numpy())  # fmt: skip
        assert close(lucid.fft.ifftshift(lucid.tensor(a), dim).numpy(),
                     torch.fft.ifftshift(torch.tensor(a), dim).numpy())  # fmt: skip


OPS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("mul_conj_div", lambda t, m: m.exp(t) * m.conj(t) / (t + 2)),
    ("sgn", lambda t, m: m.sgn(t)),
    ("angle", lambda t, m: m.angle(t)),
    ("abs", lambda t, m: m.abs(t)),
    ("real_imag", lambda t, m: t.real * t.imag),
    ("sqrt_log_sin", lambda t, m: (t.sqrt() + t.log()) * t.sin()),
    ("matmul", lambda t, m: t @ t.mT),
    ("matmul_mH", lambda t, m: t @ t.mH),
    ("view_as_real", lambda t, m: m.view_as_real(t) ** 2),
    ("polar", lambda t, m: m.polar(t.abs(), m.angle(t))),
    ("prod", lambda t, m: t.prod(dim=1)),
    ("pow", lambda t, m: t**2.5),
    ("tanh_reciprocal", lambda t, m: t.tanh() + t.reciprocal()),
    ("sum_mean", lambda t, m: t.mean(0) + t.sum(0)),
    ("index_cat", lambda t, m: m.cat([t[:, 1:3], t[:, ::3]], dim=1)),
    ("einsum", lambda t, m: m.einsum("ij,kj->ik", t, t)),
    ("vdot", lambda t, m: m.vdot(t[0], t[1])),
    ("var_std", lambda t, m: t.var(1) + t.std(0)[:3]),
    ("sigmoid", lambda t, m: t.sigmoid()),
    ("cumsum_cumprod", lambda t, m: t.cumsum(1) + t.cumprod(1)),
    ("gather_where", lambda t, m: m.where(t.real > 0, t, t * 2).gather(1, m.tensor([[0, 1]] * 3))),
    ("kron_outer", lambda t, m: m.kron(t[:2, :2], t[1:, 2:4]).sum() + m.outer(t[0], t[1])),
    ("addmm_mv", lambda t, m: m.addmm(t[:, :3], t, t.mT) + m.mv(t, t[0]).unsqueeze(1)),
    ("trig_inverse", lambda t, m: t.tan() + (t * 0.3).asin() + (t * 0.3).atanh() + t.rsqrt()),
]


@pytest.mark.parametrize(("name", "fn"), OPS, ids=[n for n, _ in OPS])
def test_complex_ops_match_torch(name: str, fn: Callable[[Any, Any], Any]) -> None:
    compare(lambda t: fn(t, lucid), lambda t: fn(t, torch), Z)


def test_complex_from_real_leaves_matches_torch() -> None:
    compare(lambda t: lucid.complex(t, t.exp()), lambda t: torch.complex(t, t.exp()), X)
    compare(lambda t: lucid.view_as_complex(t.reshape(3, 3, 2)),
            lambda t: torch.view_as_complex(t.reshape(3, 3, 2)), X)  # fmt: skip
    compare(lambda t: lucid.polar(t.abs(), t), lambda t: torch.polar(t.abs(), t), X)


# -- a Fourier neural operator layer, trained as torch trains it --------------------------------


def _fno(m: Any, x: Any, w_spec: Any, w_lin: Any, modes: int) -> Any:
    """One FNO block on (batch, channels, n): a spectral convolution over the lowest
    ``modes`` frequencies plus a pointwise linear map, then tanh."""
    n = x.shape[-1]
    x_ft = m.fft.rfft(x)
    low = m.einsum("bix,iox->box", x_ft[:, :, :modes], w_spec)
    pad = m.zeros(x.shape[0], w_spec.shape[1], n // 2 + 1 - modes, dtype=low.dtype)
    spec = m.fft.irfft(m.cat([low, pad], dim=-1), n=n)
    return m.tanh(spec + m.einsum("bin,io->bon", x, w_lin))


def test_fno_first_steps_match_torch() -> None:
    rng = np.random.default_rng(5)
    batch, ch, n, modes = 4, 3, 16, 5
    x = rng.standard_normal((batch, ch, n)).astype(np.float32)
    target = np.tanh(np.roll(x, 2, axis=-1) * 0.7).astype(np.float32)
    ws = ((rng.random((ch, ch, modes)) + 1j * rng.random((ch, ch, modes))) / ch).astype(
        np.complex64
    )
    wl = (rng.standard_normal((ch, ch)) / ch).astype(np.float32)

    def train(m: Any, steps: int) -> tuple[list[float], Any]:
        w_spec = m.tensor(ws, requires_grad=True)
        w_lin = m.tensor(wl, requires_grad=True)
        xs, ys = m.tensor(x), m.tensor(target)
        losses = []
        for _ in range(steps):
            loss = ((_fno(m, xs, w_spec, w_lin, modes) - ys) ** 2).mean()
            losses.append(float(loss.item()))
            loss.backward()
            with m.no_grad():
                w_spec -= 0.5 * w_spec.grad
                w_lin -= 0.5 * w_lin.grad
            w_spec.grad = None
            w_lin.grad = None
        return losses, w_spec.detach().numpy()

    lucid_losses, lucid_w = train(lucid, 5)
    torch_losses, torch_w = train(torch, 5)
    assert close(lucid_losses, torch_losses, atol=1e-5, rtol=1e-4)
    assert close(lucid_w, torch_w, atol=1e-5, rtol=1e-4)
    trained, _ = train(lucid, 60)
    assert trained[-1] < 0.25 * trained[0]


# -- LLaMA's rotary embedding ---------------------------------------------------------------


def _rope(m: Any, xq: Any, dim: int, seq: int) -> Any:
    freqs = 1.0 / (10000.0 ** (m.arange(0, dim, 2)[: dim // 2].float() / dim))
    t = m.arange(seq).float()
    freqs_cis = m.polar(m.ones(seq, dim // 2), m.outer(t, freqs))
    xq_ = m.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    return m.view_as_real(xq_ * freqs_cis.reshape(1, seq, 1, dim // 2)).flatten(3)


def test_rotary_embedding_matches_torch() -> None:
    q = np.random.default_rng(2).standard_normal((2, 7, 3, 8)).astype(np.float32)
    a = lucid.tensor(q, requires_grad=True)
    b = torch.tensor(q, requires_grad=True)
    ya, yb = _rope(lucid, a, 8, 7), _rope(torch, b, 8, 7)
    assert ya.dtype is lucid.float32
    assert close(ya.detach().numpy(), tnp(yb), atol=1e-5)
    (ya**2 * lucid.tensor(q)).sum().backward()
    (yb**2 * torch.tensor(q)).sum().backward()
    assert a.grad is not None and b.grad is not None
    assert close(a.grad.numpy(), b.grad.numpy(), atol=1e-4)


# -- windows, stft, istft -------------------------------------------------------------------

WINDOWS = ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window")


@pytest.mark.parametrize("name", WINDOWS)
def test_windows_match_torch(name: str) -> None:
    for n in (0, 1, 2, 7, 8):
        for periodic in (True, False):
            a = getattr(lucid, name)(n, periodic).numpy()
            b = getattr(torch, name)(n, periodic).numpy()
            assert a.dtype == b.dtype and close(a, b)


STFT_CASES: list[dict[str, Any]] = [
    {"n_fft": 16},
    {"n_fft": 16, "hop_length": 5, "win_length": 12, "window": True},
    {"n_fft": 15, "center": False, "normalized": True},
    {"n_fft": 16, "pad_mode": "constant", "onesided": False},
]


@pytest.mark.filterwarnings("ignore:The length of signal is shorter")  # both warn, as torch
@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.parametrize("case", STFT_CASES)
def test_stft_istft_match_torch(case: dict[str, Any]) -> None:
    kw = dict(case)
    use_window = kw.pop("window", False)
    wl = kw.get("win_length", kw["n_fft"])
    wa = lucid.hann_window(wl, dtype=lucid.float64) if use_window else None
    wb = torch.hann_window(wl, dtype=torch.float64) if use_window else None
    x = RNG.standard_normal((2, 100))
    a, b = lucid.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    sa = lucid.stft(a, window=wa, return_complex=True, **kw)
    sb = torch.stft(b, window=wb, return_complex=True, **kw)
    assert tuple(sa.shape) == tuple(sb.shape) and close(tnp(sa), tnp(sb))
    sa.abs().sum().backward()
    sb.abs().sum().backward()
    assert a.grad is not None and b.grad is not None
    assert close(a.grad.numpy(), b.grad.numpy())
    ikw = {k: v for k, v in kw.items() if k != "pad_mode"}
    ia, ib = sa.detach().requires_grad_(), sb.detach().requires_grad_()
    ya = lucid.istft(ia, window=wa, length=100, **ikw)
    yb = torch.istft(ib, window=wb, length=100, **ikw)
    assert close(tnp(ya), tnp(yb))
    u = RNG.standard_normal(tuple(yb.shape))
    (ya * lucid.tensor(u)).sum().backward()
    (yb * torch.tensor(u)).sum().backward()
    assert ia.grad is not None and ib.grad is not None
    assert close(ia.grad.numpy(), tnp(ib.grad))


def test_complex_repr_matches_torch() -> None:
    cases: list[Any] = [
        [1 + 2j, 3 - 1j], [[1.5 + 2j, -3j], [0.25, 1e-3j]], [1e10 + 1j, 2j], [0j], 1 + 1j,
        [float("nan") + 1j, float("inf") - 2j], RNG.standard_normal(1500) + 1j,
    ]  # fmt: skip
    for c in cases:
        for dt in ("complex64", "complex128"):
            mine = repr(lucid.tensor(c, dtype=getattr(lucid, dt))).replace("lucid.", "torch.")
            assert mine == repr(torch.tensor(c, dtype=getattr(torch, dt)))


@pytest.mark.parametrize("kind", ("real", "complex"))
def test_linalg_eig_grads_match_torch(kind: str) -> None:
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 4, 4))
    if kind == "complex":
        a = a + 1j * rng.standard_normal((2, 4, 4))
    u = rng.standard_normal((2, 4, 4))

    def loss(m: Any, t: Any) -> Any:
        lam, vec = m.linalg.eig(t)
        return (lam.abs() ** 2).sum() + ((vec.abs() ** 4) * m.tensor(u)).sum()

    la, lb = lucid.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    loss(lucid, la).backward()
    loss(torch, lb).backward()
    assert la.grad is not None and lb.grad is not None
    assert close(la.grad.numpy(), tnp(lb.grad), atol=1e-8)


LINALG: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("inv", lambda m, a: m.linalg.inv(a)),
    ("det", lambda m, a: m.linalg.det(a)),
    ("slogdet", lambda m, a: m.linalg.slogdet(a)[1]),
    ("solve", lambda m, a: m.linalg.solve(a, a[:, :2] * 2)),
    ("matrix_exp", lambda m, a: m.linalg.matrix_exp(a * 0.3)),
    ("matrix_power", lambda m, a: m.linalg.matrix_power(a, 3)),
    ("norm", lambda m, a: m.linalg.norm(a)),
    ("vector_norm", lambda m, a: m.linalg.vector_norm(a, ord=3)),
    ("trace", lambda m, a: m.trace(a)),
]


@pytest.mark.parametrize(("name", "fn"), LINALG, ids=[n for n, _ in LINALG])
def test_complex_linalg_matches_torch(name: str, fn: Callable[[Any, Any], Any]) -> None:
    rng = np.random.default_rng(8)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)) + 3 * np.eye(3)
    compare(lambda t: fn(lucid, t), lambda t: fn(torch, t), a)
