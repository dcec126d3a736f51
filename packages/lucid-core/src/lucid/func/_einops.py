"""``lucid.func.rearrange``: ``torch.func.rearrange`` (functorch's einops-style ``rearrange``).

torch parses the pattern (einops's grammar, ported from einops's ``parsing.py``; MIT License,
Copyright (c) 2018 Alex Rogozhnikov) and runs it over first-class dimensions: the left side
indexes the tensor with dimension packs (binding every axis to a size, inferring at most one
per pack), ``.order`` lays the right side out, and the unitary anonymous axes of the left side
(``1`` or ``()``) are summed away. lucid parses the same way, binds the sizes by the same rules
(the same errors, ``d0``, ``d1``, ... naming the axes in order), then does what the first-class
dims compute with ``reshape``, ``sum``, ``permute`` and ``reshape``: the same values, dtype and
gradients, on every backend and inside ``vmap``/``grad``.

This needs no ``einops`` package (``lucid._einops_backend`` is einops's backend for lucid
tensors, used by ``einops.rearrange`` itself; this is torch's own implementation).
"""

from __future__ import annotations

import functools
import keyword
import warnings
from collections.abc import Callable, Mapping, Sequence

from lucid._tensor import Tensor
from lucid.ops.join import stack

__all__ = ["DimensionBindError", "rearrange"]

_ellipsis: str = "\u2026"  # one unicode symbol: a str, not a list (as einops's)


class DimensionBindError(Exception):
    """An axis of the pattern cannot be bound to the tensor's sizes (functorch.dim's error)."""


class AnonymousAxis:
    """An axis with a size but no name (``2`` in ``"a 2"``); two are never equal."""

    def __init__(self, value: str) -> None:
        self.value = int(value)
        if self.value < 1:
            raise ValueError(f"Anonymous axis should have positive length, not {self.value}")

    def __repr__(self) -> str:
        return f"{self.value}-axis"


class ParsedExpression:
    """One side of a pattern (``"b c (h w)"``): its axes and how they are grouped."""

    def __init__(self, expression: str, *, allow_underscore: bool = False,
                 allow_duplicates: bool = False) -> None:  # fmt: skip
        self.has_ellipsis = False
        self.has_ellipsis_parenthesized: bool | None = None
        self.identifiers: set[str | AnonymousAxis] = set()
        self.has_non_unitary_anonymous_axes = False
        self.composition: list[list[str | AnonymousAxis] | str] = []
        if "." in expression:
            if "..." not in expression:
                raise ValueError("Expression may contain dots only inside ellipsis (...)")
            if str.count(expression, "...") != 1 or str.count(expression, ".") != 3:
                raise ValueError(
                    "Expression may contain dots only inside ellipsis (...); only one ellipsis "
                    "for tensor "
                )
            expression = expression.replace("...", _ellipsis)
            self.has_ellipsis = True

        bracket_group: list[str | AnonymousAxis] | None = None

        def add_axis_name(x: str) -> None:
            if x in self.identifiers:
                if not (allow_underscore and x == "_") and not allow_duplicates:
                    raise ValueError(f"Indexing expression contains duplicate dimension '{x}'")
            if x == _ellipsis:
                self.identifiers.add(_ellipsis)
                if bracket_group is None:
                    self.composition.append(_ellipsis)
                    self.has_ellipsis_parenthesized = False
                else:
                    bracket_group.append(_ellipsis)
                    self.has_ellipsis_parenthesized = True
                return
            is_number = str.isdecimal(x)
            if is_number and int(x) == 1:  # an anonymous axis of length 1
                if bracket_group is None:
                    self.composition.append([])
                return  # inside parentheses a 1 changes nothing
            is_axis_name, reason = self.check_axis_name_return_reason(
                x, allow_underscore=allow_underscore
            )
            if not (is_number or is_axis_name):
                raise ValueError(f"Invalid axis identifier: {x}\n{reason}")
            axis_name: str | AnonymousAxis = AnonymousAxis(x) if is_number else x
            self.identifiers.add(axis_name)
            if is_number:
                self.has_non_unitary_anonymous_axes = True
            if bracket_group is None:
                self.composition.append([axis_name])
            else:
                bracket_group.append(axis_name)

        current_identifier: str | None = None
        for char in expression:
            if char in "() ":
                if current_identifier is not None:
                    add_axis_name(current_identifier)
                current_identifier = None
                if char == "(":
                    if bracket_group is not None:
                        raise ValueError(
                            "Axis composition is one-level (brackets inside brackets not allowed)"
                        )
                    bracket_group = []
                elif char == ")":
                    if bracket_group is None:
                        raise ValueError("Brackets are not balanced")
                    self.composition.append(bracket_group)
                    bracket_group = None
            elif str.isalnum(char) or char in ["_", _ellipsis]:
                current_identifier = (
                    char if current_identifier is None else current_identifier + char
                )
            else:
                raise ValueError(f"Unknown character '{char}'")

        if bracket_group is not None:
            raise ValueError(f"Imbalanced parentheses in expression: '{expression}'")
        if current_identifier is not None:
            add_axis_name(current_identifier)

    @staticmethod
    def check_axis_name_return_reason(
        name: str, allow_underscore: bool = False
    ) -> tuple[bool, str]:
        """Whether ``name`` is a valid axis name (a Python identifier, not starting or ending
        with ``_``), and why not; keywords and ``axis`` are accepted with a warning."""
        if not str.isidentifier(name):
            return False, "not a valid python identifier"
        if name[0] == "_" or name[-1] == "_":
            if name == "_" and allow_underscore:
                return True, ""
            return False, "axis name should should not start or end with underscore"
        if keyword.iskeyword(name):
            warnings.warn(
                f"It is discouraged to use axes names that are keywords: {name}", RuntimeWarning
            )
        if name == "axis":
            warnings.warn(
                "It is discouraged to use 'axis' as an axis name and will raise an error in future",
                FutureWarning,
            )
        return True, ""

    @staticmethod
    def check_axis_name(name: str) -> bool:
        """Whether ``name`` is a valid axis name."""
        return ParsedExpression.check_axis_name_return_reason(name)[0]


