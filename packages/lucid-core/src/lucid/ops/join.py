"""Joining and splitting: cat, stack, split, chunk, unbind, repeat, tile, pad."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid import _memory_format, dtypes
from lucid._tensor import Tensor
from lucid.autograd import grad_mode
from lucid.autograd.function import (
    Function,
    applies_directly,
    direct_node,
    ops_watched,
    record_direct,
    unrecorded,
    unrecorded_view,
)
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import index_int, normalize_dim, one_of, shape_arg, write_out

_LIST = "takes a list of tensors: core_op_cases"
OPS = OpTable(
    *[op(n, method=False, untested=_LIST) for n in ("cat", "stack", "hstack", "vstack")],
    op("concat", alias="cat", method=False),
    op("concatenate", alias="cat", method=False),
    op("split", sample((2, 5), args=(2,), dim=1), sample((2, 5), args=([1, 4], 1),
       tag="sizes")),
    op("chunk", sample((5, 2), args=(3, 0))),
    op("tensor_split", sample((2, 5), args=(3,), dim=1)),
    op("unbind", sample((2, 3), args=(1,))),
    op("repeat", sample((3, 2), args=(2, 1, 3), gg=True)),
    op("tile", sample((3, 2), args=((2,),))),
    op("repeat_interleave", sample((3, 2), args=(2,), dim=0)),
    op("pad", method=False, untested="torch's is nn.functional.pad: core_op_cases' pad cases"),
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


def _check_same_device(tensors: Sequence[Any], name: str) -> None:
    first = tensors[0].backend
    for t in tensors[1:]:
        if t.backend is not first:
            raise RuntimeError(
                f"{name}(): Expected all tensors to be on the same device, but found at least "
                f"two devices, {tensors[0].device} and {t.device}!"
            )


class Cat(Function):
    @staticmethod
    def forward(ctx: Any, dim: int, *arrays: Any) -> Any:
        ctx.dim = dim
        ctx.sizes = [a.shape[dim] for a in arrays]
        return ctx.xp.concatenate(arrays, axis=dim)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        if grad_mode._state.enabled or ops_watched() or _memory_format._marked:
            return (None, *Split.apply_multi(g, ctx.dim, tuple(ctx.sizes)))
        # No graph to build and nobody watching the ops: Split's own slices of the array,
        # without its Function call (a char-RNN's cat per character, docs/performance.md)
        be, arr, dim = g._backend, g._data, ctx.dim
        base, vc = (g._base if g._base is not None else g), g._counter()
        index: list[Any] = [slice(None)] * len(arr.shape)
        pieces: list[Any] = [None]
        start = 0
        for size in ctx.sizes:
            index[dim] = slice(start, start + size)
            piece = Tensor.from_backend_array(arr[tuple(index)], be)
            piece._base, piece._vc = base, vc  # views of g, as Split's outputs are
            pieces.append(piece)
            start += size
        return tuple(pieces)


class Split(Function):
    """Split into pieces of the given sizes along ``dim`` (a multi-output op).

    ``view_name`` is torch's name of the op for its error on an in-place change of a piece
    under autograd ("Output 0 of Split is a view ...": ``split``, ``chunk``; ``SplitWithSizes``);
    None for ``tensor_split``'s pieces, which torch makes as slices: an in-place change of one
    rewrites the input's graph (``rebase_output``)."""

    is_view = True
    dim: int
    sizes: tuple[int, ...]
    multi_view_name: str | None

    @staticmethod
    def forward(ctx: Any, a: Any, dim: int, sizes: tuple[int, ...],
                view_name: str | None = "Split") -> Any:  # fmt: skip
        ctx.dim, ctx.sizes = dim, sizes
        ctx.multi_view_name = view_name
        out = []
        start = 0
        index: list[Any] = [slice(None)] * a.ndim
        for s in sizes:
            index[dim] = slice(start, start + s)
            out.append(a[tuple(index)])
            start += s
        return tuple(out)

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> Any:
        return cat(list(grads), ctx.dim), None, None, None

    def _piece(self, output_nr: int) -> tuple[Any, ...]:
        start = sum(self.sizes[:output_nr])
        piece: tuple[Any, ...] = (slice(None),) * self.dim
        return (*piece, slice(start, start + self.sizes[output_nr]))

    def rebase_output(self, base: Tensor, value: Tensor, output_nr: int) -> tuple[Tensor, Tensor]:
        """:meth:`GetItem.rebase` for piece ``output_nr`` (``tensor_split``'s pieces only:
        the others refuse an in-place change under autograd, as torch's)."""
        from lucid.ops.indexing import GetItem, IndexPut

        index = self._piece(output_nr)
        new_base = IndexPut.apply(base, value, index)
        return new_base, GetItem.apply(new_base, index, False)


