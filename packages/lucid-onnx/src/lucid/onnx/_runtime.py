"""``load``: an ONNX file's graph as an ``nn.Module`` that runs it with lucid ops.

It runs the operators the exporter writes (a round trip: export -> load -> the same outputs);
any other operator is a clear error when the file is loaded.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import IO, Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

import lucid
import lucid.nn.functional as F
from lucid import Tensor, nn

Kernel = Callable[[list[Any], dict[str, Any]], Any]
KERNELS: dict[str, Kernel] = {}


def kernel(*names: str) -> Callable[[Kernel], Kernel]:
    def register(fn: Kernel) -> Kernel:
        for n in names:
            KERNELS[n] = fn
        return fn

    return register


def _lucid_dtype(onnx_type: int) -> Any:
    name = np.dtype(helper.tensor_dtype_to_np_dtype(onnx_type)).name
    return getattr(lucid, name)


def _ints(t: Tensor) -> list[int]:
    return [int(v) for v in t.reshape(-1).tolist()]


# -- elementwise ---------------------------------------------------------------------------------
_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
    "Div": lambda a, b: a / b, "Pow": lambda a, b: a**b, "Max": lucid.maximum,
    "Min": lucid.minimum, "Less": lucid.lt, "LessOrEqual": lucid.le, "Greater": lucid.gt,
    "GreaterOrEqual": lucid.ge, "Equal": lucid.eq, "And": lucid.logical_and,
    "Or": lucid.logical_or, "Xor": lucid.logical_xor,
}  # fmt: skip
_UNARY: dict[str, Callable[[Any], Any]] = {
    "Exp": lucid.exp, "Log": lucid.log, "Sqrt": lucid.sqrt, "Reciprocal": lucid.reciprocal,
    "Abs": lucid.abs, "Neg": lucid.neg, "Sin": lucid.sin, "Cos": lucid.cos, "Tan": lucid.tan,
    "Asin": lucid.asin, "Acos": lucid.acos, "Atan": lucid.atan, "Sinh": lucid.sinh,
    "Cosh": lucid.cosh, "Tanh": lucid.tanh, "Asinh": lucid.asinh, "Acosh": lucid.acosh,
    "Atanh": lucid.atanh, "Sigmoid": lucid.sigmoid, "Relu": lucid.relu, "Floor": lucid.floor,
    "Ceil": lucid.ceil, "Sign": lucid.sign, "Erf": lucid.erf, "Round": lucid.round,
    "Not": lucid.logical_not, "IsNaN": lucid.isnan, "IsInf": lucid.isinf, "Identity": lambda x: x,
    "Softplus": F.softplus,
}  # fmt: skip


def _binary(op: str) -> Kernel:
    return lambda xs, attrs: _BINARY[op](xs[0], xs[1])


def _unary(op: str) -> Kernel:
    return lambda xs, attrs: _UNARY[op](xs[0])


for _op in _BINARY:
    KERNELS[_op] = _binary(_op)
for _op in _UNARY:
    KERNELS[_op] = _unary(_op)


@kernel("Where")
def _where(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return lucid.where(xs[0], xs[1], xs[2])


@kernel("Cast")
def _cast(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return xs[0].to(_lucid_dtype(attrs["to"]))


@kernel("Clip")
def _clip(xs: list[Any], attrs: dict[str, Any]) -> Any:
    lo = xs[1].item() if len(xs) > 1 and xs[1] is not None else None
    hi = xs[2].item() if len(xs) > 2 and xs[2] is not None else None
    return lucid.clamp(xs[0], lo, hi)


@kernel("LeakyRelu")
def _leaky(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return F.leaky_relu(xs[0], attrs.get("alpha", 0.01))


@kernel("HardSigmoid")
def _hardsigmoid(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return lucid.clamp(xs[0] * attrs.get("alpha", 0.2) + attrs.get("beta", 0.5), 0.0, 1.0)


@kernel("PRelu")
def _prelu(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x, w = xs
    return lucid.where(x > 0, x, x * w)


@kernel("Softmax")
def _softmax(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return lucid.softmax(xs[0], attrs.get("axis", -1))


KERNELS["LogSoftmax"] = lambda xs, attrs: lucid.log_softmax(xs[0], attrs.get("axis", -1))


# -- matmul, linear, convolution, pooling, normalisation -----------------------------------------
@kernel("MatMul")
def _matmul(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return xs[0] @ xs[1]


@kernel("Gemm")
def _gemm(xs: list[Any], attrs: dict[str, Any]) -> Any:
    a = xs[0].T if attrs.get("transA") else xs[0]
    b = xs[1].T if attrs.get("transB") else xs[1]
    out = (a @ b) * attrs.get("alpha", 1.0)
    if len(xs) > 2 and xs[2] is not None:
        out = out + xs[2] * attrs.get("beta", 1.0)
    return out


@kernel("Einsum")
def _einsum(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return lucid.einsum(attrs["equation"], *xs)


def _symmetric(pads: Sequence[int], n: int, op: str) -> list[int]:
    begins, ends = list(pads[:n]), list(pads[n:])
    if begins != ends:
        raise NotImplementedError(f"lucid.onnx.load: {op} with asymmetric pads {list(pads)}")
    return begins


@kernel("Conv")
def _conv(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x, w = xs[0], xs[1]
    b = xs[2] if len(xs) > 2 else None
    n = w.ndim - 2
    pads = list(attrs.get("pads", [0] * 2 * n))
    if pads[:n] != pads[n:]:
        x = F.pad(x, [p for d in reversed(range(n)) for p in (pads[d], pads[d + n])])
        pads = [0] * 2 * n
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[n]
    return conv(x, w, b, attrs.get("strides", 1), pads[:n], attrs.get("dilations", 1),
                attrs.get("group", 1))  # fmt: skip


@kernel("ConvTranspose")
def _conv_transpose(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x, w = xs[0], xs[1]
    b = xs[2] if len(xs) > 2 else None
    n = w.ndim - 2
    pads = _symmetric(attrs.get("pads", [0] * 2 * n), n, "ConvTranspose")
    conv = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[n]
    return conv(x, w, b, attrs.get("strides", 1), pads, attrs.get("output_padding", 0),
                attrs.get("group", 1), attrs.get("dilations", 1))  # fmt: skip


def _window(attrs: dict[str, Any], op: str) -> tuple[int, list[int], list[int], list[int]]:
    """A pooling node's rank, kernel, strides and (symmetric) padding."""
    k = list(attrs["kernel_shape"])
    n = len(k)
    return n, k, list(attrs.get("strides", k)), _symmetric(attrs.get("pads", [0] * 2 * n), n, op)


