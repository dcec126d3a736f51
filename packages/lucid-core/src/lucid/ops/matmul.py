"""Matrix products: matmul (batched, 1-D cases as PyTorch)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lucid import dtypes
from lucid._creation import eye, ones
from lucid._tensor import Tensor
from lucid.amp.autocast_mode import lower_precision_inputs
from lucid.autograd.function import Function
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import index_int, promote, scalar_type_name, write_out
from lucid.ops.complex import conj

OPS = OpTable(
    op("matmul", sample((3, 4), (4, 2), gg=True), sample((2, 3, 4), (4, 2), tag="batched"),
       sample((2, 1, 2, 3), (3, 3, 2), ref="matmul", tag="bcast"),
       sample((3,), (2, 3, 2), ref="matmul", tag="vec_mat"),
       sample((2, 3), (3,), tag="mat_vec"), sample((3,), (3,), tag="vec_vec")),
    op("mm", sample((2, 3), (3, 2))),
    op("mv", sample((2, 3), (3,))),
    op("dot", sample((4,), (4,), gg=True)),
    op("vdot", sample((3,), (3,))),
    op("outer", sample((3,), (2,), ref="outer")),
    op("ger", alias="outer"),
    op("inner", sample((2, 3), (4, 3), ref="inner")),
    op("tensordot", sample((2, 3), (3, 4), dims=1),
       sample((2, 3, 4), (4, 2, 5), dims=([0, 2], [1, 0]), tag="pairs"), method=False),
    op("einsum", method=False, untested="takes an equation first: core_op_cases' einsum cases"),
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


# torch's node of a matrix product, by the operands' dims (matmul dispatches to these ops)
_MATMUL_NAMES = {(2, 2): "MmBackward0", (2, 1): "MvBackward0", (1, 1): "DotBackward0",
                 (3, 3): "BmmBackward0"}  # fmt: skip


class Matmul(Function):
    _pack_order = (1, 0)  # torch saves mat2, then self (mm)

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        ctx.save_for_backward(a, b)
        if b.ndim == 1:
            ctx._pack_order = None  # torch's mv saves self, then vec
        ctx._node_name = _MATMUL_NAMES.get((a.ndim, b.ndim), "MatmulBackward0")  # torch's
        return ctx.xp.matmul(a, b)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        if a.ndim == 1 and b.ndim == 1:
            return (g * b if need_a else None), (g * a if need_b else None)
        if a.ndim == 1:
            g2 = g.unsqueeze(-2)
            ga = (g2 @ b.mT).squeeze(-2) if need_a else None
            gb = a.unsqueeze(-1) @ g2 if need_b else None
            return ga, gb
        if b.ndim == 1:
            g2 = g.unsqueeze(-1)
            ga = g2 @ b.unsqueeze(-2) if need_a else None
            gb = (a.mT @ g2).squeeze(-1) if need_b else None
            return ga, gb
        ga = g @ b.mT if need_a else None
        gb = a.mT @ g if need_b else None
        return ga, gb


def matmul(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """Matrix product with torch's rules: 1-D operands become vectors, batch dims broadcast;
    ``out=`` writes into that tensor."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    if out is None:
        return _matmul(*lower_precision_inputs(a, b))
    result: Tensor = write_out("matmul", _matmul(*lower_precision_inputs(a, b)), out, a, b)
    return result


def _matmul(a: Any, b: Any) -> Tensor:
    """``matmul`` in its inputs' dtype: ``mv`` and ``dot``, which autocast leaves alone."""
    a, b = promote(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D"
        )
    ka = a.shape[-1]
    kb = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if ka != kb:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_rows(a)}x{ka} and {kb}x"
            f"{b.shape[-1] if b.ndim > 1 else 1})"
        )
    return Matmul.apply(a, b)


def _rows(a: Tensor) -> int:
    n = 1
    for s in a.shape[:-1]:
        n *= s
    return n


def mm(input: Tensor, mat2: Tensor, out_dtype: Any = None) -> Tensor:  # noqa: A002
    """Matrix product of two 2-D tensors (computed in ``out_dtype`` when given)."""
    if out_dtype is not None:
        input, mat2 = input.to(out_dtype), mat2.to(out_dtype)
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(
            f"mm: expected 2-D tensors, got {input.ndim}-D and {mat2.ndim}-D "
            f"(shapes {list(input.shape)} and {list(mat2.shape)})"
        )
    return matmul(input, mat2)


def dot(input: Tensor, tensor: Tensor) -> Tensor:  # noqa: A002
    """Inner product of two 1-D tensors of the same length."""
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors")
    if input.dtype is not tensor.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found "
            f"{scalar_type_name(input.dtype)} and {scalar_type_name(tensor.dtype)}"
        )
    if input.shape[0] != tensor.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
            f"[{tensor.shape[0]}] to have the same number of elements, but got "
            f"{input.shape[0]} and {tensor.shape[0]} elements respectively"
        )
    return _matmul(input, tensor)


