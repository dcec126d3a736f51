"""``export``: record a model's ops, make them a checked ONNX graph (an ``ONNXProgram``), and
write it atomically where ``f`` is given."""

from __future__ import annotations

import abc
import contextlib
import datetime
import inspect
import logging
import os
import warnings
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import IO, Any

import numpy as np
import onnx
from onnx import helper

import lucid
from lucid import Tensor, nn
from lucid.onnx import _ops_core, _ops_nn  # noqa: F401  (they fill the converter table)
from lucid.onnx._context import Context, dtype_of, onnx_type
from lucid.onnx._convert import CONVERTERS, attrs_equal
from lucid.onnx._enums import OperatorExportTypes, TrainingMode
from lucid.onnx._graph import DynamicDim, Graph
from lucid.onnx._onnx_program import ONNXProgram
from lucid.onnx._trace import Call, Trace, flatten, run
from lucid.onnx.errors import OnnxExporterError, UnsupportedOperatorError

logger = logging.getLogger(__name__)

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
    args: Any = (),
    f: str | os.PathLike[str] | IO[bytes] | None = None,
    *,
    kwargs: dict[str, Any] | None = None,
    verbose: bool | None = None,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    opset_version: int | None = None,
    dynamo: bool = True,
    external_data: bool | None = None,
    dynamic_shapes: Mapping[str, Any] | tuple[Any, ...] | list[Any] | None = None,
    custom_translation_table: Mapping[Any, Any] | None = None,
    report: bool = False,
    optimize: bool = True,
    verify: bool = False,
    profile: bool = False,
    dump_exported_program: bool = False,
    artifacts_dir: str | os.PathLike[str] = ".",
    export_params: bool = True,
    keep_initializers_as_inputs: bool = False,
    dynamic_axes: DynamicAxes | None = None,
    training: Any = TrainingMode.EVAL,
    operator_export_type: Any = OperatorExportTypes.ONNX,
    do_constant_folding: bool = True,
    custom_opsets: Mapping[str, int] | None = None,
    export_modules_as_functions: bool | Collection[type[nn.Module]] = False,
    autograd_inlining: bool = True,
) -> ONNXProgram | None:
    """``torch.onnx.export``: run ``model(*args, **kwargs)`` once in eval mode, recording its
    ops, and make them an ONNX graph (each module's train/eval mode is restored after).

    With ``dynamo=True`` (the default, as in torch 2.9+) it returns an
    :class:`~lucid.onnx.ONNXProgram` (save it, run it in onnxruntime, ``optimize()`` it) and
    writes ``f`` too where given; with ``dynamo=False`` it writes ``f`` and returns None.
    Both record the same way: lucid has no ``torch.export``, so ``dynamo`` only picks the
    return value (``exported_program`` is None).

    Parameters and buffers become initializers named by their ``state_dict`` keys (graph
    inputs with ``export_params=False``). ``dynamic_shapes`` (``torch.export``'s forms:
    ``({0: "batch"},)``, ``{"x": {0: "batch"}}``, per-axis lists; a ``torch.export.Dim`` or
    other object is a dynamic axis named after it, None a static one) or ``dynamic_axes``
    (``{"input": {0: "batch"}}`` or ``{"input": [0]}``) makes those axes symbolic: the model
    then runs a second time with them resized, and every size that follows them is read from
    the input's shape. A trailing dict in ``args`` is taken as ``kwargs`` (as torch does).
    The model passes ``onnx.checker``; ``f`` (a path or a binary file) is written atomically,
    in one file unless ``external_data=True`` (weights then go to ``<f>.data``) or the weights
    pass 1.5 GiB. An op without an ONNX mapping raises
    :class:`~lucid.onnx.errors.UnsupportedOperatorError` naming the op and its module.
    ``verbose`` prints the graph; ``verify`` runs the program in onnxruntime on ``args`` and
    logs a warning where an output differs (as torch); ``report`` writes a markdown summary
    to ``artifacts_dir``. ``profile``, ``dump_exported_program``, a
    ``custom_translation_table``, ``custom_opsets``, ``export_modules_as_functions``,
    ``training`` other than EVAL and ``operator_export_type`` other than ONNX need torch's
    machinery: they raise ``NotImplementedError`` naming what lucid does not do.

    >>> import lucid, lucid.nn as nn
    >>> onnx_program = export(nn.Linear(3, 2), (lucid.randn(1, 3),))
    >>> [n.op_type for n in onnx_program.model_proto.graph.node]
    ['Gemm', 'Identity']
    >>> tuple(onnx_program(lucid.ones(1, 3))[0].shape)
    (1, 2)
    """
    _refuse_unsupported(
        custom_translation_table=custom_translation_table,
        profile=profile,
        dump_exported_program=dump_exported_program,
        training=training,
        operator_export_type=operator_export_type,
        custom_opsets=custom_opsets,
        export_modules_as_functions=export_modules_as_functions,
    )
    if not isinstance(model, nn.Module):
        raise TypeError(
            f"lucid.onnx.export exports an nn.Module, got {type(model).__name__} (lucid has no "
            "torch.export.ExportedProgram, ScriptModule or ScriptFunction)"
        )
    if isinstance(model, ExportableModule):
        if not args and not kwargs:
            args, kwargs = model.example_arguments()
            input_names = model.input_names() if input_names is None else input_names
            output_names = model.output_names() if output_names is None else output_names
            dynamic_shapes = model.dynamic_shapes() if dynamic_shapes is None else dynamic_shapes
        dynamo = True
    if not dynamo:
        warnings.warn(
            "You are using the legacy TorchScript-based ONNX export (dynamo=False): torch 2.9+ "
            "defaults to dynamo=True, which returns an ONNXProgram. lucid records the model the "
            "same way for both; dynamo=False only returns None instead of the program.",
            category=DeprecationWarning,
            stacklevel=2,
        )
        if dynamic_shapes:
            raise ValueError(
                "The exporter only supports dynamic shapes through parameter dynamic_axes "
                "when dynamo=False."
            )
        if f is None:
            raise TypeError("lucid.onnx.export with dynamo=False needs f, the file to write")
    if isinstance(args, Tensor):
        args = (args,)
    elif not isinstance(args, tuple):
        args = (args,) if not isinstance(args, list) else tuple(args)
    if not kwargs and args and isinstance(args[-1], dict):
        kwargs, args = args[-1], args[:-1]
    args, param_names = _bind_kwargs(model, args, kwargs or {})
    started = datetime.datetime.now()
    try:
        proto = _export_proto(
            model,
            args,
            input_names=input_names,
            output_names=output_names,
            dynamic_axes=None if dynamic_shapes is not None else dynamic_axes,
            dynamic_shapes=dynamic_shapes,
            param_names=param_names,
            opset_version=opset_version,
            do_constant_folding=do_constant_folding,
            export_params=export_params,
        )
    except Exception as e:
        if report:
            _report(artifacts_dir, started, model, None, f"{type(e).__name__}: {e}")
        raise
    program = ONNXProgram(proto, None)
    if optimize and dynamo:
        program.optimize()
    if verbose:
        print(onnx.printer.to_text(program.model.graph))
    verification = _verify(program, model, args) if verify and dynamo else None
    if report:
        _report(artifacts_dir, started, model, program, verification)
    if f is not None:
        program.save(
            f,
            include_initializers=True,  # export_params=False already made the weights inputs
            keep_initializers_as_inputs=keep_initializers_as_inputs,
            external_data=external_data,
        )
    return program if dynamo else None


