"""Fused-kernel contracts: what a backend kernel for conv, pool, norm, attention ... implements.

Every contract is array-level. A kernel is a class of staticmethods that take the backend (for
``xp``, streams, random keys), backend arrays and plain Python values (geometry, flags), and
return arrays: it never sees a Function context, a Tensor or autograd. The Function that names
the contract (in lucid.ops or lucid.nn) owns the graph: it looks the kernel up
(``CONTRACT.find(backend)`` or ``CONTRACT.get(backend, default)``), keeps what its backward
needs and wraps the arrays back into Tensors. Three shapes of contract:

- forward only (``SOFTMAX``, ``LOG_SOFTMAX``, ``SOFTMAX_GRAD``, ``LOG_SOFTMAX_GRAD``, ``ERF``,
  ``ERFC``, ``ERFINV``, ``GELU``, ``GELU_GRAD``, ``ACTIVATION``, ``ACTIVATION_GRAD``,
  ``RELU_GRAD``): the kernel computes the values,
  the Function's backward stays in lucid ops (so double backward keeps working; the ``_GRAD``
  kernels are a first backward, used only where no graph is being built); all but ``ERFINV``
  and ``RELU_GRAD`` may return None for an input they do not take (the op's reference runs);
  ``ONE_HOT_ROWS`` makes nll_loss's gradient in the form the backend's ``LOG_SOFTMAX_GRAD``
  reads fastest;
- an optimizer's update in place (``ADAM_STEP``): lucid-optim's multi-tensor Adam/AdamW hands
  one parameter's arrays over; the kernel writes them, or returns False (the ufunc update runs);
  likewise ``SCALED_ADD``, ``t.add_(other, alpha=)`` / ``sub_`` on arrays outside autograd (an
  SGD step written by hand: ``p.add_(p.grad, alpha=-lr)``), ``ATTENTION_SHIFT``, the
  causal mask and the maximum's subtraction on lucid-nn's attention scores before ``exp``, and
  ``ATTENTION``, that attention's whole forward (weights and result) into arrays it is given;
- pieces (``CONV_ARRAYS``, ``MAX_POOL_ARRAYS``): the arithmetic that lucid.nn's Functions
  compose (forward, input gradient, weight gradient...), each a differentiable op again;
- whole op with its own vector-Jacobian product (``CONV``, ``CONV_TRANSPOSE``, ``MAX_POOL``,
  ``AVG_POOL``, ``BATCH_NORM``, ``LAYER_NORM``, ``LSTM``, ``GRU``, ``RNN``, ``SDPA``):
  ``forward`` returns the
  output(s) and ``residuals`` (arrays and plain values of the kernel's choosing, kept by the
  Function and handed back to ``backward``), or None to decline (the Function's reference code
  runs); ``backward`` returns one array or None per array input, given ``needs`` (one bool
  per argument of the op: does it need a gradient). Such an op has no double backward (the
  recurrent Functions build one from their reference code).

``CONTRACT.register(backend, Impl)`` is checked by mypy against the contract's ``Protocol`` and
at run time against its methods' arity.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from lucid.kernels.geometry import ConvGeometry, Ints, Pairs

if TYPE_CHECKING:
    from lucid.backends import Backend

__all__ = [
    "ACTIVATION",
    "ACTIVATION_GRAD",
    "ADAM_STEP",
    "ATTENTION",
    "ATTENTION_SHIFT",
    "AVG_POOL",
    "BATCH_NORM",
    "CONTRACTS",
    "CONV",
    "CONV_ARRAYS",
    "CONV_TRANSPOSE",
    "ERF",
    "ERFC",
    "ERFINV",
    "GELU",
    "GELU_GRAD",
    "GRU",
    "LAYER_NORM",
    "LSTM",
    "LOG_SOFTMAX",
    "MAX_POOL",
    "MAX_POOL_ARRAYS",
    "ONE_HOT_ROWS",
    "RELU_GRAD",
    "RNN",
    "SCALED_ADD",
    "SDPA",
    "SOFTMAX",
    "SOFTMAX_GRAD",
    "LOG_SOFTMAX_GRAD",
    "OneHotRowsKernel",
    "AdamStepKernel",
    "AttentionShiftKernel",
    "AvgPoolKernel",
    "BatchNormKernel",
    "ConvArraysKernel",
    "ConvKernel",
    "ConvTransposeKernel",
    "GeluGradKernel",
    "GeluKernel",
    "KernelContract",
    "LayerNormKernel",
    "LstmKernel",
    "MaxPoolArraysKernel",
    "MaxPoolKernel",
    "Needs",
    "ReluGradKernel",
    "SdpaKernel",
    "SoftmaxGradKernel",
    "SoftmaxKernel",
    "UnaryKernel",
    "WholeOpKernel",
]

ImplT = TypeVar("ImplT")
Needs = tuple[bool, ...]  # per argument of the op, in order: does it need a gradient


# -- forward only: the Function's backward is written in lucid ops -------------------------------
# Positional-only, so an implementation may name its parameters as it likes.
class UnaryKernel(Protocol):
    """erf, erfc, erfinv: ``forward(backend, x) -> y``."""

    @staticmethod
    def forward(backend: Any, x: Any, /) -> Any:
        """The function's value at every element of ``x``."""


