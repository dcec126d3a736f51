"""torch <-> lucid: arguments into lucid, results into `Leaf`s, calls under a time guard.

Imports torch and lucid: the parity environment only.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np


def stub_expecttest() -> None:
    """torch.testing._internal imports `expecttest`, a test-only package; a stub suffices."""
    try:
        import expecttest  # noqa: F401
    except ImportError:
        module = types.ModuleType("expecttest")

        class TestCase:  # the base class torch's TestCase derives from; never run here
            pass

        module.TestCase = TestCase  # type: ignore[attr-defined]
        sys.modules["expecttest"] = module


stub_expecttest()

import torch  # noqa: E402
from gauge_common import Leaf, dtype_name  # noqa: E402

import lucid  # noqa: E402
import lucid.linalg  # noqa: E402, F401
import lucid.nn  # noqa: E402
import lucid.nn.functional  # noqa: E402, F401
import lucid.special  # noqa: E402, F401

MAX_ELEMENTS = 1_000_000  # a sample with more tensor elements than this is skipped


class Unconvertible(Exception):
    """An argument lucid has no counterpart for (a complex or sparse tensor, a storage...)."""


class MissingName(Unconvertible):
    """An argument whose lucid counterpart does not exist: the sample counts as missing."""


class GaugeTimeout(BaseException):
    """A call ran past its time; BaseException so that no `except Exception` swallows it."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise GaugeTimeout in the main thread after `seconds` (SIGALRM; Unix)."""

    def _raise(signum: int, frame: object) -> None:
        raise GaugeTimeout(f"timed out after {seconds:g} s")

    old = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def lucid_dtype(dtype: torch.dtype) -> Any:
    """lucid's dtype of the same name; Unconvertible when lucid has none."""
    name = dtype_name(dtype)
    found = getattr(lucid, name, None)
    if found is None or not isinstance(found, type(lucid.float32)):
        raise MissingName(f"no lucid.{name}")
    return found


def lucid_function(fn: Any) -> Any:
    """lucid's function of the same public path (torch.nn.functional.gelu -> lucid.nn...)."""
    name = getattr(fn, "__name__", "")
    module = getattr(fn, "__module__", "") or ""
    for path in (module, "torch.nn.functional", "torch"):
        target: Any = lucid
        for part in [*path.split(".")[1:], name]:
            target = getattr(target, part, None)
            if target is None:
                break
        if target is not None and callable(target):
            return target
    raise Unconvertible(f"no lucid counterpart of the callable argument {module}.{name}")


def count_elements(obj: Any) -> int:
    """Elements of every torch tensor inside `obj` (lists, tuples, dicts)."""
    if isinstance(obj, torch.Tensor):
        return int(obj.numel())
    if isinstance(obj, list | tuple):
        return sum(count_elements(o) for o in obj)
    if isinstance(obj, dict):
        return sum(count_elements(o) for o in obj.values())
    return 0