@kernel("MaxPool")
def _max_pool(xs: list[Any], attrs: dict[str, Any]) -> Any:
    n, k, strides, pads = _window(attrs, "MaxPool")
    pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[n]
    return pool(xs[0], k, strides, pads, attrs.get("dilations", 1),
                ceil_mode=bool(attrs.get("ceil_mode", 0)))  # fmt: skip


@kernel("AveragePool")
def _avg_pool(xs: list[Any], attrs: dict[str, Any]) -> Any:
    n, k, strides, pads = _window(attrs, "AveragePool")
    pool = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[n]
    return pool(xs[0], k, strides, pads, bool(attrs.get("ceil_mode", 0)),
                bool(attrs.get("count_include_pad", 0)))  # fmt: skip


@kernel("LayerNormalization")
def _layer_norm(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    axis = attrs.get("axis", -1) % x.ndim
    bias = xs[2] if len(xs) > 2 else None
    return F.layer_norm(x, tuple(x.shape[axis:]), xs[1], bias, attrs.get("epsilon", 1e-5))


# -- shape ---------------------------------------------------------------------------------------
@kernel("Reshape")
def _reshape(xs: list[Any], attrs: dict[str, Any]) -> Any:
    shape = [xs[0].shape[i] if s == 0 else s for i, s in enumerate(_ints(xs[1]))]
    return xs[0].reshape(*shape)


@kernel("Transpose")
def _transpose(xs: list[Any], attrs: dict[str, Any]) -> Any:
    perm = attrs.get("perm", list(reversed(range(xs[0].ndim))))
    return xs[0].permute(*perm)


@kernel("Expand")
def _expand(xs: list[Any], attrs: dict[str, Any]) -> Any:
    shape = _ints(xs[1])
    ndim = max(len(shape), xs[0].ndim)
    x = xs[0].reshape(*([1] * (ndim - xs[0].ndim)), *xs[0].shape)
    full = [1] * (ndim - len(shape)) + shape
    return x.expand(*[max(a, b) for a, b in zip(x.shape, full)])


@kernel("Shape")
def _shape(xs: list[Any], attrs: dict[str, Any]) -> Any:
    shape = list(xs[0].shape)
    start, end = attrs.get("start", 0), attrs.get("end", len(shape))
    return lucid.tensor(shape[start:end], dtype=lucid.int64, device=xs[0].device)


@kernel("Concat")
def _concat(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return lucid.cat(list(xs), attrs["axis"])


@kernel("Split")
def _split(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return tuple(lucid.split(xs[0], _ints(xs[1]), attrs.get("axis", 0)))


@kernel("Squeeze")
def _squeeze(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    for axis in sorted((a % x.ndim for a in _ints(xs[1])), reverse=True):
        x = x.squeeze(axis)
    return x


@kernel("Unsqueeze")
def _unsqueeze(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    for axis in sorted(_ints(xs[1])):
        x = x.unsqueeze(axis)
    return x


@kernel("Slice")
def _slice(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    starts, ends = _ints(xs[1]), _ints(xs[2])
    axes = _ints(xs[3]) if len(xs) > 3 else list(range(len(starts)))
    steps = _ints(xs[4]) if len(xs) > 4 else [1] * len(starts)
    index: list[Any] = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        size = x.shape[a]
        index[a % x.ndim] = slice(max(min(s, size), -size - 1), max(min(e, size), -size - 1), st)
    if any(st < 0 for st in steps):
        return _flip_slice(x, index)
    return x[tuple(index)]


def _flip_slice(x: Any, index: list[Any]) -> Any:
    dims = [d for d, s in enumerate(index) if s.step is not None and s.step < 0]
    x = lucid.flip(x, dims)
    for d in dims:
        s = index[d]
        lo, hi, _ = s.indices(x.shape[d])
        index[d] = slice(x.shape[d] - 1 - lo, x.shape[d] - 1 - hi, -s.step)
    return x[tuple(index)]


@kernel("Gather")
def _gather(xs: list[Any], attrs: dict[str, Any]) -> Any:
    axis = attrs.get("axis", 0) % xs[0].ndim
    return xs[0][(slice(None),) * axis + (xs[1],)]


@kernel("Pad")
def _pad(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x, pads = xs[0], _ints(xs[1])
    value = xs[2].item() if len(xs) > 2 and xs[2] is not None else 0.0
    n = x.ndim
    return F.pad(x, [p for d in reversed(range(n)) for p in (pads[d], pads[d + n])], value=value)


@kernel("Trilu")
def _trilu(xs: list[Any], attrs: dict[str, Any]) -> Any:
    k = int(xs[1].item()) if len(xs) > 1 else 0
    return lucid.triu(xs[0], k) if attrs.get("upper", 1) else lucid.tril(xs[0], k)


# -- reductions ----------------------------------------------------------------------------------
def _axes(xs: list[Any], attrs: dict[str, Any]) -> Any:
    if len(xs) > 1 and xs[1] is not None:
        return tuple(_ints(xs[1]))
    return tuple(attrs["axes"]) if "axes" in attrs else None


@kernel("ReduceSum")
def _reduce_sum(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return lucid.sum(xs[0], _axes(xs, attrs), keepdim=bool(attrs.get("keepdims", 1)))


@kernel("ReduceMax", "ReduceMin")
def _reduce_max(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return lucid.amax(xs[0], _axes(xs, attrs) or (), keepdim=bool(attrs.get("keepdims", 1)))


KERNELS["ReduceMin"] = lambda xs, attrs: lucid.amin(
    xs[0], _axes(xs, attrs) or (), keepdim=bool(attrs.get("keepdims", 1))
)


@kernel("ArgMax")
def _argmax(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return lucid.argmax(xs[0], attrs.get("axis", 0), keepdim=bool(attrs.get("keepdims", 1)))


KERNELS["ArgMin"] = lambda xs, attrs: lucid.argmin(
    xs[0], attrs.get("axis", 0), keepdim=bool(attrs.get("keepdims", 1))
)


# -- the module ----------------------------------------------------------------------------------
class OnnxModule(nn.Module):
    """An ONNX graph run with lucid ops; initializers are its buffers (``.to()`` moves them)."""

    def __init__(self, proto: onnx.ModelProto) -> None:
        super().__init__()
        graph = proto.graph
        unknown = sorted({n.op_type for n in graph.node if n.op_type not in KERNELS})
        if unknown:
            raise NotImplementedError(
                f"lucid.onnx.load runs the operators lucid.onnx.export writes; this graph also "
                f"uses {unknown}"
            )
        self._nodes = list(graph.node)
        self._attrs = [{a.name: helper.get_attribute_value(a) for a in n.attribute}
                       for n in graph.node]  # fmt: skip
        self._keys: dict[str, str] = {}
        for i, init in enumerate(graph.initializer):
            key = f"init_{i}"
            self.register_buffer(key, lucid.tensor(numpy_helper.to_array(init).copy()))
            self._keys[init.name] = key
        self.input_names = [i.name for i in graph.input if i.name not in self._keys]
        self.output_names = [o.name for o in graph.output]

    def forward(self, *inputs: Any) -> Any:
        if len(inputs) != len(self.input_names):
            raise TypeError(
                f"the ONNX graph takes {len(self.input_names)} inputs {self.input_names}, got "
                f"{len(inputs)}"
            )
        env: dict[str, Any] = {k: getattr(self, v) for k, v in self._keys.items()}
        env.update(zip(self.input_names, inputs))
        env[""] = None
        for node, attrs in zip(self._nodes, self._attrs):
            out = KERNELS[node.op_type]([env[n] for n in node.input], attrs)
            outs = out if isinstance(out, tuple) else (out,)
            env.update(zip(node.output, outs))
        results = tuple(env[n] for n in self.output_names)
        return results[0] if len(results) == 1 else results


def load(f: str | os.PathLike[str] | IO[bytes]) -> OnnxModule:
    """An ``nn.Module`` running the ONNX file ``f`` (a path or a binary file) with lucid ops.

    It runs the operators :func:`lucid.onnx.export` writes; a graph with others raises
    ``NotImplementedError`` naming them. Inputs are passed positionally, in the graph's order.
    """
    proto = onnx.load(f if isinstance(f, (str, os.PathLike)) else f)
    return OnnxModule(proto)