class SoftmaxKernel(Protocol):
    """softmax, log_softmax along ``dim``: ``forward(backend, x, dim) -> y``."""

    @staticmethod
    def forward(backend: Any, x: Any, dim: int, /) -> Any:
        """The (log-)softmax of ``x`` along ``dim``."""


class GeluKernel(Protocol):
    """``forward(backend, x, approximate) -> y`` with ``approximate`` "none" or "tanh"."""

    @staticmethod
    def forward(backend: Any, x: Any, approximate: str, /) -> Any:
        """GELU of ``x``, exact or with the tanh approximation."""


class SoftmaxGradKernel(Protocol):
    """(log-)softmax's gradient from its output: ``forward(backend, g, y, dim) -> dx``, or None."""

    @staticmethod
    def forward(backend: Any, g: Any, y: Any, dim: int, /) -> Any:
        """The input gradient from the output gradient ``g`` and the output ``y``, or None to
        decline (the op's own expression runs)."""


class OneHotRowsKernel(Protocol):
    """nll_loss's gradient: ``forward(backend, shape, cols, values) -> array``, or None."""

    @staticmethod
    def forward(backend: Any, shape: tuple[int, int], cols: Any, values: Any, /) -> Any:
        """The (M, C) array of ``values``' dtype, zero but for ``values[i]`` at
        ``(i, cols[i])``, made as the backend's ``LOG_SOFTMAX_GRAD`` reads it fastest, or None
        to decline (the Function makes it)."""


class GeluGradKernel(Protocol):
    """GELU's gradient: ``forward(backend, g, x, approximate) -> g * gelu'(x)``, or None."""

    @staticmethod
    def forward(backend: Any, g: Any, x: Any, approximate: str, /) -> Any:
        """``g`` times GELU's derivative at ``x`` (exact or tanh form), or None to decline."""


class ActivationKernel(Protocol):
    """relu, sigmoid, silu, logsigmoid, hardswish by name: ``forward(backend, name, x) -> y``,
    or None (the op's own code runs)."""

    @staticmethod
    def forward(backend: Any, name: str, x: Any, /) -> Any:
        """The activation ``name`` of ``x`` as torch computes it, or None to decline."""


class ActivationGradKernel(Protocol):
    """Their first-order gradients: ``forward(backend, name, g, s) -> g * f'``, or None; ``s``
    is what the op keeps: its input (sigmoid: its output)."""

    @staticmethod
    def forward(backend: Any, name: str, g: Any, s: Any, /) -> Any:
        """``g`` times the derivative of ``name`` (torch's formula), or None to decline."""


