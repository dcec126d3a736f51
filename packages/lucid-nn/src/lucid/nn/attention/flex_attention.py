"""``lucid.nn.attention.flex_attention`` (``torch.nn.attention.flex_attention``): attention
with a user-defined score modification and mask.

``flex_attention(query, key, value, score_mod, block_mask)`` computes
``softmax(score_mod(q @ k^T * scale) masked by block_mask.mask_mod) @ v``. ``score_mod(score, b,
h, q_idx, kv_idx)`` and ``mask_mod(b, h, q_idx, kv_idx)`` are written for one element, as in
torch; lucid calls them once on the whole score matrix with broadcast index tensors ``b``
``(B, 1, 1, 1)``, ``h`` ``(1, H, 1, 1)``, ``q_idx`` ``(1, 1, L, 1)`` and ``kv_idx``
``(1, 1, 1, S)`` (int64), which gives the same values for mods written with tensor operations
and with indexing such as ``bias[h, q_idx, kv_idx]``. A mod that this call cannot serve (a
chained index ``bias[h][q_idx]``, a result with more than four dimensions) is run through
``lucid.func.vmap`` over the four indices instead, as torch runs every mod.

This is a dense reference implementation, the computation of torch's eager path: the full
``(L, S)`` score matrix of each head is materialized, the mask is applied exactly (not
rounded to blocks), and the block structure of a :class:`BlockMask` saves no work.
Gradients flow into ``query``, ``key``, ``value`` and into tensors the mods capture (a
learnable bias), on every device.

>>> import lucid
>>> from lucid.nn.attention.flex_attention import create_block_mask, flex_attention
>>> def causal(b, h, q_idx, kv_idx):
...     return q_idx >= kv_idx
>>> block_mask = create_block_mask(causal, None, None, 4, 4, BLOCK_SIZE=2)
>>> block_mask.shape
(1, 1, 4, 4)
>>> q = k = v = lucid.ones(1, 2, 4, 8)
>>> flex_attention(q, k, v, block_mask=block_mask).shape
lucid.Size([1, 2, 4, 8])
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math
import operator
import warnings
from collections.abc import Callable
from enum import Enum
from typing import Any, Literal, NamedTuple, TypedDict

import lucid
from lucid import Tensor

__all__ = [
    "AuxOutput",
    "AuxRequest",
    "BlockMask",
    "FlexKernelOptions",
    "and_masks",
    "create_block_mask",
    "create_mask",
    "flex_attention",
    "noop_mask",
    "or_masks",
]

_score_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]
_mask_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]
_Backend = Literal["AUTO", "TRITON", "FLASH", "TRITON_DECODE"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30
# torch's switch to run the uncompiled path; lucid has only that path, so it changes nothing.
_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = False

_WARNINGS_SHOWN: set[str] = set()


def _warn_once(warning_id: str, message: str, category: type[Warning] = UserWarning) -> None:
    """Warn ``message`` the first time ``warning_id`` is seen in this process."""
    if warning_id not in _WARNINGS_SHOWN:
        warnings.warn(message, category, stacklevel=3)
        _WARNINGS_SHOWN.add(warning_id)


class FlexKernelOptions(TypedDict, total=False):
    """Options of torch's FlexAttention kernels (``kernel_options=``), as torch's TypedDict.

    They tune torch's Triton/CPU kernels (block sizes, warps, the backend); lucid's dense
    computation has no such kernel and ignores them. The keys may also carry a ``fwd_`` or
    ``bwd_`` prefix, as in torch.
    """

    num_warps: int
    num_stages: int
    BLOCK_M: int
    BLOCK_N: int
    PRESCALE_QK: bool
    ROWS_GUARANTEED_SAFE: bool
    BLOCKS_ARE_CONTIGUOUS: bool
    WRITE_DQ: bool
    FORCE_USE_FLEX_ATTENTION: bool
    USE_TMA: bool
    kpack: int
    matrix_instr_nonkdim: int
    waves_per_eu: int
    BACKEND: _Backend


class AuxRequest(NamedTuple):
    """Which auxiliary outputs ``flex_attention(..., return_aux=AuxRequest(...))`` returns.

    ``lse``: the log-sum-exp of each query's (modified, masked) scores; ``max_scores``: their
    maximum. Both are natural-log scale, shape ``(B, Hq, L)``.
    """

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """The auxiliary outputs of ``flex_attention``: each field is a Tensor ``(B, Hq, L)`` when
    its :class:`AuxRequest` field was True, else None."""

    lse: Tensor | None = None
    max_scores: Tensor | None = None


class _ModificationType(Enum):
    """A score_mod (five positional arguments) or a mask_mod (four)."""

    SCORE_MOD = 1
    MASK_MOD = 2
    UNKNOWN = 3


def _get_mod_type(fn: Callable[..., Any]) -> _ModificationType:
    """A score_mod if ``fn`` takes five positional arguments without defaults, a mask_mod if
    four (torch's rule)."""
    if hasattr(fn, "__code__"):
        code = fn.__code__
        defaults = getattr(fn, "__defaults__", None) or ()
        num_positional_args = code.co_argcount - len(defaults)
    else:
        num_positional_args = sum(
            1
            for param in inspect.signature(fn).parameters.values()
            if param.default is inspect.Parameter.empty
        )
    if num_positional_args not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {num_positional_args}")
    return _ModificationType.SCORE_MOD if num_positional_args == 5 else _ModificationType.MASK_MOD


def _identity(
    score: Tensor, batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor
) -> Tensor:
    """The score_mod that changes nothing."""
    return score


def noop_mask(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor) -> Tensor:
    """The mask_mod that masks nothing: a scalar ``True`` (``torch.nn.attention.flex_attention``'s
    ``noop_mask``)."""
    return lucid.ones((), dtype=lucid.bool, device=batch.device)


def _sliced_mask_mod_error(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor) -> Any:
    """The mask_mod of a sliced BlockMask: calling it raises (torch's message)."""
    raise RuntimeError(
        "Cannot use mask_mod from a sliced BlockMask. "
        "When you slice a BlockMask using [], the mask_mod attribute is reset. "
        "You must set it from the original BlockMask's mask_mod."
        "\n\nIncorrect usage:"
        "\n  base_mask = create_block_mask(my_mask_fn, ...)"
        "\n  sliced_mask = base_mask[:, :, block_idx]"
        "\n  sliced_mask.mask_mod = apply_offset(sliced_mask.mask_mod, offset)  # WRONG!"
        "\n\nCorrect usage:"
        "\n  base_mask = create_block_mask(my_mask_fn, ...)"
        "\n  sliced_mask = base_mask[:, :, block_idx]"
        "\n  sliced_mask.mask_mod = apply_offset(base_mask.mask_mod, offset)  # Use base_mask!"
    )


# -- calling the mods on every (b, h, q_idx, kv_idx) ------------------------------------------


def _broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether a result of ``shape`` is one value per element of ``target`` (broadcastable)."""
    if len(shape) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(reversed(shape), reversed(target), strict=False))


def _call_mod(
    fn: Callable[..., Any],
    score: Tensor | None,
    sizes: tuple[int, int, int, int],
    device: Any,
) -> Tensor:
    """``fn`` (a score_mod when ``score`` is given, else a mask_mod) at every
    ``(b, h, q_idx, kv_idx)`` of ``sizes``: a Tensor broadcastable to ``sizes``.

    First one call with broadcast int64 index tensors (``b`` ``(B,1,1,1)``, ...); a mod that
    raises there or returns a value that is not one per element runs through ``vmap`` over
    the four indices, as torch runs it."""
    idx = [lucid.arange(n, device=device) for n in sizes]
    prefix = () if score is None else (score,)
    shaped = [
        i.view(*[n if d == k else 1 for d in range(4)])
        for k, (i, n) in enumerate(zip(idx, sizes, strict=True))
    ]
    try:
        out = fn(*prefix, *shaped)
        if not isinstance(out, Tensor):
            out = lucid.tensor(out, device=device)
        if _broadcasts_to(tuple(out.shape), sizes):
            return out
        first: Exception = ValueError(
            f"the mod returned shape {tuple(out.shape)} for scores of shape {sizes}"
        )
    except Exception as exc:  # the mod needs one element at a time: vmap it below
        first = exc
    from lucid.func import vmap

    mapped = fn
    score_dims: tuple[int | None, ...] = () if score is None else (0,)
    for dims in (
        (None, None, None, 0),
        (None, None, 0, None),
        (None, 0, None, None),
        (0, None, None, None),
    ):
        mapped = vmap(mapped, in_dims=score_dims + dims)
    try:
        out = mapped(*prefix, *idx)
    except Exception as exc:
        raise exc from first
    if not isinstance(out, Tensor):
        out = lucid.tensor(out, device=device)
    return out


# -- the block-sparse layout -------------------------------------------------------------------


def _ordered_to_dense(num_blocks_in_row: Tensor, col_indices: Tensor, num_cols: int) -> Tensor:
    """The int32 ``(..., ROWS, num_cols)`` 0/1 block map of ``(num_blocks_in_row, col_indices)``:
    row ``r`` holds ones at ``col_indices[r, :num_blocks_in_row[r]]``."""
    max_entries = col_indices.shape[-1]
    device = col_indices.device
    counts = num_blocks_in_row.unsqueeze(-1).to(lucid.int64)
    valid = lucid.arange(max_entries, device=device) < counts
    cols = lucid.arange(num_cols, device=device)
    hit = (col_indices.to(lucid.int64).unsqueeze(-1) == cols) & valid.unsqueeze(-1)
    return hit.any(dim=-2).to(lucid.int32)


def _dense_to_ordered(dense_mask: Tensor) -> tuple[Tensor, Tensor]:
    """``(num_blocks_in_row, col_indices)`` (int32) of a 0/1 block map: each row's present
    columns first, in ascending order."""
    dense_mask = dense_mask.to(lucid.int32)
    num_blocks_in_row = dense_mask.sum(dim=-1).to(lucid.int32)
    col_indices = lucid.argsort(dense_mask, dim=-1, descending=True, stable=True)
    return num_blocks_in_row, col_indices.to(lucid.int32)


def _transpose_ordered(num_blocks_in_row: Tensor, col_indices: Tensor) -> tuple[Tensor, Tensor]:
    """The ordered layout of the transposed block map (the q blocks of each kv block)."""
    dense = _ordered_to_dense(num_blocks_in_row, col_indices, col_indices.shape[-1])
    return _dense_to_ordered(dense.transpose(-2, -1))


def _adjust_num_blocks_and_indices(
    num_blocks: Tensor, indices: Tensor, new_num_rows: int, new_num_cols: int
) -> tuple[Tensor, Tensor]:
    """The ordered layout cropped to its first ``new_num_rows`` rows and ``new_num_cols``
    columns (torch's ``_adjust``)."""
    indices = indices[:, :, :new_num_rows, :new_num_cols]
    num_blocks = num_blocks[:, :, :new_num_rows]
    num_blocks = lucid.where(num_blocks < new_num_cols, num_blocks, new_num_cols)
    num_blocks = (indices < num_blocks[:, :, :, None]).sum(dim=-1).to(lucid.int32)
    return num_blocks, indices


def _shape_or_none(x: Tensor | None) -> Any:
    """``x.shape``, or None."""
    return x.shape if x is not None else None


class BlockMask:
    r"""A block-sparse attention mask in torch's layout (``torch...flex_attention.BlockMask``).

    The mask is cut into ``BLOCK_SIZE = (Q_BLOCK_SIZE, KV_BLOCK_SIZE)`` tiles. For each batch,
    head and query block row, ``kv_num_blocks`` counts the kv blocks with something to attend
    and ``kv_indices`` lists them first; ``full_kv_num_blocks``/``full_kv_indices`` do the same
    for the blocks that are entirely unmasked (those then leave the partial lists), and the
    ``q_*`` tensors are the transposed layout. ``mask_mod`` is the element-level mask,
    ``seq_lengths`` the ``(Q_LEN, KV_LEN)`` it was made for.

    Lucid's ``flex_attention`` computes densely, as torch's CPU path: it applies ``mask_mod``
    at every element and the block layout saves no work (a mask that :meth:`from_kv_blocks`
    builds with no ``mask_mod`` masks nothing there; torch's GPU kernels skip its absent
    blocks). The attributes, ``shape``, ``sparsity()``,
    ``to_dense()``, indexing and printing read as torch's.
    """

    seq_lengths: tuple[int, int]
    kv_num_blocks: Tensor
    kv_indices: Tensor
    full_kv_num_blocks: Tensor | None
    full_kv_indices: Tensor | None
    q_num_blocks: Tensor | None
    q_indices: Tensor | None
    full_q_num_blocks: Tensor | None
    full_q_indices: Tensor | None
    dq_write_order: Tensor | None
    dq_write_order_full: Tensor | None
    dq_kv_order: Tensor | None
    dq_kv_order_spt: bool | None
    BLOCK_SIZE: tuple[int, int]
    mask_mod: _mask_mod_signature

    _TENSOR_ATTRS = [
        "kv_num_blocks",
        "kv_indices",
        "full_kv_num_blocks",
        "full_kv_indices",
        "q_num_blocks",
        "q_indices",
        "full_q_num_blocks",
        "full_q_indices",
        "dq_write_order",
        "dq_write_order_full",
        "dq_kv_order",
    ]
    _CONTEXT_ATTRS = ["seq_lengths", "BLOCK_SIZE", "mask_mod", "dq_kv_order_spt"]

    def __init__(
        self,
        seq_lengths: tuple[int, int],
        kv_num_blocks: Tensor,
        kv_indices: Tensor,
        full_kv_num_blocks: Tensor | None,
        full_kv_indices: Tensor | None,
        q_num_blocks: Tensor | None,
        q_indices: Tensor | None,
        full_q_num_blocks: Tensor | None,
        full_q_indices: Tensor | None,
        BLOCK_SIZE: tuple[int, int] = (_DEFAULT_SPARSE_BLOCK_SIZE, _DEFAULT_SPARSE_BLOCK_SIZE),
        mask_mod: _mask_mod_signature = noop_mask,
        *,
        dq_write_order: Tensor | None = None,
        dq_write_order_full: Tensor | None = None,
        dq_kv_order: Tensor | None = None,
        dq_kv_order_spt: bool | None = None,
    ) -> None:
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if kv_num_blocks is None:
            raise AssertionError("kv_num_blocks must be provided")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError(
                "full_kv_num_blocks and full_kv_indices must be both provided or omitted"
            )
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError(
                "full_q_num_blocks and full_q_indices must be both provided or omitted"
            )
        if dq_write_order_full is not None and dq_write_order is None:
            raise ValueError("dq_write_order_full requires dq_write_order")
        self.seq_lengths = seq_lengths
        self.kv_num_blocks = kv_num_blocks
        self.kv_indices = kv_indices
        self.full_kv_num_blocks = full_kv_num_blocks
        self.full_kv_indices = full_kv_indices
        self.q_num_blocks = q_num_blocks
        self.q_indices = q_indices
        self.full_q_num_blocks = full_q_num_blocks
        self.full_q_indices = full_q_indices
        self.dq_write_order = dq_write_order
        self.dq_write_order_full = dq_write_order_full
        self.dq_kv_order = dq_kv_order
        self.dq_kv_order_spt = dq_kv_order_spt
        self.BLOCK_SIZE = BLOCK_SIZE
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(
        cls,
        kv_num_blocks: Tensor,
        kv_indices: Tensor,
        full_kv_num_blocks: Tensor | None = None,
        full_kv_indices: Tensor | None = None,
        BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
        mask_mod: _mask_mod_signature | None = None,
        seq_lengths: tuple[int, int] | None = None,
        compute_q_blocks: bool = True,
        *,
        dq_write_order: Tensor | None = None,
        dq_write_order_full: Tensor | None = None,
        dq_kv_order: Tensor | bool | None = None,
    ) -> BlockMask:
        """A BlockMask from its kv block layout; the ``q_*`` tensors are derived from it
        (when ``compute_q_blocks``) and ``seq_lengths`` defaults to the blocks' extent.

        ``flex_attention`` masks with ``mask_mod`` alone (default: nothing masked), as torch's
        CPU path does; torch's compiled GPU kernels also skip the blocks outside the layout.
        """
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError(
                "full_kv_num_blocks and full_kv_indices must be both provided or omitted"
            )
        q_num_blocks = q_indices = full_q_num_blocks = full_q_indices = None
        if compute_q_blocks:
            q_num_blocks, q_indices = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None and full_kv_indices is not None:
                full_q_num_blocks, full_q_indices = _transpose_ordered(
                    full_kv_num_blocks, full_kv_indices
                )
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (
                kv_indices.shape[-2] * BLOCK_SIZE[0],
                kv_indices.shape[-1] * BLOCK_SIZE[1],
            )
        if dq_kv_order is not None and not isinstance(dq_kv_order, bool | Tensor):
            raise ValueError("dq_kv_order must be a bool, Tensor, or None")
        return cls(
            seq_lengths=seq_lengths,
            kv_num_blocks=kv_num_blocks,
            kv_indices=kv_indices,
            full_kv_num_blocks=full_kv_num_blocks,
            full_kv_indices=full_kv_indices,
            q_num_blocks=q_num_blocks,
            q_indices=q_indices,
            full_q_num_blocks=full_q_num_blocks,
            full_q_indices=full_q_indices,
            BLOCK_SIZE=BLOCK_SIZE,
            mask_mod=mask_mod if mask_mod is not None else noop_mask,
            dq_write_order=dq_write_order,
            dq_write_order_full=dq_write_order_full,
            dq_kv_order=dq_kv_order if isinstance(dq_kv_order, Tensor) else None,
            dq_kv_order_spt=dq_kv_order if isinstance(dq_kv_order, bool) else None,
        )

    def as_tuple(self, flatten: bool = True) -> tuple[Any, ...]:
        """The attributes as a tuple, in torch's order; ``flatten=True`` spreads
        ``seq_lengths`` and ``BLOCK_SIZE`` into their two ints."""
        seq_lengths: tuple[Any, ...] = (self.seq_lengths,)
        block_size: tuple[Any, ...] = (self.BLOCK_SIZE,)
        if flatten:
            seq_lengths = tuple(self.seq_lengths)
            block_size = tuple(self.BLOCK_SIZE)
        return (
            *seq_lengths,
            self.kv_num_blocks,
            self.kv_indices,
            self.full_kv_num_blocks,
            self.full_kv_indices,
            self.q_num_blocks,
            self.q_indices,
            self.full_q_num_blocks,
            self.full_q_indices,
            self.dq_write_order,
            self.dq_write_order_full,
            self.dq_kv_order,
            self.dq_kv_order_spt,
            *block_size,
            self.mask_mod,
        )

    @property
    def shape(self) -> tuple[int, ...]:
        """``(*batch_dims, Q_LEN, KV_LEN)``: the batch and head sizes the mask was made for,
        then ``seq_lengths``."""
        return tuple(self.kv_indices.shape[:-2]) + tuple(self.seq_lengths)

    def __str__(self) -> str:
        s = f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n"
        s += self.to_string().strip()
        s += "\n)"
        return s

    def __getitem__(self, index: Any) -> BlockMask:
        """The BlockMask of the batches, heads and query block rows ``index`` selects (an int
        keeps its dimension, as torch's). Its ``mask_mod`` raises: set it from the unsliced
        mask."""
        if self.dq_kv_order is not None:
            raise NotImplementedError(
                "Slicing BlockMask with tensor dq_kv_order is not supported yet. "
                "Construct a new BlockMask with matching precomputed dq_write_order metadata."
            )
        index = (index,) if not isinstance(index, tuple) else index
        padded = (*index, slice(None), slice(None), slice(None))[:3]
        sizes = self.kv_num_blocks.shape[:3]
        index = tuple(
            (slice(i + n, i + n + 1) if -n <= i < 0 else slice(i, i + 1))
            if isinstance(i, int)
            else i
            for i, n in zip(padded, sizes, strict=False)
        )
        full_num = full_idx = None
        if self.full_kv_num_blocks is not None and self.full_kv_indices is not None:
            full_num = self.full_kv_num_blocks[index]
            full_idx = self.full_kv_indices[index]
        new = BlockMask.from_kv_blocks(
            self.kv_num_blocks[index],
            self.kv_indices[index],
            full_num,
            full_idx,
            BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=_sliced_mask_mod_error,
            seq_lengths=self.seq_lengths,
            compute_q_blocks=self.q_indices is not None,
        )
        new.dq_kv_order_spt = self.dq_kv_order_spt
        return new

    def __repr__(self) -> str:
        name = getattr(self.mask_mod, "__name__", self.mask_mod)
        return (
            f"BlockMask(\n"
            f"    kv_num_blocks={self.kv_num_blocks.shape},\n"
            f"    kv_indices={self.kv_indices.shape},\n"
            f"    full_kv_num_blocks={_shape_or_none(self.full_kv_num_blocks)},\n"
            f"    full_kv_indices={_shape_or_none(self.full_kv_indices)},\n"
            f"    q_num_blocks={_shape_or_none(self.q_num_blocks)},\n"
            f"    q_indices={_shape_or_none(self.q_indices)},\n"
            f"    full_q_num_blocks={_shape_or_none(self.full_q_num_blocks)},\n"
            f"    full_q_indices={_shape_or_none(self.full_q_indices)},\n"
            f"    BLOCK_SIZE={self.BLOCK_SIZE},\n"
            f"    shape={self.shape},\n"
            f"    sparsity={self.sparsity():.2f}%,\n"
            f"    mask_mod={name}\n"
            f")"
        )

    def _adjust(self, new_q_len: int, new_kv_len: int) -> BlockMask:
        """The mask cropped to its upper-left ``(new_q_len, new_kv_len)`` (torch's
        ``_adjust``: right for masks that do not depend on the lengths, as causal)."""
        new_num_rows = (new_q_len + self.BLOCK_SIZE[0] - 1) // self.BLOCK_SIZE[0]
        new_num_cols = (new_kv_len + self.BLOCK_SIZE[1] - 1) // self.BLOCK_SIZE[1]
        kv_num, kv_idx = _adjust_num_blocks_and_indices(
            self.kv_num_blocks, self.kv_indices, new_num_rows, new_num_cols
        )
        full_num = full_idx = None
        if self.full_kv_num_blocks is not None and self.full_kv_indices is not None:
            full_num, full_idx = _adjust_num_blocks_and_indices(
                self.full_kv_num_blocks, self.full_kv_indices, new_num_rows, new_num_cols
            )
        new = self.from_kv_blocks(
            kv_num,
            kv_idx,
            full_num,
            full_idx,
            BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=self.mask_mod,
            seq_lengths=(new_q_len, new_kv_len),
            compute_q_blocks=self.q_indices is not None,
        )
        new.dq_kv_order_spt = self.dq_kv_order_spt
        return new

    def numel(self) -> int:
        """The number of elements of the mask (``prod(shape)``), ignoring sparsity."""
        return functools.reduce(operator.mul, self.shape, 1)

    def sparsity(self) -> float:
        """The percentage of the mask's blocks that hold nothing to attend (not computed by
        a block-sparse kernel)."""
        computed = int(self.kv_num_blocks.to(lucid.int64).sum().item())
        if self.full_kv_num_blocks is not None:
            computed += int(self.full_kv_num_blocks.to(lucid.int64).sum().item())
        computed_size = computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - computed_size / self.numel())

    def to_dense(self) -> Tensor:
        """The int32 block map ``(*batch_dims, Q_BLOCKS, KV_BLOCKS)``: 1 where a block (partial
        or full) has something to attend."""
        dense = _ordered_to_dense(self.kv_num_blocks, self.kv_indices, self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None and self.full_kv_indices is not None:
            full = _ordered_to_dense(
                self.full_kv_num_blocks, self.full_kv_indices, self.full_kv_indices.shape[-1]
            )
            return dense | full
        return dense

    def to_string(self, grid_size: int | tuple[int, int] = (20, 20), limit: int = 4) -> str:
        """The block map drawn as text (``█`` full, ``░`` partial, blank empty) for the first
        ``limit`` batch/head pairs, on at most ``grid_size`` characters (-1: every block)."""
        dense_mask = self.to_dense()
        *batch_dims, num_rows, num_cols = dense_mask.shape
        if isinstance(grid_size, int) and grid_size == -1:
            max_rows, max_cols = num_rows, num_cols
        elif isinstance(grid_size, int):
            max_rows = max_cols = grid_size
        else:
            max_rows, max_cols = grid_size
        row_step = max(1, -(-num_rows // max_rows))
        col_step = max(1, -(-num_cols // max_cols))

        def summarize(section: Tensor) -> str:
            percentage = section.to(lucid.float32).mean().item()
            return "█" if percentage == 1 else (" " if percentage == 0 else "░")

        total_vis = []
        for idx, batch_idx in enumerate(itertools.product(*[range(i) for i in batch_dims])):
            if idx == limit:
                total_vis.append("...")
                total_vis.append("To print out more, set BlockMask.to_string(limit=N)")
                total_vis.append(
                    "You can also index (BlockMask[batch, head]) to choose a specific batch or head"
                )
                break
            cur = dense_mask
            for i in batch_idx:
                cur = cur[i]
            vis = f"{batch_idx}\n"
            for r in range(0, num_rows, row_step):
                for c in range(0, num_cols, col_step):
                    vis += summarize(cur[r : r + row_step, c : c + col_step]) * 2
                vis += "\n"
            total_vis.append(vis)
        return "\n".join(total_vis)

    def to(self, device: Any) -> BlockMask:
        """A new BlockMask with its tensors on ``device``."""

        def move(x: Tensor | None) -> Tensor | None:
            return x.to(device) if x is not None else None

        kv_num_blocks, kv_indices = self.kv_num_blocks.to(device), self.kv_indices.to(device)
        new = BlockMask(
            self.seq_lengths,
            kv_num_blocks,
            kv_indices,
            move(self.full_kv_num_blocks),
            move(self.full_kv_indices),
            move(self.q_num_blocks),
            move(self.q_indices),
            move(self.full_q_num_blocks),
            move(self.full_q_indices),
            BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=self.mask_mod,
            dq_write_order=move(self.dq_write_order),
            dq_write_order_full=move(self.dq_write_order_full),
            dq_kv_order=move(self.dq_kv_order),
            dq_kv_order_spt=self.dq_kv_order_spt,
        )
        return new


def _broadcast_to_dim(x: Tensor, dim: int) -> Tensor:
    """``x`` with leading size-1 dimensions up to ``dim`` dimensions."""
    while x.dim() < dim:
        x = x.unsqueeze(0)
    return x


def _convert_mask_to_block_mask(
    mask: Tensor,
    Q_BLOCK_SIZE: int = _DEFAULT_SPARSE_BLOCK_SIZE,
    KV_BLOCK_SIZE: int = _DEFAULT_SPARSE_BLOCK_SIZE,
    separate_full_blocks: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """The int8 block maps ``(B, H, Q_BLOCKS, KV_BLOCKS)`` of a bool element mask: partial
    blocks (any True; only the not-full ones when ``separate_full_blocks``) and full blocks."""
    if mask.dtype != lucid.bool:
        raise AssertionError(f"mask.dtype must be lucid.bool, got {mask.dtype}")
    mask = _broadcast_to_dim(mask, 4)
    pad_kv = -mask.shape[-1] % KV_BLOCK_SIZE
    pad_q = -mask.shape[-2] % Q_BLOCK_SIZE
    if pad_kv or pad_q:
        from lucid.nn.functional import pad

        mask = pad(mask, (0, pad_kv, 0, pad_q))
    B, H, Q, KV = mask.shape
    blocks = mask.reshape(B, H, Q // Q_BLOCK_SIZE, Q_BLOCK_SIZE, KV // KV_BLOCK_SIZE, KV_BLOCK_SIZE)
    block_sum = blocks.to(lucid.int64).sum(dim=(3, 5))
    if separate_full_blocks:
        full_size = Q_BLOCK_SIZE * KV_BLOCK_SIZE
        full = block_sum == full_size
        partial = (block_sum > 0) & (block_sum < full_size)
        return partial.to(lucid.int8), full.to(lucid.int8)
    return (block_sum > 0).to(lucid.int8), None


def _create_sparse_block_from_block_mask(
    block_mask: tuple[Tensor, Tensor | None],
    mask_mod: _mask_mod_signature | None,
    seq_lengths: tuple[int, int],
    Q_BLOCK_SIZE: int = _DEFAULT_SPARSE_BLOCK_SIZE,
    KV_BLOCK_SIZE: int = _DEFAULT_SPARSE_BLOCK_SIZE,
) -> BlockMask:
    """The BlockMask of partial and full block maps."""
    partial_blocks, full_blocks = block_mask
    partial_num, partial_idx = _dense_to_ordered(partial_blocks)
    full_num = full_idx = None
    if full_blocks is not None:
        full_num, full_idx = _dense_to_ordered(full_blocks)
    return BlockMask.from_kv_blocks(
        partial_num,
        partial_idx,
        full_num,
        full_idx,
        BLOCK_SIZE=(Q_BLOCK_SIZE, KV_BLOCK_SIZE),
        mask_mod=mask_mod,
        seq_lengths=seq_lengths,
    )


def or_masks(*mask_mods: _mask_mod_signature) -> _mask_mod_signature:
    """The mask_mod that attends where any of ``mask_mods`` does (their union)."""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        result = lucid.zeros((), dtype=lucid.bool, device=b.device)
        for mask in mask_mods:
            result = result | mask(b, h, q_idx, kv_idx)
        return result

    return or_mask


def and_masks(*mask_mods: _mask_mod_signature) -> _mask_mod_signature:
    """The mask_mod that attends where all of ``mask_mods`` do (their intersection)."""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        result = lucid.ones((), dtype=lucid.bool, device=b.device)
        for mask in mask_mods:
            result = result & mask(b, h, q_idx, kv_idx)
        return result

    return and_mask


def create_mask(
    mod_fn: _score_mod_signature | _mask_mod_signature,
    B: int | None,
    H: int | None,
    Q_LEN: int,
    KV_LEN: int,
    device: Any = None,
) -> Tensor:
    """The dense bool mask ``(B, H, Q_LEN, KV_LEN)`` of a mask_mod (its value at every
    element) or of a score_mod (False where it gives ``-inf`` for a zero score).

    ``B`` and ``H`` default to 1; ``device`` to lucid's default device.

    >>> create_mask(lambda b, h, q, kv: q >= kv, None, None, 2, 2).tolist()
    [[[[True, False], [True, True]]]]
    """
    B = 1 if B is None else B
    H = 1 if H is None else H
    sizes = (B, H, Q_LEN, KV_LEN)
    if _get_mod_type(mod_fn) == _ModificationType.SCORE_MOD:
        out = _call_mod(mod_fn, lucid.zeros(*sizes, device=device), sizes, device)
        return ~lucid.isneginf(out.expand(*sizes))
    mask = _call_mod(mod_fn, None, sizes, device)
    return mask.to(lucid.bool).expand(*sizes).contiguous()


def create_block_mask(
    mask_mod: _mask_mod_signature,
    B: int | None,
    H: int | None,
    Q_LEN: int,
    KV_LEN: int,
    device: Any = None,
    BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
    _compile: bool = False,
    separate_full_blocks: bool = True,
    compute_dq_write_order: bool = False,
    dq_kv_order: bool = True,
) -> BlockMask:
    """The :class:`BlockMask` of ``mask_mod(b, h, q_idx, kv_idx)`` (True = attend) for
    ``B`` batches and ``H`` heads (None: 1, broadcast over all) of ``Q_LEN`` queries and
    ``KV_LEN`` keys, cut into ``BLOCK_SIZE`` tiles (an int, or ``(Q_BLOCK, KV_BLOCK)``).

    The mask is evaluated densely once; the block layout summarizes it as torch's does
    (full blocks kept apart when ``separate_full_blocks``). ``_compile`` (torch's deprecated
    compile switch) and the deterministic-backward options ``compute_dq_write_order`` and
    ``dq_kv_order`` change nothing in lucid.

    >>> bm = create_block_mask(lambda b, h, q, kv: q >= kv, 1, 1, 256, 256)
    >>> bm.kv_num_blocks.tolist(), bm.full_kv_num_blocks.tolist()
    ([[[1, 1]]], [[[0, 1]]])
    """
    if _get_mod_type(mask_mod) != _ModificationType.MASK_MOD:
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    if not isinstance(dq_kv_order, bool):
        raise ValueError("dq_kv_order must be a bool when using create_block_mask")
    B = 1 if B is None else B
    H = 1 if H is None else H
    if isinstance(BLOCK_SIZE, int):
        q_block = kv_block = BLOCK_SIZE
    else:
        q_block, kv_block = BLOCK_SIZE
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    partial, full = _convert_mask_to_block_mask(
        mask,
        Q_BLOCK_SIZE=q_block,
        KV_BLOCK_SIZE=kv_block,
        separate_full_blocks=separate_full_blocks,
    )
    block_mask = _create_sparse_block_from_block_mask(
        (partial, full), mask_mod, (Q_LEN, KV_LEN), q_block, kv_block
    )
    if compute_dq_write_order:
        block_mask.dq_kv_order_spt = dq_kv_order
    return block_mask


def _create_empty_block_mask(query: Tensor, key: Tensor) -> BlockMask:
    """The block mask of "no mask": one block covering everything (torch's default)."""
    device = query.device
    return BlockMask.from_kv_blocks(
        kv_num_blocks=lucid.ones(1, 1, 1, dtype=lucid.int32, device=device),
        kv_indices=lucid.zeros(1, 1, 1, 1, dtype=lucid.int32, device=device),
        BLOCK_SIZE=_LARGE_SPARSE_BLOCK_SIZE,
        seq_lengths=(1, 1),
    )


# -- flex_attention ----------------------------------------------------------------------------


def _check_block_mask_lengths(block_mask: BlockMask, L: int, S: int) -> None:
    """torch's errors for a block mask made for other lengths than the query's and key's."""
    if block_mask.BLOCK_SIZE == (_LARGE_SPARSE_BLOCK_SIZE, _LARGE_SPARSE_BLOCK_SIZE):
        return
    mask_q, mask_kv = block_mask.shape[-2], block_mask.shape[-1]
    if L > mask_q or S > mask_kv:
        raise ValueError(
            f"block_mask was created for block_mask.shape={block_mask.shape} but got "
            f"q_len={L} and kv_len={S}. As the block mask was created for a smaller length "
            "than you're using it for, you likely need to create a new block mask."
        )
    if L < mask_q or S < mask_kv:
        raise ValueError(
            f"block_mask was created for block_mask.shape={block_mask.shape} but got "
            f"q_len={L} and kv_len={S}. As the block mask was created for a larger length "
            "than you're using it for, you can either 1. create a new block mask with the "
            "correct length, or 2. 'adjust' the existing block mask to the correct length by "
            "calling block_mask._adjust(q_len, kv_len). This essentially 'crops' the block mask "
            "to the upper left corner, which does not work for all mask_mods!"
        )


def flex_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    score_mod: _score_mod_signature | None = None,
    block_mask: BlockMask | None = None,
    scale: float | None = None,
    enable_gqa: bool = False,
    return_lse: bool = False,
    kernel_options: FlexKernelOptions | None = None,
    *,
    return_aux: AuxRequest | None = None,
) -> Any:
    r"""Scaled dot-product attention with a score modification and a mask
    (``torch.nn.attention.flex_attention.flex_attention``).

    ``query`` ``(B, Hq, L, E)``, ``key`` ``(B, Hkv, S, E)``, ``value`` ``(B, Hkv, S, Ev)``.
    The scores ``query @ key^T * scale`` (``scale`` defaults to ``1/sqrt(E)``) pass through
    ``score_mod(score, b, h, q_idx, kv_idx)``; where ``block_mask.mask_mod(b, h, q_idx,
    kv_idx)`` is False they become ``-inf``; the softmax over the keys weights ``value``. A
    query that attends no key gets a zero output (and ``-inf`` log-sum-exp), as torch's.
    ``h`` is the query head. With ``enable_gqa`` each group of ``Hq // Hkv`` query heads
    shares one key/value head. A key/value batch of 1 broadcasts over a query batch given a
    ``block_mask`` of the query's batch.

    Scores are computed in float32 (float64 for float64 inputs); the output has the query's
    dtype. ``return_aux=AuxRequest(lse=True, max_scores=True)`` returns ``(out,
    AuxOutput(lse, max_scores))``, each ``(B, Hq, L)`` in natural-log scale; the deprecated
    ``return_lse=True`` returns ``(out, lse)``. ``kernel_options`` tunes torch's fused
    kernels and is ignored: lucid computes densely (memory ``O(L * S)`` per head), which is
    what torch's uncompiled path does.

    >>> import lucid
    >>> q = k = v = lucid.ones(1, 1, 3, 4)
    >>> out, aux = flex_attention(q, k, v, return_aux=AuxRequest(lse=True))
    >>> out.shape, aux.lse.shape
    (lucid.Size([1, 1, 3, 4]), lucid.Size([1, 1, 3]))
    """
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if query.dtype != key.dtype or query.dtype != value.dtype:
        raise ValueError(
            "Expected query, key, and value to have the same dtype, but got "
            f"query.dtype: {query.dtype}, key.dtype: {key.dtype}, and value.dtype: {value.dtype}"
        )
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"Expect query and key/value to have the same embedding dimension "
            f"but got E={query.shape[-1]} and E={key.shape[-1]}."
        )
    B, Hq, L, _E = query.shape
    Bkv, Hkv, S, _ = key.shape
    if value.shape[:3] != key.shape[:3]:
        raise ValueError(
            f"Expect key and value to have the same batch, heads and length, but got "
            f"key {tuple(key.shape)} and value {tuple(value.shape)}."
        )
    if not enable_gqa and Hq != Hkv:
        raise ValueError(
            f"Expect query and key/value to have the same number of heads "
            f"but got Hq={Hq} and Hkv={Hkv}. Try setting enable_gqa=True for GQA."
        )
    if enable_gqa and Hq % Hkv != 0:
        raise ValueError(
            f"Expect number of query heads to be a multiple of kv heads for GQA "
            f"but got Hq={Hq} and Hkv={Hkv}."
        )
    if B != Bkv:
        if block_mask is None:
            raise ValueError(
                f"Expect query and key/value to have the same batch size, or non-none "
                f"block_mask, but got block_mask=None, Bq={B}, and Bkv={Bkv}."
            )
        if block_mask.kv_num_blocks.shape[0] != B:
            raise ValueError(
                f"Expect query and key/value to have the same batch size, or block_mask and "
                f"query to have the same batch size, but got Bq={B}, Bkv={Bkv}, "
                f"B_block_mask={block_mask.kv_num_blocks.shape[0]}."
            )
        if Bkv != 1:
            raise RuntimeError(f"Bq and Bkv must broadcast. Got Bq={B} and Bkv={Bkv}")
    if block_mask is not None:
        if getattr(block_mask, "mask_mod", None) is _sliced_mask_mod_error:
            raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
        _check_block_mask_lengths(block_mask, L, S)
        if query.device != block_mask.kv_num_blocks.device:
            raise RuntimeError(
                f"Expect q/k/v and block_mask to be on the same device but got "
                f"{query.device} and {block_mask.kv_num_blocks.device}."
            )
    if return_lse and return_aux is not None:
        raise ValueError(
            "Cannot specify both return_lse and return_aux. return_lse is deprecated, "
            "please use return_aux=AuxRequest(lse=True) instead."
        )
    if return_lse:
        _warn_once(
            "deprecated_return_lse",
            "return_lse is deprecated and will be removed in v2.10. "
            "Please use return_aux=AuxRequest(lse=True) instead.",
            category=FutureWarning,
        )
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])

    device = query.device
    sizes = (B, Hq, L, S)
    work = lucid.float64 if query.dtype == lucid.float64 else lucid.float32
    # GQA without copying key/value: query heads (Hkv, G) meet their shared key head.
    G = Hq // Hkv
    q5 = query.to(work).reshape(B, Hkv, G, L, query.shape[-1])
    k5 = key.to(work).unsqueeze(2)
    scores = (q5 @ k5.transpose(-2, -1)).reshape(*sizes) * scale

    if score_mod is not None and score_mod is not _identity:
        scores = _call_mod(score_mod, scores, sizes, device).to(work)

    allowed: Tensor | None = None
    if block_mask is not None and block_mask.mask_mod is not noop_mask:
        allowed = _call_mod(block_mask.mask_mod, None, sizes, device).to(lucid.bool)
    if allowed is not None:
        neg_inf = lucid.tensor(float("-inf"), dtype=work, device=device)
        scores = lucid.where(allowed, scores, neg_inf)
    if tuple(scores.shape) != sizes:
        scores = scores.expand(*sizes)

    # A softmax that gives zeros (not NaN) to a row with nothing to attend, and a log-sum-exp
    # of -inf there; the max is detached (the result does not depend on it).
    row_max = scores.amax(dim=-1, keepdim=True)
    empty = lucid.isneginf(row_max.detach())
    shift = lucid.where(empty, 0.0, row_max.detach())
    exp = lucid.exp(scores - shift)
    total = exp.sum(dim=-1, keepdim=True)
    total = lucid.where(empty, 1.0, total)
    probs = exp / total

    out = probs.to(query.dtype).reshape(B, Hkv, G, L, S) @ value.to(query.dtype).unsqueeze(2)
    out = out.reshape(B, Hq, L, value.shape[-1])

    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    want_max = return_aux is not None and return_aux.max_scores
    lse = max_scores = None
    if want_lse:
        lse = lucid.where(empty, float("-inf"), lucid.log(total) + shift).squeeze(-1)
    if want_max:
        max_scores = row_max.squeeze(-1)
    if return_aux is not None:
        return out, AuxOutput(lse=lse, max_scores=max_scores)
    if return_lse:
        return out, lse
    return out
