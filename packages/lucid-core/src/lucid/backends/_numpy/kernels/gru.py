"""One GRU or Elman RNN layer over a whole padded sequence for the NumPy backend
(``kernels.GRU``, ``kernels.RNN``).

lucid-nn's reference records ~13 ops a GRU time step (the recurrent Linear, three chunks of
each projection, two sigmoids, a tanh, the products and sums) and 3 an RNN step, each with
autograd's bookkeeping, and as many backward. Here a layer is one op, as ``lstm``: the input
projection for all steps in one GEMM, then per step the recurrent GEMM and the gates in a few
in-place ufuncs (sigmoid as ``0.5 tanh(x / 2) + 0.5``, so r and z are one tanh pass), backward
in reverse with the weight gradients as one GEMM each over all steps. A float32 GRU's per-step
products run on OpenBLAS's small-matrix kernels as ``lstm``'s (``lstm.SMALL_STEP_PRODUCTS``;
(20, 200) x (200, 600): 52 against 62 us, its backward 46 against 66; an Elman RNN's
(200, 200) weight gains nothing there, and keeps ``np.matmul``), and where numba is in use a
GRU step's gate math is three compiled passes forward (around NumPy's tanh passes) and one
backward instead of ~10 and ~17 ufunc calls (``_lstm_jit.gru_*``, the same bits): a
word_language_model-sized layer (35 steps, batch 20, 200 -> 200) 0.76x the time forward and
0.70x backward (issue 30).

GRU, torch's gate order r, z, n: ``r = s(x_r + h_r)``, ``z = s(x_z + h_z)``,
``n = tanh(x_n + r * h_n)``, ``h' = n + z (h - n)``, where ``x_*`` include ``b_ih`` and ``h_*``
(``h W_hh^T + b_hh``) include ``b_hh``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.backends._numpy import _compiled
from lucid.backends._numpy._gemm import matmul
from lucid.backends._numpy._parallel import blas_threads
from lucid.backends._numpy.kernels.lstm import _small_steps, _transposed

__all__ = ["CpuGru", "CpuRnn"]


def _order(steps: int, reverse: bool) -> list[int]:
    return list(range(steps - 1, -1, -1)) if reverse else list(range(steps))


def _previous(ys: Any, h0: Any, reverse: bool) -> Any:
    """Each step's input state, stacked ``(L, N, H)``: ``h0`` then the outputs in time order."""
    if reverse:
        return np.concatenate([ys[1:], h0[None]])
    return np.concatenate([h0[None], ys[:-1]])


def _weight_grads(
    d2x: Any, d2h: Any, x: Any, prev: Any, w_ih: Any, needs: Any
) -> tuple[Any, Any, Any, Any, Any]:
    """``(dx, dw_ih, dw_hh, db_ih, db_hh)`` from the pre-activation gradients of the input
    projection ``d2x`` and of the recurrent one ``d2h`` (both ``(L * N, G * H)``)."""
    rows = d2x.shape[0]
    dx = matmul(d2x, w_ih).reshape(x.shape) if needs[0] else None
    dw_ih = matmul(d2x.T, x.reshape(rows, -1)) if needs[2] else None
    dw_hh = matmul(d2h.T, prev.reshape(rows, -1)) if needs[3] else None
    db_ih = d2x.sum(0) if needs[4] else None
    db_hh = d2h.sum(0) if needs[5] else None
    return dx, dw_ih, dw_hh, db_ih, db_hh


def _project(x: Any, w_ih: Any, b_ih: Any) -> Any:
    """Every step's input projection ``x W_ih^T + b_ih`` in one GEMM, ``(L, N, G * H)``."""
    steps, n, _ = x.shape
    out = matmul(x.reshape(steps * n, -1), w_ih.T).reshape(steps, n, w_ih.shape[0])
    if b_ih is not None:
        out += b_ih
    return out


