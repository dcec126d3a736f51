"""Window functions and the short-time Fourier transform (``lucid.hann_window``, ...,
``lucid.stft``, ``lucid.istft``), with torch's arguments and defaults."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from lucid import _creation, dtypes
from lucid._tensor import Tensor
from lucid.fft import fft, ifft, irfft, rfft
from lucid.ops import cat, index_add, pad, view_as_real
from lucid.ops._util import scalar_type_name

__all__ = [
    "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window",
    "stft", "istft",
]  # fmt: skip


def _window(
    name: str,
    length: int,
    periodic: bool,
    values: Any,
    dtype: Any,
    device: Any,
    requires_grad: bool,
) -> Tensor:
    """``values(m)`` (a float64 NumPy array of ``m`` points of the symmetric window) as a
    tensor; the periodic window is the symmetric one of ``length + 1`` points, less the last."""
    dt = dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {scalar_type_name(dt)}")
    if length < 0:
        raise RuntimeError(
            f"{name} requires non-negative window length, got window_length={length}"
        )
    if length <= 1:
        arr = np.ones(length)
    else:
        m = length + 1 if periodic else length
        arr = values(m)[:length]
    return _creation.tensor(arr, dtype=dt, device=device, requires_grad=requires_grad)


def _cosine_sum(coeffs: tuple[float, ...]) -> Any:
    def values(m: int) -> Any:
        n = np.arange(m)
        return sum(c * np.cos(2 * math.pi * k * n / (m - 1)) for k, c in enumerate(coeffs))

    return values


def hann_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Hann window ``0.5 - 0.5 cos(2 pi n / (N - 1))`` (periodic by default, for
    spectral analysis: ``N = window_length + 1``)."""
    return _window("hann_window", window_length, periodic, _cosine_sum((0.5, -0.5)), dtype,
                   device, requires_grad)  # fmt: skip