def parse_pattern(pattern: str, axes_lengths: Mapping[str, int]
                  ) -> tuple[ParsedExpression, ParsedExpression]:  # fmt: skip
    """The two sides of ``pattern`` (``"left -> right"``), parsed."""
    try:
        left_str, right_str = pattern.split("->")
    except ValueError:
        raise ValueError("Pattern must contain a single '->' separator") from None
    if _ellipsis in axes_lengths:
        raise ValueError(f"'{_ellipsis}' is not an allowed axis identifier")
    left = ParsedExpression(left_str)
    right = ParsedExpression(right_str)
    if not left.has_ellipsis and right.has_ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if left.has_ellipsis and left.has_ellipsis_parenthesized:
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    return left, right


def validate_rearrange_expressions(left: ParsedExpression, right: ParsedExpression,
                                   axes_lengths: Mapping[str, int]) -> None:  # fmt: skip
    """The checks specific to ``rearrange``: integer lengths, only unitary anonymous axes, the
    same axes on both sides, lengths only for axes of the pattern."""
    for length in axes_lengths.values():
        if (length_type := type(length)) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {length_type}")
    if left.has_non_unitary_anonymous_axes or right.has_non_unitary_anonymous_axes:
        raise ValueError("rearrange only supports unnamed axes of size 1")
    difference = set.symmetric_difference(left.identifiers, right.identifiers)
    if len(difference) > 0:
        raise ValueError(
            f"Identifiers only on one side of rearrange expression (should be on both): "
            f"{difference}"
        )
    unmatched_axes = axes_lengths.keys() - left.identifiers
    if len(unmatched_axes) > 0:
        raise ValueError(f"Identifiers not found in rearrange expression: {unmatched_axes}")


def _pack_repr(dims: Sequence[int]) -> str:
    names = [f"d{d}" for d in dims]
    return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"


def _bind(sz: int, dims: tuple[int, ...], sizes: list[int]) -> None:
    """Bind the axes ``dims`` of one left-side group to the tensor size ``sz`` (at most one of
    them unbound: its size is inferred), as functorch.dim binds a dimension pack."""
    rhs_prod = 1
    for i, d in enumerate(dims):
        if sizes[d] == -1:
            for e in dims[i + 1 :]:
                if sizes[e] == -1:
                    raise DimensionBindError(
                        f"cannot infer the sizes of two dimensions at once d{d} and d{e}"
                    )
                rhs_prod *= sizes[e]
            if sz % rhs_prod != 0:
                tup = tuple(sizes[e] if sizes[e] != -1 else "?" for e in dims)
                raise DimensionBindError(
                    f"inferred dimension does not evenly fit into larger dimension: {sz} vs {tup}"
                )
            sizes[d] = sz // rhs_prod
            rhs_prod = sz
            break
        rhs_prod *= sizes[d]
    if rhs_prod != sz:
        raise DimensionBindError(
            f"Dimension sizes to do not match ({sz} != {rhs_prod}) when matching dimension pack "
            f"{_pack_repr(dims)}"
        )