def _gru_forward(a: Any, hh: Any, hn: Any, h: Any, y: Any, k: Any, jit: Any) -> None:
    """One step's gates from the input projection ``a`` (N, 3H; becomes r, z, n) and the
    recurrent one ``hh`` (with ``b_hh``): ``hn`` (``hh``'s n block, kept for the backward) and
    the new state ``y`` written. Where numba is in use the passes between the two tanh passes
    are compiled (``_lstm_jit.gru_*``: the same bits as the ufuncs here)."""
    hid = y.shape[1]
    rz, g = a[:, : 2 * hid], a[:, 2 * hid :]
    if jit is None or not _compiled.run("_lstm_jit", "gru_pre", a, hh, hn, k):
        rz += hh[:, : 2 * hid]
        rz *= 0.5  # sigmoid(v) = 0.5 tanh(v / 2) + 0.5: one tanh pass for r and z
        hn[...] = hh[:, 2 * hid :]
    np.tanh(rz, out=rz)
    if jit is None or not _compiled.run("_lstm_jit", "gru_mid", a, hn, k):
        rz *= 0.5
        rz += 0.5
        g += a[:, :hid] * hn
    np.tanh(g, out=g)
    if jit is None or not _compiled.run("_lstm_jit", "gru_out", a, h, y):
        np.subtract(h, g, out=y)  # h' = n + z (h - n)
        y *= a[:, hid : 2 * hid]
        y += g


def _gru_backward(a: Any, hn: Any, h_prev: Any, dh: Any, d_x: Any, d_h: Any, k: Any,
                  jit: Any) -> None:  # fmt: skip
    """One step's pre-activation gradients from the activations ``a`` (r, z, n), ``hn`` and the
    state gradient ``dh``: ``d_x`` (the input projection's), ``d_h`` (the recurrent one's: the
    n block times r); ``dh`` becomes its direct path ``dh z``. One compiled pass where numba
    is in use (``_lstm_jit.gru_backward``, the same bits)."""
    if jit is not None and _compiled.run("_lstm_jit", "gru_backward", a, hn, h_prev, dh, d_x,
                                         d_h, k):  # fmt: skip
        return
    hid = dh.shape[1]
    r, z, nn = a[:, :hid], a[:, hid : 2 * hid], a[:, 2 * hid :]
    dxr, dxz, dxn = d_x[:, :hid], d_x[:, hid : 2 * hid], d_x[:, 2 * hid :]
    np.subtract(1.0, z, out=dxn)  # dn = dh (1 - z), then through tanh
    dxn *= dh
    dxn *= 1.0 - nn * nn
    np.subtract(h_prev, nn, out=dxz)  # dz = dh (h - n), then through sigmoid
    dxz *= dh
    dxz *= z
    dxz *= 1.0 - z
    np.multiply(dxn, hn, out=dxr)  # dr = dn_pre * h_n, then through sigmoid
    dxr *= r
    dxr *= 1.0 - r
    d_h[:, : 2 * hid] = d_x[:, : 2 * hid]
    np.multiply(dxn, r, out=d_h[:, 2 * hid :])
    dh *= z  # the direct path h' = ... + z h


