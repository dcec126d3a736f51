"""``ONNXProgram``: what ``export(..., dynamo=True)`` returns (``torch.onnx.ONNXProgram``).

It holds the exported ``onnx.ModelProto`` (torch holds an ``onnx_ir.Model``; lucid has no
``onnx_ir``), saves it, runs it in onnxruntime on lucid tensors, and applies new weights.
"""

from __future__ import annotations

import copy
import gc
import logging
import os
import tempfile
import textwrap
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import onnx
from onnx import external_data_helper, helper, numpy_helper

import lucid
from lucid import Tensor
from lucid.onnx.errors import OnnxExporterError, OnnxExporterWarning
from lucid.utils import _pytree
from lucid.utils.files import atomic_write

if TYPE_CHECKING:
    import onnxruntime as ort

__all__ = ["ONNXProgram"]

_LARGE_MODEL_THRESHOLD = 1536 * 1024 * 1024  # 1536MB, as torch
_EXTERNAL_THRESHOLD = 1024  # tensors this large or larger go to the external data file

logger = logging.getLogger(__name__)


def _ort_session_initializer(model: str | bytes) -> ort.InferenceSession:
    """An onnxruntime session on ``model`` (a path or the serialized bytes), as torch's."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3  # errors only
    available = set(ort.get_available_providers())
    providers = [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider") if p in available]
    return ort.InferenceSession(model, providers=providers, sess_options=options)


def _initializer_bytes(model: onnx.ModelProto) -> int:
    total = 0
    for t in model.graph.initializer:
        if t.HasField("raw_data"):
            total += len(t.raw_data)
        else:
            total += int(np.prod(t.dims, dtype=np.int64)) * _itemsize(t.data_type)
    return total


def _itemsize(data_type: int) -> int:
    try:
        return int(np.dtype(helper.tensor_dtype_to_np_dtype(data_type)).itemsize)
    except (KeyError, TypeError, ValueError):
        return 4


def _to_numpy(value: Any) -> np.ndarray:
    """A lucid Tensor (or a Python scalar, as torch: int -> int64, float -> float32) as numpy;
    complex tensors as their real view (an extra last axis of size 2), as torch."""
    if isinstance(value, Tensor):
        arr = np.asarray(value.detach().cpu().numpy())
        if np.iscomplexobj(arr):
            arr = np.stack([arr.real, arr.imag], axis=-1)
        return arr
    if isinstance(value, bool):
        return np.asarray(value)
    if isinstance(value, int):
        return np.asarray(value, dtype=np.int64)
    if isinstance(value, float):
        return np.asarray(value, dtype=np.float32)
    if isinstance(value, np.ndarray):
        return value
    raise TypeError(
        f"ONNXProgram takes lucid Tensors (and int/float/bool), got {type(value).__name__}"
    )


def _process_args(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> list[Any]:
    """Flatten ``(args, kwargs)`` (nested tuples/lists/dicts) and drop the Nones, as torch."""
    flat, _ = _pytree.tree_flatten((args, dict(kwargs)))
    return [a for a in flat if a is not None]


class ONNXProgram:
    """An exported ONNX model that is callable with lucid tensors (``torch.onnx.ONNXProgram``).

    Attributes:
        model: the ``onnx.ModelProto`` (torch's is an ``onnx_ir.Model``).
        exported_program: always None: lucid records models without ``torch.export``.

    >>> import lucid, lucid.nn as nn
    >>> from lucid.onnx import export
    >>> program = export(nn.Linear(3, 2), (lucid.randn(4, 3),))
    >>> [tuple(o.shape) for o in program(lucid.randn(4, 3))]
    [(4, 2)]
    """

    def __init__(self, model: onnx.ModelProto, exported_program: Any = None) -> None:
        if exported_program is not None:
            raise NotImplementedError(
                "lucid has no torch.export.ExportedProgram; ONNXProgram's exported_program "
                "must be None"
            )
        self.model: onnx.ModelProto = model
        self.exported_program: None = None
        self._inference_session: ort.InferenceSession | None = None
        self._tempdir: tempfile.TemporaryDirectory[str] | None = None
        self._capture_strategy: str | None = None

    def __repr__(self) -> str:
        text = onnx.printer.to_text(self.model.graph)
        return (
            f"ONNXProgram(\n    model=\n{textwrap.indent(text, ' ' * 8)}\n    ,\n"
            f"    exported_program=\n        None\n)\n"
        )

    # -- running --------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> tuple[Tensor, ...]:
        """Run the model in onnxruntime on the arguments the model takes (flattened in order,
        Nones dropped); returns the outputs as lucid tensors (on the CPU)."""
        import onnxruntime as ort

        flat = _process_args(args, kwargs)
        if self._inference_session is None:
            self.initialize_inference_session()
        assert self._inference_session is not None
        feeds = self._feeds(flat)
        run_options = ort.RunOptions()
        run_options.log_severity_level = 3
        outputs = self._inference_session.run(None, feeds, run_options=run_options)
        return tuple(lucid.from_numpy(np.asarray(o)) for o in outputs)

    def call_reference(self, *args: Any, **kwargs: Any) -> tuple[Tensor, ...]:
        """Run the model with ONNX's reference evaluator (``onnx.reference``)."""
        import onnx.reference

        evaluator = onnx.reference.ReferenceEvaluator(self.model)
        outputs = evaluator.run(None, self._feeds(_process_args(args, kwargs)))
        return tuple(lucid.from_numpy(np.asarray(o)) for o in outputs)

    def _feeds(self, flat: list[Any]) -> dict[str, np.ndarray]:
        inputs = list(self.model.graph.input)
        if len(flat) != len(inputs):
            raise ValueError(
                f"the ONNX model takes {len(inputs)} inputs {[i.name for i in inputs]}, got "
                f"{len(flat)} (after flattening args and kwargs and dropping None)"
            )
        feeds = {}
        for info, value in zip(inputs, flat):
            arr = _to_numpy(value)
            tensor_type = info.type.tensor_type
            if tensor_type.elem_type:
                want = np.dtype(helper.tensor_dtype_to_np_dtype(tensor_type.elem_type))
                if arr.dtype != want:
                    raise TypeError(
                        f"input {info.name!r} must be {want}, got {arr.dtype} (cast it first)"
                    )
            if tensor_type.HasField("shape"):
                dims = tensor_type.shape.dim
                fixed = [d.dim_value if d.HasField("dim_value") else None for d in dims]
                if len(fixed) != arr.ndim or any(
                    f is not None and f != n for f, n in zip(fixed, arr.shape)
                ):
                    shown = [f if f is not None else d.dim_param for f, d in zip(fixed, dims)]
                    raise ValueError(
                        f"input {info.name!r} has shape {list(arr.shape)}; the model takes {shown}"
                    )
            feeds[info.name] = arr
        return feeds

    def compute_values(
        self,
        value_names: Sequence[str],
        args: tuple[Any, ...] = (),
        kwargs: Mapping[str, Any] | None = None,
    ) -> tuple[Tensor, ...]:
        """The values of the named inputs, initializers or node outputs of the graph on
        ``args``/``kwargs`` (an inference session that outputs them is made, then released)."""
        self.release()
        known = _value_infos(self.model)
        for name in value_names:
            if name not in known:
                raise ValueError(
                    f"Value '{name}' not found in the model. Please provide a valid value name."
                )
        original = self.model
        temp = copy.deepcopy(original)
        del temp.graph.output[:]
        temp.graph.output.extend(known[name] for name in value_names)
        self.model = temp
        try:
            return self(*args, **(kwargs or {}))
        finally:
            self.model = original
            self.release()

    def initialize_inference_session(
        self,
        initializer: Callable[[str | bytes], ort.InferenceSession] = _ort_session_initializer,
    ) -> None:
        """Start the onnxruntime session ``__call__`` uses (models over 1.5 GiB of weights
        are saved to a temporary folder with external data first, as torch)."""
        if _initializer_bytes(self.model) > _LARGE_MODEL_THRESHOLD:
            self._tempdir = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
            path = os.path.join(self._tempdir.name, "model.onnx")
            self.save(path, external_data=True)
            self._inference_session = initializer(path)
        else:
            self._inference_session = initializer(self.model.SerializeToString())

    def release(self) -> None:
        """Drop the inference session (and its temporary files)."""
        self._inference_session = None
        gc.collect()
        if self._tempdir is not None:
            self._tempdir.cleanup()
            self._tempdir = None

    # -- the model ------------------------------------------------------------------------------
    @property
    def model_proto(self) -> onnx.ModelProto:
        """The ONNX ``ModelProto`` (a copy, as torch serializes a fresh one each time)."""
        return copy.deepcopy(self.model)

    def optimize(self) -> None:
        """Simplify the graph in place: drop Identity nodes inside it (graph outputs keep
        theirs), then the nodes and initializers no output uses. (torch runs ONNX Script's
        optimizer; lucid's export already folds constants, ``do_constant_folding``.)"""
        _drop_identities(self.model.graph)
        _prune(self.model.graph)
        try:
            onnx.checker.check_model(self.model, full_check=True)
        except onnx.checker.ValidationError as e:
            raise OnnxExporterError(f"ONNXProgram.optimize made an invalid model: {e}") from e
        self.release()  # the session ran the old graph

    def rename_axes(self, rename_mapping: Mapping[str, str]) -> None:
        """Rename symbolic axes (``{"input_dim_0": "batch"}``) in the inputs, outputs and
        value infos of the graph."""
        g = self.model.graph
        for info in (*g.input, *g.output, *g.value_info):
            for dim in info.type.tensor_type.shape.dim:
                if dim.HasField("dim_param") and dim.dim_param in rename_mapping:
                    dim.dim_param = str(rename_mapping[dim.dim_param])
        self.release()

    def apply_weights(self, state_dict: Mapping[str, Any]) -> None:
        """Replace the initializers named by ``state_dict``'s keys with its tensors (a name
        the model lacks is skipped with an ``OnnxExporterWarning``, as torch)."""
        inits = {t.name: i for i, t in enumerate(self.model.graph.initializer)}
        for name, value in state_dict.items():
            if name not in inits:
                warnings.warn(
                    f"Weight '{name}' not found in the model. Skipped applying.",
                    category=OnnxExporterWarning,
                    stacklevel=2,
                )
                continue
            arr = _to_numpy(value)
            self.model.graph.initializer[inits[name]].CopyFrom(numpy_helper.from_array(arr, name))
        self.release()

    def save(
        self,
        destination: str | os.PathLike[str] | IO[bytes],
        *,
        include_initializers: bool = True,
        keep_initializers_as_inputs: bool = False,
        external_data: bool | None = None,
    ) -> None:
        """Write the model to ``destination`` (a path, written atomically, or a binary file).

        ``include_initializers=False`` leaves the weights out; ``keep_initializers_as_inputs``
        lists them as graph inputs too (then they can be fed at run time). With
        ``external_data`` (or weights over 1.5 GiB) the weights of 1 KiB or more go to
        ``<destination>.data`` next to it (not written where none is that large): that needs
        a path (``TypeError`` otherwise).
        """
        model = copy.deepcopy(self.model)
        g = model.graph
        if keep_initializers_as_inputs:
            g.input.extend(
                helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                for t in g.initializer
            )
        if not include_initializers:
            del g.initializer[:]
        large = _initializer_bytes(model) > _LARGE_MODEL_THRESHOLD
        if not (external_data or large):
            data = model.SerializeToString()
            if isinstance(destination, (str, os.PathLike)):
                atomic_write(destination, lambda out: out.write(data))
            else:
                destination.write(data)
            return
        if not isinstance(destination, (str, os.PathLike)):
            raise TypeError(
                "ONNXProgram.save with external data needs a file path, got "
                f"{type(destination).__name__}"
            )
        _save_external(model, os.fspath(destination))


def _value_infos(model: onnx.ModelProto) -> dict[str, onnx.ValueInfoProto]:
    """Every value of the top graph by name, typed where shape inference knows its type."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model).graph
    except Exception:  # noqa: BLE001  (untyped infos still work in onnxruntime)
        inferred = model.graph
    infos: dict[str, onnx.ValueInfoProto] = {}
    g = model.graph
    for t in g.initializer:
        infos[t.name] = helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
    for node in g.node:
        for name in node.output:
            if name:
                infos[name] = onnx.ValueInfoProto(name=name)
    for info in (*g.input, *inferred.value_info, *g.output):
        infos[info.name] = info
    return infos


def _nodes_with_subgraphs(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for sub in (attr.g, *attr.graphs) if attr.HasField("g") else attr.graphs:
                yield from _nodes_with_subgraphs(sub)


def _drop_identities(graph: onnx.GraphProto) -> None:
    if any(a.HasField("g") or a.graphs for n in graph.node for a in n.attribute):
        return  # renaming across subgraphs' scopes is not worth it here
    outputs = {o.name for o in graph.output}
    rename: dict[str, str] = {}
    kept = []
    for node in graph.node:
        node.input[:] = [rename.get(n, n) for n in node.input]
        if node.op_type == "Identity" and node.domain in ("", "ai.onnx"):
            if node.output[0] not in outputs:
                rename[node.output[0]] = node.input[0]
                continue
        kept.append(node)
    del graph.node[:]
    graph.node.extend(kept)


def _prune(graph: onnx.GraphProto) -> None:
    needed = {o.name for o in graph.output}
    kept = []
    for node in reversed(graph.node):
        if needed.intersection(node.output):
            kept.append(node)
            needed.update(node.input)
    for node in kept:
        for attr in node.attribute:  # names a subgraph reads from the outer scope
            for sub in (attr.g, *attr.graphs) if attr.HasField("g") else attr.graphs:
                for inner in _nodes_with_subgraphs(sub):
                    needed.update(inner.input)
    del graph.node[:]
    graph.node.extend(kept[::-1])
    inits = [t for t in graph.initializer if t.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(inits)


def _save_external(model: onnx.ModelProto, path: str) -> None:
    """``model`` to ``path`` with its large initializers in ``<path>.data``: the data file is
    written atomically first, then the model file."""
    location = f"{os.path.basename(path)}.data"
    chunks: list[bytes] = []
    offset = 0
    for t in model.graph.initializer:
        if not t.HasField("raw_data"):
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t), t.name))
        if len(t.raw_data) < _EXTERNAL_THRESHOLD:
            continue
        raw = t.raw_data
        external_data_helper.set_external_data(t, location, offset=offset, length=len(raw))
        t.ClearField("raw_data")
        chunks.append(raw)
        offset += len(raw)

    def write_data(out: IO[bytes]) -> None:
        for chunk in chunks:
            out.write(chunk)

    if chunks:
        folder = os.path.dirname(os.path.abspath(path))
        atomic_write(os.path.join(folder, location), write_data)
    data = model.SerializeToString()
    atomic_write(path, lambda out: out.write(data))
