"""What a converter sees while the recorded calls become ONNX nodes: the value names."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from lucid import Tensor
from lucid.onnx._graph import Graph
from lucid.onnx._trace import Call
from lucid.onnx.errors import OnnxExporterError, UnsupportedOperatorError


@dataclass
class Value:
    """A tensor of the recorded run: its ONNX name (None: a constant not yet written)."""

    name: str | None
    version: int
    tensor: Tensor
    constant: bool
    error: str = ""  # made by an op without a mapping: using the value raises this
    outside: bool = False  # made outside the recorded ops (lucid.zeros, a .numpy() round trip)


class Context:
    """Names of the recorded tensors, the graph, and the call being converted."""

    def __init__(self, graph: Graph, fold: bool) -> None:
        self.graph = graph
        self.fold = fold
        self.values: dict[int, Value] = {}
        self.arrays: dict[int, Tensor] = {}  # id of a backend array -> its tensor
        self.twins: dict[int, Tensor] = {}  # tensor of run 1 -> the same tensor of run 2
        self.probes: dict[int, Tensor] = {}  # tensor of run 1 -> the same with other input values
        self.last_target: dict[int, Tensor] = {}  # tensor -> output of the last op applied to it
        self.param_names: dict[int, str] = {}  # parameter or buffer -> its state_dict key
        self.call: Call | None = None
        self.call2: Call | None = None
        self._keep: list[Any] = []

    # -- registering ---------------------------------------------------------------------------
    def _version(self, t: Tensor) -> int:
        """``t``'s version when the current call ran (now, after the last call)."""
        call = self.call
        return call.versions.get(id(t), t._version) if call is not None else t._version

    def bind(self, t: Tensor, name: str | None, constant: bool) -> None:
        self.values[id(t)] = Value(name, self._version(t), t, constant)
        self.arrays[id(t.array)] = t
        self._keep.append(t)

    def pair(self, call: Call, call2: Call | None, probe: Call | None) -> None:
        """Start converting ``call`` (``call2``: the same op in the run with resized axes;
        ``probe``: in the run with other input values)."""
        self.call, self.call2 = call, call2
        if probe is not None:
            for a, b in zip(_tensors(call.args), _tensors(probe.args)):
                self.probes.setdefault(id(a), b)
        if call2 is None:
            return
        for a, b in zip(_tensors(call.args), _tensors(call2.args)):
            self.twins.setdefault(id(a), b)
        for a, b in zip(call.outputs, call2.outputs):
            self.twins[id(a)] = b

    # -- reading -------------------------------------------------------------------------------
    @property
    def where(self) -> str:
        assert self.call is not None
        return f"{self.call.name} in {self.call.where or 'the model'}"

    def value(self, t: Tensor) -> Value:
        v = self.values.get(id(t))
        if v is None:
            alias = self.arrays.get(id(t.array))  # detach() / .data of a recorded tensor
            if alias is not None and alias is not t:
                self.values[id(t)] = self.value(alias)
                self._keep.append(t)
                return self.values[id(t)]
            self.bind(t, None, True)
            v = self.values[id(t)]
            v.outside = True
        if self._version(t) != v.version:
            v = self._after_inplace(t)
        return v

    def _after_inplace(self, t: Tensor) -> Value:
        src = self.last_target.get(id(t))
        if id(t) in self.param_names:
            raise UnsupportedOperatorError(
                f"{self.where}: the model changes {self.param_names[id(t)]!r} in place (batch "
                "norm in training mode updates its running statistics); call model.eval() "
                "before exporting"
            )
        if src is None or id(src) not in self.values:
            raise UnsupportedOperatorError(
                f"{self.where}: an input was changed in place outside the recorded ops (for "
                "example through a view); use out-of-place ops in the exported model"
            )
        v = self.values[id(src)]
        self.values[id(t)] = Value(v.name, self._version(t), v.tensor, v.constant)
        return self.values[id(t)]

    def is_constant(self, t: Tensor) -> bool:
        return self.value(t).constant

    def unsupported(self, t: Tensor, message: str) -> None:
        """``t`` came from an op without a mapping: an error if anything uses it."""
        self.bind(t, None, constant=False)
        self.values[id(t)].error = message

    def name(self, t: Tensor) -> str:
        """The ONNX value that holds ``t`` (a constant gets its initializer now)."""
        v = self.value(t)
        if v.error:
            raise UnsupportedOperatorError(v.error)
        if v.name is None:
            if v.outside:
                self._check_fixed(v.tensor)
            v.name = self._constant(v.tensor)
        return v.name

    def name_array(self, arr: Any) -> str:
        """The value of a backend array that an op got inside an argument (an index)."""
        t = self.arrays.get(id(arr))
        if t is not None:
            return self.name(t)
        return self.graph.const(np.asarray(arr))

    def _check_fixed(self, t: Tensor) -> None:
        """A tensor made outside the ops must not change with the input's values: it would be
        frozen into the file (computed through ``.numpy()``/``.tolist()``, or random)."""
        probe = self.probes.get(id(t))
        if probe is None or tuple(probe.shape) != tuple(t.shape):
            return
        if not np.array_equal(np.asarray(t.detach().numpy()), np.asarray(probe.detach().numpy())):
            raise OnnxExporterError(
                f"{self.where}: an input of the op was computed outside lucid's ops (through "
                ".numpy(), .tolist() or a random draw) and changes with the model's input; it "
                "would be frozen into the file as a constant. Compute it with lucid ops"
            )

    def _constant(self, t: Tensor) -> str:
        arr = np.asarray(t.detach().numpy())
        if id(t) in self.param_names:
            return self.graph.const(arr, hint=self.param_names[id(t)])
        twin = self.twins.get(id(t))
        if twin is None or tuple(twin.shape) == arr.shape:
            return self.graph.const(arr)
        if arr.size and np.all(arr == arr.flat[0]):
            pairs = list(zip(arr.shape, twin.shape))
            shape = self.graph.shape_of(pairs, self.where, allow_infer=False)
            return self.graph.op("Expand", self.graph.const(arr.flat[0]), shape)
        raise UnsupportedOperatorError(
            f"{self.where}: a constant made inside the model has a shape that follows a dynamic "
            f"axis ({list(arr.shape)} and {list(twin.shape)}); export without dynamic_axes"
        )

    # -- helpers for converters ----------------------------------------------------------------
    def scalar(self, value: Any, like: Tensor | np.dtype[Any]) -> str:
        """A 0-d constant of ``like``'s dtype (a Python number next to a tensor operand)."""
        dtype = like if isinstance(like, np.dtype) else dtype_of(like)
        return self.graph.const(np.asarray(value, dtype=dtype))

    def operand(self, x: Any, dtype: np.dtype[Any]) -> str:
        """A tensor or a number as a value of ``dtype`` (cast where the tensor's differs)."""
        if not isinstance(x, Tensor):
            return self.scalar(x, dtype)
        name = self.name(x)
        if dtype_of(x) != dtype:
            return self.graph.op("Cast", name, to=onnx_type(dtype))
        return name

    def shapes(self, index: int = 0) -> list[tuple[int, int]]:
        """(run 1, run 2) sizes of output ``index`` of the current call, per dim."""
        assert self.call is not None
        s1 = tuple(self.call.outputs[index].shape)
        s2 = s1 if self.call2 is None else tuple(self.call2.outputs[index].shape)
        return list(zip(s1, s2))

    def arg_pairs(self, position: int) -> tuple[Any, Any]:
        """Argument ``position`` of the call in run 1 and in run 2."""
        assert self.call is not None
        a = self.call.args[position]
        return a, a if self.call2 is None else self.call2.args[position]


def dtype_of(t: Tensor) -> np.dtype[Any]:
    return np.dtype(t.array.dtype) if isinstance(t.array, np.ndarray) else t.detach().numpy().dtype


def onnx_type(dtype: Any) -> int:
    from onnx import helper

    return int(helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))


def _tensors(args: tuple[Any, ...]) -> Iterator[Tensor]:
    return (a for a in args if isinstance(a, Tensor))
