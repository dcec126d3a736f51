"""The op table shared by the gradcheck, the NumPy forward check, the foreign-backend test and
the PyTorch parity tests.

Each case calls ``fn(L, *inputs)`` where ``L`` is the ``lucid`` or the ``torch`` module, so the
same line exercises both (their APIs match). Most cases come from the ``OPS`` table rows of the
op modules (``row_cases``: one per sample, ``lucid.<name>(*inputs, *args, **kwargs)``); the
handwritten ``CASES`` below cover what a sample cannot say (operators, index tensors, lists,
in-place chains). Inputs are drawn by ``lucid.ops._registry.Sample`` from a seeded generator;
``gg`` marks the cases that also get a second-order (gradgradcheck) test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import lucid
from lucid.ops._registry import Op, Sample


@dataclass
class Case:
    name: str
    fn: Callable[..., Any]
    shapes: list[tuple[int, ...]]
    domain: str = "any"  # see lucid.ops._registry.Sample
    gg: bool = False
    covers: tuple[str, ...] = ()  # the public ops it checks (default: the one named ``name``)
    grad: bool = True  # False: a value check only (the op is not differentiable)
    ref: str = ""  # the NumPy function of the same values
    sample: Sample | None = None

    def arrays(self, seed: int = 0) -> list[np.ndarray]:
        spec = self.sample or Sample(tuple(self.shapes), self.domain)
        return spec.arrays(seed)

    def ops(self) -> tuple[str, ...]:
        return self.covers or (self.name,)


def _op_call(L: Any, name: str, xs: Any, s: Sample) -> Any:
    """``L.<name>(...)``, or the method where ``L`` has no such function (torch.sum_to_size)."""
    fn = getattr(L, name, None)
    if fn is None:
        return getattr(xs[0], name)(*xs[1:], *s.args, **s.kwargs)
    return fn(*xs, *s.args, **s.kwargs)


def _row_case(row: Op, s: Sample) -> Case:
    return Case(
        f"{row.name}_{s.tag}" if s.tag else row.name,
        lambda L, *xs: _op_call(L, row.name, xs, s),
        list(s.shapes),
        s.domain,
        s.gg,
        (row.name,),
        not row.nograd,
        s.ref,
        s,
    )


def row_cases() -> list[Case]:
    """One case per sample of every op table row."""
    return [_row_case(row, s) for _, row in lucid.ops.rows() for s in row.samples]


def tensors(L: Any, case: Case, arrays: list[np.ndarray], **kw: Any) -> list[Any]:
    """The case's inputs as ``L`` tensors: float arrays as float64 (requiring grad when the
    case checks gradients), index and mask arrays as they are."""
    return [L.tensor(a, dtype=L.float64, requires_grad=case.grad, **kw) if a.dtype.kind == "f"
            else L.tensor(a, **kw) for a in arrays]  # fmt: skip


def outputs(result: Any) -> list[Any]:
    """The tensors a case returned (one, or a tuple of them)."""
    return list(result) if isinstance(result, (tuple, list)) else [result]


def forward_backward(L: Any, case: Case, **kw: Any) -> tuple[list[Any], list[Any], list[Any]]:
    """Run ``case`` on ``L`` and back-propagate a fixed random weighting of its float outputs:
    (the output tensors, the inputs, the inputs' gradients as NumPy, zeros where none)."""
    arrays = case.arrays()
    xs = tensors(L, case, arrays, **kw)
    outs = outputs(case.fn(L, *xs))
    rng = np.random.default_rng(1)
    total = None
    for o in outs:
        if o.is_floating_point() and o.requires_grad:
            w = L.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype, **kw)
            total = (o * w).sum() if total is None else total + (o * w).sum()
    if total is not None:
        total.backward()
    grads = [np.zeros(a.shape) if x.grad is None else x.grad.detach().numpy()
             for a, x in zip(arrays, xs)]  # fmt: skip
    return outs, xs, grads


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


def _scatter_reduce(reduce: str, include: bool) -> Callable[..., Any]:
    def call(L: Any, a: Any, s: Any) -> Any:
        index = _idx(L, [[0, 1, 0, 2], [3, 3, 1, 0]])
        return a.scatter_reduce(1, index, s, reduce, include_self=include)

    return call