class ToLucid:
    """Converts torch arguments to lucid ones, remembering the tensors that require grad.

    The same torch tensor object maps to the same lucid tensor (aliasing is kept), and the
    data is copied, so torch writing into its sample later does not change lucid's.
    """

    def __init__(self, alias_storage: bool = False) -> None:
        self.memo: dict[int, Any] = {}
        self.grad_pairs: list[tuple[torch.Tensor, Any]] = []
        # alias_storage: tensors that share torch storage (a view passed as out= of its own
        # input) become views of one NumPy array, so lucid sees the overlap torch rejects
        self.alias_storage = alias_storage
        self.storages: dict[tuple[int, torch.dtype], np.ndarray] = {}

    def __call__(self, obj: Any) -> Any:
        if isinstance(obj, torch.Tensor):
            return self.tensor(obj)
        if isinstance(obj, torch.dtype):
            return lucid_dtype(obj)
        if isinstance(obj, torch.Size):
            size = getattr(lucid, "Size", tuple)
            return size(int(s) for s in obj)
        if isinstance(obj, torch.device):
            return obj.type
        if isinstance(obj, torch.memory_format | torch.layout):
            name = str(obj).removeprefix("torch.")
            if not hasattr(lucid, name):
                raise MissingName(f"no lucid.{name}")
            return getattr(lucid, name)
        if isinstance(obj, torch.Generator):
            gen_cls = getattr(lucid, "Generator", None)
            if gen_cls is None:
                raise Unconvertible("lucid has no Generator")
            return gen_cls().manual_seed(int(obj.initial_seed()))
        if isinstance(obj, list):
            return [self(o) for o in obj]
        if isinstance(obj, tuple):
            items = [self(o) for o in obj]
            return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
        if isinstance(obj, dict):
            return {k: self(v) for k, v in obj.items()}
        if isinstance(obj, slice):
            return slice(self(obj.start), self(obj.stop), self(obj.step))
        if isinstance(obj, torch.nn.Module) and hasattr(obj, "_gauge_ctor"):
            # a module argument (TransformerEncoder's layer): lucid's class of the same name,
            # built from the arguments recorded by `record_module_args`
            cls = getattr(lucid.nn, type(obj).__name__, None)
            if cls is None:
                raise MissingName(f"no lucid.nn.{type(obj).__name__}")
            args, kwargs = self(obj._gauge_ctor)
            return cls(*args, **kwargs)
        if isinstance(obj, torch.nn.Module | torch.Storage | torch.UntypedStorage):
            raise Unconvertible(f"a {type(obj).__name__} argument")
        module = getattr(obj, "__module__", None) or ""
        if callable(obj) and module.startswith("torch"):
            return lucid_function(obj)
        return obj

    def tensor(self, t: torch.Tensor) -> Any:
        key = id(t)
        if key in self.memo:
            return self.memo[key]
        if t.layout != torch.strided or t.device.type != "cpu":
            raise Unconvertible(f"a {t.layout} tensor on {t.device}")
        if t.is_complex() and t.dtype != torch.complex32:
            dtype = lucid_dtype(t.dtype)
            array = t.detach().resolve_conj().numpy().copy()
            result = lucid.tensor(array, dtype=dtype)
        elif t.dtype in (torch.bfloat16, torch.float16, torch.complex32):
            dtype = lucid_dtype(t.dtype)  # raises when lucid lacks it
            array = t.detach().to(torch.float32).numpy().copy()
            result = lucid.tensor(array).to(dtype)
        elif self.alias_storage and not t.requires_grad and t.numel():
            dtype = lucid_dtype(t.dtype)
            result = lucid.Tensor.from_backend_array(self._view(t), lucid.tensor([]).backend)
            if result.dtype is not dtype:
                result = lucid.tensor(self._view(t).copy(), dtype=dtype)
        else:
            dtype = lucid_dtype(t.dtype)
            result = lucid.tensor(
                t.detach().resolve_conj().resolve_neg().numpy().copy(), dtype=dtype
            )
        if t.requires_grad:
            result.requires_grad_(True)
            self.grad_pairs.append((t, result))
        self.memo[key] = result
        return result

    def _view(self, t: torch.Tensor) -> np.ndarray:
        """`t` as a view of a copy of its whole storage (one copy per storage and dtype)."""
        storage = t.untyped_storage()
        key = (storage.data_ptr(), t.dtype)
        if key not in self.storages:
            whole = torch.empty(0, dtype=t.dtype).set_(storage).detach()
            self.storages[key] = whole.resolve_neg().numpy().copy()
        base = self.storages[key]
        size = base.itemsize
        try:
            return np.ndarray(  # a view whose .base is the storage's array, as a slice's is
                tuple(t.shape),
                base.dtype,
                buffer=base,
                offset=t.storage_offset() * size,
                strides=tuple(st * size for st in t.stride()),
            )
        except ValueError:  # a view NumPy cannot express over that buffer: a plain copy
            return t.detach().resolve_neg().numpy().copy()


@contextlib.contextmanager
def record_module_args() -> Iterator[None]:
    """While active, every torch.nn module built keeps its constructor's arguments, so that a
    module passed as an argument can be rebuilt in lucid."""
    patched = []
    for name in dir(torch.nn):
        cls = getattr(torch.nn, name)
        if isinstance(cls, type) and issubclass(cls, torch.nn.Module) and "__init__" in vars(cls):
            original = vars(cls)["__init__"]

            def init(self: Any, *args: Any, __original: Any = original, **kwargs: Any) -> None:
                if not hasattr(self, "_gauge_ctor"):
                    object.__setattr__(self, "_gauge_ctor", (args, kwargs))
                __original(self, *args, **kwargs)

            cls.__init__ = init
            patched.append((cls, original))
    try:
        yield
    finally:
        for cls, original in patched:
            cls.__init__ = original