class Unbind(Function):
    is_view = True
    multi_view_name = "Unbind"

    @staticmethod
    def forward(ctx: Any, a: Any, dim: int) -> Any:
        ctx.dim = dim
        index: list[Any] = [slice(None)] * a.ndim
        out = []
        for i in range(a.shape[dim]):
            index[dim] = i
            out.append(a[tuple(index)])
        return tuple(out)

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> Any:
        return stack(list(grads), ctx.dim), None


def _plain_cat(tensors: Any, dim: Any) -> int | None:
    """``dim`` normalized where ``cat`` needs none of ``_cat``'s fixes or errors: two or more
    Tensors on one backend, of one native dtype and rank (not 1-D empty), the same sizes
    off ``dim``; else None (the full checks run, and raise where they must). A char-RNN cats
    per character (per-call cost, docs/performance.md)."""
    if (type(tensors) is not tuple and type(tensors) is not list) or len(tensors) < 2:
        return None
    first = tensors[0]
    if not isinstance(first, Tensor) or type(dim) is not int:
        return None
    arr = first._data
    shape = arr.shape
    n = len(shape)
    if not -n <= dim < n or (n == 1 and 0 in shape):
        return None
    d = dim + n if dim < 0 else dim
    head, tail = shape[:d], shape[d + 1 :]
    backend, native = first._backend, arr.dtype
    for i in range(1, len(tensors)):
        t = tensors[i]
        if not isinstance(t, Tensor) or t._backend is not backend:
            return None
        arr = t._data
        s = arr.shape
        if arr.dtype != native or len(s) != n or s[:d] != head or s[d + 1 :] != tail:
            return None
        if n == 1 and 0 in s:
            return None
    return d


