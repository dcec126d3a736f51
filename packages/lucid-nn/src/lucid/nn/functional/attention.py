"""Attention (``torch.nn.functional``): scaled_dot_product_attention, multi_head_attention_forward.

Written with lucid ops (matmul, masked_fill, softmax, dropout), so autograd and double backward
come from the ops. A backend with a fused attention kernel registers it for ``kernels.SDPA``
(arrays in, arrays out: ``forward(backend, q, k, v, attn_mask, dropout_p, is_causal, scale,
needs)`` and its vector-Jacobian product); ``FusedSDPA`` runs it when present.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

import lucid
from lucid import Tensor, kernels
from lucid.amp.autocast_mode import autocast_active, lower_precision_inputs
from lucid.autograd import enable_grad
from lucid.autograd.function import Function, ops_watched, records_nothing
from lucid.autograd.grad_mode import is_grad_enabled
from lucid.backends import blas_threads
from lucid.backends import cuda as _sdp_switches
from lucid.nn.attention.bias import CausalBias, CausalVariant
from lucid.nn.functional._util import fused_backward
from lucid.nn.functional.activation import softmax
from lucid.nn.functional.dropout import dropout
from lucid.nn.functional.linear import linear

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]


class FusedSDPA(Function):
    """A backend's fused attention (``kernels.SDPA``): its forward and its vector-Jacobian
    product, on arrays; no double backward."""

    @staticmethod
    def forward(ctx: Any, q: Any, k: Any, v: Any, mask: Any, dropout_p: float, is_causal: bool,
                scale: Any) -> Any:  # fmt: skip
        ctx.fused = kernels.SDPA.find(ctx.backend)
        if ctx.fused is None:
            raise NotImplementedError(f"the {ctx.backend.device!r} backend has no SDPA kernel")
        y, ctx.residuals = ctx.fused.forward(ctx.backend, q, k, v, mask, dropout_p, is_causal,
                                             scale, ctx.needs_input_grad[:4])  # fmt: skip
        return y

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return fused_backward(ctx, g)


def causal_mask(length: int, source: int, like: Tensor) -> Tensor:
    """Boolean ``(length, source)``: True where query i may attend key j (j <= i)."""
    rows = lucid.arange(length, device=like.device).reshape(length, 1)
    cols = lucid.arange(source, device=like.device).reshape(1, source)
    out: Tensor = cols <= rows
    return out


# ``causal_mask(L, S).logical_not()`` per (L, S, backend), made once: five ops a call saved in
# generation (docs/performance.md, issue 30). Read-only use (masked_fill); small masks only.
_BLOCKED: dict[tuple[int, int, Any], Tensor] = {}
_BLOCKED_MAX_ELEMENTS = 1 << 20
_BLOCKED_MAX_ENTRIES = 32


def _blocked(length: int, source: int, like: Tensor) -> Tensor:
    """True where query i may not attend key j (j > i); cached outside a compile capture and
    outside ``observe_ops``/``intercept_ops`` blocks (an exporter must see the ops that build
    it: with a dynamic axis, the mask follows that axis)."""
    if lucid.compiler.is_compiling() or ops_watched() or length * source > _BLOCKED_MAX_ELEMENTS:
        return causal_mask(length, source, like).logical_not()
    key = (length, source, like.backend)
    mask = _BLOCKED.get(key)
    if mask is None:
        with lucid.no_grad():
            mask = causal_mask(length, source, like).logical_not()
        if len(_BLOCKED) >= _BLOCKED_MAX_ENTRIES:
            _BLOCKED.clear()
        _BLOCKED[key] = mask
    return mask


def _shapes(*ts: Tensor) -> str:
    return ", ".join(str(tuple(t.shape)) for t in ts)


def _check(q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None, enable_gqa: bool) -> None:
    for name, t in (("query", q), ("key", k), ("value", v)):
        if not isinstance(t, Tensor):
            raise TypeError(f"scaled_dot_product_attention expected {name} to be a lucid.Tensor, "
                            f"got {type(t).__name__}")  # fmt: skip
    qs, ks, vs = q._data.shape, k._data.shape, v._data.shape  # read once (per-call cost)
    if len(qs) < 2 or len(ks) < 2 or len(vs) < 2:
        raise RuntimeError(f"scaled_dot_product_attention expects query, key and value of at "
                           f"least 2 dims, got {_shapes(q, k, v)}")  # fmt: skip
    if qs[-1] != ks[-1] or ks[-2] != vs[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: expected query (..., L, E), key "
                           f"(..., S, E) and value (..., S, Ev), got "
                           f"{_shapes(q, k, v)}")  # fmt: skip
    dtype = q._data.dtype
    if not (k._data.dtype == dtype and v._data.dtype == dtype) and not (
        q.dtype is k.dtype is v.dtype
    ):
        raise RuntimeError(f"scaled_dot_product_attention expected query, key and value of one "
                           f"dtype, got {q.dtype}, {k.dtype} and {v.dtype}")  # fmt: skip
    if not enable_gqa and min(len(qs), len(ks)) >= 3:
        hq, hk = qs[-3], ks[-3]
        if hq != hk and hk != 1:
            raise RuntimeError(f"scaled_dot_product_attention: query has {hq} heads but key has "
                               f"{hk} (dim -3); pass enable_gqa=True for grouped-query attention "
                               f"(got query {tuple(q.shape)}, key {tuple(k.shape)})")  # fmt: skip
    if attn_mask is None:
        return
    if not (attn_mask.dtype is lucid.bool or attn_mask.dtype is q.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {attn_mask.dtype} and query.dtype: "
                           f"{q.dtype} instead.")  # fmt: skip
    want = (q.shape[-2], k.shape[-2])
    tail = tuple(attn_mask.shape[-2:])
    if attn_mask.ndim < 2 or any(a not in (1, b) for a, b in zip(tail, want)):
        raise RuntimeError(f"scaled_dot_product_attention: attn_mask of shape "
                           f"{tuple(attn_mask.shape)} does not broadcast to the scores "
                           f"(..., {want[0]}, {want[1]}) of query {tuple(q.shape)} and key "
                           f"{tuple(k.shape)}")  # fmt: skip


def _repeat_heads(t: Tensor, heads: int) -> Tensor:
    """Grouped-query attention: repeat each key/value head to match the query heads."""
    have = t.shape[-3]
    if heads % have:
        raise RuntimeError(f"enable_gqa: query heads ({heads}) must be a multiple of key/value "
                           f"heads ({have})")  # fmt: skip
    index = lucid.arange(heads, device=t.device) // (heads // have)
    out: Tensor = t.index_select(t.ndim - 3, index)
    return out


def _safe_softmax(scores: Tensor, masked: bool, user_mask: bool = True) -> Tensor:
    """Softmax over the last dim; rows masked out entirely give zeros (torch's SDPA), not NaN.
    ``user_mask``: an ``attn_mask`` was given (a causal mask alone keeps key 0 in every row)."""
    if masked:
        if lucid.compiler.is_compiling() and not user_mask:
            # (a capture cannot branch on values: causal masking alone empties no row, so the
            # plain path; only scores that are -inf from the data differ from eager's zeros)
            return softmax(scores, dim=-1)
        dead = (scores == -math.inf).all(dim=-1, keepdim=True)
        # (while lucid.compile captures, the masked path always: the same values, no branch on them)
        if lucid.compiler.is_compiling() or dead.backend.any_true(dead.array):
            weights: Tensor = softmax(scores.masked_fill(dead, 0.0), dim=-1)
            return weights.masked_fill(dead, 0.0)
    return softmax(scores, dim=-1)


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(q @ k^T * scale + mask) @ v`` over the last two dims, as torch's.

    A boolean ``attn_mask`` marks the positions that may be attended (True = attend); a float
    mask is added to the scores. ``is_causal`` masks keys after each query (top-left aligned).
    A query whose keys are all masked gets zeros. Dropout is applied to the attention weights
    whenever ``dropout_p > 0``. ``enable_gqa`` repeats key/value heads (dim -3) to the query's.

    >>> q = lucid.randn(2, 4, 5, 8)
    >>> scaled_dot_product_attention(q, q, q, is_causal=True).shape
    (2, 4, 5, 8)
    """
    if attn_mask is None and scale is None and dropout_p == 0.0:
        fast = _no_grad_fast(query, key, value, is_causal)
        if fast is not None:
            return fast
    if isinstance(attn_mask, CausalBias):
        return _causal_bias_attention(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                      enable_gqa)  # fmt: skip
    query, key, value, attn_mask = lower_precision_inputs(query, key, value, attn_mask)
    _check(query, key, value, attn_mask, enable_gqa)
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")  # fmt: skip
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if not _sdp_switches._sdp_available():  # lucid.nn.attention.sdpa_kernel turned both off
        raise RuntimeError(
            "No viable backend for scaled_dot_product_attention was found. This is likely due "
            "to turning off both the math kernel and the fused kernels."
        )
    if kernels.SDPA in query.backend.kernels:
        fused: Tensor = FusedSDPA.apply(query, key, value, attn_mask, dropout_p, is_causal, scale)
        return fused
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    if attn_mask is None and dropout_p == 0.0:
        if _on_arrays(query, key, value):
            if records_nothing() and _small(query, key):
                return _attention_no_grad(query, key, value, factor, is_causal)
            attended: Tensor = _Attention.apply(query, key, value, factor, is_causal)
            return attended
    if dropout_p == 0.0 and _half(query, key, value):
        return _upcast(query, key, value, attn_mask, is_causal, factor, enable_gqa)
    out = _reference(query, key, value, attn_mask, dropout_p, is_causal, factor, enable_gqa)
    # torch's CPU kernel (no dropout) lays its result out as ``_Attention`` does (``_result``);
    # its math path (dropout) gives a contiguous one, as ``_reference``
    return _torch_layout(out, query) if dropout_p == 0.0 else out


def _no_grad_fast(q: Any, k: Any, v: Any, is_causal: bool) -> Tensor | None:
    """The common call of generation (no mask, dropout or scale, autocast off, nothing
    recording, small heads of one float dtype on NumPy arrays), straight to
    ``_attention_no_grad``: the checks ``scaled_dot_product_attention`` would make, in fewer
    steps (~3 us a call of a generated token's 4: issue 30); None where any of them would not
    pass or another route would run (the full path then decides, and raises, as it did)."""
    if type(q) is not Tensor or type(k) is not Tensor or type(v) is not Tensor:
        return None
    qa, ka, va = q._data, k._data, v._data
    if type(qa) is not np.ndarray or type(ka) is not np.ndarray or type(va) is not np.ndarray:
        return None
    qs, ks, vs = qa.shape, ka.shape, va.shape
    dtype = qa.dtype
    if (
        len(qs) < 2
        or len(ks) < 2
        or len(vs) < 2
        or qs[:-2] != ks[:-2]
        or qs[:-2] != vs[:-2]
        or qs[-1] != ks[-1]
        or ks[-2] != vs[-2]
        or ka.dtype != dtype
        or va.dtype != dtype
        or dtype not in _NP_FLOATS
        or 0 in qs
        or 0 in ks
        or vs[-1] <= 0
        or 2.0 * qa.size * ks[-2] > _SMALL_FLOPS
        or autocast_active()
        or not records_nothing()
        or not _sdp_switches._sdp_available()
        or kernels.SDPA in q._backend.kernels
    ):
        return None
    return _attention_no_grad(q, k, v, 1.0 / math.sqrt(qs[-1]), is_causal)


def _heads_transposed(a: Any) -> bool:
    """Whether the array ``a`` is a 4-D query stored as a transposed ``(N, L, H, E)`` (its
    strides in the order N, L, H, E): torch's CPU kernel then lays its result out as an
    ``(N, L, H, Ev)`` seen as ``(N, H, L, Ev)`` (``_result``)."""
    st = getattr(a, "strides", None)
    if st is None or a.ndim != 4 or a.shape[1] <= 1 or a.shape[2] <= 1:
        return False
    return bool(st[0] >= st[2] >= st[1] >= st[3])


def _shows_layout(t: Tensor) -> bool:
    """Whether ``t``'s array may be asked for its strides: a NumPy array, or any array while
    nothing watches the ops (vmap's logical arrays raise on such a read)."""
    a = t._data
    return (type(a) is np.ndarray or not ops_watched()) and tuple(a.shape) == tuple(t.shape)


def _torch_layout(out: Tensor, query: Tensor) -> Tensor:
    """``out`` (the values unchanged) in the layout torch's CPU kernel gives for ``query``
    (``_heads_transposed``): a differentiable copy into ``(N, L, H, Ev)`` seen transposed, so
    that ``y.transpose(1, 2).view(N, L, H * Ev)`` works as in torch; else ``out`` itself."""
    if not (_shows_layout(query) and _shows_layout(out)) or not _heads_transposed(query._data):
        return out
    if out.ndim != 4 or _heads_transposed(out._data):
        return out
    moved: Tensor = out.transpose(1, 2).contiguous().transpose(1, 2)
    return moved


_HALF_DTYPES = ("float16", "bfloat16")


def _half(q: Tensor, k: Tensor, v: Tensor) -> bool:
    """float16/bfloat16 query, key and value of one dtype, nothing watching the ops (as
    ``_on_arrays``): ``_upcast`` runs them in float32."""
    dtype = q._data.dtype
    return (
        str(dtype) in _HALF_DTYPES
        and k._data.dtype == dtype
        and v._data.dtype == dtype
        and (lucid.compiler.is_compiling() or not ops_watched())
    )


def _upcast(
    query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None, is_causal: bool,
    factor: float, enable_gqa: bool
) -> Tensor:  # fmt: skip
    """Half-precision attention without dropout, computed in float32 and rounded once to the
    input dtype, as torch's CPU kernels accumulate half types in float32 (NumPy has no
    half-precision BLAS: ``_reference`` in float16 is ~15x slower); a float mask is added in
    float32 too, a bool mask kept (the reference path in float32 with a mask). The casts are
    differentiable ops; the result takes torch's layout (``_torch_layout``) with no extra copy:
    a query stored as a transposed ``(N, L, H, E)`` is cast in that layout, so ``_Attention``
    lays its float32 result out so, and the cast back keeps it."""
    dtype = query.dtype
    heads = _shows_layout(query) and _heads_transposed(query._data)

    def up(t: Tensor) -> Tensor:
        if heads and t is query:
            cast: Tensor = t.transpose(1, 2).float().transpose(1, 2)
            return cast
        return t.float()

    q, k, v = up(query), up(key), up(value)
    mask = attn_mask
    if mask is not None and mask.dtype is not lucid.bool and mask.dtype is not lucid.float32:
        mask = mask.float()
    if mask is None and _on_arrays(q, k, v):
        if records_nothing() and _small(q, k):
            out = _attention_no_grad(q, k, v, factor, is_causal)
        else:
            out = _Attention.apply(q, k, v, factor, is_causal)
    else:
        out = _reference(q, k, v, mask, 0.0, is_causal, factor, enable_gqa)
    if heads and out.ndim == 4 and _shows_layout(out) and _heads_transposed(out._data):
        back: Tensor = out.transpose(1, 2).to(dtype).transpose(1, 2)
        return back
    return _torch_layout(out.to(dtype), query)


def _causal_bias_attention(
    query: Tensor, key: Tensor, value: Tensor, bias: CausalBias, dropout_p: float,
    is_causal: bool, scale: float | None, enable_gqa: bool
) -> Tensor:  # fmt: skip
    """A :class:`~lucid.nn.attention.bias.CausalBias` ``attn_mask``, as torch's CPU path: an
    upper-left one (or one with ``L == S``) is ``is_causal=True``; a lower-right one, its
    materialized bool mask."""
    if is_causal:
        raise ValueError("CausalBias should not be used with causal=True")
    if bias.seq_len_q == bias.seq_len_kv or bias.variant == CausalVariant.UPPER_LEFT:
        mask = None
        is_causal = True
    elif bias.variant == CausalVariant.LOWER_RIGHT:
        mask = bias._materialize(query.device)
    else:
        raise ValueError(f"CausalBias.variant must be a CausalVariant type, but found: "
                         f"{bias.variant}")  # fmt: skip
    return scaled_dot_product_attention(query, key, value, mask, dropout_p, is_causal, scale,
                                        enable_gqa)  # fmt: skip


def _reference(
    query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None, dropout_p: float,
    is_causal: bool, factor: float, enable_gqa: bool = False
) -> Tensor:  # fmt: skip
    """The attention in lucid ops (autograd and double backward from the ops)."""
    if enable_gqa and min(query.ndim, key.ndim) >= 3 and key.shape[-3] != query.shape[-3]:
        key = _repeat_heads(key, query.shape[-3])
        value = _repeat_heads(value, query.shape[-3])
    length, source = query.shape[-2], key.shape[-2]
    scores = (query @ key.transpose(-2, -1)) * factor
    if is_causal:
        scores = scores.masked_fill(_blocked(length, source, query), -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype is lucid.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), -math.inf)
        else:
            scores = scores + attn_mask
    # A causal mask alone leaves key 0 to every query: no row is all -inf unless there are no
    # keys, so only an attn_mask (or no keys) needs the search for fully masked rows.
    masked = attn_mask is not None or (is_causal and source == 0)
    weights = _safe_softmax(scores, masked, attn_mask is not None)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    out: Tensor = weights @ value
    return out