class ReluGradKernel(Protocol):
    """ReLU's gradient from its output: ``forward(backend, g, out) -> g * (out > 0)``."""

    @staticmethod
    def forward(backend: Any, g: Any, out: Any, /) -> Any:
        """``g`` where ``out > 0``, else 0."""


class AdamStepKernel(Protocol):
    """One Adam/AdamW step (no AMSGrad) on one parameter's arrays, in place: ``forward(backend,
    p, g, m, v, hyper) -> bool`` with ``hyper = (lr, beta1, beta2, eps, weight_decay,
    decoupled, maximize, bias_correction2_sqrt, step_size)``, ``step_size`` being ``-lr / (1 -
    beta1^t)``. The same arithmetic as the ops' update, in the same order (so the same bits);
    False to decline (the ufunc update runs)."""

    @staticmethod
    def forward(backend: Any, p: Any, g: Any, m: Any, v: Any, hyper: tuple[Any, ...], /) -> bool:
        """Write the step into ``p``, ``m``, ``v``; False where the kernel does not take them."""


class ScaledAddKernel(Protocol):
    """``a += b * alpha`` (``subtract``: ``a -= b * alpha``) in place on two arrays of one
    shape and dtype that do not overlap, ``alpha`` a Python number: ``forward(backend, a, b,
    alpha, subtract) -> bool``. The ufuncs' arithmetic (the product rounded to the dtype, then
    the sum), so the same bits; False to decline (the ufuncs run)."""

    @staticmethod
    def forward(backend: Any, a: Any, b: Any, alpha: float, subtract: bool, /) -> bool:
        """Write the update into ``a``; False where the kernel does not take them."""


class AttentionShiftKernel(Protocol):
    """Attention's scores made ready for ``exp``, in place: ``forward(backend, pt, bias) ->
    bool`` on transposed scores ``pt`` (..., S, L) (a column per query), ``bias`` an (S, L)
    array added first (the causal mask's -inf) or None; then each column's maximum over S is
    subtracted. The ops' arithmetic (the add, the maximum with NaN propagating, the
    subtraction), so the same values (a zero's sign aside, which ``exp`` does not see); False
    to decline (the ufuncs run)."""

    @staticmethod
    def forward(backend: Any, pt: Any, bias: Any, /) -> bool:
        """Shift ``pt`` in place; False where the kernel does not take it."""


class AttentionKernel(Protocol):
    """lucid-nn's array attention forward (no mask but the causal one, no dropout):
    ``forward(backend, q, k, v, factor, causal, out, pt) -> bool`` for q (..., L, E), k (..., S,
    E), v (..., S, Ev) with the same batch dims, writing the softmax weights transposed into
    ``pt`` (..., S, L) (C-contiguous: a column per query; ``causal``: key s masked for query
    j < s, top-left aligned) and ``pt^T @ v`` into ``out`` (..., L, Ev), of any layout the
    backend takes. The values of ``softmax(q k^T * factor) v`` within float32 rounding (not the
    ufuncs' bits); False to decline (lucid-nn's passes run). ``backward`` gives the first-order
    gradients on arrays (a double backward differentiates lucid-nn's reference ops)."""

    @staticmethod
    def forward(backend: Any, q: Any, k: Any, v: Any, factor: float, causal: bool, out: Any,
                pt: Any, /) -> bool:  # fmt: skip
        """Fill ``pt`` and ``out``; False where the kernel does not take the arrays."""

    @staticmethod
    def backward(backend: Any, q: Any, k: Any, v: Any, g: Any, pt: Any, factor: float,
                 causal: bool, needs: Any, /) -> tuple[Any, Any, Any] | None:  # fmt: skip
        """``(dq, dk, dv)`` (None where ``needs`` says no) from the result's gradient ``g`` and
        the weights ``pt`` as ``forward`` made them (``causal`` as given to it: the masked
        weights are 0 and may be skipped); None to decline."""