def _cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenate along an existing ``dim``; dtypes promote as in torch."""
    d = _plain_cat(tensors, dim)
    if d is not None:
        return Cat.apply(d, *tensors)
    if isinstance(tensors, Tensor):
        raise TypeError(
            "cat(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor"
        )
    # Shapes read once from the arrays (a char-RNN calls cat per character: the checks were
    # most of its cost, docs/performance.md, issue 30)
    shapes = []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
        shape = tuple(t._data.shape)
        if not shape:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        shapes.append(shape)
    if (0,) in shapes:  # 1-D empty tensors are skipped (torch's legacy rule)
        keep = [i for i, shape in enumerate(shapes) if shape != (0,)] or [0][: len(shapes)]
        tensors, shapes = [tensors[i] for i in keep], [shapes[i] for i in keep]
    else:
        tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")  # torch's type
    _check_same_device(tensors, "cat")
    ref = shapes[0]
    n = len(ref)
    d = normalize_dim(dim, n)
    for i, shape in enumerate(shapes):
        if len(shape) != n:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {n} and "
                               f"{len(shape)}")  # fmt: skip
        if shape[:d] != ref[:d] or shape[d + 1 :] != ref[d + 1 :]:
            k = next(k for k in range(n) if k != d and shape[k] != ref[k])
            raise RuntimeError(
                f"Sizes of tensors must match except in dimension {d}. Expected size "
                f"{ref[k]} but got size {shape[k]} for tensor number {i} in the list."
            )
    native = tensors[0]._data.dtype
    if any(t._data.dtype != native for t in tensors):
        res = tensors[0].dtype
        for t in tensors[1:]:
            res = dtypes.promote_types(res, t.dtype)
        tensors = [t if t.dtype is res else t.to(res) for t in tensors]
    if len(tensors) == 1:
        return tensors[0].clone()
    return Cat.apply(d, *tensors)


def cat(tensors: Sequence[Tensor], dim: int = 0, *, out: Any = None) -> Tensor:
    """Concatenate along an existing ``dim``; dtypes promote as in torch.

    ``out=`` writes the result into that tensor (torch's checks: the same dtype, no
    memory shared with an input, no autograd)."""
    if out is None:
        direct = _direct_cat(tensors, dim)
        if direct is not None:
            return direct
    result: Tensor = write_out("cat", _cat(tensors, dim), out, tensors)
    return result


def _direct_cat(tensors: Any, dim: Any) -> Tensor | None:
    """``Cat.apply``'s result (its node where an input needs grad) without the call, where
    ``_plain_cat``'s conditions hold for NumPy arrays and ``applies_directly()``: the same
    ``concatenate``, the same node; else None (the full path). A char-RNN cats per character
    (per-call cost, docs/performance.md)."""
    if (type(tensors) is not tuple and type(tensors) is not list) or type(dim) is not int:
        return None
    k = len(tensors)
    if k < 2:
        return None
    first = tensors[0]
    if not isinstance(first, Tensor):
        return None
    arr = first._data
    if type(arr) is not np.ndarray:
        return None
    shape = arr.shape
    n = len(shape)
    if not -n <= dim < n or (n == 1 and not shape[0]):
        return None
    d = dim + n if dim < 0 else dim
    head, tail = shape[:d], shape[d + 1 :]
    backend, native = first._backend, arr.dtype
    arrays = [arr]
    sizes = [shape[d]]
    needs = [False, first.requires_grad]  # Cat's arguments: dim, then the tensors
    for i in range(1, k):
        t = tensors[i]
        if not isinstance(t, Tensor) or t._backend is not backend:
            return None
        a = t._data
        s = a.shape
        if type(a) is not np.ndarray or (a.dtype is not native and a.dtype != native):
            return None
        if len(s) != n or s[:d] != head or s[d + 1 :] != tail or (n == 1 and not s[0]):
            return None
        arrays.append(a)
        sizes.append(s[d])
        needs.append(t.requires_grad)
    if not applies_directly():
        return None
    # Cat.forward's call (no arithmetic: no floating-point state to quiet)
    out = np.concatenate(arrays, axis=d)
    if True in needs and grad_mode._state.enabled:
        ctx = direct_node(Cat, backend, tuple(needs))
        ctx.dim, ctx.sizes = d, sizes
        return record_direct(ctx, (d, *tensors), [d, *arrays], out)  # type: ignore[no-any-return]
    return Tensor.from_backend_array(out, backend)


concatenate = concat = cat


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join along a new ``dim``; all tensors must have the same shape."""
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                f"and {list(t.shape)} at entry {i}"
            )
    d = normalize_dim(dim, len(shape) + 1)
    return cat([t.unsqueeze(d) for t in tensors], d)


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate along dim 1 (dim 0 for 1-D tensors)."""
    if not len(tensors):
        raise RuntimeError("hstack expects a non-empty TensorList")
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate along dim 0 (1-D tensors become rows)."""
    if not len(tensors):
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat([t.reshape(1, -1) if t.ndim == 1 else t for t in tensors], 0)