def _refuse_unsupported(**options: Any) -> None:
    """Raise NotImplementedError for each option that needs torch's machinery."""
    gaps = {
        "custom_translation_table": "translates torch.ops overloads with ONNX Script "
        "(lucid maps its own ops; a missing one is an UnsupportedOperatorError)",
        "profile": "profiles the export with pyinstrument (wrap the call in lucid.profiler)",
        "dump_exported_program": "dumps a torch.export.ExportedProgram (lucid has none)",
        "custom_opsets": "writes ops of custom domains (lucid writes the default ONNX domain)",
        "export_modules_as_functions": "writes modules as ONNX local functions",
    }
    for name, why in gaps.items():
        if options[name]:
            raise NotImplementedError(
                f"lucid.onnx.export does not support {name}=...: torch's option {why}"
            )
    training = options["training"]
    if training is not None and _enum_name(training) != "EVAL":
        raise NotImplementedError(
            f"lucid.onnx.export exports in eval mode only (training={training!r}); the "
            "option is deprecated in torch too: set the model's mode before exporting"
        )
    op_type = options["operator_export_type"]
    if op_type is not None and _enum_name(op_type) != "ONNX":
        raise NotImplementedError(
            f"lucid.onnx.export writes plain ONNX only (operator_export_type={op_type!r})"
        )