# -- pieces: lucid.nn's Functions compose them (double backward included) -----------------------
class ConvArraysKernel(Protocol):
    """Convolution arithmetic for a geometry; lucid.nn's conv Functions compose these.

    ``forward`` may store column matrices in ``keep`` (a dict, or None when the weight needs
    no gradient); the same dict comes back to ``weight_grad`` as ``kept``, used once.
    """

    @staticmethod
    def forward(
        backend: Any, x: Any, w: Any, bias: Any, g: ConvGeometry, keep: dict[Any, Any] | None, /
    ) -> Any:
        """The cross-correlation of ``x`` with ``w`` plus ``bias`` (columns stored in ``keep``)."""

    @staticmethod
    def input_grad(backend: Any, dy: Any, w: Any, g: ConvGeometry, /) -> Any:
        """The gradient of ``x`` from the output gradient ``dy``."""

    @staticmethod
    def weight_grad(
        backend: Any, x: Any, dy: Any, g: ConvGeometry, kept: dict[Any, Any] | None, /
    ) -> Any:
        """The gradient of ``w`` from ``x`` and ``dy`` (``kept`` columns used once)."""

    @staticmethod
    def channel_sum(backend: Any, dy: Any, /) -> Any:
        """The bias gradient: ``dy`` summed over every dim but 1."""


class MaxPoolArraysKernel(Protocol):
    """Max pooling arithmetic for a geometry; lucid.nn's max-pool Functions compose these.

    ``forward`` returns ``(out, idx)``: ``idx`` holds each output's winning tap number (in
    ``g.all_taps()`` order), or is None when not wanted; ``scatter`` gets it back.
    """

    @staticmethod
    def forward(backend: Any, x: Any, g: ConvGeometry, want_index: bool, /) -> tuple[Any, Any]:
        """``(out, idx)``: the maxima and, if wanted, each one's tap number."""

    @staticmethod
    def scatter(
        backend: Any, grad: Any, idx: Any, shape: tuple[int, ...], g: ConvGeometry, /
    ) -> Any:
        """The gradient of ``x``: ``grad`` added at the winning taps ``idx``."""


# -- whole ops with their own vector-Jacobian product -------------------------------------------
class WholeOpKernel(Protocol):
    """What every whole-op kernel has besides its ``forward``: the vector-Jacobian product
    from the residuals its ``forward`` returned."""

    @staticmethod
    def backward(backend: Any, residuals: Any, g: Any, needs: Needs, /) -> tuple[Any, ...]:
        """The input gradients, None where ``needs`` says no."""


class ConvKernel(WholeOpKernel, Protocol):
    """conv1d/2d/3d (NC... layout; ``padding`` is one ``(before, after)`` pair per dim).

    ``forward -> (y, residuals)``; ``backward -> (dx, dw, dbias)`` (None where not needed).
    """

    @staticmethod
    def forward(
        backend: Any, x: Any, w: Any, bias: Any, stride: Ints, padding: Pairs, dilation: Ints,
        groups: int, /
    ) -> tuple[Any, Any]:  # fmt: skip
        """``(y, residuals)`` for ``backward``, or None to decline (the Function's code runs)."""


class ConvTransposeKernel(WholeOpKernel, Protocol):
    """conv_transpose1d/2d/3d; ``w`` is ``(C_in, C_out / groups, *kernel)``.

    ``forward -> (y, residuals)``; ``backward -> (dx, dw, dbias)``.
    """

    @staticmethod
    def forward(
        backend: Any, x: Any, w: Any, bias: Any, stride: Ints, padding: Pairs,
        output_padding: Ints, groups: int, dilation: Ints, /
    ) -> tuple[Any, Any]:  # fmt: skip
        """``(y, residuals)`` for ``backward``, or None to decline (the Function's code runs)."""


