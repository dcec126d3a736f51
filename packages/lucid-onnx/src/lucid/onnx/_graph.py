"""An ONNX graph under construction: nodes, initializers, unique names, shape tensors."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


@dataclass(frozen=True)
class DynamicDim:
    """An input axis marked dynamic: its sizes in the two recording runs and its symbol."""

    value: str  # the graph input's name
    axis: int
    sizes: tuple[int, int]
    symbol: str


@dataclass
class Graph:
    opset: int
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    initializers: list[onnx.TensorProto] = field(default_factory=list)
    dynamic: list[DynamicDim] = field(default_factory=list)
    _used: set[str] = field(default_factory=set)
    _count: int = 0

    def fresh(self, hint: str) -> str:
        """A name no value of the graph has yet, starting with ``hint``."""
        name = hint
        while name in self._used:
            self._count += 1
            name = f"{hint}_{self._count}"
        self._used.add(name)
        return name

    def node(self, op_type: str, inputs: Sequence[str], n_out: int = 1, **attrs: Any) -> list[str]:
        """Append a node; returns its output names (``""`` inputs are omitted optional ones)."""
        outs = [self.fresh(f"{op_type}_out") for _ in range(n_out)]
        kept = {k: v for k, v in attrs.items() if v is not None}
        name = self.fresh(f"{op_type}_node")
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=name, **kept))
        return outs

    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        """A single-output node."""
        return self.node(op_type, inputs, 1, **attrs)[0]

    def const(self, value: Any, dtype: Any = None, hint: str = "const") -> str:
        """An initializer holding ``value`` (a NumPy array or a number)."""
        arr = np.asarray(value, dtype=dtype)
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def ints(self, values: Sequence[int]) -> str:
        return self.const(np.asarray(list(values), dtype=np.int64), hint="ints")

    def shape_of(self, pairs: Sequence[tuple[int, int]], where: str, allow_infer: bool) -> str:
        """A 1-D int64 shape tensor whose entries are sizes ``(run 1, run 2)``: equal pairs are
        constants; differing ones are read from the dynamic input axis they follow (or a
        multiple of it); with ``allow_infer`` one unmatched entry becomes -1 (Reshape)."""
        pieces: list[str] = []
        static: list[int] = []
        inferred = False
        for a, b in pairs:
            if a == b:
                static.append(a)
                continue
            piece = self.dynamic_size(a, b)
            if piece is None:
                if not allow_infer or inferred:
                    raise _dynamic_error(where, pairs)
                inferred = True
                static.append(-1)
                continue
            if static:
                pieces.append(self.ints(static))
                static = []
            pieces.append(piece)
        if static or not pieces:
            pieces.append(self.ints(static))
        return pieces[0] if len(pieces) == 1 else self.op("Concat", *pieces, axis=0)

    def dynamic_size(self, a: int, b: int) -> str | None:
        """A 1-element int64 value holding a size that is ``a`` in run 1 and ``b`` in run 2:
        a multiple of a dynamic input axis read with Shape; None if it is none of those."""
        for d in self.dynamic:
            n1, n2 = d.sizes
            if a % n1 == 0 and b == a // n1 * n2:
                size = self.op("Shape", d.value, start=d.axis, end=d.axis + 1)
                k = a // n1
                return size if k == 1 else self.op("Mul", size, self.ints([k]))
        return None


def _dynamic_error(where: str, pairs: Sequence[tuple[int, int]]) -> Exception:
    from lucid.onnx.errors import UnsupportedOperatorError

    first = [a for a, _ in pairs]
    second = [b for _, b in pairs]
    return UnsupportedOperatorError(
        f"{where}: a shape depends on a dynamic axis in a way the exporter cannot express "
        f"(sizes {first} in one run and {second} with the dynamic axes resized); export "
        "without dynamic_axes for those dims"
    )
