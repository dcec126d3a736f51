"""torch's top-level forms of nn.functional ops whose arguments differ from F's: the losses'
integer ``reduction`` (0 none, 1 mean, 2 sum), ``batch_norm``/``instance_norm``'s order,
``embedding(weight, indices)``, ``grid_sampler``'s integer modes, ``convolution``, and the
in-place ``dropout_``, ``celu_``, ... They call ``lucid.nn.functional`` through the lazy
sibling lookup (``lucid._siblings``), so lucid-core imports no sibling; the names whose
arguments match F's are in ``lucid._siblings.FUNCTIONAL_NAMES``.
"""

from __future__ import annotations

import builtins
from typing import Any

from lucid import _siblings, dtypes
from lucid._creation import rand, tensor
from lucid._tensor import Tensor
from lucid.ops import where

_REDUCTIONS = ("none", "mean", "sum")  # torch's at::Reduction enum
_INTERPOLATION = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


def _f() -> Any:
    """``lucid.nn.functional`` (an AttributeError naming lucid-nn where it is not installed)."""
    return _siblings.sibling_attribute("lucid", "nn").functional


def _reduction(value: int | str) -> str:
    if isinstance(value, str):
        return value
    if value not in (0, 1, 2):
        raise ValueError(f"{value} is not a valid value for reduction (0 none, 1 mean, 2 sum)")
    return _REDUCTIONS[value]


def batch_norm(
    input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
    running_mean: Tensor | None, running_var: Tensor | None, training: bool, momentum: float,
    eps: float, cudnn_enabled: bool = True,
) -> Tensor:  # fmt: skip
    """``torch.batch_norm``: F.batch_norm with torch's top-level argument order."""
    return _f().batch_norm(  # type: ignore[no-any-return]
        input, running_mean, running_var, weight, bias, training, momentum, eps
    )


def instance_norm(
    input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
    running_mean: Tensor | None, running_var: Tensor | None, use_input_stats: bool,
    momentum: float, eps: float, cudnn_enabled: bool = True,
) -> Tensor:  # fmt: skip
    """``torch.instance_norm``: F.instance_norm with torch's top-level argument order."""
    return _f().instance_norm(  # type: ignore[no-any-return]
        input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps
    )


def embedding(
    weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:  # fmt: skip
    """``torch.embedding(weight, indices)``: the rows of ``weight`` at ``indices`` (a negative
    ``padding_idx`` is none)."""
    pad = None if padding_idx < 0 else padding_idx
    return _f().embedding(  # type: ignore[no-any-return]
        indices, weight, padding_idx=pad, scale_grad_by_freq=scale_grad_by_freq
    )


def binary_cross_entropy_with_logits(
    input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
    pos_weight: Tensor | None = None, reduction: int | str = 1,
) -> Tensor:  # fmt: skip
    """``torch.binary_cross_entropy_with_logits`` (an integer ``reduction``)."""
    return _f().binary_cross_entropy_with_logits(  # type: ignore[no-any-return]
        input, target, weight, pos_weight=pos_weight, reduction=_reduction(reduction)
    )


def cosine_embedding_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
    reduction: int | str = 1,
) -> Tensor:  # fmt: skip
    """``torch.cosine_embedding_loss`` (an integer ``reduction``)."""
    return _f().cosine_embedding_loss(  # type: ignore[no-any-return]
        input1, input2, target, margin=margin, reduction=_reduction(reduction)
    )


def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    reduction: int | str = 1,  # noqa: A002
) -> Tensor:
    """``torch.hinge_embedding_loss`` (an integer ``reduction``)."""
    return _f().hinge_embedding_loss(  # type: ignore[no-any-return]
        input, target, margin=margin, reduction=_reduction(reduction)
    )


def kl_div(
    input: Tensor,
    target: Tensor,
    reduction: int | str = 1,
    *,
    log_target: bool = False,  # noqa: A002
) -> Tensor:
    """``torch.kl_div`` (an integer ``reduction``)."""
    return _f().kl_div(  # type: ignore[no-any-return]
        input, target, reduction=_reduction(reduction), log_target=log_target
    )