def clone_torch(obj: Any) -> Any:
    """A deep copy of torch arguments (tensors cloned, requires_grad kept)."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().clone().requires_grad_(obj.requires_grad)
    if isinstance(obj, list):
        return [clone_torch(o) for o in obj]
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(clone_torch(o) for o in obj)
    if isinstance(obj, dict):
        return {k: clone_torch(v) for k, v in obj.items()}
    return obj


def _array(t: Any) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return np.asarray(t.detach().numpy(force=True))  # force: torch's lazy zero tensors
    return np.asarray(t.detach().numpy())


def leaves(obj: Any) -> list[Leaf]:
    """Flatten a torch or lucid result into comparable leaves."""
    out: list[Leaf] = []
    _flatten(obj, out)
    return out


def _flatten(obj: Any, out: list[Leaf]) -> None:
    if isinstance(obj, torch.Tensor):
        if obj.layout != torch.strided or obj.dtype == torch.complex32:
            out.append(Leaf("other", f"tensor {obj.dtype} {tuple(obj.shape)}"))
        elif obj.is_complex():
            out.append(Leaf("array", _array(obj.resolve_conj()), dtype_name(obj.dtype)))
        elif obj.dtype == torch.bfloat16:  # NumPy has no bfloat16: compare as float32
            out.append(Leaf("array", _array(obj.float()), "bfloat16"))
        else:
            out.append(Leaf("array", _array(obj), dtype_name(obj.dtype)))
    elif isinstance(obj, lucid.Tensor):
        try:
            arr = _array(obj)
        except Exception as exc:  # a dtype NumPy cannot hold
            out.append(Leaf("other", f"unreadable lucid tensor: {exc}"))
            return
        out.append(Leaf("array", arr, dtype_name(obj.dtype)))
    elif obj is None:
        out.append(Leaf("none", None))
    elif isinstance(obj, bool | int | float):
        out.append(Leaf("scalar", obj, type(obj).__name__))
    elif isinstance(obj, np.generic):
        out.append(Leaf("scalar", obj.item(), type(obj).__name__))
    elif isinstance(obj, list | tuple):
        for o in obj:
            _flatten(o, out)
    elif isinstance(obj, torch.dtype) or type(obj) is type(lucid.float32):
        out.append(Leaf("other", f"dtype {dtype_name(obj)}"))
    elif isinstance(obj, str):
        out.append(Leaf("other", obj))
    else:
        out.append(Leaf("other", type(obj).__name__))


def tensor_leaves(obj: Any, cls: type) -> list[Any]:
    """The tensors of class `cls` inside a result, in `leaves` order (others as None)."""
    found: list[Any] = []

    def walk(o: Any) -> None:
        if isinstance(o, torch.Tensor | lucid.Tensor):
            found.append(o if isinstance(o, cls) else None)
        elif isinstance(o, list | tuple):
            for item in o:
                walk(item)
        else:
            found.append(None)

    walk(obj)
    return found


def cotangent(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """A fixed random cotangent: the gradient of sum(output * cotangent) is compared."""
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def input_grads(
    torch_out: Any,
    lucid_out: Any,
    pairs: list[tuple[torch.Tensor, Any]],
    seed: int,
) -> tuple[list[np.ndarray | None], list[np.ndarray | None] | str] | None:
    """Gradients of the inputs in `pairs` through torch and lucid, or None when torch has none.

    lucid's side is a string when its backward failed or an output is not differentiable.
    """
    t_outs = tensor_leaves(torch_out, torch.Tensor)
    l_outs = tensor_leaves(lucid_out, lucid.Tensor)
    chosen = [
        i
        for i, t in enumerate(t_outs)
        if t is not None and t.requires_grad and t.is_floating_point() and t.numel() > 0
    ]
    if not chosen or not pairs:
        return None
    cots = [cotangent(tuple(t_outs[i].shape), seed + i) for i in chosen]
    try:
        t_grads = torch.autograd.grad(
            [t_outs[i] for i in chosen],
            [p[0] for p in pairs],
            [torch.from_numpy(c).to(t_outs[i].dtype) for c, i in zip(cots, chosen, strict=True)],
            allow_unused=True,
        )
    except Exception:
        return None
    expected = [None if g is None else _array(g).astype(np.float64) for g in t_grads]
    if len(l_outs) != len(t_outs):
        return expected, "lucid returns a different number of outputs"
    for i in chosen:
        lo = l_outs[i]
        if lo is None or not lo.requires_grad:
            return expected, f"lucid output {i} does not require grad"
    try:
        l_grads = lucid.autograd.grad(
            [l_outs[i] for i in chosen],
            [p[1] for p in pairs],
            [lucid.tensor(c).to(l_outs[i].dtype) for c, i in zip(cots, chosen, strict=True)],
            allow_unused=True,
        )
    except GaugeTimeout:
        raise
    except Exception as exc:
        return expected, f"backward raises {type(exc).__name__}: {exc}"[:200]
    got = [None if g is None else _array(g).astype(np.float64) for g in l_grads]
    return expected, got


def rebind_torch(fn: Callable[..., Any], cache: dict[int, dict[str, Any]]) -> Callable[..., Any]:
    """`fn` (a lambda of torch's test module) with its global `torch` bound to `lucid`."""
    if not isinstance(fn, types.FunctionType):
        return fn
    key = id(fn.__globals__)
    if key not in cache:
        namespace = dict(fn.__globals__)
        namespace["torch"] = lucid
        cache[key] = namespace
    return types.FunctionType(fn.__code__, cache[key], fn.__name__, fn.__defaults__, fn.__closure__)