def _on_arrays(q: Tensor, k: Tensor, v: Tensor) -> bool:
    """Whether ``_Attention`` may run: one float32/float64 dtype, the same batch dims, keys and
    queries, and nothing that must see the ops (``observe_ops``, vmap, the ONNX exporter). A
    compile capture records it as one op, so that a replay computes eager mode's bits."""
    qs, ks, vs = q._data.shape, k._data.shape, v._data.shape
    return (
        q._data.dtype in _ARRAY_DTYPES
        and k._data.dtype == q._data.dtype
        and v._data.dtype == q._data.dtype
        and qs[:-2] == ks[:-2] == vs[:-2]
        and 0 not in qs
        and 0 not in ks
        and vs[-1] > 0
        and (lucid.compiler.is_compiling() or not ops_watched())
    )


_ARRAY_DTYPES = ("float32", "float64")
_NP_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))  # the same, compared faster
# The causal mask as an additive bias on the transposed scores ``(S, L)``: -inf where key j
# comes after query i; per (S, L, dtype), small ones only.
_CAUSAL_BIAS: dict[tuple[int, int, Any], Any] = {}


def _causal_bias(xp: Any, source: int, length: int, dtype: Any) -> Any:
    key = (source, length, dtype)
    bias = _CAUSAL_BIAS.get(key)
    if bias is None:
        bias = xp.tril(xp.full((source, length), -math.inf, dtype=dtype), -1)
        if source * length <= _BLOCKED_MAX_ELEMENTS:
            if len(_CAUSAL_BIAS) >= _BLOCKED_MAX_ENTRIES:
                _CAUSAL_BIAS.clear()
            _CAUSAL_BIAS[key] = bias
    return bias