def margin_ranking_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
    reduction: int | str = 1,
) -> Tensor:  # fmt: skip
    """``torch.margin_ranking_loss`` (an integer ``reduction``)."""
    return _f().margin_ranking_loss(  # type: ignore[no-any-return]
        input1, input2, target, margin=margin, reduction=_reduction(reduction)
    )


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool,
    full: bool,
    eps: float,  # noqa: A002
    reduction: int | str,
) -> Tensor:
    """``torch.poisson_nll_loss`` (every argument positional, an integer ``reduction``)."""
    return _f().poisson_nll_loss(  # type: ignore[no-any-return]
        input, target, log_input, full, eps=eps, reduction=_reduction(reduction)
    )


def triplet_margin_loss(
    anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
    eps: float = 1e-6, swap: bool = False, reduction: int | str = 1,
) -> Tensor:  # fmt: skip
    """``torch.triplet_margin_loss`` (an integer ``reduction``)."""
    return _f().triplet_margin_loss(  # type: ignore[no-any-return]
        anchor, positive, negative, margin=margin, p=p, eps=eps, swap=swap,
        reduction=_reduction(reduction),
    )  # fmt: skip


def ctc_loss(
    log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
    blank: int = 0, reduction: int | str = 1, zero_infinity: bool = False,
) -> Tensor:  # fmt: skip
    """``torch.ctc_loss`` (an integer ``reduction``)."""
    return _f().ctc_loss(  # type: ignore[no-any-return]
        log_probs, targets, input_lengths, target_lengths, blank=blank,
        reduction=_reduction(reduction), zero_infinity=zero_infinity,
    )  # fmt: skip


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:  # noqa: A002
    """``(values, indices)`` of the 1-D adaptive max pool (``torch.adaptive_max_pool1d``)."""
    return _f().adaptive_max_pool1d(input, output_size, return_indices=True)  # type: ignore[no-any-return]


def affine_grid_generator(theta: Tensor, size: Any, align_corners: bool) -> Tensor:
    """``F.affine_grid(theta, size, align_corners)`` (``torch.affine_grid_generator``)."""
    return _f().affine_grid(theta, size, align_corners)  # type: ignore[no-any-return]


def grid_sampler(
    input: Tensor,
    grid: Tensor,
    interpolation_mode: int,
    padding_mode: int,  # noqa: A002
    align_corners: bool,
) -> Tensor:
    """``F.grid_sample`` with torch's integer modes (interpolation 0 bilinear, 1 nearest, 2
    bicubic; padding 0 zeros, 1 border, 2 reflection), on 4-D or 5-D input."""
    return _f().grid_sample(  # type: ignore[no-any-return]
        input, grid, mode=_INTERPOLATION[interpolation_mode],
        padding_mode=_PADDING[padding_mode], align_corners=align_corners,
    )  # fmt: skip


def grid_sampler_2d(
    input: Tensor,
    grid: Tensor,
    interpolation_mode: int,
    padding_mode: int,  # noqa: A002
    align_corners: bool,
) -> Tensor:
    """:func:`grid_sampler` on 4-D input."""
    if input.ndim != 4:
        raise RuntimeError(f"grid_sampler_2d(): expected 4D input, got {input.ndim}D input")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(
    input: Tensor,
    grid: Tensor,
    interpolation_mode: int,
    padding_mode: int,  # noqa: A002
    align_corners: bool,
) -> Tensor:
    """:func:`grid_sampler` on 5-D input."""
    if input.ndim != 5:
        raise RuntimeError(f"grid_sampler_3d(): expected 5D input, got {input.ndim}D input")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def convolution(
    input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,  # noqa: A002
    dilation: Any, transposed: bool, output_padding: Any, groups: int,
) -> Tensor:  # fmt: skip
    """``torch.convolution``: conv{1,2,3}d, or conv_transpose{1,2,3}d with ``transposed``,
    by the number of spatial dims of ``input``."""
    n = input.ndim - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"convolution(): expected a 3-D to 5-D input, got {input.ndim}-D")
    f = _f()
    if transposed:
        return getattr(f, f"conv_transpose{n}d")(  # type: ignore[no-any-return]
            input, weight, bias, stride, padding, output_padding, groups, dilation
        )
    return getattr(f, f"conv{n}d")(input, weight, bias, stride, padding, dilation, groups)  # type: ignore[no-any-return]


def dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """``torch.dropout``: ``F.dropout`` with torch's top-level ``train``."""
    return _f().dropout(input, p, train)  # type: ignore[no-any-return]


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """``torch.alpha_dropout``: ``F.alpha_dropout`` with torch's top-level ``train``."""
    return _f().alpha_dropout(input, p, train)  # type: ignore[no-any-return]


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """``torch.feature_alpha_dropout``: ``F.feature_alpha_dropout`` with ``train``."""
    return _f().feature_alpha_dropout(input, p, train)  # type: ignore[no-any-return]


def group_norm(
    input: Tensor, num_groups: int, weight: Tensor | None = None,  # noqa: A002
    bias: Tensor | None = None, eps: float = 1e-05, cudnn_enabled: bool = True,
) -> Tensor:  # fmt: skip
    """``torch.group_norm``: ``F.group_norm`` (``cudnn_enabled`` changes nothing)."""
    return _f().group_norm(input, num_groups, weight, bias, eps)  # type: ignore[no-any-return]


def layer_norm(
    input: Tensor, normalized_shape: Any, weight: Tensor | None = None,  # noqa: A002
    bias: Tensor | None = None, eps: float = 1e-05, cudnn_enable: bool = True,
) -> Tensor:  # fmt: skip
    """``torch.layer_norm``: ``F.layer_norm`` (``cudnn_enable`` changes nothing)."""
    return _f().layer_norm(  # type: ignore[no-any-return]
        input, normalized_shape, weight, bias, eps
    )


def rrelu(
    input: Tensor, lower: float = 1 / 8, upper: float = 1 / 3,  # noqa: A002
    training: bool = False, generator: Any = None,
) -> Tensor:  # fmt: skip
    """``torch.rrelu``: ``F.rrelu``, its random slopes drawn from ``generator`` when given."""
    if generator is None or not training:
        return _f().rrelu(input, lower, upper, training)  # type: ignore[no-any-return]
    if lower > upper:
        raise RuntimeError(
            f"Lower bound should be less than or equal to the upper bound, got lower={lower} "
            f"and upper={upper}"
        )
    slope = rand(*input.shape, dtype=input.dtype, device=input.device, generator=generator)
    out: Tensor = where(input > 0, input, input * (slope * (upper - lower) + lower))
    return out