def _enum_name(value: Any) -> str:
    return str(getattr(value, "name", value)).rsplit(".", 1)[-1].upper()


def _bind_kwargs(
    model: nn.Module, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> tuple[tuple[Any, ...], list[str]]:
    """``args`` and ``kwargs`` as positional arguments of ``model.forward`` (lucid records
    ``model(*args)``), and the parameter name of each position."""
    try:
        sig = inspect.signature(model.forward)
    except (TypeError, ValueError):  # a builtin forward: positions only
        if kwargs:
            raise TypeError(
                f"lucid.onnx.export: cannot read {type(model).__name__}.forward's signature "
                "to place kwargs"
            ) from None
        return args, [f"arg{i}" for i in range(len(args))]
    params = list(sig.parameters.values())
    names: list[str] = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            names.extend([p.name] * max(len(args) - len(names), 0))
    if not kwargs:
        return args, names[: len(args)] + [f"arg{i}" for i in range(len(names), len(args))]
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(
            f"lucid.onnx.export: args and kwargs do not fit {type(model).__name__}.forward"
            f"{sig}: {e}"
        ) from None
    bound.apply_defaults()
    if bound.kwargs:
        raise NotImplementedError(
            f"lucid.onnx.export passes inputs to forward positionally; {sorted(bound.kwargs)} "
            f"of {type(model).__name__}.forward{sig} are keyword-only"
        )
    return tuple(bound.args), names[: len(bound.args)]


def _axes_from_shapes(
    dynamic_shapes: Any, args: tuple[Any, ...], param_names: Sequence[str], in_names: list[str]
) -> dict[str, dict[int, str]]:
    """``torch.export``'s ``dynamic_shapes`` (a tuple/list over the positional arguments, or a
    dict over forward's parameter names; per tensor a ``{axis: name or Dim}`` dict, a per-axis
    list or None) as ``dynamic_axes`` over the graph's input names."""
    specs: list[Any]
    if isinstance(dynamic_shapes, Mapping):
        specs = [None] * len(args)
        for key, spec in dynamic_shapes.items():
            where = [i for i, n in enumerate(param_names) if n == key]
            if not where:
                raise ValueError(
                    f"dynamic_shapes names {key!r}, which is not an argument of forward "
                    f"({list(dict.fromkeys(param_names))})"
                )
            if len(where) == 1:
                specs[where[0]] = spec
            elif spec is not None:  # a *args parameter: one spec per value
                if not isinstance(spec, (tuple, list)) or len(spec) != len(where):
                    raise ValueError(
                        f"dynamic_shapes[{key!r}] must hold one spec per value of *{key}"
                    )
                for i, s in zip(where, spec):
                    specs[i] = s
    elif isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) != len(args):
            raise ValueError(
                f"dynamic_shapes has {len(dynamic_shapes)} entries for {len(args)} arguments "
                "of forward"
            )
        specs = list(dynamic_shapes)
    else:
        raise TypeError(
            f"dynamic_shapes must be a dict, tuple or list, got {type(dynamic_shapes).__name__}"
        )
    axes: dict[str, dict[int, str]] = {}
    count = [0]

    def walk(value: Any, spec: Any, where: str) -> None:
        if isinstance(value, Tensor):
            name = in_names[count[0]]
            count[0] += 1
            dims = _tensor_axes(spec, value, name, where)
            if dims:
                axes[name] = dims
        elif isinstance(value, (tuple, list)):
            if spec is None:
                spec = [None] * len(value)
            if not isinstance(spec, (tuple, list)) or len(spec) != len(value):
                raise ValueError(
                    f"dynamic_shapes for {where} must match its {len(value)} items, got {spec!r}"
                )
            for i, (v, s) in enumerate(zip(value, spec)):
                walk(v, s, f"{where}[{i}]")
        elif spec is not None and value is not None:
            raise ValueError(
                f"dynamic_shapes gives {spec!r} for {where}, which is a "
                f"{type(value).__name__}, not a tensor"
            )

    for i, (value, spec) in enumerate(zip(args, specs)):
        walk(value, spec, param_names[i] if i < len(param_names) else f"argument {i}")
    return axes