# Cases a table row's sample cannot express.
EXTRA_CASES: list[Case] = [
    # -- elementwise binary --
    Case("add_scalar", lambda L, a: a + 1.5, [(3,)], covers=("add",)),
    Case("rsub_scalar", lambda L, a: 2.0 - a, [(3,)], covers=("sub",)),
    Case("mul_self", lambda L, a: a * a, [(4,)], gg=True, covers=("mul",)),
    Case("rdiv_scalar", lambda L, a: 1.0 / a, [(3,)], domain="pos"),
    Case("pow_scalar", lambda L, a: a**3, [(2, 3)], gg=True),
    Case("pow_frac", lambda L, a: a**1.5, [(2, 3)], domain="pos"),
    Case("rpow", lambda L, a: 2.0**a, [(3,)]),
    Case("where", lambda L, a, b: L.where(a > 0, a, b), [(3, 4), (3, 4)], gg=True),
    Case("where_scalar", lambda L, a: L.where(a > 0, a, 0.0), [(3, 4)], covers=("where",)),
    Case("clamp_tensor", lambda L, a, lo, hi: L.clamp(a, lo, hi + 1.0), [(3, 4), (4,), (3, 4)]),
    Case(
        "xlogy_zero",
        lambda L, a, b: L.xlogy(a * L.tensor([0.0, 1.0, 0.0], dtype=a.dtype), b),
        [(3,), (3,)],
        domain="pos",
    ),  # fmt: skip
    Case("clamp_only_min", lambda L, a: a.clamp(min=0.3), [(3, 4)], domain="away"),
    # -- reductions --
    Case(
        "prod_zero", lambda L, a: (a * L.tensor([1.0, 0.0, 1.0], dtype=a.dtype)).prod(1), [(2, 3)]
    ),  # fmt: skip
    Case("max_dim", lambda L, a: L.max(a, dim=1).values, [(3, 4)], domain="away"),
    Case("max_dim_keep", lambda L, a: a.max(0, keepdim=True)[0], [(3, 4)], domain="away"),
    Case("min_dim", lambda L, a: L.min(a, dim=0).values, [(3, 4)], domain="away"),
    Case(
        "cumprod_zero",
        lambda L, a: L.cumprod(a * L.tensor([1.0, 0.0, 1.0, 0.0], dtype=a.dtype), dim=1),
        [(2, 4)],
    ),  # fmt: skip
    Case("cummax_ties", lambda L, a: L.cummax(L.cat([a, a], 1), 1), [(3, 2)], covers=("cummax",)),
    Case("cummin_ties", lambda L, a: a.repeat(1, 2).cummin(0), [(3, 2)], covers=("cummin",)),
    Case("sum_0d_dim", lambda L, a: a.sum(0), [()], covers=("sum",)),
    Case("logsumexp_0d_dim", lambda L, a: L.logsumexp(a, -1), [()], covers=("logsumexp",)),
    Case("cumsum_0d_dim", lambda L, a: L.cumsum(a, 0), [()], covers=("cumsum",)),
    Case("cumprod_0d_dim", lambda L, a: a.cumprod(-1), [()], covers=("cumprod",)),
    Case("amax_0d_dim", lambda L, a: a.amax(-1, keepdim=True), [()], covers=("amax",)),
    Case("prod_0d_dim", lambda L, a: a.prod(0), [()], covers=("prod",)),
    Case("softmax_0d_dim", lambda L, a: L.softmax(a, -1) * a, [()], covers=("softmax",)),
    # -- shape and movement --
    Case("reshape_varargs", lambda L, a: a.reshape(2, 6), [(3, 4)], covers=("reshape",)),
    Case("permute_varargs", lambda L, a: a.permute(2, 0, 1), [(2, 3, 4)], covers=("permute",)),
    Case("T", lambda L, a: a.T, [(2, 3)]),
    Case("mT", lambda L, a: a.mT, [(2, 2, 3)]),
    Case("cat", lambda L, a, b: L.cat([a, b], dim=1), [(2, 3), (2, 2)], gg=True),
    Case("concatenate", lambda L, a, b: L.concatenate((a, b)), [(2, 3), (1, 3)], covers=("cat",)),
    Case("stack", lambda L, a, b: L.stack([a, b], dim=1), [(2, 3), (2, 3)]),
    Case("hstack", lambda L, a, b: L.hstack([a, b]), [(2, 3), (2, 2)]),
    Case("vstack", lambda L, a, b: L.vstack((a, b)), [(2, 3), (1, 3)]),
    Case("pad_constant", lambda L, a: _pad(L)(a, (1, 2), value=0.5), [(2, 3)], covers=("pad",)),
    Case("pad_constant_2d", lambda L, a: _pad(L)(a, (1, 0, 0, 2)), [(2, 3)], covers=("pad",)),
    Case(
        "pad_negative",
        lambda L, a: _pad(L)(a, (-1, 2, 1, -1), value=0.25),
        [(3, 4)],
        covers=("pad",),
    ),
    Case(
        "pad_circular",
        lambda L, a: _pad(L)(a, (1, 2), mode="circular"),
        [(1, 2, 3)],
        covers=("pad",),
    ),
    Case(
        "pad_reflect",
        lambda L, a: _pad(L)(a, (2, 1), mode="reflect"),
        [(2, 4)],
        gg=True,
        covers=("pad",),
    ),
    Case(
        "pad_replicate",
        lambda L, a: _pad(L)(a, (1, 2, 2, 1), mode="replicate"),
        [(1, 2, 3)],
        covers=("pad",),
    ),  # fmt: skip
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
    Case(
        "scatter_small_index",
        lambda L, a, s: a.scatter(1, _idx(L, [[0, 2], [3, 1]]), s),
        [(3, 4), (2, 2)],
        covers=("scatter",),
    ),
    Case(
        "scatter_add_small_index",
        lambda L, a, s: a.scatter_add(0, _idx(L, [[0, 1, 0], [2, 2, 1]]), s),
        [(3, 4), (2, 3)],
        covers=("scatter_add",),
    ),
    Case(
        "scatter_multiply",
        lambda L, a, s: a.scatter(1, _idx(L, [[0, 2], [1, 1]]), s, reduce="multiply"),
        [(2, 3), (2, 2)],
        covers=("scatter",),
        grad=False,  # torch has no derivative for scatter with reduce (scatter_reduce's cases)
    ),
    Case(
        "scatter_add_reduce",
        lambda L, a: a.scatter(0, _idx(L, [[1, 0, 1]]), 1.5, reduce="add"),
        [(2, 3)],
        covers=("scatter",),
        grad=False,
    ),
    *[
        Case(
            f"scatter_reduce_{reduce}{'' if include else '_noself'}",
            _scatter_reduce(reduce, include),
            [(3, 4), (2, 4)],
            domain="away",
            gg=reduce in ("sum", "prod"),
            covers=("scatter_reduce",),
        )
        for reduce in ("sum", "prod", "mean", "amax", "amin")
        for include in (True, False)
    ],
    Case(
        "scatter_reduce_prod_zeros",
        lambda L, a, s: L.scatter_reduce(
            a * L.tensor([1.0, 0.0, 1.0, 1.0], dtype=a.dtype),
            1,
            _idx(L, [[0, 1, 0], [3, 3, 1]]),
            s * L.tensor([[0.0, 1.0, 1.0], [0.0, 0.0, 1.0]], dtype=s.dtype),
            "prod",
        ),
        [(2, 4), (2, 3)],
        covers=("scatter_reduce",),
    ),  # fmt: skip
    Case("index_select", lambda L, a: L.index_select(a, 0, _idx(L, [2, 0, 2])), [(3, 2)]),
    Case(
        "take_along_dim", lambda L, a: L.take_along_dim(a, _idx(L, [[1], [0]]), 1), [(2, 3)]
    ),  # fmt: skip
    Case("getitem_basic", lambda L, a: a[1:, None, ..., ::2], [(3, 4)], covers=("getitem",)),
    Case("getitem_int", lambda L, a: a[-1, 2], [(3, 4)], covers=("getitem",)),
    Case("getitem_dup_index", lambda L, a: a[[0, 0, 2]], [(3, 2)], gg=True, covers=("getitem",)),
    Case("getitem_mask", lambda L, a: a[a > 0], [(3, 4)], covers=("getitem",)),
    Case(
        "getitem_2idx",
        lambda L, a: a[_idx(L, [0, 2]), _idx(L, [1, 1])],
        [(3, 4)],
        covers=("getitem",),
    ),
    Case("take", lambda L, a: L.take(a, _idx(L, [0, 5, 5, 11])), [(3, 4)]),
    Case("masked_select", lambda L, a: L.masked_select(a, a > 0), [(3, 4)]),
    Case(
        "index_add",
        lambda L, a, s: L.index_add(a, 0, _idx(L, [0, 2, 0]), s, alpha=2.0),
        [(3, 2), (3, 2)],
    ),  # fmt: skip
    # -- in-place ops on intermediates --
    Case("inplace_chain", _inplace_chain, [(3, 4), (3, 4)], domain="away", gg=True),
    Case("inplace_unary", _inplace_unary, [(3,)]),
    Case("setitem", _setitem, [(3, 3), (3, 3)]),
    Case("inplace_on_views", _inplace_on_views, [(2, 3), (2, 3)], domain="away", gg=True),
    Case("augmented_index", _augmented_index, [(2, 3), (2, 3)], gg=True),
    Case(
        "masked_fill_",
        lambda L, a: (a * 1).masked_fill_(a > 0, 0.5),
        [(3, 4)],
        covers=("expand_copy",),
    ),
    Case("scatter_", lambda L, a, s: (a * 1).scatter_(1, _idx(L, [[0], [2]]), s), [(2, 3), (2, 1)]),
    # -- products --
    Case(
        "einsum_mm",
        lambda L, a, b: L.einsum("ij,jk->ik", a, b),
        [(2, 3), (3, 2)],
        gg=True,
        covers=("einsum",),
    ),
    Case(
        "einsum_batch",
        lambda L, a, b: L.einsum("bij,bjk->bik", a, b),
        [(2, 2, 3), (2, 3, 2)],
        covers=("einsum",),
    ),
    Case(
        "einsum_reduce",
        lambda L, a, b: L.einsum("ij,j->", a, b),
        [(2, 3), (3,)],
        covers=("einsum",),
    ),
    Case(
        "einsum_implicit",
        lambda L, a, b: L.einsum("ij,jk", a, b),
        [(2, 3), (3, 4)],
        covers=("einsum",),
    ),
    Case(
        "einsum_ellipsis",
        lambda L, a, b: L.einsum("...ij,...jk->...ik", a, b),
        [(2, 2, 3), (2, 3, 1)],
        covers=("einsum",),
    ),  # fmt: skip
    Case("einsum_trace", lambda L, a: L.einsum("ii->", a), [(3, 3)], covers=("einsum",)),
    Case(
        "einsum_diag",
        lambda L, a, b: L.einsum("iij,j->ij", a, b),
        [(3, 3, 2), (2,)],
        gg=True,
        covers=("einsum",),
    ),
    Case(
        "einsum_outer_sum",
        lambda L, a, b: L.einsum("i,jk->ij", a, b),
        [(3,), (2, 4)],
        covers=("einsum",),
    ),
    # -- arranging lists of tensors --
    Case("dstack", lambda L, a, b: L.dstack([a, b]), [(3, 2), (3, 2)]),
    Case("dstack_1d", lambda L, a, b: L.dstack((a, b)), [(4,), (4,)], covers=("dstack",)),
    Case("column_stack", lambda L, a, b, c: L.column_stack([a, b, c]), [(3,), (3, 2), (3,)]),
    Case("row_stack", lambda L, a, b: L.row_stack([a, b]), [(3,), (2, 3)], covers=("vstack",)),
    Case(
        "atleast_3d_list",
        lambda L, a, b: L.atleast_3d([a, b]),
        [(3,), (2, 2)],
        covers=("atleast_3d",),
    ),
    Case(
        "quantile_q_tensor",
        lambda L, a: L.quantile(a, L.tensor([0.0, 0.4, 1.0], dtype=a.dtype), dim=1),
        [(3, 5)],
        domain="away",
        covers=("quantile",),
    ),
    Case(
        "nanquantile_nan",
        lambda L, a: L.nanquantile(L.where(a > 1.5, L.nan, a), 0.6, dim=0, keepdim=True),
        [(5, 3)],
        domain="away",
        covers=("nanquantile",),
    ),
    Case(
        "quantile_nan",
        lambda L, a: L.quantile(L.where(a > 1.5, L.nan, a), 0.6, dim=0),
        [(5, 3)],
        domain="away",
        grad=False,
        covers=("quantile",),
    ),
    Case(
        "nansum_nan",
        lambda L, a: L.nansum(L.where(a > 1.0, L.nan, a), 1),
        [(3, 5)],
        gg=True,
        covers=("nansum",),
    ),
    Case(
        "nanmean_nan",
        lambda L, a: L.where(a > 1.0, L.nan, a).nanmean(),
        [(3, 5)],
        covers=("nanmean",),
    ),
    Case(
        "cov_weights",
        lambda L, a: L.cov(
            a,
            fweights=L.tensor([1, 2, 1, 3]),
            aweights=L.tensor([0.5, 1.0, 2.0, 0.25], dtype=a.dtype),
        ),
        [(3, 4)],
        covers=("cov",),
    ),
    Case(
        "diff_prepend",
        lambda L, a, b: L.diff(a, dim=0, prepend=b, append=b),
        [(3, 4), (1, 4)],
        covers=("diff",),
    ),
    Case(
        "histogram_bins_tensor",
        lambda L, a: L.histogram(
            a, L.tensor([-2.0, -0.5, 0.0, 1.0, 3.0], dtype=a.dtype), weight=a.abs()
        ),
        [(30,)],
        grad=False,
        covers=("histogram",),
    ),
    Case(
        "sinc_zero",
        lambda L, a: L.sinc(a * L.tensor([0.0, 1.0, 1.0], dtype=a.dtype)),
        [(3,)],
        covers=("sinc",),
    ),
    Case(
        "nansum_int",
        lambda L, a: L.nansum(a, 0),
        [(3, 4)],
        domain="int",
        grad=False,
        covers=("nansum",),
    ),
    Case(
        "mode_int", lambda L, a: L.mode(a % 3), [(4, 6)], domain="int", grad=False, covers=("mode",)
    ),
    Case("diff_int", lambda L, a: L.diff(a), [(4,)], domain="int", grad=False, covers=("diff",)),
    Case(
        "diff_bool",
        lambda L, a: L.diff(a, n=2),
        [(6,)],
        domain="bool",
        grad=False,
        covers=("diff",),
    ),
    # -- indexed writes (issue 29) --
    Case("index_fill", lambda L, a: L.index_fill(a, 1, _idx(L, [0, 2]), -1.5), [(3, 4)]),
    Case(
        "index_fill_tensor_value",
        lambda L, a, v: a.index_fill(0, _idx(L, [2, 0]), v.sum()),
        [(3, 4), (2,)],
        covers=("index_fill",),
    ),
    Case(
        "index_fill_0d",
        lambda L, a: L.index_fill(a, 0, _idx(L, 0), 2.0),
        [()],
        covers=("index_fill",),
    ),
    Case("index_copy", lambda L, a, b: L.index_copy(a, 0, _idx(L, [2, 0]), b), [(3, 4), (2, 4)]),
    Case(
        "index_copy_dim1",
        lambda L, a, b: a.index_copy(1, _idx(L, [3, 1]), b),
        [(2, 4), (2, 2)],
        covers=("index_copy",),
    ),
    Case(
        "index_put",
        lambda L, a, b: L.index_put(a, (_idx(L, [0, 2]), _idx(L, [1, 3])), b),
        [(3, 4), (2,)],
    ),
    Case(
        "index_put_accumulate",
        lambda L, a, b: a.index_put((_idx(L, [0, 2, 0]),), b, accumulate=True),
        [(3, 4), (4,)],
        covers=("index_put",),
    ),
    Case(
        "index_put_mask",
        lambda L, a, b: L.index_put(a, (a > 0,), b.sum()),
        [(3, 4), (2,)],
        covers=("index_put",),
    ),
    Case(
        "inplace_index_twins",
        lambda L, a, b: (a * 1).index_fill_(0, _idx(L, [1]), 0.5).index_copy_(1, _idx(L, [0]), b),
        [(3, 2), (3, 1)],
        covers=("index_fill", "index_copy"),
    ),
    Case(
        "inplace_unary_twins",
        lambda L, a: (a * 1).sin_().atan_().mul_(2),
        [(3, 4)],
        covers=("sin", "atan"),
    ),
    Case(
        "inplace_cumsum_tril",
        lambda L, a: (a * 1).cumsum_(1).tril_(),
        [(3, 3)],
        covers=("cumsum", "tril"),
    ),
    # -- 0-d and empty inputs, Tensor repeats --
    Case(
        "index_select_0d",
        lambda L, a: L.index_select(a, 0, _idx(L, [0])),
        [()],
        covers=("index_select",),
    ),
    Case("gather_0d", lambda L, a: L.gather(a, 0, _idx(L, 0)), [()], covers=("gather",)),
    Case("transpose_0d", lambda L, a: a.transpose(0, -1) * 2, [()], covers=("transpose",)),
    Case(
        "scatter_0d", lambda L, a, b: L.scatter(a, 0, _idx(L, 0), b), [(), ()], covers=("scatter",)
    ),
    Case(
        "scatter_add_0d",
        lambda L, a, b: L.scatter_add(a, 0, _idx(L, 0), b),
        [(), ()],
        covers=("scatter_add",),
    ),
    Case(
        "index_select_empty",
        lambda L, a: L.index_select(a, 1, L.tensor([], dtype=L.int64)),
        [(3, 2)],
        covers=("index_select",),
    ),
    Case(
        "repeat_interleave_tensor",
        lambda L, a: L.repeat_interleave(a, _idx(L, [2, 0, 1]), dim=0),
        [(3, 2)],
        covers=("repeat_interleave",),
    ),
    Case(
        "repeat_interleave_counts",
        lambda L, a: L.repeat_interleave(a),
        [(4,)],
        domain="int",
        grad=False,
        covers=("repeat_interleave",),
    ),
    Case(
        "float_power_int",
        lambda L, a: L.float_power(a, 2),
        [(4,)],
        domain="int",
        grad=False,
        covers=("float_power",),
    ),
    Case(
        "square_bool",
        lambda L, a: L.square(a),
        [(4,)],
        domain="bool",
        grad=False,
        covers=("square",),
    ),
    Case("sign_bool", lambda L, a: L.sign(a), [(4,)], domain="bool", grad=False, covers=("sign",)),
    Case(
        "pow_int_negative",
        lambda L, a: L.pow(a - 2, a - 3),
        [(8,)],
        domain="int",
        grad=False,
        covers=("pow",),
    ),
    Case(
        "masked_scatter",
        lambda L, a, b: L.masked_scatter(a, a > 0, b),
        [(3, 4), (12,)],
        domain="away",
    ),
    Case(
        "masked_scatter_broadcast",
        lambda L, a, b: a.masked_scatter(_idx(L, [True, False, False, True]), b),
        [(3, 4), (2, 4)],
        covers=("masked_scatter",),
    ),
    Case("trapz", lambda L, a: L.trapz(a, dim=0), [(3, 4)], covers=("trapezoid",)),
    Case(
        "unravel_index", lambda L, a: L.unravel_index(a, (3, 4)), [(5,)], domain="int", grad=False
    ),
    *[
        Case(
            f"index_reduce_{r}",
            lambda L, a, b, r=r: L.index_reduce(a, 0, _idx(L, [0, 2, 0, 1]), b, r),
            [(3, 4), (4, 4)],
            domain="away",
            covers=("index_reduce",),
        )
        for r in ("prod", "mean", "amax", "amin")
    ],
    Case(
        "index_reduce_exclude",
        lambda L, a, b: a.index_reduce(1, _idx(L, [2, 2]), b, "mean", include_self=False),
        [(3, 4), (3, 2)],
        covers=("index_reduce",),
    ),
    Case("put", lambda L, a, b: L.put(a, _idx(L, [0, -1, 4]), b), [(3, 4), (3,)]),
    Case(
        "put_accumulate",
        lambda L, a, b: a.put(_idx(L, [[1, 1], [5, 0]]), b, accumulate=True),
        [(3, 4), (2, 2)],
        covers=("put",),
    ),
    Case(
        "isin_scalar", lambda L, a: L.isin(a, 3), [(5,)], domain="int", grad=False, covers=("isin",)
    ),
]

CASES: list[Case] = row_cases() + EXTRA_CASES


def _pad(L: Any) -> Any:
    if L.__name__ == "torch":
        return L.nn.functional.pad
    return L.pad