_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(
    weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False,
    mode: int = 0, sparse: bool = False, per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False, padding_idx: int | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:  # fmt: skip
    """``torch.embedding_bag`` (F.embedding_bag's aten form): ``mode`` 0 sum, 1 mean, 2 max;
    returns ``(output, offset2bag, bag_size, max_indices)`` as torch's CPU kernel: the bag of
    each index (empty for sum), the non-padding count of each bag (zeros for sum), and for max
    the row that gave each maximum (for sum and mean, zeros and the counts again)."""
    if mode not in (0, 1, 2):
        raise ValueError(f"embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max), got {mode}")
    flat = indices.reshape(-1)
    output = _f().embedding_bag(  # F takes the index tensor first
        flat, weight, offsets, scale_grad_by_freq=scale_grad_by_freq, mode=_BAG_MODES[mode],
        sparse=sparse, per_sample_weights=per_sample_weights,
        include_last_offset=include_last_offset, padding_idx=padding_idx,
    )  # fmt: skip
    given = [int(v) for v in offsets.reshape(-1).tolist()]
    starts = given[:-1] if include_last_offset else given
    ends = [*starts[1:], flat.numel()]  # the last bag runs to the end (torch's CPU kernel)
    ids = [int(v) for v in flat.tolist()]
    keep = [i != padding_idx for i in ids]
    counts = [sum(keep[a:b]) for a, b in zip(starts, ends)]
    bag_of = [0] * len(ids)
    for bag, (a, b) in enumerate(zip(starts, ends)):
        bag_of[a:b] = [bag] * (b - a)
    as_long: dict[str, Any] = {"dtype": dtypes.int64, "device": indices.device}
    if mode == 0:
        zeros_n = tensor([0] * len(given), **as_long)
        bags = tensor([], **as_long) if padding_idx is None else tensor(bag_of, **as_long)
        return output, bags, zeros_n, zeros_n.clone()
    sizes = tensor(counts, **as_long)
    if mode == 1:
        return output, tensor(bag_of, **as_long), sizes, sizes.clone()
    rows = weight.detach()
    best = []
    for a, b in zip(starts[: output.shape[0]], ends[: output.shape[0]]):
        picked = [i for i in ids[a:b] if i != padding_idx]
        if not picked:
            best.append([0] * weight.shape[1])
            continue
        where_max = rows[tensor(picked, **as_long)].argmax(0).tolist()
        best.append([picked[j] for j in where_max])
    maxi = tensor(best, **as_long).reshape(output.shape[0], weight.shape[1])
    return output, tensor(bag_of, **as_long), sizes, maxi


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """In-place ``torch.dropout``."""
    return _f().dropout(input, p, train, inplace=True)  # type: ignore[no-any-return]


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """In-place ``torch.alpha_dropout``."""
    return _f().alpha_dropout(input, p, train, inplace=True)  # type: ignore[no-any-return]


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """In-place ``torch.feature_alpha_dropout``."""
    return _f().feature_alpha_dropout(input, p, train, inplace=True)  # type: ignore[no-any-return]


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """In-place ``torch.celu``."""
    return _f().celu(input, alpha, inplace=True)  # type: ignore[no-any-return]


def selu_(input: Tensor) -> Tensor:  # noqa: A002
    """In-place ``torch.selu``."""
    return _f().selu(input, inplace=True)  # type: ignore[no-any-return]


def rrelu_(
    input: Tensor,
    lower: float = 1 / 8,
    upper: float = 1 / 3,
    training: bool = False,  # noqa: A002
    generator: Any = None,
) -> Tensor:
    """In-place ``torch.rrelu``."""
    if generator is not None and training:
        return input.copy_(rrelu(input, lower, upper, training, generator))
    return _f().rrelu(input, lower, upper, training, inplace=True)  # type: ignore[no-any-return]


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """In-place ``torch.threshold``."""
    return _f().threshold(input, threshold, value, inplace=True)  # type: ignore[no-any-return]


__all__ = [
    "adaptive_max_pool1d", "affine_grid_generator", "alpha_dropout_", "batch_norm",
    "binary_cross_entropy_with_logits", "celu_", "convolution", "cosine_embedding_loss",
    "ctc_loss", "dropout_", "embedding", "feature_alpha_dropout_", "grid_sampler",
    "grid_sampler_2d", "grid_sampler_3d", "hinge_embedding_loss", "instance_norm", "kl_div",
    "margin_ranking_loss", "poisson_nll_loss", "rrelu_", "selu_", "threshold_",
    "triplet_margin_loss", "gru_cell", "lstm_cell", "rnn_relu_cell", "rnn_tanh_cell",
    "feature_dropout", "feature_dropout_", "gru", "lstm", "rnn_relu", "rnn_tanh",
    "embedding_renorm_", "dropout", "alpha_dropout", "feature_alpha_dropout", "group_norm",
    "layer_norm", "rrelu", "embedding_bag",
]  # fmt: skip


def _linear(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    out: Tensor = x.matmul(w.t())
    return out if b is None else out + b


def _check_cell(name: str, input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor) -> None:  # noqa: A002
    # torch's cell functions take batches only (nn.*Cell unsqueezes a single sample); torch
    # fails indexing dim 1 of a 1-D tensor, so the IndexError is kept, with a plainer message.
    for what, t in (("input", input), ("hidden", hx)):
        if t.dim() != 2:
            raise IndexError(
                f"{name}: Expected {what} to be 2D (batch, features), got {t.dim()}D instead"
            )
    if input.shape[-1] != w_ih.shape[1]:
        raise RuntimeError(
            f"input has inconsistent input_size: got {input.shape[-1]} expected {w_ih.shape[1]}"
        )
    if hx.shape[-1] != w_hh.shape[1]:
        raise RuntimeError(
            f"hidden has inconsistent hidden_size: got {hx.shape[-1]}, expected {w_hh.shape[1]}"
        )


def rnn_tanh_cell(
    input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
    b_ih: Tensor | None = None, b_hh: Tensor | None = None,
) -> Tensor:  # fmt: skip
    """One Elman RNN step, ``tanh(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``
    (``torch.rnn_tanh_cell``, what ``nn.RNNCell`` computes)."""
    _check_cell("rnn_tanh_cell", input, hx, w_ih, w_hh)
    out: Tensor = (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).tanh()
    return out


def rnn_relu_cell(
    input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
    b_ih: Tensor | None = None, b_hh: Tensor | None = None,
) -> Tensor:  # fmt: skip
    """One Elman RNN step with ReLU, ``relu(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``
    (``torch.rnn_relu_cell``)."""
    _check_cell("rnn_relu_cell", input, hx, w_ih, w_hh)
    out: Tensor = (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).relu()
    return out


def lstm_cell(
    input: Tensor, hx: Any, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
    b_ih: Tensor | None = None, b_hh: Tensor | None = None,
) -> tuple[Tensor, Tensor]:  # fmt: skip
    """One LSTM step (``torch.lstm_cell``, what ``nn.LSTMCell`` computes): ``hx`` is
    ``(h, c)``, the gates are stacked ``i, f, g, o`` in the weights' rows; returns
    ``(h', c')``."""
    if not isinstance(hx, (tuple, list)) or len(hx) != 2:
        raise RuntimeError("lstm_cell: Expected hx to be a tuple of two tensors (h, c)")
    h, c = hx
    _check_cell("lstm_cell", input, h, w_ih, w_hh)
    gates = _linear(input, w_ih, b_ih) + _linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    cy: Tensor = f.sigmoid() * c + i.sigmoid() * g.tanh()
    hy: Tensor = o.sigmoid() * cy.tanh()
    return hy, cy


def gru_cell(
    input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
    b_ih: Tensor | None = None, b_hh: Tensor | None = None,
) -> Tensor:  # fmt: skip
    """One GRU step (``torch.gru_cell``, what ``nn.GRUCell`` computes): the gates are stacked
    ``r, z, n`` in the weights' rows; ``n = tanh(x_n + r * h_n)`` with ``b_hh`` inside ``h_n``."""
    _check_cell("gru_cell", input, hx, w_ih, w_hh)
    xr, xz, xn = _linear(input, w_ih, b_ih).chunk(3, -1)
    hr, hz, hn = _linear(hx, w_hh, b_hh).chunk(3, -1)
    r = (xr + hr).sigmoid()
    z = (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    out: Tensor = (1 - z) * n + z * hx
    return out


def _feature_noise(input: Tensor, p: float) -> Tensor:  # noqa: A002
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.dim() < 2:
        raise RuntimeError(
            f"Feature dropout requires at least 2 dimensions in the input, got {input.dim()}"
        )
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    noise: Tensor = input.new_empty(shape).bernoulli_(1 - p)
    return noise if p == 1 else noise.div_(1 - p)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """Dropout of whole channels (dim 1, for every sample of dim 0), scaling the kept ones by
    ``1 / (1 - p)`` (``torch.feature_dropout``, what ``dropout1d``/``2d``/``3d`` compute)."""
    if not train or p == 0:
        return input
    out: Tensor = input * _feature_noise(input, p)
    return out


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """In-place :func:`feature_dropout` (``torch.feature_dropout_``)."""
    if not train or p == 0:
        return input
    out: Tensor = input.mul_(_feature_noise(input, p))
    return out


def _run_rnn(
    name: str, input: Tensor, hx: Any, params: Any, has_biases: bool, num_layers: int,  # noqa: A002
    dropout: float, train: bool, bidirectional: bool, batch_first: bool,
) -> tuple[Tensor, list[Tensor], list[Tensor]]:  # fmt: skip
    """The multi-layer loop behind ``torch.rnn_tanh/rnn_relu/gru/lstm``: ``params`` is the flat
    ``w_ih, w_hh[, b_ih, b_hh]`` list per layer and direction (``nn.RNN._flat_weights``)."""
    from lucid.ops.join import cat, stack

    if input.dim() != 3:
        raise RuntimeError(
            f"{name}: Expected input to be 3D (seq, batch, feature), got {input.dim()}D instead"
        )
    directions = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    params = list(params)
    if len(params) != num_layers * directions * per:
        raise RuntimeError(
            f"{name}: expected {num_layers * directions * per} parameters for {num_layers} "
            f"layer(s), {directions} direction(s) and has_biases={has_biases}, got {len(params)}"
        )
    lstm = name == "lstm"
    h0, c0 = (hx[0], hx[1]) if lstm else (hx, None)
    x = input.transpose(0, 1) if batch_first else input
    steps = x.shape[0]
    h_n: list[Tensor] = []
    c_n: list[Tensor] = []
    for layer in builtins.range(num_layers):
        outs = []
        for d in builtins.range(directions):
            k = layer * directions + d
            w = params[k * per : (k + 1) * per]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            h = h0[k]
            c = c0[k] if c0 is not None else None
            seq: list[Tensor] = []
            order = builtins.range(steps) if d == 0 else builtins.range(steps - 1, -1, -1)
            for t in order:
                if lstm:
                    h, c = lstm_cell(x[t], (h, c), w[0], w[1], b_ih, b_hh)
                elif name == "gru":
                    h = gru_cell(x[t], h, w[0], w[1], b_ih, b_hh)
                elif name == "rnn_relu":
                    h = rnn_relu_cell(x[t], h, w[0], w[1], b_ih, b_hh)
                else:
                    h = rnn_tanh_cell(x[t], h, w[0], w[1], b_ih, b_hh)
                seq.append(h)
            if d == 1:
                seq.reverse()
            outs.append(stack(seq, 0))
            h_n.append(h)
            if c is not None:
                c_n.append(c)
        x = outs[0] if directions == 1 else cat(outs, -1)
        if dropout > 0 and train and layer < num_layers - 1:
            x = _f().dropout(x, dropout, True)
    output = x.transpose(0, 1) if batch_first else x
    return output, h_n, c_n


def lstm(
    input: Tensor, hx: Any, params: Any, has_biases: bool, num_layers: int,  # noqa: A002
    dropout: float, train: bool, bidirectional: bool, batch_first: bool,
) -> tuple[Tensor, Tensor, Tensor]:  # fmt: skip
    """A multi-layer LSTM over a padded sequence (``torch.lstm``, what ``nn.LSTM`` runs):
    ``hx`` is ``(h0, c0)``, ``params`` the flat weight list; returns ``(output, h_n, c_n)``.
    Packed sequences go through ``nn.LSTM``."""
    from lucid.ops.join import stack

    out, h_n, c_n = _run_rnn("lstm", input, hx, params, has_biases, num_layers, dropout,
                             train, bidirectional, batch_first)  # fmt: skip
    return out, stack(h_n, 0), stack(c_n, 0)


def _single_state_rnn(name: str) -> Any:
    def function(
        input: Tensor, hx: Tensor, params: Any, has_biases: bool, num_layers: int,  # noqa: A002
        dropout: float, train: bool, bidirectional: bool, batch_first: bool,
    ) -> tuple[Tensor, Tensor]:  # fmt: skip
        from lucid.ops.join import stack

        out, h_n, _ = _run_rnn(name, input, hx, params, has_biases, num_layers, dropout,
                               train, bidirectional, batch_first)  # fmt: skip
        return out, stack(h_n, 0)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (
        f"A multi-layer {name} over a padded sequence (``torch.{name}``): ``params`` is the "
        "flat ``w_ih, w_hh[, b_ih, b_hh]`` list per layer and direction; returns "
        "``(output, h_n)``."
    )
    return function


gru = _single_state_rnn("gru")
rnn_tanh = _single_state_rnn("rnn_tanh")
rnn_relu = _single_state_rnn("rnn_relu")


def embedding_renorm_(
    input: Tensor,  # noqa: A002
    indices: Tensor,
    max_norm: float,
    norm_type: float,
) -> Tensor:
    """Rescale in place, without gradient, the rows of the weight ``input`` that ``indices``
    picks whose ``norm_type``-norm exceeds ``max_norm`` to norm ``max_norm``
    (``torch.embedding_renorm_``, what ``F.embedding(max_norm=)`` does first)."""
    weight = input  # torch's parameter names outside, the roles inside
    from lucid.autograd.grad_mode import no_grad

    with no_grad():
        rows = indices.reshape(-1).unique()
        picked = weight[rows]
        norm = picked.norm(p=norm_type, dim=1, keepdim=True)
        scale = (max_norm / (norm + 1e-7)).clamp(max=1.0)
        weight[rows] = picked * scale
    return weight