def _tensor_axes(spec: Any, t: Tensor, name: str, where: str) -> dict[int, str]:
    if spec is None:
        return {}
    if isinstance(spec, Mapping):
        items = list(spec.items())
    elif isinstance(spec, (tuple, list)):
        if len(spec) != t.ndim:
            raise ValueError(
                f"dynamic_shapes for {where} lists {len(spec)} axes; the tensor has {t.ndim}"
            )
        items = list(enumerate(spec))
    else:
        raise ValueError(
            f"dynamic_shapes for the tensor {where} must be a dict, a list or None, got {spec!r}"
        )
    out: dict[int, str] = {}
    for axis, dim in items:
        if not isinstance(axis, int) or not -t.ndim <= axis < t.ndim:
            raise ValueError(f"dynamic_shapes names axis {axis!r} of {where}, of {t.ndim} axes")
        axis %= t.ndim
        if dim is None or isinstance(dim, int) or "STATIC" in repr(dim):
            continue
        if isinstance(dim, str):
            out[axis] = dim
        else:  # torch.export.Dim("batch") has __name__; Dim.DYNAMIC / Dim.AUTO do not
            label = getattr(dim, "__name__", None)
            out[axis] = label if isinstance(label, str) and label else f"{name}_dim_{axis}"
    return out


def _verify(program: ONNXProgram, model: nn.Module, args: tuple[Any, ...]) -> str:
    """torch's ``verify=True``: run the program in onnxruntime on ``args`` and log a warning
    for an output whose largest absolute (5e-3) or relative (0.1) difference is large."""
    try:
        with lucid.no_grad():
            expected = [t for t in flatten(model(*args)) if isinstance(t, Tensor)]
        got = program(*args)
    except Exception as e:  # torch records the failure rather than raising
        logger.warning("lucid.onnx.export(verify=True): onnxruntime failed: %s", e)
        return f"onnxruntime failed: {type(e).__name__}: {e}"
    lines = []
    for name, want, g in zip((o.name for o in program.model.graph.output), expected, got):
        a, b = np.asarray(want.detach().cpu().numpy()), np.asarray(g.numpy())
        if a.shape != b.shape:
            logger.warning("Output '%s' has shape %s, expected %s", name, b.shape, a.shape)
            lines.append(f"{name}: shape {b.shape}, expected {a.shape}")
            continue
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        abs_diff = float(diff.max()) if diff.size else 0.0
        rel = diff / (np.abs(a.astype(np.float64)) + 1e-12)
        rel_diff = float(rel.max()) if rel.size else 0.0
        if abs_diff >= 5e-3:
            logger.warning("Output '%s' has a large absolute difference of %f. ", name, abs_diff)
        if rel_diff >= 1e-1:
            logger.warning("Output '%s' has a large relative difference of %f. ", name, rel_diff)
        lines.append(f"{name}: max abs diff {abs_diff:.3g}, max rel diff {rel_diff:.3g}")
    return "\n".join(lines)