def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of size ``split_size`` (the last may be smaller) or of the listed sizes."""
    d = normalize_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    step = index_int(split_size_or_sections)
    if step is not None:
        if step <= 0 and n > 0:
            raise RuntimeError(f"split expects split_size be positive, but got split_size={step}")
        sizes = tuple(min(step, n - s) for s in range(0, n, step)) if n else (0,)
    else:
        sizes = tuple(int(s) for s in split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                f"at dimension {d}), but got split_sizes={list(sizes)}"
            )
    return _pieces(tensor, d, sizes, "Split" if step is not None
                   else "SplitWithSizes")  # fmt: skip


def _pieces(
    tensor: Tensor, d: int, sizes: tuple[int, ...], view_name: str | None
) -> tuple[Tensor, ...]:
    """``tensor`` split into pieces of ``sizes`` along ``d`` (checked), views of it."""
    arr = tensor._data
    if type(arr) is np.ndarray and unrecorded(tensor):  # no node to record: Split's own
        # slices, without its Function call (per-op cost of generation's views)
        index: list[Any] = [slice(None)] * arr.ndim
        pieces = []
        start = 0
        for s in sizes:
            index[d] = slice(start, start + s)
            pieces.append(unrecorded_view(tensor, arr[tuple(index)]))
            start += s
        return tuple(pieces)
    return Split.apply_multi(tensor, d, sizes, view_name)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``chunks`` pieces of equal size (the last may be smaller), as torch.chunk."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input.shape[normalize_dim(dim, input.ndim)]
    step = -(-n // chunks) if n else 1
    return split(input, step, dim)


def tensor_split(
    input: Tensor,  # noqa: A002
    sections: Any = None,
    dim: int = 0,
    *,
    indices: Any = None,
    tensor_indices_or_sections: Any = None,
) -> tuple[Tensor, ...]:
    """Split into ``sections`` nearly equal pieces, or at the given ``indices`` (torch's three
    overloads: ``sections``, ``indices``, ``tensor_indices_or_sections``)."""
    sections = one_of(
        "tensor_split",
        sections=sections,
        indices=indices,
        tensor_indices_or_sections=tensor_indices_or_sections,
    )
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(sections, Tensor) and sections.ndim == 0:  # torch: a 0-d tensor is a count
        sections = int(sections.item())
    if (count := index_int(sections)) is not None:
        sections = count
        q, r = divmod(n, sections)
        sizes = [q + 1] * r + [q] * (sections - r)
    else:
        bounds = [0, *[min(int(i), n) for i in sections], n]
        sizes = [max(b - a, 0) for a, b in zip(bounds, bounds[1:])]
    if sum(sizes) != n:  # a negative count: split's own error
        return split(input, sizes, d)
    return _pieces(input, d, tuple(sizes), None)  # slices in torch: changeable in place


def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """The slices along ``dim``, each without that dim."""
    d = normalize_dim(dim, input.ndim)
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if input.shape[d] == 0:
        return ()
    return Unbind.apply_multi(input, d)


def repeat(input: Tensor, repeats: Any = None, *sizes: Any) -> Tensor:  # noqa: A002
    """Tile ``input`` ``repeats[i]`` times along dim i (``Tensor.repeat``; numpy's tile):
    ``t.repeat(2, 3)``, ``t.repeat((2, 3))`` or ``t.repeat(repeats=(2, 3))``."""
    if repeats is None:
        raise TypeError("repeat() missing 1 required positional argument: 'repeats'")
    reps = shape_arg((repeats, *sizes))
    if len(reps) < input.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    a = input.reshape((1,) * (len(reps) - input.ndim) + input.shape)
    inter: list[int] = []
    expanded: list[int] = []
    for r, s in zip(reps, a.shape):
        inter += [1, s]
        expanded += [r, s]
    out_shape = tuple(r * s for r, s in zip(reps, a.shape))
    return a.reshape(tuple(inter)).expand(tuple(expanded)).reshape(out_shape)


def tile(input: Tensor, dims: Any) -> Tensor:  # noqa: A002
    """Repeat the tensor ``dims[i]`` times along each dim (missing leading dims are 1)."""
    reps = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    reps = (1,) * (input.ndim - len(reps)) + reps
    return repeat(input, reps)


def repeat_interleave(
    input: Tensor,  # noqa: A002
    repeats: Any = None,
    dim: int | None = None,
    *,
    output_size: int | None = None,
) -> Tensor:
    """Repeat each element ``repeats`` times along ``dim`` (flattened without); ``repeats`` an
    int or a tensor of one count per element. ``repeat_interleave(counts)`` alone repeats each
    index ``i`` ``counts[i]`` times."""
    if repeats is None:  # torch.repeat_interleave(repeats): the indices, repeated
        counts = input
        if counts.ndim > 1 or counts.dtype.category != dtypes.INT:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        positions = Tensor.from_backend_array(
            counts.backend.xp.arange(counts.shape[0] if counts.ndim else 1), counts.backend
        ).to(dtypes.int64)
        return repeat_interleave(positions, counts.reshape(-1), 0, output_size=output_size)
    if dim is None:
        input, dim = input.reshape(-1), 0
    d = normalize_dim(dim, input.ndim)
    if isinstance(repeats, Tensor) and repeats.numel() == 1 and repeats.ndim <= 1:
        repeats = int(repeats.item())
    if isinstance(repeats, Tensor):
        return _repeat_by_counts(input, repeats, d, output_size)
    if int(repeats) < 0:
        raise RuntimeError("repeats can not be negative")
    a = input.unsqueeze(d + 1)
    shape = list(a.shape)
    shape[d + 1] = int(repeats)
    out_shape = list(input.shape)
    out_shape[d] *= int(repeats)
    return a.expand(tuple(shape)).reshape(tuple(out_shape))


def _repeat_by_counts(input: Tensor, counts: Tensor, d: int, output_size: int | None) -> Tensor:  # noqa: A002
    """Entry ``i`` along ``d`` repeated ``counts[i]`` times: an index_select of the positions
    found by searching the running total of the counts."""
    if counts.ndim != 1 or counts.dtype.category != dtypes.INT:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if counts.shape[0] != input.shape[d]:
        raise RuntimeError(
            f"repeats must have the same size as input along dim, but got repeats.size(0) = "
            f"{counts.shape[0]} and input.size({d}) = {input.shape[d]}"
        )
    backend = counts.backend
    xp = backend.xp
    if counts.numel() and int(backend.to_numpy(xp.min(counts._data))) < 0:
        raise RuntimeError("repeats can not be negative")
    ends = xp.cumsum(counts._data)
    total = int(backend.to_numpy(ends[-1])) if counts.numel() else 0
    if output_size is not None and output_size != total:
        raise RuntimeError(f"allocated size does not match required size: {output_size} vs {total}")
    idx = xp.searchsorted(ends, xp.arange(total), side="right")
    index = Tensor.from_backend_array(backend.astype(idx, dtypes.int64), backend)
    out: Tensor = input.index_select(d, index)
    return out


class ConstantPad(Function):
    _node_name = "ConstantPadNdBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, a: Any, widths: tuple[tuple[int, int], ...], value: Any) -> Any:
        ctx.index = tuple(slice(lo, lo + s) for (lo, _), s in zip(widths, a.shape))
        return ctx.xp.pad(a, widths, mode="constant", constant_values=value)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g[ctx.index], None, None


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: Any = None) -> Tensor:  # noqa: A002
    """Pad the last ``len(pad) // 2`` dims: ``pad = (left_last, right_last, left_prev, ...)``.

    Modes: "constant" (with ``value``), "reflect", "replicate", "circular".
    """
    if len(pad) % 2:
        raise RuntimeError(f"Padding length must be divisible by 2, got {len(pad)}")
    k = len(pad) // 2
    if k > input.ndim:
        raise RuntimeError(
            f"Padding length should be at most twice the input's dims ({2 * input.ndim}), "
            f"got {len(pad)}"
        )
    if k == 0:
        return input.clone()
    widths = [(0, 0)] * (input.ndim - k) + [
        (int(pad[2 * i]), int(pad[2 * i + 1])) for i in reversed(range(k))
    ]
    if mode == "constant":
        if any(lo < 0 or hi < 0 for lo, hi in widths):
            return _negative_pad(input, widths, value)
        return ConstantPad.apply(input, tuple(widths), 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(
            f"pad mode {mode!r} is not supported; expected one of constant, reflect, replicate, "
            "circular"
        )
    if mode == "circular":
        _check_circular(widths, input.shape)
        if any(lo < 0 or hi < 0 for lo, hi in widths):
            input, widths = _crop_negative(input, widths)  # then wrap the cropped tensor
    if mode == "reflect":
        for (lo, hi), s in zip(widths, input.shape):
            if lo >= s or hi >= s:
                raise RuntimeError(
                    f"Argument #4: Padding size should be less than the corresponding input "
                    f"dimension, but got: padding ({lo}, {hi}) at dimension of size {s}"
                )
    # Gather from the flattened input: the gradient then scatter-adds back (reflected and
    # replicated positions accumulate) through getitem's backward.
    src = _padded_source_index(input.backend.xp, input.shape, widths, mode)
    return input.reshape(-1)[Tensor.from_backend_array(src, input.backend)]


def _padded_source_index(xp: Any, shape: tuple[int, ...], widths: Any, mode: str) -> Any:
    """For every position of the padded tensor, the flat index of the input element it copies
    (built from aranges, so any backend's ``xp`` can do it)."""
    flat = None
    stride = 1
    for d in reversed(range(len(shape))):
        n, (lo, hi) = shape[d], widths[d]
        i = xp.arange(-lo, n + hi)
        if mode == "replicate":
            i = xp.clip(i, 0, n - 1)
        elif mode == "circular":
            i = xp.remainder(i, n)
        elif n > 1:  # reflect about the first and last elements (period 2n - 2)
            i = xp.remainder(xp.abs(i), 2 * n - 2)
            i = xp.where(i >= n, 2 * n - 2 - i, i)
        view = [1] * len(shape)
        view[d] = n + lo + hi
        term = xp.reshape(i * stride, tuple(view))
        flat = term if flat is None else flat + term
        stride *= n
    return flat


def _check_circular(widths: list[tuple[int, int]], shape: tuple[int, ...]) -> None:
    """torch's limits: a pad wraps around at most once, and the output size is not negative."""
    for (lo, hi), s in zip(widths, shape):
        if lo > s or hi > s:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if s + lo + hi < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension.")
        if s + lo + hi > 0 and s + min(lo, 0) + min(hi, 0) <= 0:
            raise RuntimeError(f"circular padding {(lo, hi)} of a dimension of size {s}: the "
                               "negative pad leaves nothing to wrap around")  # fmt: skip


def _crop_negative(
    input: Tensor,  # noqa: A002
    widths: list[tuple[int, int]],
) -> tuple[Tensor, list[tuple[int, int]]]:
    """``input`` cut by the negative pads, and the pads that are left (each at least 0)."""
    crop = tuple(slice(-lo if lo < 0 else 0, s + hi if hi < 0 else s)
                 for (lo, hi), s in zip(widths, input.shape))  # fmt: skip
    return input[crop], [(max(lo, 0), max(hi, 0)) for lo, hi in widths]


def _negative_pad(input: Tensor, widths: list[tuple[int, int]], value: Any) -> Tensor:  # noqa: A002
    cropped, rest = _crop_negative(input, widths)
    flat = [w for lo_hi in reversed(rest) for w in lo_hi]
    return pad(cropped, flat, "constant", value)