class MaxPoolKernel(WholeOpKernel, Protocol):
    """max_pool1d/2d/3d without indices: ``forward -> (y, residuals)`` or None (the reference
    runs; it always does with ``return_indices``); ``backward -> (dx,)``."""

    @staticmethod
    def forward(
        backend: Any, x: Any, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints,
        ceil_mode: bool, return_indices: bool, /
    ) -> tuple[Any, Any] | None:  # fmt: skip
        """``(y, residuals)`` for ``backward``, or None to decline (the Function's code runs)."""


class AvgPoolKernel(WholeOpKernel, Protocol):
    """avg_pool1d/2d/3d: ``forward -> (y, residuals)`` or None; ``backward -> (dx,)``."""

    @staticmethod
    def forward(
        backend: Any, x: Any, kernel: Ints, stride: Ints, padding: Ints, ceil_mode: bool,
        count_include_pad: bool, divisor_override: Any, /
    ) -> tuple[Any, Any] | None:  # fmt: skip
        """``(y, residuals)`` for ``backward``, or None to decline (the Function's code runs)."""


class BatchNormKernel(Protocol):
    """Training-mode batch norm over all dims but 1.

    ``forward -> (y, batch_mean, batch_var, stats)`` (the mean and biased variance in x's
    dtype), or None; the Function keeps ``x`` (checked against later in-place changes) and gives
    it back to ``backward(backend, x, g, stats, needs) -> (dx, dweight, dbias)``.
    """

    @staticmethod
    def forward(
        backend: Any, x: Any, weight: Any, bias: Any, eps: float, /
    ) -> tuple[Any, Any, Any, Any] | None:
        """``(y, batch_mean, batch_var, stats)``, or None to decline."""

    @staticmethod
    def backward(backend: Any, x: Any, g: Any, stats: Any, needs: Needs, /) -> tuple[Any, Any, Any]:
        """``(dx, dweight, dbias)``, None where ``needs`` says no."""


class LayerNormKernel(WholeOpKernel, Protocol):
    """Layer norm over the last ``nd`` dims: ``forward -> (y, residuals)`` or None;
    ``backward -> (dx, dweight, dbias)``."""

    @staticmethod
    def forward(
        backend: Any, x: Any, weight: Any, bias: Any, nd: int, eps: float, /
    ) -> tuple[Any, Any] | None:
        """``(y, residuals)`` for ``backward``, or None to decline (the Function's code runs)."""


class LstmKernel(WholeOpKernel, Protocol):
    """One LSTM layer in one direction over a padded sequence (torch's gate order i, f, g, o).

    ``forward(backend, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse) -> ((y, h_n, c_n),
    residuals)`` with ``x`` ``(L, N, I)``, ``h0``/``c0`` ``(N, H)``, biases possibly None, all
    floating arrays of one dtype (the caller checks); ``backward(backend, residuals, (dy, dh_n,
    dc_n), needs) -> (dx, dh0, dc0, dw_ih, dw_hh, db_ih, db_hh)``, a gradient of the outputs
    possibly None (zero).
    """

    @staticmethod
    def forward(
        backend: Any, x: Any, h0: Any, c0: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any,
        reverse: bool, /
    ) -> tuple[Any, Any]:  # fmt: skip
        """``((y, h_n, c_n), residuals)`` for ``backward``."""


class GruKernel(WholeOpKernel, Protocol):
    """One GRU layer in one direction over a padded sequence (torch's gate order r, z, n).

    ``forward(backend, x, h0, w_ih, w_hh, b_ih, b_hh, reverse) -> ((y, h_n), residuals)`` with
    ``x`` ``(L, N, I)``, ``h0`` ``(N, H)``, biases possibly None, all floating arrays of one
    dtype (the caller checks); ``backward(backend, residuals, (dy, dh_n), needs) -> (dx, dh0,
    dw_ih, dw_hh, db_ih, db_hh)``, a gradient of the outputs possibly None (zero).
    """

    @staticmethod
    def forward(
        backend: Any, x: Any, h0: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any,
        reverse: bool, /
    ) -> tuple[Any, Any]:  # fmt: skip
        """``((y, h_n), residuals)`` for ``backward``."""