class CpuGru:
    """``kernels.GRU`` for NumPy: the layer as one op, gates in place (see the module)."""

    @staticmethod
    def forward(
        backend: Any, x: Any, h0: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any,
        reverse: bool,
    ) -> tuple[Any, Any]:  # fmt: skip
        steps, n, _ = x.shape
        hid = w_hh.shape[1]
        acts = _project(x, w_ih, b_ih)  # becomes r, z, n per step
        hn = np.empty((steps, n, hid), dtype=x.dtype)  # h W_hn^T + b_hn, for r's gradient
        ys = np.empty((steps, n, hid), dtype=x.dtype)
        hh = np.empty((n, w_hh.shape[0]), dtype=acts.dtype)  # h W_hh^T + b_hh, a step's
        gemm, nb = _small_steps(n, hid, hh, x, h0, w_ih, w_hh, b_ih, b_hh)
        w_hh_t = None if gemm is not None else _transposed(w_hh)
        if gemm is not None:  # the products as column blocks (lstm.py), then the bias
            h0 = np.ascontiguousarray(h0)
            blocks = (w_hh, w_hh[0] if b_hh is None else b_hh, hh, b_hh is not None, nb, 0,
                      hh.shape[1])  # fmt: skip
        k = np.array([0.5, 1.0, 0.0], dtype=acts.dtype)
        jit = _compiled.load("_lstm_jit")
        h = h0
        with blas_threads.single_blas_thread():  # the per-step products (lstm.py)
            for t in _order(steps, reverse):
                if gemm is None or not _compiled.run("_gemm_jit", "linear_blocks", h, *blocks):
                    gemm = None
                    w_hh_t = _transposed(w_hh) if w_hh_t is None else w_hh_t
                    np.matmul(h, w_hh_t, out=hh)
                    if b_hh is not None:
                        hh += b_hh
                _gru_forward(acts[t], hh, hn[t], h, ys[t], k, jit)
                h = ys[t]
        residuals = (x, h0, w_ih, w_hh, acts, hn, ys, reverse)
        return (ys, h.copy()), residuals

    @staticmethod
    def backward(backend: Any, residuals: Any, g: Any, needs: Any) -> tuple[Any, ...]:
        x, h0, w_ih, w_hh, acts, hn, ys, reverse = residuals
        dy, dh_n = g
        steps, n, hid = ys.shape
        dh = np.zeros_like(h0) if dh_n is None else dh_n.astype(h0.dtype, copy=True)
        d_x = np.empty_like(acts)  # the input projection's pre-activation gradients
        d_h = np.empty_like(acts)  # the recurrent projection's (differs in the n block)
        order = _order(steps, reverse)
        gemm, nb = _small_steps(n, 3 * hid, d_h, dh, w_hh)
        w_hh_t = None  # dh += d_h[t] @ w_hh as column blocks of w_hh^T (lstm.py)
        if gemm is not None:
            w_hh_t, dh = np.ascontiguousarray(w_hh.T), np.ascontiguousarray(dh)
        k = np.array([0.5, 1.0, 0.0], dtype=acts.dtype)
        jit = _compiled.load("_lstm_jit")
        with blas_threads.single_blas_thread():  # the per-step products (lstm.py)
            for j in range(steps - 1, -1, -1):
                t = order[j]
                if dy is not None:
                    dh += dy[t]
                h_prev = h0 if j == 0 else ys[order[j - 1]]
                _gru_backward(acts[t], hn[t], h_prev, dh, d_x[t], d_h[t], k, jit)
                if gemm is None or not _compiled.run(
                    "_gemm_jit", "add_small", d_h[t], w_hh_t, dh, nb, False
                ):
                    gemm = None
                    dh += d_h[t] @ w_hh
        rows = steps * n
        rest = _weight_grads(d_x.reshape(rows, -1), d_h.reshape(rows, -1), x,
                             _previous(ys, h0, reverse), w_ih, needs)  # fmt: skip
        return rest[0], (dh if needs[1] else None), *rest[1:]


class CpuRnn:
    """``kernels.RNN`` for NumPy: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or ReLU)
    as one op, the activation in place."""

    @staticmethod
    def forward(
        backend: Any, x: Any, h0: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any,
        nonlinearity: str, reverse: bool,
    ) -> tuple[Any, Any]:  # fmt: skip
        ys = _project(x, w_ih, b_ih)  # becomes the outputs, step by step
        if b_hh is not None:
            ys += b_hh
        w_hh_t = _transposed(w_hh)
        h = h0
        with blas_threads.single_blas_thread():  # the per-step products (lstm.py)
            for t in _order(x.shape[0], reverse):
                y = ys[t]
                y += h @ w_hh_t
                if nonlinearity == "tanh":
                    np.tanh(y, out=y)
                else:
                    np.maximum(y, 0, out=y)
                h = y
        residuals = (x, h0, w_ih, w_hh, ys, nonlinearity, reverse)
        return (ys, h.copy()), residuals

    @staticmethod
    def backward(backend: Any, residuals: Any, g: Any, needs: Any) -> tuple[Any, ...]:
        x, h0, w_ih, w_hh, ys, nonlinearity, reverse = residuals
        dy, dh_n = g
        steps, n, _ = ys.shape
        dh = np.zeros_like(h0) if dh_n is None else dh_n.astype(h0.dtype, copy=True)
        da = np.empty_like(ys)
        order = _order(steps, reverse)
        with blas_threads.single_blas_thread():  # the per-step products (lstm.py)
            for k in range(steps - 1, -1, -1):
                t = order[k]
                if dy is not None:
                    dh += dy[t]
                d = da[t]
                if nonlinearity == "tanh":
                    np.multiply(ys[t], ys[t], out=d)
                    np.subtract(1.0, d, out=d)
                    d *= dh
                else:
                    np.multiply(dh, ys[t] > 0, out=d)
                dh = d @ w_hh
        d2 = da.reshape(steps * n, -1)
        rest = _weight_grads(d2, d2, x, _previous(ys, h0, reverse), w_ih, needs)
        return rest[0], (dh if needs[1] else None), *rest[1:]
