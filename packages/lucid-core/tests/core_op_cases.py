"""The op table shared by the gradcheck tests and the PyTorch parity tests.

Each case calls ``fn(L, *inputs)`` where ``L`` is the ``lucid`` or the ``torch`` module, so the
same line exercises both (their APIs match). Inputs are made from a seeded numpy generator as
float64 arrays; ``domain`` keeps them where the function is smooth. ``gg`` marks the cases
that also get a second-order (gradgradcheck) test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Case:
    name: str
    fn: Callable[..., Any]
    shapes: list[tuple[int, ...]]
    domain: str = "any"  # any | pos | unit (|x| < 1) | gt1 | away (|x| > 0.2, no near-ties)
    gg: bool = False
    consts: list[Any] = field(default_factory=list)  # extra non-differentiable arguments

    def arrays(self, seed: int = 0) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        out = []
        for shape in self.shapes:
            x = rng.standard_normal(shape)
            if self.domain == "pos":
                x = np.abs(x) + 0.5
            elif self.domain == "unit":
                x = np.tanh(x) * 0.8
            elif self.domain == "gt1":
                x = np.abs(x) + 1.5
            elif self.domain == "away":
                # distinct values, away from 0 and from each other (max/sort/abs kinks)
                n = int(np.prod(shape)) if shape else 1
                x = (rng.permutation(n) + 1.0) * 0.37 * rng.choice([-1, 1], n)
                x = x.reshape(shape)
            out.append(x)
        return out


def _idx(L: Any, data: Any) -> Any:
    return L.tensor(data)


def _inplace_chain(L: Any, a: Any, b: Any) -> Any:
    y = a * 1
    y += b
    y *= 0.5
    y.mul_(b)
    y.sub_(a, alpha=2)
    y.addcmul_(a, b, value=0.5)
    y.addcdiv_(a, b.abs() + 1, value=2)
    y.lerp_(a, 0.25)
    y.clamp_(-3.0, 3.0)
    y.div_(b.abs() + 1)
    return y


def _inplace_unary(L: Any, a: Any) -> Any:
    y = a * 1
    y.pow_(3)
    y.add_(2)
    y.abs_()
    y.sqrt_()
    return y


def _augmented_index(L: Any, a: Any, b: Any) -> Any:
    y = a * 2
    y[:, 0] += b[:, 1]  # in place on a view, then written back by __setitem__
    y[1] *= 3
    return y


def _inplace_on_views(L: Any, a: Any, b: Any) -> Any:
    h = a * 2
    h[:, :2].abs_()  # in place on views of an intermediate: the base's graph follows
    h[1].zero_()
    buf = a.new_zeros(2, 3)
    buf[0].copy_(b[1] * 3)  # a view of a tensor without grad takes one
    return h * h + buf * h


def _setitem(L: Any, a: Any, b: Any) -> Any:
    y = a * 1
    y[0] = b[0] * 2
    y[1:, 1] = b[1:, 0]
    y[L.tensor([2, 2]), L.tensor([0, 2])] = b[0, :2]
    return y


CASES: list[Case] = [
    # -- elementwise binary --
    Case("add", lambda L, a, b: L.add(a, b), [(3, 4), (4,)], gg=True),
    Case("add_alpha", lambda L, a, b: L.add(a, b, alpha=2.5), [(3, 4), (3, 4)]),
    Case("add_scalar", lambda L, a: a + 1.5, [(3,)]),
    Case("sub", lambda L, a, b: a - b, [(2, 3), (3,)], gg=True),
    Case("rsub_scalar", lambda L, a: 2.0 - a, [(3,)]),
    Case("mul", lambda L, a, b: a * b, [(2, 3), (2, 1)], gg=True),
    Case("mul_self", lambda L, a: a * a, [(4,)], gg=True),
    Case("div", lambda L, a, b: a / b, [(2, 3), (3,)], domain="pos", gg=True),
    Case("rdiv_scalar", lambda L, a: 1.0 / a, [(3,)], domain="pos"),
    Case("pow_tensor", lambda L, a, b: L.pow(a, b), [(2, 3), (2, 3)], domain="pos", gg=True),
    Case("pow_scalar", lambda L, a: a**3, [(2, 3)], gg=True),
    Case("pow_frac", lambda L, a: a**1.5, [(2, 3)], domain="pos"),
    Case("rpow", lambda L, a: 2.0**a, [(3,)]),
    Case("maximum", lambda L, a, b: L.maximum(a, b), [(3, 4), (3, 4)]),
    Case("minimum", lambda L, a, b: L.minimum(a, b), [(3, 4), (4,)]),
    Case("where", lambda L, a, b: L.where(a > 0, a, b), [(3, 4), (3, 4)], gg=True),
    Case("where_scalar", lambda L, a: L.where(a > 0, a, 0.0), [(3, 4)]),
    Case("clamp", lambda L, a: L.clamp(a, -0.5, 0.5), [(3, 4)], domain="away"),
    Case("clamp_min", lambda L, a: a.clamp(min=0.3), [(3, 4)], domain="away"),
    Case("clamp_tensor", lambda L, a, lo, hi: L.clamp(a, lo, hi + 1.0), [(3, 4), (4,), (3, 4)]),
    Case("lerp", lambda L, a, b: L.lerp(a, b, 0.3), [(3,), (3,)]),
    Case("lerp_tensor_w", lambda L, a, b, w: L.lerp(a, b, w), [(3,), (3,), (3,)]),
    Case("addcmul", lambda L, a, b, c: L.addcmul(a, b, c, value=0.5), [(3,), (3,), (3,)]),
    Case("addcdiv", lambda L, a, b, c: L.addcdiv(a, b, c, value=2), [(3,), (3,), (3,)], "pos"),
    Case("remainder", lambda L, a, b: L.remainder(a, b), [(4,), (4,)], domain="pos"),
    Case("fmod", lambda L, a, b: L.fmod(a, b), [(4,), (4,)], domain="pos"),
    Case("atan2", lambda L, a, b: L.atan2(a, b), [(3,), (3,)]),
    Case("hypot", lambda L, a, b: L.hypot(a, b), [(3,), (2, 3)]),
    Case("copysign", lambda L, a, b: L.copysign(a, b), [(3, 2), (3, 2)], domain="away"),
    Case("xlogy", lambda L, a, b: L.xlogy(a, b), [(3,), (3,)], domain="pos"),
    Case(
        "xlogy_zero",
        lambda L, a, b: L.xlogy(a * L.tensor([0.0, 1.0, 0.0], dtype=a.dtype), b),
        [(3,), (3,)],
        domain="pos",
    ),  # fmt: skip
    Case("exp2", lambda L, a: L.exp2(a), [(3,)]),
    # -- elementwise unary --
    Case("neg", lambda L, a: -a, [(3,)]),
    Case("exp", lambda L, a: L.exp(a), [(2, 3)], gg=True),
    Case("log", lambda L, a: L.log(a), [(2, 3)], domain="pos", gg=True),
    Case("log2", lambda L, a: L.log2(a), [(3,)], domain="pos"),
    Case("log10", lambda L, a: L.log10(a), [(3,)], domain="pos"),
    Case("log1p", lambda L, a: L.log1p(a), [(3,)], domain="pos"),
    Case("expm1", lambda L, a: L.expm1(a), [(3,)]),
    Case("sqrt", lambda L, a: L.sqrt(a), [(3,)], domain="pos", gg=True),
    Case("rsqrt", lambda L, a: L.rsqrt(a), [(3,)], domain="pos", gg=True),
    Case("abs", lambda L, a: L.abs(a), [(3, 2)], domain="away"),
    Case("sign", lambda L, a: L.sign(a) * a, [(3,)], domain="away"),
    Case("sin", lambda L, a: L.sin(a), [(3,)], gg=True),
    Case("cos", lambda L, a: L.cos(a), [(3,)], gg=True),
    Case("tan", lambda L, a: L.tan(a), [(3,)], domain="unit"),
    Case("asin", lambda L, a: L.asin(a), [(3,)], domain="unit"),
    Case("acos", lambda L, a: L.acos(a), [(3,)], domain="unit"),
    Case("atan", lambda L, a: L.atan(a), [(3,)]),
    Case("arcsin", lambda L, a: L.arcsin(a), [(3,)], domain="unit"),
    Case("sinh", lambda L, a: L.sinh(a), [(3,)]),
    Case("cosh", lambda L, a: L.cosh(a), [(3,)]),
    Case("tanh", lambda L, a: L.tanh(a), [(3,)], gg=True),
    Case("asinh", lambda L, a: L.asinh(a), [(3,)]),
    Case("acosh", lambda L, a: L.acosh(a), [(3,)], domain="gt1"),
    Case("atanh", lambda L, a: L.atanh(a), [(3,)], domain="unit"),
    Case("sigmoid", lambda L, a: L.sigmoid(a), [(3, 4)], gg=True),
    Case("relu", lambda L, a: L.relu(a), [(3, 4)], domain="away", gg=True),
    Case("floor", lambda L, a: L.floor(a) + a, [(3,)], domain="away"),
    Case("ceil", lambda L, a: L.ceil(a) * a, [(3,)], domain="away"),
    Case("round", lambda L, a: L.round(a) * a, [(3,)], domain="away"),
    Case("trunc", lambda L, a: L.trunc(a) + a, [(3,)], domain="away"),
    Case("frac", lambda L, a: L.frac(a), [(3,)], domain="away"),
    Case("reciprocal", lambda L, a: L.reciprocal(a), [(3,)], domain="pos", gg=True),
    Case("square", lambda L, a: L.square(a), [(3,)], gg=True),
    Case("nan_to_num", lambda L, a: L.nan_to_num(a), [(3,)]),
    # -- reductions --
    Case("sum", lambda L, a: a.sum(), [(3, 4)], gg=True),
    Case("sum_dim", lambda L, a: a.sum(dim=1), [(3, 4)]),
    Case("sum_dims_keep", lambda L, a: a.sum(dim=(0, 2), keepdim=True), [(2, 3, 4)]),
    Case("mean", lambda L, a: a.mean(dim=-1), [(3, 4)], gg=True),
    Case("mean_tuple", lambda L, a: L.mean(a, (0, 1)), [(2, 3, 2)]),
    Case("var", lambda L, a: a.var(dim=1), [(3, 4)], gg=True),
    Case("var_correction0", lambda L, a: L.var(a, dim=0, correction=0, keepdim=True), [(3, 4)]),
    Case("var_all", lambda L, a: a.var(), [(3, 4)]),
    Case("std", lambda L, a: a.std(dim=(0, 1)), [(3, 4, 2)]),
    Case("std_correction2", lambda L, a: L.std(a, dim=1, correction=2), [(3, 5)]),
    Case("prod", lambda L, a: a.prod(), [(2, 3)], gg=True),
    Case("prod_dim", lambda L, a: a.prod(dim=1, keepdim=True), [(2, 4)]),
    Case(
        "prod_zero", lambda L, a: (a * L.tensor([1.0, 0.0, 1.0], dtype=a.dtype)).prod(1), [(2, 3)]
    ),  # fmt: skip
    Case("max_all", lambda L, a: L.max(a), [(3, 4)], domain="away"),
    Case("max_dim", lambda L, a: L.max(a, dim=1).values, [(3, 4)], domain="away"),
    Case("max_dim_keep", lambda L, a: a.max(0, keepdim=True)[0], [(3, 4)], domain="away"),
    Case("min_dim", lambda L, a: L.min(a, dim=0).values, [(3, 4)], domain="away"),
    Case("min_all", lambda L, a: a.min(), [(3, 4)], domain="away"),
    Case("amax", lambda L, a: L.amax(a, dim=(0, 1)), [(3, 4, 2)], domain="away", gg=True),
    Case("amin", lambda L, a: L.amin(a, dim=-1, keepdim=True), [(3, 4)], domain="away"),
    Case("logsumexp", lambda L, a: L.logsumexp(a, dim=1), [(3, 4)], gg=True),
    Case("logsumexp_tuple", lambda L, a: L.logsumexp(a, dim=(0, 1), keepdim=True), [(3, 4)]),
    Case("norm", lambda L, a: a.norm(), [(3, 4)], gg=True),
    Case("norm_dim", lambda L, a: L.norm(a, dim=1), [(3, 4)]),
    Case("norm_p1", lambda L, a: L.norm(a, p=1, dim=0), [(3, 4)], domain="away"),
    Case("norm_p3", lambda L, a: L.norm(a, p=3), [(3, 4)], domain="away"),
    Case("norm_inf", lambda L, a: L.norm(a, p=float("inf")), [(3, 4)], domain="away"),
    Case("cumsum", lambda L, a: L.cumsum(a, dim=1), [(3, 4)], gg=True),
    Case("cumprod", lambda L, a: L.cumprod(a, dim=1), [(3, 4)], gg=True),
    Case(
        "cumprod_zero",
        lambda L, a: L.cumprod(a * L.tensor([1.0, 0.0, 1.0, 0.0], dtype=a.dtype), dim=1),
        [(2, 4)],
    ),  # fmt: skip
    # -- shape and movement --
    Case("reshape", lambda L, a: a.reshape(2, 6), [(3, 4)], gg=True),
    Case("reshape_tuple", lambda L, a: L.reshape(a, (4, -1)), [(3, 4)]),
    Case("view", lambda L, a: a.view(-1), [(3, 4)]),
    Case("flatten", lambda L, a: a.flatten(1), [(2, 3, 4)]),
    Case("unflatten", lambda L, a: a.unflatten(1, (2, 2)), [(3, 4)]),
    Case("squeeze", lambda L, a: a.squeeze(1), [(3, 1, 2)]),
    Case("unsqueeze", lambda L, a: a.unsqueeze(-1), [(3, 2)]),
    Case("permute", lambda L, a: a.permute(2, 0, 1), [(2, 3, 4)], gg=True),
    Case("permute_tuple", lambda L, a: L.permute(a, (1, 0)), [(2, 3)]),
    Case("transpose", lambda L, a: a.transpose(0, 2), [(2, 3, 4)]),
    Case("T", lambda L, a: a.T, [(2, 3)]),
    Case("mT", lambda L, a: a.mT, [(2, 2, 3)]),
    Case("expand", lambda L, a: a.expand(3, 2, 4), [(2, 1)]),
    Case("broadcast_to", lambda L, a: L.broadcast_to(a, (2, 3)), [(3,)]),
    Case("repeat", lambda L, a: a.repeat(2, 1, 3), [(3, 2)], gg=True),
    Case("tile", lambda L, a: L.tile(a, (2,)), [(3, 2)]),
    Case("cat", lambda L, a, b: L.cat([a, b], dim=1), [(2, 3), (2, 2)], gg=True),
    Case("concatenate", lambda L, a, b: L.concatenate((a, b)), [(2, 3), (1, 3)]),
    Case("stack", lambda L, a, b: L.stack([a, b], dim=1), [(2, 3), (2, 3)]),
    Case("split", lambda L, a: L.split(a, 2, dim=1)[1] * 2, [(2, 5)]),
    Case("split_sizes", lambda L, a: a.split([1, 4], 1)[1], [(2, 5)]),
    Case("chunk", lambda L, a: a.chunk(3, 0)[-1], [(5, 2)]),
    Case("unbind", lambda L, a: a.unbind(1)[0] * a.unbind(1)[2], [(2, 3)]),
    Case("pad_constant", lambda L, a: _pad(L)(a, (1, 2), value=0.5), [(2, 3)]),
    Case("pad_constant_2d", lambda L, a: _pad(L)(a, (1, 0, 0, 2)), [(2, 3)]),
    Case("pad_negative", lambda L, a: _pad(L)(a, (-1, 2, 1, -1), value=0.25), [(3, 4)]),
    Case("pad_circular", lambda L, a: _pad(L)(a, (1, 2), mode="circular"), [(1, 2, 3)]),
    Case("pad_reflect", lambda L, a: _pad(L)(a, (2, 1), mode="reflect"), [(2, 4)], gg=True),
    Case(
        "pad_replicate", lambda L, a: _pad(L)(a, (1, 2, 2, 1), mode="replicate"), [(1, 2, 3)]
    ),  # fmt: skip
    Case("flip", lambda L, a: a.flip(0), [(3, 2)]),
    Case("flip_list", lambda L, a: L.flip(a, [0, 1]), [(3, 2)]),
    Case("roll", lambda L, a: L.roll(a, 1, 1), [(2, 3)]),
    Case("roll_flat", lambda L, a: a.roll(2), [(2, 3)]),
    Case("tril", lambda L, a: a.tril(), [(3, 3)]),
    Case("triu", lambda L, a: L.triu(a, 1), [(3, 4)]),
    Case("diagonal", lambda L, a: a.diagonal(), [(3, 4)]),
    Case("diagonal_offset", lambda L, a: L.diagonal(a, -1, 1, 2), [(2, 3, 3)]),
    Case("diag_vec", lambda L, a: L.diag(a, 1), [(3,)]),
    Case("diag_mat", lambda L, a: L.diag(a), [(3, 3)]),
    Case("masked_fill", lambda L, a: a.masked_fill(a > 0, 0.25), [(3, 4)]),
    Case("gather", lambda L, a: a.gather(1, _idx(L, [[0, 0], [2, 1], [1, 1]])), [(3, 3)]),
    Case("scatter", lambda L, a, s: a.scatter(1, _idx(L, [[0], [2]]), s), [(2, 3), (2, 1)]),
    Case("scatter_value", lambda L, a: a.scatter(0, _idx(L, [[1, 0]]), 2.0), [(2, 2)]),
    Case(
        "scatter_add",
        lambda L, a, s: L.scatter_add(a, 0, _idx(L, [[0, 1, 0], [0, 0, 1]]), s),
        [(2, 3), (2, 3)],
        gg=True,
    ),  # fmt: skip
    Case("index_select", lambda L, a: L.index_select(a, 0, _idx(L, [2, 0, 2])), [(3, 2)]),
    Case(
        "take_along_dim", lambda L, a: L.take_along_dim(a, _idx(L, [[1], [0]]), 1), [(2, 3)]
    ),  # fmt: skip
    Case("narrow", lambda L, a: a.narrow(1, 1, 2), [(2, 4)]),
    Case("getitem_basic", lambda L, a: a[1:, None, ..., ::2], [(3, 4)]),
    Case("getitem_int", lambda L, a: a[-1, 2], [(3, 4)]),
    Case("getitem_dup_index", lambda L, a: a[[0, 0, 2]], [(3, 2)], gg=True),
    Case("getitem_mask", lambda L, a: a[a > 0], [(3, 4)]),
    Case("getitem_2idx", lambda L, a: a[_idx(L, [0, 2]), _idx(L, [1, 1])], [(3, 4)]),
    # -- in-place ops on intermediates --
    Case("inplace_chain", _inplace_chain, [(3, 4), (3, 4)], domain="away", gg=True),
    Case("inplace_unary", _inplace_unary, [(3,)]),
    Case("setitem", _setitem, [(3, 3), (3, 3)]),
    Case("inplace_on_views", _inplace_on_views, [(2, 3), (2, 3)], domain="away", gg=True),
    Case("augmented_index", _augmented_index, [(2, 3), (2, 3)], gg=True),
    Case("masked_fill_", lambda L, a: (a * 1).masked_fill_(a > 0, 0.5), [(3, 4)]),
    Case("scatter_", lambda L, a, s: (a * 1).scatter_(1, _idx(L, [[0], [2]]), s), [(2, 3), (2, 1)]),
    # -- products --
    Case("matmul", lambda L, a, b: a @ b, [(3, 4), (4, 2)], gg=True),
    Case("matmul_batched", lambda L, a, b: L.matmul(a, b), [(2, 3, 4), (4, 2)]),
    Case("matmul_bcast", lambda L, a, b: a @ b, [(2, 1, 2, 3), (3, 3, 2)]),
    Case("matmul_vec_mat", lambda L, a, b: a @ b, [(3,), (2, 3, 2)]),
    Case("matmul_mat_vec", lambda L, a, b: a @ b, [(2, 3), (3,)]),
    Case("matmul_vec_vec", lambda L, a, b: a @ b, [(3,), (3,)]),
    Case("mm", lambda L, a, b: L.mm(a, b), [(2, 3), (3, 2)]),
    Case("dot", lambda L, a, b: L.dot(a, b), [(4,), (4,)], gg=True),
    Case("outer", lambda L, a, b: L.outer(a, b), [(3,), (2,)]),
    Case("inner", lambda L, a, b: L.inner(a, b), [(2, 3), (4, 3)]),
    Case("einsum_mm", lambda L, a, b: L.einsum("ij,jk->ik", a, b), [(2, 3), (3, 2)], gg=True),
    Case("einsum_batch", lambda L, a, b: L.einsum("bij,bjk->bik", a, b), [(2, 2, 3), (2, 3, 2)]),
    Case("einsum_reduce", lambda L, a, b: L.einsum("ij,j->", a, b), [(2, 3), (3,)]),
    Case("einsum_implicit", lambda L, a, b: L.einsum("ij,jk", a, b), [(2, 3), (3, 4)]),
    Case(
        "einsum_ellipsis",
        lambda L, a, b: L.einsum("...ij,...jk->...ik", a, b),
        [(2, 2, 3), (2, 3, 1)],
    ),  # fmt: skip
    Case("tensordot", lambda L, a, b: L.tensordot(a, b, dims=1), [(2, 3), (3, 4)]),
    Case(
        "tensordot_pairs",
        lambda L, a, b: L.tensordot(a, b, dims=([0, 2], [1, 0])),
        [(2, 3, 4), (4, 2, 5)],
    ),  # fmt: skip
    Case("einsum_trace", lambda L, a: L.einsum("ii->", a), [(3, 3)]),
    Case("einsum_diag", lambda L, a, b: L.einsum("iij,j->ij", a, b), [(3, 3, 2), (2,)], gg=True),
    Case("einsum_outer_sum", lambda L, a, b: L.einsum("i,jk->ij", a, b), [(3,), (2, 4)]),
]


def _pad(L: Any) -> Any:
    if L.__name__ == "torch":
        return L.nn.functional.pad
    return L.pad