def hamming_window(
    window_length: int,
    periodic: bool = True,
    alpha: float = 0.54,
    beta: float = 0.46,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Hamming window ``alpha - beta cos(2 pi n / (N - 1))``."""
    return _window("hamming_window", window_length, periodic, _cosine_sum((alpha, -beta)), dtype,
                   device, requires_grad)  # fmt: skip


def blackman_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Blackman window ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    return _window("blackman_window", window_length, periodic, _cosine_sum((0.42, -0.5, 0.08)),
                   dtype, device, requires_grad)  # fmt: skip


def bartlett_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The triangular Bartlett window ``1 - |2n / (N - 1) - 1|``."""

    def values(m: int) -> Any:
        return 1 - np.abs(2 * np.arange(m) / (m - 1) - 1)

    return _window("bartlett_window", window_length, periodic, values, dtype, device,
                   requires_grad)  # fmt: skip


def kaiser_window(
    window_length: int,
    periodic: bool = True,
    beta: float = 12.0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Kaiser window ``I0(beta sqrt(1 - (2n / (N - 1) - 1)^2)) / I0(beta)``."""

    def values(m: int) -> Any:
        return np.kaiser(m, beta)

    return _window("kaiser_window", window_length, periodic, values, dtype, device,
                   requires_grad)  # fmt: skip


def _full_window(window: Tensor | None, win_length: int, n_fft: int, ref: Tensor) -> Tensor:
    """The window zero-padded on both sides to ``n_fft`` (ones where none is given)."""
    dt = ref.dtype if not ref.dtype.is_complex else dtypes.float32
    if window is None:
        window = _creation.ones(win_length, dtype=dt, device=ref.device)
    if window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(
            f"stft: expected a 1D window tensor of size equal to win_length={win_length}, but "
            f"got window with size {list(window.shape)}"
        )
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = pad(window, (left, n_fft - win_length - left))
    return window


def _lengths(n_fft: int, hop_length: int | None, win_length: int | None) -> tuple[int, int]:
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win}")
    return hop, win


def stft(
    input: Tensor,  # noqa: A002
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Tensor:
    """The short-time Fourier transform of a 1-D signal or a batch of them: frames of
    ``n_fft`` samples every ``hop_length`` (``n_fft // 4``), each times ``window`` (ones of
    ``win_length = n_fft``, centred), transformed. Result ``(batch?, n_fft // 2 + 1, frames)``
    (``onesided``, the default for real input and window). ``center`` pads ``n_fft // 2`` on
    both sides with ``pad_mode``; ``normalized`` scales by ``n_fft ** -0.5``. As torch 2.x,
    real input needs ``return_complex`` given; ``False`` returns ``view_as_real`` of the result.
    """
    if align_to_window is not None:
        if center:
            raise ValueError("stft: align_to_window should only be set when center = false")
        if align_to_window:
            raise NotImplementedError(
                "stft: align_to_window=True (frames aligned to the window's centre) is not "
                "implemented in lucid"
            )
    if return_complex is None:
        if not input.is_complex() and (window is None or not window.is_complex()):
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.ndim}D tensor")
    x = input if input.ndim == 2 else input.unsqueeze(0)
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"stft: expected a tensor of floating point or complex values, got "
                           f"{scalar_type_name(x.dtype)}")  # fmt: skip
    hop, win = _lengths(n_fft, hop_length, win_length)
    if center:
        half = n_fft // 2
        x = pad(x.unsqueeze(0), (half, half), mode=pad_mode).squeeze(0)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    if window is None:
        warnings.warn(
            "A window was not provided. A rectangular window will be applied,which is known to "
            "cause spectral leakage. Other windows such as lucid.hann_window or "
            "lucid.hamming_window are recommended to reduce spectral leakage.To suppress this "
            "warning and use a rectangular window, explicitly set "
            "`window=lucid.ones(n_fft, device=<device>)`.",
            UserWarning,
            stacklevel=2,
        )
    w = _full_window(window, win, n_fft, x)
    frames = x.unfold(-1, n_fft, hop) * w  # (batch, frames, n_fft)
    complex_in = x.is_complex() or w.is_complex()
    if onesided is None:
        onesided = not complex_in
    if onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = rfft(frames, norm=norm) if onesided else fft(frames, norm=norm)
    out = spec.transpose(-1, -2)
    if input.ndim == 1:
        out = out.squeeze(0)
    return out if return_complex else view_as_real(out)


def istft(
    input: Tensor,  # noqa: A002
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Tensor:
    """The inverse of :func:`stft`: each frame transformed back, windowed and overlap-added,
    divided by the summed squared window (which must not vanish: the NOLA condition)."""
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex, got "
                           f"{input.ndim}")  # fmt: skip
    spec = input if input.ndim == 3 else input.unsqueeze(0)
    hop, win = _lengths(n_fft, hop_length, win_length)
    n_freq, n_frames = spec.shape[-2], spec.shape[-1]
    if onesided is None:
        onesided = n_freq != n_fft
    if onesided and n_freq != n_fft // 2 + 1:
        raise RuntimeError(
            f"istft: expected the frequency dimension (3rd to the last) of the input tensor to "
            f"match n_fft / 2 + 1 when onesided=True, but got {n_freq}"
        )
    if return_complex and onesided:
        raise RuntimeError("cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    cols = spec.transpose(-1, -2)  # (batch, frames, freq)
    if return_complex:
        frames = ifft(cols, n=n_fft, norm=norm)
    else:
        # as torch: a two-sided spectrum is cut to its first half, which irfft reads
        frames = irfft(cols[..., : n_fft // 2 + 1], n=n_fft, norm=norm)
    ref = frames if not frames.is_complex() else frames.real
    if window is None:
        warnings.warn(
            "A window was not provided. A rectangular window will be applied.Please provide the "
            "same window used by stft to make the inversion lossless.To suppress this warning "
            "and use a rectangular window, explicitly set "
            "`window=lucid.ones(n_fft, device=<device>)`.",
            UserWarning,
            stacklevel=2,
        )
    w = _full_window(window, win, n_fft, ref)
    frames = frames * w
    total = n_fft + hop * (n_frames - 1)
    starts = np.arange(n_frames) * hop
    idx = _creation.tensor((starts[:, None] + np.arange(n_fft)).reshape(-1), device=ref.device)
    batch = frames.shape[0]
    y = _creation.zeros(batch, total, dtype=frames.dtype, device=ref.device)
    y = index_add(y, 1, idx, frames.reshape(batch, -1))
    env = _creation.zeros(total, dtype=w.dtype, device=ref.device)
    env = index_add(env, 0, idx, (w * w).repeat(n_frames))
    start = n_fft // 2 if center else 0
    end = total
    if length is not None:
        end = start + length
    elif center:
        end = total - n_fft // 2
    end = min(end, total)
    y, env = y[:, start:end], env[start:end]
    if bool((env.abs() < 1e-11).any()):
        raise RuntimeError("istft: window overlap add min: 0 (the window does not satisfy the "
                           "NOLA condition)")  # fmt: skip
    y = y / env
    if length is not None and y.shape[-1] < length:
        warnings.warn(
            "The length of signal is shorter than the length parameter. Result is being padded "
            "with zeros in the tail. Please check your center and hop_length settings.",
            UserWarning,
            stacklevel=2,
        )
        missing = length - y.shape[-1]
        y = cat([y, _creation.zeros(batch, missing, dtype=y.dtype, device=ref.device)], dim=1)
    if input.ndim == 2:
        y = y.squeeze(0)
    return y