@functools.lru_cache(256)
def _create_rearrange_callable(tensor_ndim: int, pattern: str,
                               **axes_lengths: int) -> Callable[[Tensor], Tensor]:  # fmt: skip
    """The rearrangement of ``pattern`` for tensors of ``tensor_ndim`` dimensions (memoized,
    as torch's: the parse and its checks run once per pattern, lengths and rank)."""
    left, right = parse_pattern(pattern, axes_lengths)
    validate_rearrange_expressions(left, right, axes_lengths)

    n_anon_dims = sum(not dim for dim in left.composition)
    if left.has_ellipsis:
        n_ellipsis_dims = tensor_ndim - (len(left.composition) - 1)
        n_named_dims = len(left.identifiers) - 1
        if (pattern_ndim := n_anon_dims + n_named_dims) > tensor_ndim:
            raise ValueError(
                f"Number of dimensions in pattern ({pattern_ndim}) must be less than or equal to "
                f"the number of dimensions in the tensor ({tensor_ndim})"
            )
    else:
        n_ellipsis_dims = 0
        n_named_dims = len(left.identifiers)
        if (pattern_ndim := len(left.composition)) != tensor_ndim:
            raise ValueError(
                f"Number of dimensions in pattern ({pattern_ndim}) must be equal to the number of "
                f"dimensions in the tensor ({tensor_ndim})"
            )
    n_dims = n_named_dims + n_ellipsis_dims + n_anon_dims
    if n_dims == 0:  # an identity rearrangement of a 0-dimensional tensor
        return lambda tensor: tensor

    # the axes, numbered left to right (torch's first-class dims d0, d1, ...)
    axis_of: dict[str | AnonymousAxis, tuple[int, ...]] = {}
    left_groups: list[tuple[int, ...] | int] = []  # a pack (bound as one), or an ellipsis axis
    anon: list[int] = []
    i = 0
    for dimension in left.composition:
        if isinstance(dimension, list):
            pack = []
            for identifier in dimension:
                axis_of[identifier] = (i,)
                pack.append(i)
                i += 1
            if not dimension:  # a unitary anonymous axis: bound to any size, summed away
                anon.append(i)
                pack.append(i)
                i += 1
            left_groups.append(tuple(pack))
        elif dimension == _ellipsis:
            axis_of[_ellipsis] = tuple(range(i, i + n_ellipsis_dims))
            left_groups.extend(range(i, i + n_ellipsis_dims))
            i += n_ellipsis_dims
        else:
            raise ValueError(f"Unexpected dimension: {dimension}")

    right_groups: list[tuple[int, ...]] = []
    for dimension in right.composition:
        if isinstance(dimension, list):
            right_groups.append(tuple(d for identifier in dimension for d in axis_of[identifier]))
        elif dimension == _ellipsis:
            right_groups.extend((d,) for d in axis_of[_ellipsis])
        else:
            raise ValueError(f"Unexpected dimension: {dimension}")

    specified = [(axis_of[name][0], length) for name, length in axes_lengths.items()]
    kept = [d for d in range(n_dims) if d not in anon]
    perm = tuple(kept.index(d) for group in right_groups for d in group)
    identity_perm = perm == tuple(range(len(perm)))
    anon_dims = tuple(anon)

    def do_rearrange(tensor: Tensor) -> Tensor:
        sizes = [-1] * n_dims
        for d, length in specified:
            sizes[d] = length
        for group, sz in zip(left_groups, tensor.shape):
            if isinstance(group, int):
                sizes[group] = sz
            else:
                _bind(sz, group, sizes)
        out = tensor.reshape(sizes)
        if anon_dims:
            out = out.sum(dim=anon_dims)
        if not identity_perm:
            out = out.permute(perm)
        new_shape = []
        for group in right_groups:
            n = 1
            for d in group:
                n *= sizes[d]
            new_shape.append(n)
        return out.reshape(new_shape)

    return do_rearrange


def rearrange(tensor: Tensor | list[Tensor] | tuple[Tensor, ...], pattern: str,
              **axes_lengths: int) -> Tensor:  # fmt: skip
    """einops's ``rearrange`` (``torch.func.rearrange``): transpose, reshape, squeeze,
    unsqueeze, stack and concatenate in one reader-friendly pattern.

    A list or tuple of tensors is stacked first. See https://einops.rocks/api/rearrange/.

    Args:
        tensor: the tensor (or tensors) to rearrange.
        pattern: the rearrangement, ``"left -> right"`` (``"b h w c -> b c h w"``,
            ``"b (h h1) (w w1) c -> b h w (c h1 w1)"``, ``"... c -> c ..."``).
        axes_lengths: the lengths of axes the tensor's shape does not determine.

    >>> images = lucid.randn(32, 30, 40, 3)
    >>> rearrange(images, "b h w c -> b (c h w)").shape
    lucid.Size([32, 3600])
    >>> rearrange(images, "b (h1 h) (w1 w) c -> (b h1 w1) h w c", h1=2, w1=2).shape
    lucid.Size([128, 15, 20, 3])
    """
    if not isinstance(tensor, Tensor):
        tensor = stack(tensor)
    rearrange_callable = _create_rearrange_callable(tensor.ndim, pattern, **axes_lengths)
    return rearrange_callable(tensor)