class RnnKernel(WholeOpKernel, Protocol):
    """One Elman RNN layer in one direction over a padded sequence, ``nonlinearity`` "tanh" or
    "relu": as ``GruKernel``, with ``forward(backend, x, h0, w_ih, w_hh, b_ih, b_hh,
    nonlinearity, reverse)``."""

    @staticmethod
    def forward(
        backend: Any, x: Any, h0: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any,
        nonlinearity: str, reverse: bool, /
    ) -> tuple[Any, Any]:  # fmt: skip
        """``((y, h_n), residuals)`` for ``backward``."""


class SdpaKernel(WholeOpKernel, Protocol):
    """Scaled dot-product attention (``torch.nn.functional.scaled_dot_product_attention``).

    ``forward(backend, q, k, v, attn_mask, dropout_p, is_causal, scale, needs) ->
    (y, residuals)``, ``needs`` for (q, k, v, attn_mask); ``backward -> (dq, dk, dv, dmask)``.
    """

    @staticmethod
    def forward(
        backend: Any, q: Any, k: Any, v: Any, attn_mask: Any, dropout_p: float, is_causal: bool,
        scale: Any, needs: Needs, /
    ) -> tuple[Any, Any]:  # fmt: skip
        """``(y, residuals)`` for ``backward``, or None to decline (the Function's code runs)."""


# -- contracts: the typed keys of ``Backend.kernels`` -----------------------------------------
@dataclass(frozen=True, eq=False)
class KernelContract(Generic[ImplT]):
    """A fused op a backend may implement: its name and the ``Protocol`` its kernel follows."""

    name: str
    protocol: Any

    def register(self, backend: Backend, impl: ImplT) -> None:
        """Run ``impl`` on ``backend`` wherever an op names this contract."""
        self.check(impl)
        backend.kernels[self] = impl

    def get(self, backend: Backend, default: ImplT) -> ImplT:
        """The kernel ``backend`` registered for this contract, else ``default``."""
        found: ImplT = backend.kernels.get(self, default)
        return found

    def find(self, backend: Backend) -> ImplT | None:
        """The kernel ``backend`` registered for this contract, else None."""
        found: ImplT | None = backend.kernels.get(self)
        return found

    def check(self, impl: Any) -> None:
        """Raise TypeError unless ``impl`` has each method of the protocol, taking its
        positional arguments."""
        for method, arity in _methods(self.protocol):
            fn = getattr(impl, method, None)
            if not callable(fn):
                raise TypeError(f"a {self.name!r} kernel needs a {method}() method; "
                                f"{impl!r} has none")  # fmt: skip
            try:
                inspect.signature(fn).bind(*range(arity))
            except TypeError:
                raise TypeError(
                    f"{impl!r}.{method} must take the {arity} positional arguments of "
                    f"{self.protocol.__name__}.{method}, got {inspect.signature(fn)}"
                ) from None

    def __repr__(self) -> str:
        return f"KernelContract({self.name!r}, {self.protocol.__name__})"


def _methods(protocol: Any) -> list[tuple[str, int]]:
    """Each method of ``protocol`` (its own and its base protocols') and its arity."""
    found: dict[str, Any] = {}
    for klass in reversed(protocol.__mro__):
        found.update((n, f) for n, f in vars(klass).items() if isinstance(f, staticmethod))
    out = []
    for name, fn in found.items():
        params = inspect.signature(fn.__func__).parameters.values()
        out.append((name, sum(p.kind is p.POSITIONAL_ONLY for p in params)))
    return out


