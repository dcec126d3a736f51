"""``InputObserver`` (``torch.onnx``'s): watch a model's calls, then infer the arguments and
dynamic shapes to export it with, and check an export against the calls it saw.

lucid's version covers calls that pass the same arguments each time (tensors, and nested
tuples/lists/dicts of them); torch's also aligns calls where optional inputs come and go
(``value_if_missing``), which lucid refuses with ``NotImplementedError``.
"""

from __future__ import annotations

import contextlib
import inspect
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid import Tensor, nn
from lucid.onnx._onnx_program import _ort_session_initializer
from lucid.utils import _pytree

if TYPE_CHECKING:
    import onnxruntime as ort

    from lucid.onnx._onnx_program import ONNXProgram

__all__ = ["InputObserver"]


def _clone(value: Any) -> Any:
    return value.detach().clone() if isinstance(value, Tensor) else value


class _Call:
    """One observed call: its arguments and outputs (tensors cloned), and its latency."""

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        flat, self.spec = _pytree.tree_flatten((args, kwargs))
        self.flat = [_clone(t) for t in flat]
        self.args, self.kwargs = _pytree.tree_unflatten(self.flat, self.spec)
        self.outputs: list[Any] = []
        self.latency = 0.0


class InputObserver:
    """Collects the inputs and outputs of a model's method while it runs.

    >>> import lucid, lucid.nn as nn
    >>> model = nn.Linear(3, 2)
    >>> observer = InputObserver()
    >>> with observer(model):
    ...     _ = model(lucid.randn(2, 3))
    ...     _ = model(lucid.randn(5, 3))
    >>> observer.infer_dynamic_shapes()
    ({0: 'input_dim_0'},)
    >>> [tuple(a.shape) for a in observer.infer_arguments()]
    [(2, 3)]
    """

    def __init__(self, value_if_missing: dict[str | int, Any] | None = None) -> None:
        if value_if_missing:
            raise NotImplementedError(
                "lucid's InputObserver does not align calls whose optional inputs differ "
                "(value_if_missing); observe calls that pass the same arguments"
            )
        self.value_if_missing: dict[str | int, Any] = {}
        self.calls: list[_Call] = []
        self.signature_names: list[str] = []

    def num_obs(self) -> int:
        """How many calls were stored."""
        return len(self.calls)

    @contextlib.contextmanager
    def __call__(
        self, model: nn.Module, store_n_calls: int = 3, method_name: str = "forward"
    ) -> Iterator[InputObserver]:
        """Within the block, ``model.<method_name>`` records its first ``store_n_calls``
        calls (the method is restored after)."""
        if not hasattr(model, method_name):
            raise ValueError(f"Model type {model} does not have a method {method_name!r}.")
        captured = getattr(model, method_name)
        sig = inspect.signature(captured)
        if not self.signature_names:
            self.signature_names = list(sig.parameters)
        limit = store_n_calls + len(self.calls)
        had_own = method_name in vars(model)

        def spy(*args: Any, **kwargs: Any) -> Any:
            if len(self.calls) >= limit:
                return captured(*args, **kwargs)
            call = _Call(args, {k: v for k, v in kwargs.items() if v is not None})
            begin = time.perf_counter()
            res = captured(*args, **kwargs)
            call.latency = time.perf_counter() - begin
            call.outputs = [_clone(t) for t in _pytree.tree_flatten(res)[0]]
            self.calls.append(call)
            return res

        spy.__signature__ = sig  # type: ignore[attr-defined]
        setattr(model, method_name, spy)
        try:
            yield self
        finally:
            if had_own:
                setattr(model, method_name, captured)
            else:
                delattr(model, method_name)

    def _check_captured(self) -> None:
        if not self.calls:
            raise RuntimeError("No inputs were captured.")
        first = self.calls[0]
        for call in self.calls[1:]:
            if str(call.spec) != str(first.spec):
                raise NotImplementedError(
                    "lucid's InputObserver infers arguments only from calls that pass the "
                    "same arguments (torch aligns calls whose optional inputs differ); got "
                    f"{first.spec} and {call.spec}"
                )

    def infer_dynamic_shapes(
        self, set_batch_dimension_for: set[int | str] | bool | None = None
    ) -> tuple[Any, ...] | dict[str, Any]:
        """Per argument, ``{axis: name}`` for each axis whose size changed between the calls
        (and axis 0 of the arguments in ``set_batch_dimension_for``, by position or name, or
        of all with True); in the structure of the arguments, for ``export(dynamic_shapes=)``.
        The names are strings (``"<arg>_dim_<axis>"``), where torch puts ``Dim.DYNAMIC``."""
        self._check_captured()
        first = self.calls[0]
        n_args = len(first.args)
        owner = self._owners(first)
        specs: list[Any] = []
        for i, t in enumerate(first.flat):
            if not isinstance(t, Tensor):
                specs.append(None)
                continue
            key = owner[i]
            label = self.signature_names[key] if isinstance(key, int) else key
            if isinstance(key, int) and key >= len(self.signature_names):
                label = f"arg{key}"
            batch = bool(set_batch_dimension_for) and (
                set_batch_dimension_for is True
                or key in set_batch_dimension_for  # type: ignore[operator]
                or label in set_batch_dimension_for  # type: ignore[operator]
            )
            shapes = [tuple(c.flat[i].shape) for c in self.calls]
            if len({len(s) for s in shapes}) != 1:
                raise RuntimeError(f"All shapes must have the same rank but {shapes=}.")
            dims = {}
            for axis in range(len(shapes[0])):
                if len({s[axis] for s in shapes}) > 1 or (axis == 0 and batch):
                    suffix = "" if _count(owner, key) == 1 else f"_{i}"
                    dims[axis] = f"{label}{suffix}_dim_{axis}"
            specs.append(dims)
        tree_args, tree_kwargs = _pytree.tree_unflatten(specs, first.spec)
        if not first.kwargs:
            return tuple(tree_args)
        if not n_args:
            return dict(tree_kwargs)
        return {**dict(zip(self.signature_names, tree_args)), **tree_kwargs}

    def _owners(self, call: _Call) -> list[int | str]:
        """For each flattened leaf, the position or name of the argument it is part of."""
        owner: list[int | str] = []
        for i, a in enumerate(call.args):
            owner.extend([i] * len(_pytree.tree_flatten(a)[0]))
        for k, v in call.kwargs.items():
            owner.extend([k] * len(_pytree.tree_flatten(v)[0]))
        return owner

    def infer_arguments(
        self,
        index_or_args_or_kwargs: int | None = None,
        flat: bool = False,
        as_args_kwargs: bool = False,
    ) -> Any:
        """The arguments of a stored call (the first, or the one at the index): a tuple of
        positional arguments, a dict of named ones, both as a dict keyed by parameter name,
        ``(args, kwargs)`` with ``as_args_kwargs``, or the flat list with ``flat``."""
        self._check_captured()
        if index_or_args_or_kwargs is not None and not isinstance(index_or_args_or_kwargs, int):
            raise NotImplementedError(
                "lucid's InputObserver.infer_arguments takes a call's index (torch also "
                "aligns given args/kwargs with the stored calls)"
            )
        index = index_or_args_or_kwargs or 0
        if not 0 <= index < len(self.calls):
            raise IndexError(f"No stored input set for index={index}<{len(self.calls)}.")
        call = self.calls[index]
        if flat:
            return list(call.flat)
        args, kwargs = tuple(call.args), dict(call.kwargs)
        if as_args_kwargs:
            return args, kwargs
        if not kwargs:
            return args
        if not args:
            return kwargs
        return {**dict(zip(self.signature_names, args)), **kwargs}

    def check_discrepancies(
        self,
        onnx_program: ONNXProgram,
        atol: float = 1e-4,
        rtol: float = 0.1,
        progress_bar: bool = False,
        initializer: Callable[[str | bytes], ort.InferenceSession] = _ort_session_initializer,
        skip_none: bool = True,
    ) -> list[dict[str, str | int | float | bool]]:
        """Run ``onnx_program`` on every stored call and compare with the outputs the model
        gave: one dict per call (``SUCCESS``, ``abs``, ``rel`` or ``error``, durations), as
        torch (``rel`` is ``|a - b| / (|a| + rtol)``)."""
        self._check_captured()
        onnx_program.initialize_inference_session(initializer)
        data: list[dict[str, str | int | float | bool]] = []
        calls: Any = self.calls
        if progress_bar:
            from tqdm import tqdm

            calls = tqdm(calls)
        for call in calls:
            tensors = [t for t in call.flat if t is not None]
            begin = time.perf_counter()
            try:
                got: tuple[Any, ...] | None = onnx_program(*tensors)
                error = None
            except Exception as e:  # noqa: BLE001  (the summary names it, as torch)
                got, error = None, str(e)
            duration = time.perf_counter() - begin
            diff: dict[str, str | int | float | bool]
            if error is not None:
                diff = {"error": error, "SUCCESS": False}
            elif got is None or len(got) != len(call.outputs):
                diff = {"SUCCESS": False, "error": "not the same number of outputs"}
            else:
                diff = _compare(call.outputs, got, atol, rtol, skip_none)
            diff.update(
                index=len(data),
                duration_torch=call.latency,
                ort_duration=duration,
                n_inputs=len(tensors),
                n_none=sum(t is None for t in call.flat),
                n_empty=sum(t is None or t.numel() == 0 for t in call.flat),
            )
            data.append(diff)
        onnx_program.release()
        return data


def _count(owner: list[int | str], key: int | str) -> int:
    return sum(1 for o in owner if o == key)


def _compare(
    expected: list[Any], got: tuple[Any, ...], atol: float, rtol: float, skip_none: bool
) -> dict[str, str | int | float | bool]:
    success, err_abs, err_rel = True, 0.0, 0.0
    for e, g in zip(expected, got):
        if e is None or g is None:
            if type(e) is not type(g) and not skip_none:
                return {"SUCCESS": False, "error": "missing output"}
            continue
        a, b = np.asarray(e.numpy()), np.asarray(g.numpy())
        if a.shape != b.shape:
            return {"SUCCESS": False, "error": "not the same shape"}
        if a.dtype != b.dtype:
            return {"SUCCESS": False, "error": "not the same type"}
        d = np.abs(a.astype(np.float64) - b.astype(np.float64))
        err_abs = max(err_abs, float(d.max()) if d.size else 0.0)
        rel = d / (np.abs(a.astype(np.float64)) + rtol)
        err_rel = max(err_rel, float(rel.max()) if rel.size else 0.0)
        if err_abs > atol or err_rel > rtol:
            success = False
    return {"SUCCESS": success, "abs": err_abs, "rel": err_rel}