class _Attention(Function):
    """``softmax(q @ k^T * factor [causal]) @ v`` as one node on the arrays, without an
    ``attn_mask`` or dropout. The scores are kept transposed, ``(..., S, L)``: the softmax's
    max and sum then run down the columns, which NumPy vectorises (along rows of 64 they were
    ~4x slower), and the sum is a product with ones (docs/performance.md, issue 30). The result
    is laid out as torch's CPU kernel lays it out (``_result``): in the query's layout where
    that is a transposed ``(N, L, H, E)`` (a GPT's heads split from one projection), so that
    merging the heads again (``y.transpose(1, 2).contiguous().view(...)``) copies nothing;
    else contiguous. Where the backend has ``kernels.ATTENTION`` (NumPy with
    ``lucid-core[numba]``: one compiled pass over whole heads, float32) the forward is that;
    else, on the NumPy backend with two threads or more, a big call runs its batch in parts,
    one a thread (``_parts``, ``SPLIT_FLOPS``), forward and backward: independent matrices,
    the same bits. With ``create_graph=True`` the backward differentiates ``_reference``."""

    @staticmethod
    def forward(ctx: Any, q: Any, k: Any, v: Any, factor: float, causal: bool) -> Any:
        xp = ctx.xp
        flops = 2.0 * math.prod(q.shape[:-1]) * k.shape[-2] * (q.shape[-1] + v.shape[-1])
        parts = _parts(ctx.backend, q, flops)
        be = ctx.backend
        out = _result(xp, q, v.shape[-1])
        heads = kernels.ATTENTION.find(be)
        pt = None
        if heads is not None:
            pt = xp.empty((*q.shape[:-2], k.shape[-2], q.shape[-2]), dtype=q.dtype)
            if not heads.forward(be, q, k, v, factor, causal, out, pt):
                pt = None
        if pt is not None:  # the backward's parts: views of the one weight array
            pts = [pt] if parts is None else [pt[_index(parts[0], r)] for r in parts[1]]
        elif parts is None:
            pts, _ = _attend_part(xp, be, q, k, v, factor, causal, out, slice(None))
            pts = [pts]
        else:  # the batch in parts, one a thread (``_parts``): the same bits
            pts = blas_threads.map_ranges(
                lambda r: _attend_part(xp, be, q, k, v, factor, causal, out,
                                       _index(parts[0], r))[0],
                parts[1])  # fmt: skip
        ctx.save_for_backward(q, k, v)
        ctx.pts, ctx.parts, ctx.out, ctx.factor, ctx.causal = pts, parts, out, factor, causal
        ctx.heads = None if pt is None else (heads, pt)  # the kernel's backward goes with it
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        q, k, v = ctx.saved_tensors
        needs = ctx.needs_input_grad
        # create_graph, a batched (vmap) or other non-plain gradient: the op-level reference.
        # (A compile capture's backward recorder observes ops; this formula then runs whole.)
        if is_grad_enabled() or type(g) is not Tensor or g._data.dtype != ctx.pts[0].dtype:
            with enable_grad():
                out = _reference(q, k, v, None, 0.0, ctx.causal, ctx.factor)
                wanted = [t for t, need in zip((q, k, v), needs) if need]
                got = iter(lucid.autograd.grad([out], wanted, [g], create_graph=True,
                                               allow_unused=True))  # fmt: skip
            return (*[next(got) if need else None for need in needs[:3]], None, None)
        xp, be = ctx.xp, g.backend
        ga = g._data
        wrap = Tensor.from_backend_array
        if ctx.heads is not None:  # the forward's kernel: its backward over the same heads
            heads, pt = ctx.heads
            made = heads.backward(be, q._data, k._data, v._data, ga, pt, ctx.factor, ctx.causal,
                                  needs)  # fmt: skip
            if made is not None:
                return (*[None if a is None else wrap(a, be) for a in made], None, None)
        # rowsum(dP * P) = rowsum(g * out): over Ev columns instead of S; one product over every
        # row before any split (OpenBLAS's gemv rounds a row by its place in its blocks)
        rows = None
        if needs[0] or needs[1]:
            rows = xp.matmul(xp.multiply(ga, ctx.out), xp.ones((ga.shape[-1], 1), dtype=ga.dtype))
        arrays = (q._data, k._data, v._data, ga, rows)
        parts = ctx.parts
        if parts is None:
            grads = _attention_vjp(xp, *arrays, ctx.pts[0], ctx.factor, needs, None,
                                   slice(None))  # fmt: skip
        else:  # the batch in the forward's parts, one a thread: the same bits
            made = [xp.empty(a.shape, dtype=a.dtype) if need else None
                    for a, need in zip(arrays[:3], needs)]  # fmt: skip
            blas_threads.map_ranges(
                lambda r: _attention_vjp(xp, *arrays, ctx.pts[parts[1].index(r)], ctx.factor,
                                         needs, made, _index(parts[0], r)),
                parts[1])  # fmt: skip
            grads = (made[0], made[1], made[2])
        return (*[None if a is None else wrap(a, be) for a in grads], None, None)