SOFTMAX: KernelContract[SoftmaxKernel] = KernelContract("softmax", SoftmaxKernel)
LOG_SOFTMAX: KernelContract[SoftmaxKernel] = KernelContract("log_softmax", SoftmaxKernel)
SOFTMAX_GRAD: KernelContract[SoftmaxGradKernel] = KernelContract("softmax_grad", SoftmaxGradKernel)
LOG_SOFTMAX_GRAD: KernelContract[SoftmaxGradKernel] = KernelContract(
    "log_softmax_grad", SoftmaxGradKernel
)
ONE_HOT_ROWS: KernelContract[OneHotRowsKernel] = KernelContract("one_hot_rows", OneHotRowsKernel)
ERF: KernelContract[UnaryKernel] = KernelContract("erf", UnaryKernel)
ERFC: KernelContract[UnaryKernel] = KernelContract("erfc", UnaryKernel)
ERFINV: KernelContract[UnaryKernel] = KernelContract("erfinv", UnaryKernel)
GELU: KernelContract[GeluKernel] = KernelContract("gelu", GeluKernel)
GELU_GRAD: KernelContract[GeluGradKernel] = KernelContract("gelu_grad", GeluGradKernel)
RELU_GRAD: KernelContract[ReluGradKernel] = KernelContract("relu_grad", ReluGradKernel)
ACTIVATION: KernelContract[ActivationKernel] = KernelContract("activation", ActivationKernel)
ACTIVATION_GRAD: KernelContract[ActivationGradKernel] = KernelContract(
    "activation_grad", ActivationGradKernel
)
CONV: KernelContract[ConvKernel] = KernelContract("conv", ConvKernel)
CONV_TRANSPOSE: KernelContract[ConvTransposeKernel] = KernelContract(
    "conv_transpose", ConvTransposeKernel
)
MAX_POOL: KernelContract[MaxPoolKernel] = KernelContract("max_pool", MaxPoolKernel)
AVG_POOL: KernelContract[AvgPoolKernel] = KernelContract("avg_pool", AvgPoolKernel)
BATCH_NORM: KernelContract[BatchNormKernel] = KernelContract("batch_norm", BatchNormKernel)
LAYER_NORM: KernelContract[LayerNormKernel] = KernelContract("layer_norm", LayerNormKernel)
LSTM: KernelContract[LstmKernel] = KernelContract("lstm", LstmKernel)
GRU: KernelContract[GruKernel] = KernelContract("gru", GruKernel)
RNN: KernelContract[RnnKernel] = KernelContract("rnn", RnnKernel)
SDPA: KernelContract[SdpaKernel] = KernelContract("sdpa", SdpaKernel)
ADAM_STEP: KernelContract[AdamStepKernel] = KernelContract("adam_step", AdamStepKernel)
SCALED_ADD: KernelContract[ScaledAddKernel] = KernelContract("scaled_add", ScaledAddKernel)
ATTENTION_SHIFT: KernelContract[AttentionShiftKernel] = KernelContract(
    "attention_shift", AttentionShiftKernel
)
ATTENTION: KernelContract[AttentionKernel] = KernelContract("attention", AttentionKernel)
CONV_ARRAYS: KernelContract[ConvArraysKernel] = KernelContract("conv_arrays", ConvArraysKernel)
MAX_POOL_ARRAYS: KernelContract[MaxPoolArraysKernel] = KernelContract(
    "max_pool_arrays", MaxPoolArraysKernel
)

CONTRACTS: tuple[KernelContract[Any], ...] = (
    SOFTMAX, LOG_SOFTMAX, SOFTMAX_GRAD, LOG_SOFTMAX_GRAD, ERF, ERFC, ERFINV, GELU, GELU_GRAD,
    RELU_GRAD, CONV, CONV_TRANSPOSE, MAX_POOL, AVG_POOL, BATCH_NORM, LAYER_NORM, LSTM, GRU, RNN,
    SDPA, CONV_ARRAYS, MAX_POOL_ARRAYS, ADAM_STEP, ONE_HOT_ROWS, SCALED_ADD, ATTENTION_SHIFT,
    ACTIVATION, ACTIVATION_GRAD, ATTENTION,
)  # fmt: skip
