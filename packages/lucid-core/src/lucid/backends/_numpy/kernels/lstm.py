"""One LSTM layer over a whole padded sequence for the NumPy backend (``kernels.LSTM``).

lucid-nn's reference LSTM records ~20 ops a time step (a GEMM, the gate chunks, three
sigmoids, two tanhs, the products), each with autograd's bookkeeping, and the same again
backward: ~3,200 recorded ops a word_language_model step. Here a layer is one op: the input
projection for all steps in one GEMM, then per step the recurrent GEMM and the gates in a few
in-place ufuncs on preallocated buffers (sigmoid as ``0.5 tanh(x / 2) + 0.5``, so the four
gates are one tanh pass), and backward the same in reverse with the weight gradients as one GEMM
each over all steps. The products over all steps go to the threads ``_gemm.matmul`` picks by
their size (row blocks on lucid's pool at two threads); the per-step products run on one BLAS
thread: OpenBLAS's threads, woken for a (20, 200) x (200, 800) product, spin between the steps
and hold the core the pool's next split needs (docs/performance.md, issue 30). Where numba is
in use (``lucid-core[numba]``) a step's gate math is one compiled call each way
(``_lstm_jit``), the same bits as the ufuncs, and a float32 layer's per-step products of few
rows run as column blocks on OpenBLAS's small-matrix kernels where its cores have them, each
adding into its destination (``SMALL_STEP_PRODUCTS``: another order of float32 sums than one
GEMM, the recorded and the no-grad forward alike).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from lucid.backends._numpy import _compiled, _parallel
from lucid.backends._numpy._errstate import QUIET
from lucid.backends._numpy._gemm import matmul
from lucid.backends._numpy._parallel import blas_threads, in_worker

__all__ = ["CpuLstm"]

# At two threads and more, the layer's input-side products overlap the serial recurrence: the
# forward's input projection in blocks of ``PIPE_STEPS`` time steps on a pool thread, a block
# ready before the recurrence reaches it; the backward's input gradient ``dgates @ w_ih`` in
# blocks as the recurrence finishes them. Row blocks of the same products: the same bits as
# the whole product split in row halves (docs/performance.md, issue 30). False: the whole
# products before (forward) and after (backward) the recurrence, as before.
PIPELINE_INPUT_PRODUCTS = True
PIPE_STEPS = 5
# OpenBLAS may run a product of m * n * k up to this on its small-matrix kernels (other sums
# than its packed GEMM, by row count): a block of the pipelined products has more (``_Blocks``).
_SMALL_MNK = 100**3
# The per-step products of float32 layers of at most ``_STEP_ROWS`` rows (the batch) as column
# blocks on OpenBLAS's small-matrix kernels where ``_gemm_jit.small_blocks`` says its cores have
# them (``_gemm_jit.add_blocks``: accumulating into the step's pre-activations forward, into the
# state gradient backward, without a temporary product or a separate add). The recurrent
# product of word_language_model's layer, (20, 200) x (200, 800): 68 against 84 us with the
# add; backward (20, 800) x (800, 200): 59 against 85 us; 0.35-0.8x the time up to 1,500
# hidden units at batch 10-32; from ~50 rows no faster (docs/performance.md, issue 30). Not
# split over numba's threads: the pool's thread runs the input-side products beside the
# recurrence (``PIPELINE_INPUT_PRODUCTS``), and a split that waits for it, or wakes a sleeping
# thread each step, was slower (4.3-6.3 against 4.0 ms for the layer's forward). False:
# ``np.matmul`` on one BLAS thread.
SMALL_STEP_PRODUCTS = True
_STEP_ROWS = 32


def _small_steps(n: int, k: int, out: Any, *arrays: Any) -> tuple[Any, int]:
    """``(_gemm_jit, column block)`` for the per-step ``(n, k) @ (k, .)`` products into the
    C-contiguous ``out`` on OpenBLAS's small-matrix kernels (``SMALL_STEP_PRODUCTS``), where
    ``arrays`` are float32 (None allowed); ``(None, 0)`` where they do not apply (numba off,
    float64, many rows, a core without those kernels)."""
    if not SMALL_STEP_PRODUCTS or n > _STEP_ROWS or not out.flags.c_contiguous:
        return None, 0
    if out.dtype != np.float32 or any(a is not None and a.dtype != np.float32 for a in arrays):
        return None, 0
    gemm = _compiled.load("_gemm_jit")
    nb = 0 if gemm is None else gemm.small_blocks(n, k)
    return (gemm, nb) if nb else (None, 0)


def _pipelined(steps: int, n: int, w: Any) -> bool:
    """Whether a layer's input-side products overlap its recurrence (``PIPELINE_INPUT_PRODUCTS``):
    more than one block of steps, a thread to spare, and a product that ``matmul`` splits in row
    blocks anyway (smaller ones run whole, and OpenBLAS's small-matrix kernels give other bits
    for other row counts)."""
    return (
        PIPELINE_INPUT_PRODUCTS
        and steps > PIPE_STEPS
        and 2.0 * steps * n * w.size >= _parallel.PARALLEL_FLOPS
        and _parallel.workers() > 1
        and not in_worker()
    )


def _quiet(work: Any) -> Any:
    """``work`` run with NumPy's floating-point warnings off, as the op's own thread has them (a
    worker thread starts with NumPy's defaults)."""

    def run(*args: Any) -> None:
        state, value = QUIET
        token = state.set(value)
        try:
            work(*args)
        finally:
            state.reset(token)

    return run


def _transposed(w: Any) -> Any:
    """``w.T`` as a C-contiguous copy, for the per-step ``h @ w.T``: OpenBLAS runs a product of
    few rows ~1.5x slower on the transposed view ((20, 200) x (200, 800): 108 against 72 us,
    docs/performance.md); the copy costs about one such product."""
    return np.ascontiguousarray(w.T)


def _gate_affine(h: int, dtype: Any) -> tuple[Any, Any]:
    """Per-column scale and shift turning ``tanh(scale * z)`` into the four gates' activations:
    sigmoid for i, f, o (scale 0.5, then ``0.5 t + 0.5``), tanh for g."""
    scale = np.full(4 * h, 0.5, dtype=dtype)
    scale[2 * h : 3 * h] = 1.0
    shift = np.full(4 * h, 0.5, dtype=dtype)
    shift[2 * h : 3 * h] = 0.0
    return scale, shift


def _scaled_t(w: Any, scale: Any) -> Any:
    """``(scale[:, None] * w).T`` as a C-contiguous array. The scale (0.5, or 1 for the g rows)
    is a power of two, so the products and biases computed with the scaled weights are exactly
    the scaled products (subnormal weights aside): the pre-activations come out already
    multiplied by ``scale`` (one pass a step less, the same bits); C-contiguous as
    ``_transposed``."""
    return _transposed(w * scale[:, None])


def _cell_forward(gates: Any, c_prev: Any, c: Any, tc: Any, h: Any, k: Any, scale: Any,
                  shift: Any, jit: Any) -> None:  # fmt: skip
    """Scaled pre-activations ``gates`` (N, 4H) -> activations in place; ``c``, ``tanh(c)``
    (kept for the backward) and ``h`` written."""
    np.tanh(gates, out=gates)
    if jit is None or not _compiled.run("_lstm_jit", "gates_forward", gates, c_prev, c, k):
        n = c.shape[1]
        gates *= scale
        gates += shift
        i, f, g = gates[:, :n], gates[:, n : 2 * n], gates[:, 2 * n : 3 * n]
        np.multiply(f, c_prev, out=c)
        c += i * g
    np.tanh(c, out=tc)
    np.multiply(tc, gates[:, 3 * c.shape[1] :], out=h)


def _cell_backward(
    acts: Any, tc: Any, c_prev: Any, dh: Any, dc: Any, dgates: Any, deriv: Any, k: Any,
    jit: Any,
) -> None:  # fmt: skip
    """From the activations, ``tanh(c)`` and the state gradients: the pre-activation gradients
    ``dgates``; ``dc`` becomes the previous cell state's gradient. ``deriv`` (N, 4H) is scratch:
    the four activations' derivatives, computed over the whole row in two passes
    (``a (1 - a)``, then ``1 - g^2`` over the g block) instead of one pass per gate."""
    if jit is not None and _compiled.run(
        "_lstm_jit", "gates_backward", acts, tc, c_prev, dh, dc, dgates, k
    ):
        return
    n = tc.shape[1]
    i, f, g, o = acts[:, :n], acts[:, n : 2 * n], acts[:, 2 * n : 3 * n], acts[:, 3 * n :]
    di, df, dg, do = (dgates[:, q * n : (q + 1) * n] for q in range(4))
    np.multiply(dh, tc, out=do)  # d o (activation)
    t2 = deriv[:, :n]  # scratch until the derivatives are written
    np.multiply(tc, tc, out=t2)
    np.subtract(1.0, t2, out=t2)
    t2 *= o
    t2 *= dh
    dc += t2  # dc now the full gradient of c at this step
    np.multiply(dc, g, out=di)
    np.multiply(dc, c_prev, out=df)
    np.multiply(dc, i, out=dg)
    np.subtract(1.0, acts, out=deriv)
    deriv *= acts
    dgd = deriv[:, 2 * n : 3 * n]
    np.multiply(g, g, out=dgd)
    np.subtract(1.0, dgd, out=dgd)
    dgates *= deriv
    dc *= f


class _Blocks:
    """Time-step blocks of ``PIPE_STEPS`` (at least ``least``), as ``(start, stop)`` ranges in
    time order, a remainder under ``least`` steps joined to the last block."""

    def __init__(self, steps: int, least: int = 1) -> None:
        size = max(PIPE_STEPS, least)
        starts = list(range(0, steps, size))
        if len(starts) > 1 and steps - starts[-1] < least:
            starts.pop()
        self.ranges = [(s, e) for s, e in zip(starts, [*starts[1:], steps])]
        self.of = [i for i, (s, e) in enumerate(self.ranges) for _ in range(s, e)]


def _least_steps(n: int, k: int, g: int) -> int:
    """The fewest time steps a block of the input-side products ``(steps * n, k) @ (k, g)``
    (and ``(steps * n, g) @ (g, k)``) may have: past OpenBLAS's small-matrix size (m * n * k
    above 100^3), where a product's bits do not depend on its row count."""
    return _SMALL_MNK // max(1, n * k * g) + 1


class _Projection:
    """The forward's input projection ``x @ w_ih_t + biases`` into ``acts`` block by block: the
    recurrence's first block on the calling thread, the rest in recurrence order on one pool
    thread; ``wait_for(t)`` before the recurrence reads ``acts[t]``."""

    def __init__(self, x: Any, w_t: Any, biases: list[Any], acts: Any, reverse: bool) -> None:
        self.x, self.w_t, self.biases, self.acts = x, w_t, biases, acts
        steps, n, k = x.shape
        self.blocks = _Blocks(steps, _least_steps(n, k, w_t.shape[1]))
        order = list(range(len(self.blocks.ranges)))
        self.order = order[::-1] if reverse else order
        self.events = [threading.Event() for _ in order]
        self.future: Any = None
        self.error: BaseException | None = None

    def block(self, i: int) -> None:
        s, e = self.blocks.ranges[i]
        xb, ab = self.x[s:e], self.acts[s:e]
        rows = (e - s) * xb.shape[1]
        np.matmul(xb.reshape(rows, -1), self.w_t, out=ab.reshape(rows, -1))
        for b in self.biases:
            ab += b
        self.events[i].set()

    def rest(self) -> None:
        try:
            for i in self.order[1:]:
                self.block(i)
        except BaseException as e:
            self.error = e
            raise
        finally:  # an error: the waiting recurrence wakes and raises it (``wait_for``)
            for ev in self.events:
                ev.set()

    def start(self) -> None:
        """(inside ``single_blas_thread``: the pool thread's product on one BLAS thread)"""
        self.block(self.order[0])
        self.future = blas_threads.pool(_parallel.workers()).submit(_quiet(self.rest))

    def wait_for(self, t: int) -> None:
        event = self.events[self.blocks.of[t]]
        if not event.is_set():
            event.wait()
        if self.error is not None:
            raise self.error

    def finish(self) -> None:
        self.future.result()


def _project_blocks(x: Any, w_t: Any, biases: list[Any], acts: Any, reverse: bool) -> Any:
    return _Projection(x, w_t, biases, acts, reverse)


class _InputGrads:
    """The backward's input gradient ``dgates @ w_ih`` block by block: a block of time steps is
    handed to a pool thread once the recurrence has written all its ``dgates``; the last block
    on the calling thread."""

    def __init__(self, dgates: Any, w_ih: Any, x: Any) -> None:
        self.dgates, self.w = dgates, w_ih
        self.dx = np.empty(x.shape, dtype=np.result_type(dgates.dtype, w_ih.dtype))
        steps, n, k = x.shape
        self.blocks = _Blocks(steps, _least_steps(n, k, w_ih.shape[0]))
        self.left = [e - s for s, e in self.blocks.ranges]
        self.futures: list[Any] = []
        self.pending: list[int] = []
        self.work = _quiet(self.block)

    def block(self, i: int) -> None:
        s, e = self.blocks.ranges[i]
        db, xb = self.dgates[s:e], self.dx[s:e]
        rows = (e - s) * db.shape[1]
        np.matmul(db.reshape(rows, -1), self.w, out=xb.reshape(rows, -1))

    def done(self, t: int) -> None:
        i = self.blocks.of[t]
        self.left[i] -= 1
        if self.left[i] == 0:
            self.pending.append(i)
            if sum(1 for v in self.left if v) > 0:  # not the last block: to the pool
                pool = blas_threads.pool(_parallel.workers())
                self.futures.append(pool.submit(self.work, i))
                self.pending.pop()

    def finish(self) -> Any:
        for i in self.pending:  # the last block, on this thread
            self.block(i)
        for f in self.futures:
            f.result()
        return self.dx


class CpuLstm:
    """``kernels.LSTM`` for NumPy: the layer as one op, gates in place (see the module)."""

    @staticmethod
    def forward(
        backend: Any, x: Any, h0: Any, c0: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any,
        reverse: bool,
    ) -> tuple[Any, Any]:  # fmt: skip
        steps, n, _ = x.shape
        hid = w_hh.shape[1]
        scale, shift = _gate_affine(hid, x.dtype)
        w_ih_t = (w_ih * scale[:, None]).T  # as _scaled_t, the layout of the unscaled w_ih.T
        biases = [b * scale for b in (b_ih, b_hh) if b is not None]
        pipe = _pipelined(steps, n, w_ih)
        if pipe:
            acts = np.empty((steps, n, 4 * hid), dtype=np.result_type(x.dtype, w_ih_t.dtype))
            ready = _project_blocks(x, w_ih_t, biases, acts, reverse)
        else:
            acts = matmul(x.reshape(steps * n, -1), w_ih_t).reshape(steps, n, 4 * hid)
            for b in biases:
                acts += b
        cs = np.empty((steps, n, hid), dtype=x.dtype)
        tcs = np.empty((steps, n, hid), dtype=x.dtype)
        ys = np.empty((steps, n, hid), dtype=x.dtype)
        k = np.array([0.5, 1.0, 0.0], dtype=x.dtype)
        jit = _compiled.load("_lstm_jit")
        gemm, nb = _small_steps(n, hid, acts, x, h0, w_ih, w_hh, *biases)
        w_hh_t = None if gemm is not None else _scaled_t(w_hh, scale)
        if gemm is not None:  # (4H, H) row-major: the small kernels' ``h @ w.T``
            w_hh_s = np.ascontiguousarray(w_hh * scale[:, None])
            h0 = np.ascontiguousarray(h0)
        h, c = h0, c0
        with blas_threads.single_blas_thread():
            if pipe:
                ready.start()
            for t in range(steps - 1, -1, -1) if reverse else range(steps):
                if pipe:
                    ready.wait_for(t)
                if gemm is None or not _compiled.run(
                    "_gemm_jit", "add_small", h, w_hh_s, acts[t], nb, False
                ):
                    gemm = None
                    w_hh_t = _scaled_t(w_hh, scale) if w_hh_t is None else w_hh_t
                    acts[t] += h @ w_hh_t
                _cell_forward(acts[t], c, cs[t], tcs[t], ys[t], k, scale, shift, jit)
                h, c = ys[t], cs[t]
            if pipe:
                ready.finish()
        residuals = (x, h0, c0, w_ih, w_hh, acts, cs, tcs, ys, reverse)
        return (ys, h.copy(), c.copy()), residuals

    @staticmethod
    def backward(backend: Any, residuals: Any, g: Any, needs: Any) -> tuple[Any, ...]:
        x, h0, c0, w_ih, w_hh, acts, cs, tcs, ys, reverse = residuals
        dy, dh_n, dc_n = g
        steps, n, hid = cs.shape
        dh = np.zeros_like(h0) if dh_n is None else dh_n.astype(h0.dtype, copy=True)
        dc = np.zeros_like(c0) if dc_n is None else dc_n.astype(c0.dtype, copy=True)
        dgates = np.empty_like(acts)
        deriv = np.empty_like(acts[0])
        k = np.array([0.5, 1.0, 0.0], dtype=acts.dtype)
        jit = _compiled.load("_lstm_jit")
        order = list(range(steps - 1, -1, -1)) if reverse else list(range(steps))
        grads = _InputGrads(dgates, w_ih, x) if needs[0] and _pipelined(steps, n, w_ih) else None
        gemm, nb = _small_steps(n, 4 * hid, dgates, dh, w_hh, dy)
        if gemm is not None:  # (H, 4H) row-major: ``dgates @ w_hh`` as the small kernels' x @ w.T
            w_hh_t = np.ascontiguousarray(w_hh.T)
            dh = np.ascontiguousarray(dh)
        if dy is not None:
            dh += dy[order[-1]]
        with blas_threads.single_blas_thread():
            for j in range(steps - 1, -1, -1):
                t = order[j]
                c_prev = c0 if j == 0 else cs[order[j - 1]]
                _cell_backward(acts[t], tcs[t], c_prev, dh, dc, dgates[t], deriv, k, jit)
                if gemm is not None:  # dh = dgates[t] @ w_hh + dy[t - 1], added in place
                    if dy is None or j == 0:
                        dh.fill(0)
                    else:
                        np.copyto(dh, dy[order[j - 1]])
                if gemm is None or not _compiled.run(
                    "_gemm_jit", "add_small", dgates[t], w_hh_t, dh, nb, False
                ):
                    gemm = None
                    dh = dgates[t] @ w_hh
                    if dy is not None and j > 0:
                        dh += dy[order[j - 1]]
                if grads is not None:
                    grads.done(t)
            dx_pipe = None if grads is None else grads.finish()
        d2 = dgates.reshape(steps * n, 4 * hid)
        if grads is not None:
            dx = dx_pipe
        else:
            dx = matmul(d2, w_ih).reshape(x.shape) if needs[0] else None
        dw_ih = matmul(d2.T, x.reshape(steps * n, -1)) if needs[3] else None
        dw_hh = None
        if needs[4]:
            prev = (
                np.concatenate([ys[1:], h0[None]])
                if reverse
                else np.concatenate([h0[None], ys[:-1]])
            )
            dw_hh = matmul(d2.T, prev.reshape(steps * n, hid))
        # the two biases' gradients are the same sum: one reduction, a copy for the second
        db = d2.sum(0) if needs[5] or needs[6] else None
        db_ih = db if needs[5] else None
        db_hh = (db.copy() if needs[5] else db) if needs[6] and db is not None else None
        dh0 = dh if needs[1] else None
        return dx, dh0, dc if needs[2] else None, dw_ih, dw_hh, db_ih, db_hh