def _report(
    artifacts_dir: str | os.PathLike[str],
    started: datetime.datetime,
    model: nn.Module,
    program: ONNXProgram | None,
    detail: str | None,
) -> None:
    """torch's ``report=True``: a markdown file ``onnx_export_<time>_<status>.md``."""
    status = "success" if program is not None else "conversion"
    stamp = started.strftime("%Y-%m-%d_%H-%M-%S-%f")
    path = os.path.join(os.fspath(artifacts_dir), f"onnx_export_{stamp}_{status}.md")
    lines = [f"# lucid.onnx.export report: {type(model).__name__}", "", f"Status: {status}", ""]
    if program is not None:
        graph = program.model.graph
        ops: dict[str, int] = {}
        for node in graph.node:
            ops[node.op_type] = ops.get(node.op_type, 0) + 1
        lines += [
            f"Inputs: {[i.name for i in graph.input]}",
            f"Outputs: {[o.name for o in graph.output]}",
            f"Initializers: {len(graph.initializer)}",
            "",
            "| op | count |",
            "| --- | --- |",
            *(f"| {op} | {n} |" for op, n in sorted(ops.items())),
            "",
            "```",
            onnx.printer.to_text(graph),
            "```",
        ]
    if detail:
        lines += ["", "## Verification" if program is not None else "## Error", "", detail]
    os.makedirs(os.fspath(artifacts_dir), exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")


def _export_proto(
    model: nn.Module,
    args: tuple[Any, ...],
    *,
    input_names: Sequence[str] | None,
    output_names: Sequence[str] | None,
    dynamic_axes: DynamicAxes | None,
    dynamic_shapes: Any,
    param_names: Sequence[str],
    opset_version: int | None,
    do_constant_folding: bool,
    export_params: bool,
) -> onnx.ModelProto:
    """Run ``model(*args)`` (in eval mode), record its ops and build the checked ModelProto."""
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not MIN_OPSET <= opset <= onnx.defs.onnx_opset_version():
        raise ValueError(
            f"opset_version must be in [{MIN_OPSET}, {onnx.defs.onnx_opset_version()}], got {opset}"
        )
    with _exporting():  # the model's runs see is_in_onnx_export() True
        trace = run(model, args)
        in_names = _names(input_names, len(trace.inputs), "input")
        out_names = _names(output_names, len(trace.outputs), "output")
        if dynamic_shapes is not None:
            dynamic_axes = _axes_from_shapes(dynamic_shapes, args, param_names, in_names)
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
    return _model(model, graph, inputs, outputs, [p for p in params if p[0] in used])


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


class ExportableModule(nn.Module, abc.ABC):
    """An ``nn.Module`` that carries what its export needs: example arguments, and optionally
    input/output names and dynamic shapes. ``export(module)`` (no args) and
    ``module.to_onnx()`` use them.

    >>> import lucid, lucid.nn as nn
    >>> class Doubler(ExportableModule):
    ...     def forward(self, x):
    ...         return x * 2
    ...     def example_arguments(self):
    ...         return (lucid.randn(2, 3),), None
    ...     def dynamic_shapes(self):
    ...         return ({0: "batch"},)
    >>> program = Doubler().to_onnx()
    >>> tuple(program(lucid.ones(5, 3))[0].shape)
    (5, 3)
    """

    @abc.abstractmethod
    def example_arguments(self) -> tuple[tuple[Any, ...], dict[str, Any] | None]:
        """``(args, kwargs or None)`` to run ``forward`` on for the export."""
        raise NotImplementedError

    def dynamic_shapes(self) -> Any:
        """``export``'s ``dynamic_shapes`` for the inputs (None: every axis static)."""
        return None

    def input_names(self) -> Sequence[str] | None:
        """Names of the graph's inputs (None: ``input``/``input_<i>``)."""
        return None

    def output_names(self) -> Sequence[str] | None:
        """Names of the graph's outputs (None: ``output``/``output_<i>``)."""
        return None

    def to_onnx(self, **kwargs: Any) -> ONNXProgram:
        """``lucid.onnx.export(self, **kwargs)``: the ONNXProgram."""
        result = export(self, **kwargs)
        if result is None:
            raise AssertionError("result must be non-None (to_onnx exports with dynamo=True)")
        return result