def _result(xp: Any, q: Any, ev: int) -> Any:
    """An empty result (..., L, Ev) in torch's CPU layout: a 4-D query stored as a transposed
    ``(N, L, H, E)`` (its strides in the order N, L, H, E) gets an ``(N, L, H, Ev)`` array seen
    as ``(N, H, L, Ev)``; any other query, a contiguous one."""
    shape = (*q.shape[:-1], ev)
    if _heads_transposed(q):
        return xp.swapaxes(xp.empty((shape[0], shape[2], shape[1], ev), dtype=q.dtype), 1, 2)
    return xp.empty(shape, dtype=q.dtype)


# ``_Attention`` on the NumPy backend splits its forward and backward over the batch (the first
# batch dim with a part for each thread), one part a thread on lucid's pool (NumPy's products
# and passes release the GIL), from this many FLOPs of the forward's two products on: a GPT
# block's (12, 4, 64, 32) is 25 MFLOP. 0: every batched call; a huge value: never
# (docs/performance.md, issue 30, the GPT step at two threads).
SPLIT_FLOPS = 4e6


def _parts(backend: Any, q: Any, flops: float) -> tuple[int, list[tuple[int, int]]] | None:
    """``(axis, ranges)``: the batch dim ``_Attention`` splits and a range of it for each
    thread, or None (one thread, a small call, no batch dims, another backend, or inside the
    pool's threads)."""
    if flops < SPLIT_FLOPS or backend.name != "numpy":
        return None
    k = blas_threads.threads_here()
    if k < 2:
        return None
    for axis, n in enumerate(q.shape[:-2]):
        if n >= 2:
            k = min(k, n)
            return axis, [(n * i // k, n * (i + 1) // k) for i in range(k)]
    return None


def _index(axis: int, r: tuple[int, int]) -> Any:
    """The index of ``r`` along batch dim ``axis``."""
    return (slice(None),) * axis + (slice(*r),)


def _attend_part(xp: Any, backend: Any, q: Any, k: Any, v: Any, factor: float, causal: bool,
                 out: Any, at: Any) -> tuple[Any, Any]:  # fmt: skip
    """``_Attention``'s forward over the batch part ``at`` (``slice(None)``: all of it): the
    transposed softmax weights and the result (written into ``out[at]`` when given). The
    causal mask and the columns' maxima go through the backend's ``kernels.ATTENTION_SHIFT``
    where it has one (one compiled pass on NumPy with ``lucid-core[numba]``: the same
    values), else the ufuncs."""
    q, k, v = q[at], k[at], v[at]
    length, source = q.shape[-2], k.shape[-2]
    # q^T * factor into a contiguous array: a product with a transposed operand over a
    # short inner dim is ~1.8x slower in OpenBLAS than with that copy (docs/performance.md)
    qt = xp.empty((*q.shape[:-2], q.shape[-1], length), dtype=q.dtype)
    xp.multiply(xp.swapaxes(q, -1, -2), factor, out=qt)
    pt = xp.matmul(k, qt)
    bias = _causal_bias(xp, source, length, pt.dtype) if causal else None
    shift = kernels.ATTENTION_SHIFT.find(backend)
    if shift is None or not shift.forward(backend, pt, bias):
        if bias is not None:
            xp.add(pt, bias, out=pt)
        xp.subtract(pt, xp.max(pt, axis=-2, keepdims=True), out=pt)
    xp.exp(pt, out=pt)
    total = xp.matmul(xp.ones((1, source), dtype=pt.dtype), pt)
    xp.multiply(pt, xp.reciprocal(total), out=pt)
    if out is None:
        return pt, xp.matmul(xp.swapaxes(pt, -1, -2), v)
    return pt, xp.matmul(xp.swapaxes(pt, -1, -2), v, out=out[at])


def _attention_vjp(xp: Any, q: Any, k: Any, v: Any, ga: Any, rows: Any, pt: Any, factor: float,
                   needs: Any, grads: Any, at: Any) -> tuple[Any, Any, Any]:  # fmt: skip
    """``_Attention``'s gradients ``(dq, dk, dv)`` over the batch part ``at`` (``slice(None)``:
    all of it; ``pt``: that part's softmax weights; ``rows``: ``rowsum(g * out)``), new arrays,
    or written into ``grads``' parts when given."""
    q, k, v, ga = q[at], k[at], v[at], ga[at]

    def product(a: Any, b: Any, i: int) -> Any:
        return xp.matmul(a, b) if grads is None else xp.matmul(a, b, out=grads[i][at])

    dv = product(pt, ga, 2) if needs[2] else None
    dq = dk = None
    if needs[0] or needs[1]:
        ds = xp.matmul(v, xp.ascontiguousarray(xp.swapaxes(ga, -1, -2)))
        xp.subtract(ds, xp.swapaxes(rows[at], -1, -2), out=ds)
        xp.multiply(ds, pt, out=ds)
        xp.multiply(ds, factor, out=ds)
        if needs[0]:
            dq = product(xp.swapaxes(ds, -1, -2), k, 0)
        if needs[1]:
            dk = product(ds, q, 1)
    return dq, dk, dv


# Attention whose products come to at most this many FLOPs (a generated token's, on
# ``(1, 4, 64, 32)``: 1M) runs on one BLAS thread under ``_gemm.matmul``'s rules anyway (its
# ``THREADED_FLOPS``; NumPy calls BLAS once per head, each under OpenBLAS's own threading
# size), so NumPy's calls make the same products with no thread bookkeeping per product.
_SMALL_FLOPS = 2e6


def _small(q: Tensor, k: Tensor) -> bool:
    a = q._data
    return type(a) is np.ndarray and 2.0 * a.size * k._data.shape[-2] <= _SMALL_FLOPS


class _NoGradCtx:
    """What ``_Attention.forward`` reads and writes on its ``ctx``, for a call that records
    nothing: plain NumPy as ``xp`` (the namespace's matmul and ufunc wrappers only choose
    threads, which products this small do not use)."""

    xp = np
    needs_input_grad = (False, False, False, False, False)

    def __init__(self, backend: Any) -> None:
        self.backend = self.out_backend = backend

    def save_for_backward(self, *items: Any) -> None:
        pass


def _attention_no_grad(q: Tensor, k: Tensor, v: Tensor, factor: float, causal: bool) -> Tensor:
    """``_Attention``'s forward on the arrays where nothing records (grad off, nothing
    watching) and the heads are small: no ``Function`` call, no thread bookkeeping per product
    (generation at batch 1, docs/performance.md); the same array calls, so the same bits."""
    be = q._backend
    qa, ka, va = q._data, k._data, v._data
    heads = kernels.ATTENTION.find(be)
    if heads is not None:  # the backend's kernel (no float errors to quiet): ``forward``'s calls
        qs, ev = qa.shape, va.shape[-1]
        flops = 2.0 * math.prod(qs[:-1]) * ka.shape[-2] * (qs[-1] + ev)
        if flops < SPLIT_FLOPS or _parts(be, qa, flops) is None:
            if len(qs) == 4 and _heads_transposed(qa):  # ``_result``'s, with no swapaxes call
                out = np.empty((qs[0], qs[2], qs[1], ev), dtype=qa.dtype).transpose(0, 2, 1, 3)
            else:
                out = np.empty((*qs[:-1], ev), dtype=qa.dtype)
            pt = np.empty((*qs[:-2], ka.shape[-2], qs[-2]), dtype=qa.dtype)
            if heads.forward(be, qa, ka, va, factor, causal, out, pt):
                return Tensor.from_backend_array(out, be)
    quiet = be.fp_quiet
    token = None if quiet is None else quiet[0].set(quiet[1])
    try:
        out = _Attention.forward(_NoGradCtx(be), qa, ka, va, factor, causal)
    finally:
        if quiet is not None:
            quiet[0].reset(token)
    return Tensor.from_backend_array(out, be)


# -- multi-head attention ------------------------------------------------------------------------
def _canonical_mask(mask: Tensor | None, name: str, like: Tensor) -> Tensor | None:
    """torch's MHA masks: bool True = do not attend (-> -inf); float masks are added."""
    if mask is None:
        return None
    if not isinstance(mask, Tensor):
        raise TypeError(f"multi_head_attention_forward expected {name} to be a lucid.Tensor, "
                        f"got {type(mask).__name__}")  # fmt: skip
    if mask.dtype is lucid.bool:
        zeros = lucid.zeros(*mask.shape, dtype=like.dtype, device=like.device)
        out: Tensor = zeros.masked_fill(mask, -math.inf)
        return out
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported, got "
                             f"{mask.dtype}")  # fmt: skip
    return mask.to(like.dtype)


def _check_mha_shapes(
    query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
    attn_mask: Tensor | None, num_heads: int
) -> bool:  # fmt: skip
    """torch's ``_mha_shape_check``: True for batched (3-D) inputs, False for unbatched (2-D)."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"MultiheadAttention expected {name} to be a lucid.Tensor, got "
                            f"{type(t).__name__}")  # fmt: skip
    if query.ndim not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.ndim}-D query tensor of shape "
                             f"{tuple(query.shape)}")  # fmt: skip
    batched = query.ndim == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be "
                             f"{query.ndim}-D but found {key.ndim}-D and {value.ndim}-D tensors "
                             f"respectively (shapes {_shapes(query, key, value)})")  # fmt: skip
    if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{query.ndim - 1}-D but found {key_padding_mask.ndim}-D tensor "
                             f"instead")  # fmt: skip
    if attn_mask is not None and attn_mask.ndim not in (2, 3):
        raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or "
                             f"3-D but found {attn_mask.ndim}-D tensor instead")  # fmt: skip
    if not batched and attn_mask is not None and attn_mask.ndim == 3:
        want = (num_heads, query.shape[0], key.shape[0])
        if tuple(attn_mask.shape) != want:
            raise AssertionError(f"Expected `attn_mask` shape to be {want} but got "
                                 f"{tuple(attn_mask.shape)}")  # fmt: skip
    return batched


def _check_mha_sizes(
    query: Tensor, key: Tensor, value: Tensor, embed_dim: int, num_heads: int, separate: bool
) -> None:
    """Sequence-first ``(L, N, E)`` inputs: embedding size, heads, key/value agreement."""
    e, n = query.shape[2], query.shape[1]
    if e != embed_dim:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim}, but got {e} "
                             f"(query of shape {tuple(query.shape)})")  # fmt: skip
    if e % num_heads:
        raise AssertionError(f"embed_dim {e} not divisible by num_heads {num_heads}")
    if separate and tuple(key.shape[:2]) != tuple(value.shape[:2]):
        raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not "
                             f"match value's {tuple(value.shape[:2])}")  # fmt: skip
    if not separate and tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape "
                             f"{tuple(value.shape)}")  # fmt: skip
    if key.shape[1] != n:
        raise AssertionError(f"expected key and value with batch size {n} (as query "
                             f"{tuple(query.shape)}), got key {tuple(key.shape)}")  # fmt: skip


def _in_projection(
    query: Tensor, key: Tensor, value: Tensor, in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None, separate: tuple[Tensor | None, ...] | None
) -> tuple[Tensor, Tensor, Tensor]:  # fmt: skip
    """q, k, v projections, batch-first ``(N, L, E)``; ``separate`` holds (q, k, v) weights."""
    bq, bk, bv = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
    if separate is not None:
        wq, wk, wv = separate
        if wq is None or wk is None or wv is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, "
                                 "k_proj_weight or v_proj_weight is None")  # fmt: skip
    elif in_proj_weight is None:
        raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
    else:
        wq, wk, wv = in_proj_weight.chunk(3)
    return (linear(query.transpose(0, 1), wq, bq), linear(key.transpose(0, 1), wk, bk),
            linear(value.transpose(0, 1), wv, bv))  # fmt: skip


def _shape_attn_bias(bias: Tensor | None, n: int, h: int, length: int, source: int) -> Any:
    """A 2-D ``(L, S)`` mask broadcasts; a 3-D ``(N * H, L, S)`` one becomes ``(N, H, L, S)``."""
    if bias is None:
        return None
    if bias.ndim == 2 and tuple(bias.shape) != (length, source):
        raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(bias.shape)}, but should "
                           f"be {(length, source)}.")  # fmt: skip
    if bias.ndim == 3:
        if tuple(bias.shape) != (n * h, length, source):
            raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(bias.shape)}, but "
                               f"should be {(n * h, length, source)}.")  # fmt: skip
        return bias.reshape(n, h, length, source)
    return bias


def _append_key(
    k: Tensor, v: Tensor, extra_k: Tensor, extra_v: Tensor, dim: int, masks: list[Any]
) -> tuple[Tensor, Tensor, list[Any]]:
    """One more key/value position (``bias_k``/``bias_v`` or zeros), unmasked in every mask."""
    k, v = lucid.cat([k, extra_k], dim=dim), lucid.cat([v, extra_v], dim=dim)
    return k, v, [lucid.pad(m, (0, 1)) if m is not None else None for m in masks]


def _static_kv(t: Tensor, static: Tensor | None, name: str, n: int, h: int, d: int) -> Tensor:
    """``static_k``/``static_v`` ``(N * H, S, head_dim)`` replace the projected keys/values."""
    if static is None:
        return t
    if static.ndim != 3 or static.shape[0] != n * h or static.shape[2] != d:
        raise AssertionError(f"expecting {name} of shape ({n * h}, S, {d}), got "
                             f"{tuple(static.shape)}")  # fmt: skip
    return static.reshape(n, h, static.shape[1], d)


def _attend(
    q: Tensor, k: Tensor, v: Tensor, bias: Tensor | None, dropout_p: float, need_weights: bool,
    is_causal: bool
) -> tuple[Tensor, Tensor | None]:  # fmt: skip
    """Heads ``(N, H, L, d)``: explicit weights when asked for, else the SDPA (fused) path."""
    if not need_weights:
        return scaled_dot_product_attention(q, k, v, bias, dropout_p, is_causal), None
    scores = (q * (1.0 / math.sqrt(q.shape[-1]))) @ k.transpose(-2, -1)
    if bias is not None:
        scores = scores + bias
    weights = softmax(scores, dim=-1)  # NOTE: as torch, a fully masked query gives NaN here
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    out: Tensor = weights @ v
    return out, weights


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """torch's ``F.multi_head_attention_forward``: inputs ``(L, N, E)`` (or unbatched ``(L, E)``).

    Returns ``(output (L, N, E), weights)``; weights are ``(N, L, S)`` averaged over heads, or
    ``(N, H, L, S)`` with ``average_attn_weights=False``, or None when ``need_weights=False``
    (that path runs :func:`scaled_dot_product_attention`, so a backend's fused kernel).
    A bool mask marks positions NOT to attend (True = masked); a float mask is added.
    """
    batched = _check_mha_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    _check_mha_sizes(query, key, value, embed_dim_to_check, num_heads, use_separate_proj_weight)
    length, n, e = query.shape
    h, d = num_heads, e // num_heads
    if key_padding_mask is not None and attn_mask is not None:
        if key_padding_mask.dtype is not attn_mask.dtype:  # torch's _canonical_mask warns
            warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. "
                          "Use same type for both instead.", UserWarning, stacklevel=2)  # fmt: skip
    pad = _canonical_mask(key_padding_mask, "key_padding_mask", query)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")  # fmt: skip
    if is_causal and pad is None and not need_weights:
        attn_mask = None  # the hint alone: scaled_dot_product_attention's own causal mask
    else:
        is_causal = False
    separate = (q_proj_weight, k_proj_weight, v_proj_weight) if use_separate_proj_weight else None
    q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, separate)
    bias = _shape_attn_bias(_canonical_mask(attn_mask, "attn_mask", query), n, h, length,
                            k.shape[1])  # fmt: skip
    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v must both be given or both be None")
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        bk, bv = bias_k.reshape(1, 1, e).expand(n, 1, e), bias_v.reshape(1, 1, e).expand(n, 1, e)
        k, v, (bias, pad) = _append_key(k, v, bk, bv, 1, [bias, pad])
    q, k, v = (t.reshape(n, t.shape[1], h, d).transpose(1, 2) for t in (q, k, v))
    k = _static_kv(k, static_k, "static_k", n, h, d)
    v = _static_kv(v, static_v, "static_v", n, h, d)
    if add_zero_attn:
        zeros = lucid.zeros(n, h, 1, d, dtype=k.dtype, device=k.device)
        k, v, (bias, pad) = _append_key(k, v, zeros, zeros, 2, [bias, pad])
    source = k.shape[2]
    if pad is not None:
        if tuple(pad.shape) != (n, source):
            raise AssertionError(f"expecting key_padding_mask shape of {(n, source)}, but got "
                                 f"{tuple(pad.shape)}")  # fmt: skip
        pad = pad.reshape(n, 1, 1, source)
        bias = pad if bias is None else bias + pad
    p = dropout_p if training else 0.0
    attended, weights = _attend(q, k, v, bias, p, need_weights, is_causal)
    out = linear(attended.permute(2, 0, 1, 3).reshape(length, n, e), out_proj_weight,
                 out_proj_bias)  # fmt: skip
    if weights is not None and average_attn_weights:
        weights = weights.mean(dim=1)
    if not batched:
        out = out.squeeze(1)
        weights = weights.squeeze(0) if weights is not None else None
    return out, weights
