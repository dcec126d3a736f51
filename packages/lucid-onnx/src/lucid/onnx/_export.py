"""``export``: record a model's ops, write them as an ONNX graph, check it, write it atomically."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, Any

import numpy as np
import onnx
from onnx import helper

import lucid
from lucid import Tensor, nn
from lucid.onnx import _ops_core, _ops_nn  # noqa: F401  (they fill the converter table)
from lucid.onnx._context import Context, dtype_of, onnx_type
from lucid.onnx._convert import CONVERTERS, attrs_equal
from lucid.onnx._graph import DynamicDim, Graph
from lucid.onnx._trace import Call, Trace, run
from lucid.onnx.errors import OnnxExporterError, UnsupportedOperatorError
from lucid.utils.files import atomic_write

DEFAULT_OPSET = 17
MIN_OPSET = 17

DynamicAxes = Mapping[str, Sequence[int] | Mapping[int, str]]


_active = [0]  # exports in progress


@contextlib.contextmanager
def _exporting() -> Iterator[None]:
    _active[0] += 1
    try:
        yield
    finally:
        _active[0] -= 1


def is_in_onnx_export() -> bool:
    """``torch.onnx.is_in_onnx_export``: whether :func:`export` is running the model now (model
    code that takes another path for export checks it)."""
    return _active[0] > 0


def export(
    model: nn.Module,
    args: Any,
    f: str | os.PathLike[str] | IO[bytes],
    *,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    dynamic_axes: DynamicAxes | None = None,
    opset_version: int | None = None,
    do_constant_folding: bool = True,
    export_params: bool = True,
    verbose: bool = False,
) -> onnx.ModelProto:
    """Run ``model(*args)`` once in eval mode, recording its ops, and write them to ``f`` as
    ONNX (each module's train/eval mode is restored after, as ``torch.onnx.export`` does).

    Parameters and buffers become initializers named by their ``state_dict`` keys (graph
    inputs with ``export_params=False``); ``dynamic_axes`` (``{"input": {0: "batch"}}`` or
    ``{"input": [0]}``) makes those axes symbolic: the model then runs a second time with
    them resized, and every size that follows them is read from the input's shape. The file
    passes ``onnx.checker`` and is written atomically; an op without an ONNX mapping raises
    :class:`~lucid.onnx.errors.UnsupportedOperatorError` naming the op and its module.
    ``verbose`` prints the graph. Returns the ModelProto written.

    >>> import io, lucid, lucid.nn as nn
    >>> proto = export(nn.Linear(3, 2), lucid.randn(1, 3), io.BytesIO())
    >>> [n.op_type for n in proto.graph.node]
    ['Gemm', 'Identity']
    """
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not MIN_OPSET <= opset <= onnx.defs.onnx_opset_version():
        raise ValueError(
            f"opset_version must be in [{MIN_OPSET}, {onnx.defs.onnx_opset_version()}], got {opset}"
        )
    args = args if isinstance(args, tuple) else (args,)
    with _exporting():  # the model's runs see is_in_onnx_export() True
        trace = run(model, args)
        in_names = _names(input_names, len(trace.inputs), "input")
        out_names = _names(output_names, len(trace.outputs), "output")
        axes = _parse_axes(dynamic_axes or {}, in_names, out_names)
        graph = Graph(opset)
        for n in (*in_names, *out_names):
            graph.fresh(n)
        trace2 = _second_run(model, args, trace, in_names, axes, graph)
        probe = _probe_run(model, args, trace)
    ctx = Context(graph, do_constant_folding)
    inputs = _bind_inputs(ctx, trace, in_names, axes)
    params = _bind_params(ctx, model, export_params)
    _convert_calls(ctx, trace, trace2, probe)
    outputs = _outputs(ctx, trace, trace2, out_names, axes)
    _prune(graph, [o.name for o in outputs])
    used = {name for node in graph.nodes for name in node.input}
    proto = _model(model, graph, inputs, outputs, [p for p in params if p[0] in used])
    _write(proto, f)
    if verbose:
        print(onnx.printer.to_text(proto.graph))
    return proto


# -- names and dynamic axes ----------------------------------------------------------------------
def _names(given: Sequence[str] | None, n: int, kind: str) -> list[str]:
    given = list(given or [])
    if len(given) > n:
        raise ValueError(f"{len(given)} {kind}_names given for {n} {kind}s of the model")
    default = [kind] if n == 1 else [f"{kind}_{i}" for i in range(n)]
    return given + default[len(given) :]


def _parse_axes(
    dynamic_axes: DynamicAxes, in_names: list[str], out_names: list[str]
) -> dict[str, dict[int, str]]:
    axes: dict[str, dict[int, str]] = {}
    for name, spec in dynamic_axes.items():
        if name not in in_names and name not in out_names:
            raise ValueError(
                f"dynamic_axes names {name!r}, which is neither an input name {in_names} nor "
                f"an output name {out_names}"
            )
        if isinstance(spec, Mapping):
            axes[name] = {int(k): str(v) for k, v in spec.items()}
        else:
            axes[name] = {int(k): f"{name}_dynamic_axes_{i + 1}" for i, k in enumerate(spec)}
    return axes


def _second_run(
    model: nn.Module,
    args: tuple[Any, ...],
    trace: Trace,
    in_names: list[str],
    axes: dict[str, dict[int, str]],
    graph: Graph,
) -> Trace | None:
    """Run the model again with each dynamic input axis one longer; record which is which."""
    grown: dict[int, Tensor] = {}
    for t, name in zip(trace.inputs, in_names):
        arr = np.asarray(t.detach().numpy())
        for axis, symbol in axes.get(name, {}).items():
            n = arr.shape[axis]
            arr = np.concatenate([arr, np.take(arr, [0], axis=axis)], axis=axis)
            graph.dynamic.append(DynamicDim(name, axis % t.ndim, (n, n + 1), symbol))
        if arr.shape != tuple(t.shape):
            grown[id(t)] = lucid.tensor(arr, dtype=t.dtype, device=t.device)
    if not grown:
        return None
    args2 = _replace(args, grown)
    trace2 = run(model, args2)
    if [c.key for c in trace2.calls] != [c.key for c in trace.calls]:
        raise OnnxExporterError(
            "the model applies different ops when a dynamic axis changes size (control flow "
            "on shapes); export without dynamic_axes"
        )
    return trace2


def _probe_run(model: nn.Module, args: tuple[Any, ...], trace: Trace) -> Trace | None:
    """Run the model on inputs of the same shapes with other values (floats shifted, integers
    rolled: indices stay valid), to catch values computed outside the ops. None where the
    model then applies other ops (control flow on values)."""
    changed: dict[int, Tensor] = {}
    for t in trace.inputs:
        arr = np.asarray(t.numpy())
        if np.issubdtype(arr.dtype, np.floating):
            new = arr * np.asarray(0.75, arr.dtype) + np.asarray(0.25, arr.dtype)
        elif arr.dtype != np.bool_ and arr.size > 1:
            new = np.roll(arr.reshape(-1), 1).reshape(arr.shape)
        else:
            continue
        changed[id(t)] = lucid.tensor(new, dtype=t.dtype, device=t.device)
    if not changed:
        return None
    probe = run(model, _replace(args, changed))
    return probe if [c.key for c in probe.calls] == [c.key for c in trace.calls] else None


def _replace(value: Any, new: dict[int, Tensor]) -> Any:
    if isinstance(value, (tuple, list)):
        return type(value)(_replace(v, new) for v in value)
    return new.get(id(value), value)


# -- binding inputs and parameters ---------------------------------------------------------------
def _bind_inputs(
    ctx: Context, trace: Trace, names: list[str], axes: dict[str, dict[int, str]]
) -> list[onnx.ValueInfoProto]:
    infos = []
    for t, name in zip(trace.inputs, names):
        ctx.bind(t, name, constant=False)
        dims: list[int | str] = list(t.shape)
        for axis, symbol in axes.get(name, {}).items():
            dims[axis] = symbol
        infos.append(helper.make_tensor_value_info(name, onnx_type(dtype_of(t)), dims))
    return infos


def _bind_params(ctx: Context, model: nn.Module, export_params: bool) -> list[tuple[str, Tensor]]:
    """Parameters and buffers: constants written under their state_dict keys, or (without
    ``export_params``) graph inputs of those names."""
    params = [(n, p) for n, p in (*model.named_parameters(), *model.named_buffers())]
    params = [(n, p) for n, p in params if id(p) not in ctx.values]  # not a model input too
    for name, p in params:
        ctx.bind(p, None if export_params else name, constant=export_params)
        ctx.param_names[id(p)] = name
    return [] if export_params else params


# -- converting ------------------------------------------------------------------------------
def _convert_calls(ctx: Context, trace: Trace, trace2: Trace | None, probe: Trace | None) -> None:
    none: list[Call | None] = [None] * len(trace.calls)
    calls2 = list(trace2.calls) if trace2 else none
    probes = list(probe.calls) if probe else none
    for call, call2, call3 in zip(trace.calls, calls2, probes):
        ctx.pair(call, call2, call3)
        if ctx.fold and _all_constant(ctx, call, call2):
            for o in call.outputs:
                ctx.bind(o, None, constant=True)
        else:
            _convert(ctx, call, call2)
        first = call.args[0] if call.args else None
        if isinstance(first, Tensor):
            ctx.last_target[id(first)] = call.outputs[0]


def _all_constant(ctx: Context, call: Call, call2: Call | None) -> bool:
    """Whether the call computes only from constants (then its outputs are constants too):
    not where its output's shape follows a dynamic axis (the constant would be fixed)."""
    if call2 is not None and any(a.shape != b.shape for a, b in zip(call.outputs, call2.outputs)):
        return False
    for a in call.args:
        if isinstance(a, Tensor) and not ctx.is_constant(a):
            return False
        for item in a if isinstance(a, tuple) else (a,):
            if id(item) in ctx.arrays and not ctx.is_constant(ctx.arrays[id(item)]):
                return False
    return True


def _convert(ctx: Context, call: Call, call2: Call | None) -> None:
    entry = CONVERTERS.get(call.key)
    if entry is None:  # an error only if the result is used (not for dead shape checks)
        message = (
            f"lucid.onnx.export: the op {call.name} ({call.key}) in "
            f"{call.where or 'the model'} has no ONNX mapping"
        )
        for o in call.outputs:
            ctx.unsupported(o, message)
        return
    if call2 is not None and not entry.dynamic:
        for a, b in zip(call.args, call2.args):
            if not isinstance(a, Tensor) and not attrs_equal(a, b):
                raise UnsupportedOperatorError(
                    f"{ctx.where}: an argument of the op follows a dynamic axis ({a!r} in one "
                    f"run, {b!r} with the axes resized); export without dynamic_axes"
                )
    names = entry.convert(ctx, call)
    for o, name in zip(call.outputs, names):
        ctx.bind(o, name, constant=False)


# -- outputs and the model ---------------------------------------------------------------------
def _outputs(
    ctx: Context,
    trace: Trace,
    trace2: Trace | None,
    names: list[str],
    axes: dict[str, dict[int, str]],
) -> list[onnx.ValueInfoProto]:
    infos = []
    outs2 = trace2.outputs if trace2 else trace.outputs
    ctx.call = Call(type(None), (), {}, (), "the model's outputs", {})
    for i, (t, t2, name) in enumerate(zip(trace.outputs, outs2, names)):
        ctx.graph.nodes.append(helper.make_node("Identity", [ctx.name(t)], [name]))
        dims: list[int | str] = []
        for axis, (a, b) in enumerate(zip(t.shape, t2.shape)):
            dims.append(a if a == b else _symbol(ctx.graph, name, axis, (a, b), axes))
        infos.append(helper.make_tensor_value_info(name, onnx_type(dtype_of(t)), dims))
    return infos


def _prune(graph: Graph, outputs: list[str]) -> None:
    """Drop the nodes and initializers no output depends on (dead code of the recorded run)."""
    needed = set(outputs)
    kept = []
    for node in reversed(graph.nodes):
        if needed.intersection(node.output):
            kept.append(node)
            needed.update(node.input)
    graph.nodes = kept[::-1]
    graph.initializers = [t for t in graph.initializers if t.name in needed]


def _symbol(
    graph: Graph, name: str, axis: int, sizes: tuple[int, int], axes: dict[str, dict[int, str]]
) -> str:
    if axis in axes.get(name, {}):
        return axes[name][axis]
    for d in graph.dynamic:
        if d.sizes == sizes:
            return d.symbol
    return f"{name}_dim_{axis}"


def _model(
    model: nn.Module,
    graph: Graph,
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    params: list[tuple[str, Tensor]],
) -> onnx.ModelProto:
    for name, p in params:
        inputs.append(helper.make_tensor_value_info(name, onnx_type(dtype_of(p)), list(p.shape)))
    g = helper.make_graph(graph.nodes, type(model).__name__, inputs, outputs, graph.initializers)
    opsets = [helper.make_opsetid("", graph.opset)]
    proto = helper.make_model(g, opset_imports=opsets, producer_name="lucid")
    proto.ir_version = helper.find_min_ir_version_for(opsets)
    try:
        onnx.checker.check_model(proto, full_check=True)
    except onnx.checker.ValidationError as e:
        raise OnnxExporterError(f"lucid.onnx.export made an invalid ONNX model: {e}") from e
    return proto


def _write(proto: onnx.ModelProto, f: str | os.PathLike[str] | IO[bytes]) -> None:
    """Write to a binary file, or to a path through a temporary file in its folder and a
    rename, so that a reader never sees half a model and a failure leaves the old file."""
    data = proto.SerializeToString()
    if not isinstance(f, (str, os.PathLike)):
        f.write(data)
        return
    atomic_write(f, lambda out: out.write(data))