def vdot(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """``dot`` with the first vector conjugated (``dot`` for real vectors)."""
    return dot(conj(input), other)


def mv(input: Tensor, vec: Tensor) -> Tensor:  # noqa: A002
    """Matrix-vector product."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {vec.ndim}")
    return _matmul(input, vec)


def outer(input: Tensor, vec2: Tensor) -> Tensor:  # noqa: A002
    """``input[i] * vec2[j]`` for 1-D inputs."""
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: expected 1-D tensors, got {input.ndim}-D and {vec2.ndim}-D")
    return input.unsqueeze(1) * vec2.unsqueeze(0)


ger = outer


def inner(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Sum over the last dims: ``inner(a, b)[i..., j...] = sum_k a[i..., k] * b[j..., k]``."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if other.ndim == 1:
        return matmul(input, other)
    b = other.reshape(-1, other.shape[-1]).mT
    out = matmul(input, b)
    return out.reshape(input.shape[:-1] + other.shape[:-1])


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """Sum over the last ``dims`` dims of ``a`` and the first of ``b`` (or the listed pairs)."""
    if (count := index_int(dims)) is not None:
        dims = count
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = [list(d) if isinstance(d, (list, tuple)) else [d] for d in dims]
    da = [d % a.ndim for d in da]
    db = [d % b.ndim for d in db]
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            # a size-1 dim broadcasts against the other side's, as torch's: the other side is
            # summed over that dim first (sum_k a[.., 0, ..] * b[.., k, ..])
            if a.shape[x] == 1:
                b = b.sum(y, keepdim=True)
            elif b.shape[y] == 1:
                a = a.sum(x, keepdim=True)
            else:
                raise RuntimeError(
                    f"contracted dimensions need to match, but first has size {a.shape[x]} in "
                    f"dim {x} and second has size {b.shape[y]} in dim {y}"
                )
    free_a = [d for d in range(a.ndim) if d not in da]
    free_b = [d for d in range(b.ndim) if d not in db]
    k = 1
    for d in da:
        k *= a.shape[d]
    am = a.permute(tuple(free_a + da)).reshape(-1, k)
    bm = b.permute(tuple(db + free_b)).reshape(k, -1)
    shape = tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b)
    return matmul(am, bm).reshape(shape)


class Einsum(Function):
    @staticmethod
    def forward(ctx: Any, spec: tuple[list[str], str], *arrays: Any) -> Any:
        ctx.spec = spec
        ins, out = spec
        ctx.save_for_backward(*arrays)
        return ctx.xp.einsum(",".join(ins) + "->" + out, *arrays)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        ins, out = ctx.spec
        ops = ctx.saved_tensors
        grads: list[Any] = [None]
        for i, sub in enumerate(ins):
            if not ctx.needs_input_grad[i + 1]:
                grads.append(None)
                continue
            grads.append(_einsum_grad(g, out, ins, ops, i))
        return tuple(grads)


def _einsum_grad(g: Tensor, out: str, ins: list[str], ops: Any, i: int) -> Tensor:
    """d(einsum)/d(operand i) = einsum of g with the other operands, into operand i's labels."""
    sub = ins[i]
    shape = ops[i].shape
    present = set(out).union(*[set(s) for j, s in enumerate(ins) if j != i])
    uniq = "".join(dict.fromkeys(sub))
    target = "".join(c for c in uniq if c in present)
    others = [(s, t) for j, (s, t) in enumerate(zip(ins, ops)) if j != i]
    eq = ",".join([out] + [s for s, _ in others]) + "->" + target
    grad = einsum(eq, g, *[t for _, t in others])
    if uniq == sub:
        if target != sub:  # labels only in operand i were summed away: broadcast back
            grad = grad.reshape(tuple(shape[k] if c in present else 1 for k, c in enumerate(sub)))
            grad = grad.expand(shape)
        return grad
    return _onto_diagonals(grad, target, sub, shape)


def _onto_diagonals(grad: Tensor, target: str, sub: str, shape: tuple[int, ...]) -> Tensor:
    """Spread ``grad`` (labels ``target``) over an operand whose labels ``sub`` repeat
    (``"ii"``): einsum with identity matrices puts it on the diagonals, ones broadcast the
    labels that appear in no other operand."""
    size = {c: shape[k] for k, c in enumerate(sub)}
    spare = iter(c for c in _LETTERS if c not in sub and c not in target)
    seen: set[str] = set()
    labels, terms, consts = [], [target], [grad]
    for c in sub:
        if c in seen:
            fresh = next(spare)
            terms.append(c + fresh)
            consts.append(eye(size[c], dtype=grad.dtype, device=grad.device))
            labels.append(fresh)
        else:
            seen.add(c)
            labels.append(c)
            if c not in target:
                terms.append(c)
                consts.append(ones(size[c], dtype=grad.dtype, device=grad.device))
    return einsum(",".join(terms) + "->" + "".join(labels), *consts)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse_einsum(equation: str, operands: Any) -> tuple[list[str], str]:
    """Explicit labels for every operand and the output (``...`` expanded, ``->`` implied)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(operands):
        raise RuntimeError(
            f"einsum(): {len(ins)} operands in the equation {equation!r}, but {len(operands)} given"
        )
    used = set(c for c in eq if c.isalpha())
    spare = [c for c in _LETTERS if c not in used]
    n_ell = max((t.ndim - len(s.replace("...", "")) for s, t in zip(ins, operands)
                 if "..." in s), default=0)  # fmt: skip
    ell = "".join(spare[:n_ell])
    fixed: list[str] = []
    for s, t in zip(ins, operands):
        if "..." in s:
            k = t.ndim - len(s.replace("...", ""))
            s = s.replace("...", ell[n_ell - k :] if k else "")
        if len(s) != t.ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(s)}) does not match "
                f"the number of dimensions ({t.ndim}) for operand {len(fixed)}"
            )
        fixed.append(s)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        counts: dict[str, int] = {}
        for s in fixed:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return fixed, out


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation (``lucid.einsum("ij,jk->ik", a, b)``); the backward is einsum too."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    operands = lower_precision_inputs(*operands)
    spec = _parse_einsum(equation, operands)
    res = operands[0].dtype
    for t in operands[1:]:
        res = dtypes.promote_types(res, t.dtype)
    ops = [t if t.dtype is res else t.to(res) for t in operands]
    return Einsum.apply(spec, *ops)
