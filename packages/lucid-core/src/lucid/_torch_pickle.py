"""PyTorch's checkpoint formats without PyTorch: ``torch.save``'s zip archive and legacy file.

Reading: a ``torch.save`` zip holds ``<name>/data.pkl`` (a protocol-2 pickle whose tensors
name their storages by persistent id ``("storage", <StorageType>, key, location, numel)``) and
one raw little-endian record ``<name>/data/<key>`` per storage. The legacy format is five
pickles in a row (magic number, protocol version, system info, the object, the storage keys)
followed by each storage's element count and bytes.

Two unpicklers read ``data.pkl``:

- :class:`WeightsOnlyUnpickler` (``weights_only=True``, the default) interprets the pickle
  opcodes itself, as PyTorch's ``torch._weights_only_unpickler`` does: it never imports a
  module and never calls anything but the entries of an allowlist built here (lucid's own
  rebuild functions under torch's names, ``OrderedDict``, ``set``...) and the classes a user
  registered with ``add_safe_globals``. Any other global is refused by name before anything
  runs; BUILD, NEWOBJ, APPEND and SETITEM only act on the types PyTorch's loader allows.
- :class:`FullUnpickler` (``weights_only=False``, only when asked) is ``pickle.Unpickler``:
  torch's names still map to lucid's rebuild functions, every other global is imported.

Writing: :func:`write_zip` pickles an object with every tensor as torch writes it
(``torch._utils._rebuild_tensor_v2`` over a storage record), so ``torch.load(weights_only=True)``
reads a lucid state dict; tensor subclasses (``nn.Parameter``, ``nn.Buffer``) of a whole pickled
object go through ``torch._tensor._rebuild_from_type_v2`` with their lucid class.

Nothing here imports torch. Errors: :class:`FormatError` for a malformed file,
``pickle.UnpicklingError`` for what the weights-only unpickler refuses.
"""

from __future__ import annotations

import _compat_pickle
import codecs
import io
import math
import pickle
import re
import struct
import sys
import zipfile
from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from lucid import dtypes
from lucid._tensor import Tensor
from lucid.backends import get_backend

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
_MAX_PICKLE = 1 << 31  # data.pkl larger than this is refused before it is read
_ALIGN = 64  # torch aligns each storage record's data to 64 bytes (mmap-friendly)


class FormatError(ValueError):
    """A file that is not a valid torch.save checkpoint (truncated, inconsistent, unsupported)."""


# -- dtypes and storage types ------------------------------------------------------------------

# torch dtype name -> (numpy type of the stored bytes, torch's legacy storage class name)
_DTYPES: dict[str, tuple[str, str]] = {
    "float32": ("<f4", "FloatStorage"),
    "float64": ("<f8", "DoubleStorage"),
    "float16": ("<f2", "HalfStorage"),
    "bfloat16": ("<u2", "BFloat16Storage"),  # raw bits: numpy has no bfloat16
    "int64": ("<i8", "LongStorage"),
    "int32": ("<i4", "IntStorage"),
    "int16": ("<i2", "ShortStorage"),
    "int8": ("|i1", "CharStorage"),
    "uint8": ("|u1", "ByteStorage"),
    "bool": ("|b1", "BoolStorage"),
    "complex64": ("<c8", "ComplexFloatStorage"),
    "complex128": ("<c16", "ComplexDoubleStorage"),
}
# dtypes torch has and lucid has not: loadable as values, refused as a tensor's dtype
_OTHER_DTYPES = (
    "uint16", "uint32", "uint64", "complex32", "float4_e2m1fn_x2", "qint8",
    "quint8", "qint32", "quint4x2", "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8",
    "bits16", *(f"uint{i}" for i in range(1, 8)), *(f"int{i}" for i in range(1, 8)),
)  # fmt: skip
_OTHER_STORAGES = ("ComplexHalfStorage", "QInt8Storage", "QUInt8Storage", "QInt32Storage",
                   "QUInt4x2Storage", "QUInt2x4Storage")  # fmt: skip


# float8 tensors load (over an untyped storage, as torch saves them) and are not saved here:
# torch has no typed storage class for them
_FLOAT8 = tuple(d.name for d in dtypes.FLOAT8_DTYPES)


class TorchDType:
    """A torch dtype lucid has no tensors of (``torch.uint16``...): kept as a value."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class StorageType:
    """A torch storage class named in a checkpoint (``torch.FloatStorage``...)."""

    __slots__ = ("dtype_name", "class_name")

    def __init__(self, dtype_name: str | None, class_name: str) -> None:
        self.dtype_name, self.class_name = dtype_name, class_name

    def __repr__(self) -> str:
        return f"torch.{self.class_name}"


class _Marker:
    """A torch class named in a checkpoint that lucid stands in for (``torch.Tensor``...)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<class '{self.name}'>"


TORCH_TENSOR = _Marker("torch.Tensor")
TORCH_PARAMETER = _Marker("torch.nn.parameter.Parameter")
_STORAGE_DTYPES = {cls: name for name, (_, cls) in _DTYPES.items()}


def _lucid_dtype_name(dtype: Any) -> str:
    """The torch/lucid dtype name of a dtype found in a checkpoint, or FormatError."""
    if isinstance(dtype, dtypes.dtype) and (dtype.name in _DTYPES or dtype.name in _FLOAT8):
        return dtype.name
    raise FormatError(f"lucid has no tensors of dtype {dtype!r}")


class Storage:
    """One storage of a checkpoint: a 1-d little-endian array of its elements."""

    __slots__ = ("array", "dtype_name", "location")

    def __init__(self, array: np.ndarray | None, dtype_name: str, location: str) -> None:
        self.array, self.dtype_name, self.location = array, dtype_name, location


# (arr, saved location, is bfloat16 bits) -> Tensor on the device map_location picks
Place = Callable[[np.ndarray, str, bool], Tensor]


# -- the rebuild functions (torch._utils names, lucid's implementations) ----------------------


def _ints(value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)) or not all(type(v) is int and v >= 0 for v in value):
        raise FormatError(f"a tensor's {what} must be a tuple of non-negative ints, got {value!r}")
    return tuple(value)


def _strided(arr: np.ndarray, offset: Any, size: Any, stride: Any) -> np.ndarray:
    """The tensor (offset, size, stride) of the 1-d storage ``arr``: a view where contiguous."""
    shape, strides = _ints(size, "size"), _ints(stride, "stride")
    if type(offset) is not int or offset < 0 or len(shape) != len(strides):
        raise FormatError(
            f"a tensor's storage offset must be a non-negative int and its stride as long as its "
            f"size, got offset {offset!r}, size {shape}, stride {strides}"
        )
    count = math.prod(shape)
    if count:
        last = offset + sum((n - 1) * s for n, s in zip(shape, strides))
        if last >= arr.size:
            raise FormatError(
                f"a tensor of size {shape}, stride {strides} at offset {offset} reaches element "
                f"{last} of a storage of {arr.size} elements"
            )
    expected, acc = [], 1
    for n in reversed(shape):
        expected.append(acc)
        acc *= n
    if count == 0:
        return np.zeros(shape, dtype=arr.dtype)
    if all(n == 1 or s == e for n, s, e in zip(shape, strides, reversed(expected))):
        return arr[offset : offset + count].reshape(shape)  # shares the storage, as torch
    if count > 16 * arr.size + (1 << 20):
        raise FormatError(  # an expanded view would become a copy this big: a memory bomb
            f"a tensor of size {shape} over a storage of {arr.size} elements: refusing to expand "
            f"it into {count} elements"
        )
    item = arr.itemsize
    view = np.lib.stride_tricks.as_strided(
        arr[offset:], shape=shape, strides=[s * item for s in strides], writeable=False
    )
    return np.array(view)  # a private copy: lucid arrays don't overlap


class Rebuilder:
    """torch's rebuild functions for one load, placing each tensor through ``place``."""

    def __init__(self, place: Place) -> None:
        self.place = place

    def tensor(self, storage: Any, offset: Any, size: Any, stride: Any,
               dtype_name: str | None = None, metadata: Any = None) -> Tensor:  # fmt: skip
        if not isinstance(storage, Storage):
            raise FormatError(f"a tensor's storage must be a storage record, got {storage!r}")
        if storage.array is None:  # the first pass over a legacy file: sizes only
            return Tensor.from_backend_array(np.zeros(0), get_backend("cpu"))
        arr = storage.array
        name = storage.dtype_name
        if dtype_name is not None and dtype_name != name:
            arr, name = _reinterpret(arr, dtype_name), dtype_name
        out = _apply_metadata(_strided(arr, offset, size, stride), metadata)
        if name == "bfloat16":
            out = (out.astype("<u4") << 16).view("<f4")
        elif name in _FLOAT8:  # the stored bits, as ml_dtypes' float8 type
            out = out.view(get_backend("cpu").native_dtype(dtypes.to_dtype(name)))
        return self.place(out, storage.location, name == "bfloat16")

    def rebuild_tensor(self, storage: Any, offset: Any, size: Any, stride: Any) -> Tensor:
        """``torch._utils._rebuild_tensor``."""
        return self.tensor(storage, offset, size, stride)

    def rebuild_tensor_v2(self, storage: Any, offset: Any, size: Any, stride: Any,
                          requires_grad: Any, backward_hooks: Any, metadata: Any = None
                          ) -> Tensor:  # fmt: skip
        """``torch._utils._rebuild_tensor_v2``."""
        t = self.tensor(storage, offset, size, stride, metadata=metadata)
        return _requires_grad(t, requires_grad)

    def rebuild_tensor_v3(self, storage: Any, offset: Any, size: Any, stride: Any,
                          requires_grad: Any, backward_hooks: Any, dtype: Any,
                          metadata: Any = None) -> Tensor:  # fmt: skip
        """``torch._utils._rebuild_tensor_v3``: a tensor over an untyped storage."""
        t = self.tensor(storage, offset, size, stride, _lucid_dtype_name(dtype), metadata)
        return _requires_grad(t, requires_grad)

    def rebuild_parameter(self, data: Any, requires_grad: Any, backward_hooks: Any) -> Tensor:
        """``torch._utils._rebuild_parameter``: lucid-core has no Parameter class, so a tensor."""
        return _requires_grad(_tensor_arg(data), requires_grad)

    def rebuild_parameter_with_state(self, data: Any, requires_grad: Any, backward_hooks: Any,
                                     state: Any) -> Tensor:  # fmt: skip
        """``torch._utils._rebuild_parameter_with_state`` (the Python attributes are dropped)."""
        return _requires_grad(_tensor_arg(data), requires_grad)

    def rebuild_device_tensor_from_cpu_tensor(self, data: Any, dtype: Any, device: Any,
                                              requires_grad: Any) -> Tensor:  # fmt: skip
        """``torch._utils._rebuild_device_tensor_from_cpu_tensor``."""
        t = _tensor_arg(data).to(dtypes.to_dtype(_lucid_dtype_name(dtype)))
        return _requires_grad(t, requires_grad)

    def parameter(self, data: Any = None, requires_grad: Any = True) -> Tensor:
        """``torch.nn.Parameter(data, requires_grad)`` (NEWOBJ): a tensor."""
        return _requires_grad(_tensor_arg(data), requires_grad)

    def rebuild_from_type_v2(self, func: Any, new_type: Any, args: Any, state: Any) -> Any:
        """``torch._tensor._rebuild_from_type_v2``: a tensor of a subclass (func(*args))."""
        if not isinstance(args, tuple):
            raise FormatError(f"_rebuild_from_type_v2 expects a tuple of arguments, got {args!r}")
        rebuilders = (self.rebuild_tensor, self.rebuild_tensor_v2, self.rebuild_tensor_v3,
                      self.rebuild_parameter, self.rebuild_parameter_with_state)  # fmt: skip
        if func not in rebuilders:
            raise FormatError(
                f"_rebuild_from_type_v2 calls only torch's rebuild functions, got {func!r}"
            )
        ret = func(*args)
        if new_type is TORCH_TENSOR or new_type is TORCH_PARAMETER or new_type is Tensor:
            return ret
        if isinstance(new_type, type) and issubclass(new_type, Tensor):
            if state and not (
                isinstance(state, dict)
                and all(isinstance(k, str) and not k.startswith("__") for k in state)
                and all(v is None or isinstance(v, (bool, int, float, str)) for v in state.values())
            ):
                raise FormatError(
                    f"a {new_type.__name__}'s attributes must be plain values, got {state!r:.80}"
                )
            obj = new_type.__new__(new_type)
            obj._set_fields(ret._data, ret.backend, ret.requires_grad)
            if state:
                obj.__dict__.update(state)
            return obj
        raise FormatError(f"_rebuild_from_type_v2 can't make a tensor of type {new_type!r}")

    def unsupported(self, kind: str) -> Callable[..., Any]:
        def refuse(*args: Any) -> Any:
            raise FormatError(f"lucid can't load {kind} tensors")

        return refuse


def _reinterpret(arr: np.ndarray, dtype_name: str) -> np.ndarray:
    np_type = np.dtype("|u1" if dtype_name in _FLOAT8 else _DTYPES[dtype_name][0])
    if arr.nbytes % np_type.itemsize:
        raise FormatError(f"a storage of {arr.nbytes} bytes is not a whole number of {dtype_name}")
    return arr.view(np.uint8).view(np_type)


def _tensor_arg(data: Any) -> Tensor:
    if not isinstance(data, Tensor):
        raise FormatError(f"expected a tensor, got {type(data).__name__}")
    return data


def _requires_grad(t: Tensor, flag: Any) -> Tensor:
    if type(flag) is not bool:
        raise FormatError(f"requires_grad must be a bool, got {flag!r}")
    if flag:
        t.requires_grad_(True)
    return t


def _apply_metadata(arr: np.ndarray, metadata: Any) -> np.ndarray:
    """torch's lazy conjugate/negative bits, applied (lucid has no such bits)."""
    if not metadata:
        return arr
    if not isinstance(metadata, dict) or not set(metadata) <= {"conj", "neg"}:
        raise FormatError(f"unknown tensor metadata {metadata!r}")
    if metadata.get("neg"):
        arr = np.negative(arr)
    if metadata.get("conj"):
        arr = np.conj(arr)
    return arr


# -- small allowlisted callables ---------------------------------------------------------------


def _size(*args: Any) -> tuple[int, ...]:
    """``torch.Size(...)``: a tuple of ints."""
    value = args[0] if len(args) == 1 else args
    return _ints(value, "size")


def _device(*args: Any) -> str:
    """``torch.device(type, index)``: the device's name."""
    if not args or not all(isinstance(a, (str, int)) and type(a) is not bool for a in args):
        raise FormatError(f"torch.device expects a type and an index, got {args!r}")
    return ":".join(str(a) for a in args)


def _encode(text: Any, encoding: Any = "utf-8") -> bytes:
    """``_codecs.encode`` as pickles of bytes use it (latin1 only: no codec lookup by name)."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise FormatError(f"_codecs.encode is only allowed as (str, 'latin1'), got {encoding!r}")
    return codecs.latin_1_encode(text)[0]


def _bytearray(*args: Any) -> bytearray:
    if len(args) > 1 or (args and not isinstance(args[0], (bytes, list))):
        raise FormatError("bytearray is only allowed of bytes or a list of ints")
    return bytearray(*args)


def _complex(*args: Any) -> complex:
    if not all(isinstance(a, (int, float, str)) for a in args) or len(args) > 2:
        raise FormatError(f"complex expects up to two numbers, got {args!r}")
    return complex(*args)


def _get_layout(name: Any) -> str:
    if name != "torch.strided":
        raise FormatError(f"lucid only has strided tensors, got layout {name!r}")
    return "torch.strided"


def torch_globals(rb: Rebuilder) -> dict[str, Any]:
    """The names a torch checkpoint may use and what lucid puts in their place."""
    rc: dict[str, Any] = {
        "collections.OrderedDict": OrderedDict,
        "collections.Counter": Counter,
        "torch.nn.parameter.Parameter": TORCH_PARAMETER,
        "torch.serialization._get_layout": _get_layout,
        "torch.Size": _size,
        "torch.Tensor": TORCH_TENSOR,
        "torch.device": _device,
        "_codecs.encode": _encode,
        "builtins.bytearray": _bytearray,
        "builtins.set": set,
        "builtins.complex": _complex,
        "torch._utils._rebuild_tensor": rb.rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": rb.rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": rb.rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": rb.rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": rb.rebuild_parameter_with_state,
        "torch._utils._rebuild_device_tensor_from_cpu_tensor":
            rb.rebuild_device_tensor_from_cpu_tensor,
        "torch._tensor._rebuild_from_type_v2": rb.rebuild_from_type_v2,
    }  # fmt: skip
    for fn, kind in (("_rebuild_qtensor", "quantized"), ("_rebuild_sparse_tensor", "sparse"),
                     ("_rebuild_meta_tensor_no_storage", "meta"),
                     ("_rebuild_nested_tensor", "nested"),
                     ("_rebuild_wrapper_subclass", "wrapper-subclass"),
                     ("_rebuild_device_tensor_from_numpy", "numpy-backed device")):  # fmt: skip
        rc[f"torch._utils.{fn}"] = rb.unsupported(kind)
    for name in (*_DTYPES, *_FLOAT8):
        rc[f"torch.{name}"] = dtypes.to_dtype(name)
    for name in _OTHER_DTYPES:
        rc[f"torch.{name}"] = TorchDType(name)
    for name, (_, cls) in _DTYPES.items():
        rc[f"torch.{cls}"] = StorageType(name, cls)
    for cls in _OTHER_STORAGES:
        rc[f"torch.{cls}"] = StorageType(None, cls)
    for name in (*_DTYPES, *_FLOAT8):  # lucid's own dtypes, as a whole lucid module pickles them
        rc[f"lucid.dtypes.{name}"] = dtypes.to_dtype(name)
    # lucid's Parameter and Buffer, as torch allows torch.nn.Parameter: only when lucid.nn is
    # already imported (lucid-core does not import it; a program loading modules has)
    nn_parameter = sys.modules.get("lucid.nn.parameter")
    for cls in ("Parameter", "Buffer"):
        if nn_parameter is not None and isinstance(getattr(nn_parameter, cls, None), type):
            rc[f"lucid.nn.parameter.{cls}"] = getattr(nn_parameter, cls)
    untyped = StorageType("uint8", "UntypedStorage")
    rc["torch.UntypedStorage"] = rc["torch.storage.UntypedStorage"] = untyped
    return rc


# -- the weights-only unpickler ----------------------------------------------------------------


def _display(full_path: str) -> str:
    """A global's name as torch's messages write it (``builtins.eval`` -> ``eval``)."""
    return full_path[len("builtins.") :] if full_path.startswith("builtins.") else full_path


def refusal(full_path: str) -> str:
    """torch's words for a global the weights-only unpickler does not allow."""
    name = _display(full_path)
    return (
        f"Unsupported global: GLOBAL {name} was not an allowed global by default. Please use "
        f"`lucid.serialization.add_safe_globals([{name}])` or the "
        f"`lucid.serialization.safe_globals([{name}])` context manager to allowlist this global "
        "if you trust this class/function."
    )


_U = pickle.UnpicklingError
_OP = {name: getattr(pickle, name)[0] for name in (
    "PROTO", "FRAME", "STOP", "MARK", "POP", "POP_MARK", "DUP", "NONE", "NEWTRUE", "NEWFALSE",
    "BININT", "BININT1", "BININT2", "LONG1", "LONG4", "BINFLOAT", "BINUNICODE",
    "SHORT_BINUNICODE", "BINUNICODE8", "BINSTRING", "SHORT_BINSTRING", "BINBYTES",
    "SHORT_BINBYTES", "BINBYTES8", "EMPTY_TUPLE", "TUPLE", "TUPLE1", "TUPLE2", "TUPLE3",
    "EMPTY_LIST", "LIST", "APPEND", "APPENDS", "EMPTY_DICT", "DICT", "SETITEM", "SETITEMS",
    "EMPTY_SET", "ADDITEMS", "FROZENSET", "GLOBAL", "STACK_GLOBAL", "REDUCE", "NEWOBJ",
    "BUILD", "BINPERSID", "BINGET", "LONG_BINGET", "BINPUT", "LONG_BINPUT", "MEMOIZE",
)}  # fmt: skip


class WeightsOnlyUnpickler:
    """Reads a pickle by interpreting its opcodes: only allowlisted globals are ever called.

    ``allowed`` maps ``module.name`` to the object that stands for it; ``user`` holds the
    classes registered with ``add_safe_globals``. ``persistent_load(pid)`` gets each
    ``("storage", ...)`` id. No module is imported, nothing outside these tables is called, and
    the first global outside them stops the load with torch's message naming it.
    """

    def __init__(self, data: IO[bytes], allowed: dict[str, Any], user: dict[str, Any],
                 persistent_load: Callable[[Any], Any], parameter: Callable[..., Any],
                 encoding: str = "ASCII") -> None:  # fmt: skip
        self.f, self.allowed, self.user, self._parameter = data, allowed, user, parameter
        self.persistent_load, self.encoding = persistent_load, encoding
        self.callables = {id(v) for v in allowed.values()} | {id(v) for v in user.values()}
        self.user_types = {id(v) for v in user.values() if isinstance(v, type)}
        self.classes = {id(v) for v in (*allowed.values(), *user.values()) if isinstance(v, type)}
        self.memo: dict[int, Any] = {}
        self.stack: list[Any] = []
        self.metastack: list[list[Any]] = []

    # reading
    def read(self, n: int) -> bytes:
        data = self.f.read(n)
        if len(data) != n:
            raise _U("pickle data was truncated")
        return data

    def readline(self) -> bytes:
        line = self.f.readline()
        if not line.endswith(b"\n"):
            raise _U("pickle data was truncated")
        return line[:-1]

    def pop_mark(self) -> list[Any]:
        if not self.metastack:
            raise _U("could not find MARK")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def top(self) -> Any:
        if not self.stack:
            raise _U("unpickling stack underflow")
        return self.stack[-1]

    def pop(self) -> Any:
        if not self.stack:
            raise _U("unpickling stack underflow")
        return self.stack.pop()

    def find_class(self, module: str, name: str) -> Any:
        full = f"{module}.{name}"
        if full in self.allowed:
            return self.allowed[full]
        if full in self.user:
            return self.user[full]
        raise _U(refusal(full))

    def load(self) -> Any:
        """The object the pickle describes."""
        op = _OP
        while True:
            key = self.f.read(1)
            if not key:
                raise _U("pickle data was truncated")
            code = key[0]
            if code == op["STOP"]:
                return self.pop()
            self.step(code)

    def step(self, code: int) -> None:  # noqa: C901 (one branch per opcode, as pickle.py)
        op = _OP
        if code == op["PROTO"]:
            proto = self.read(1)[0]
            if proto > 5:
                raise _U(f"unsupported pickle protocol: {proto}")
        elif code == op["FRAME"]:
            self.read(8)
        elif code == op["MARK"]:
            self.metastack.append(self.stack)
            self.stack = []
        elif code == op["POP"]:
            self.pop()
        elif code == op["POP_MARK"]:
            self.pop_mark()
        elif code == op["DUP"]:
            self._push(self.top())
        elif code == op["NONE"]:
            self._push(None)
        elif code == op["NEWTRUE"]:
            self._push(True)
        elif code == op["NEWFALSE"]:
            self._push(False)
        elif code == op["BININT"]:
            self._push(struct.unpack("<i", self.read(4))[0])
        elif code == op["BININT1"]:
            self._push(self.read(1)[0])
        elif code == op["BININT2"]:
            self._push(struct.unpack("<H", self.read(2))[0])
        elif code == op["LONG1"]:
            self._push(pickle.decode_long(self.read(self.read(1)[0])))
        elif code == op["LONG4"]:
            n = struct.unpack("<i", self.read(4))[0]
            if n < 0 or n > 4096:
                raise _U(f"LONG4 of {n} bytes refused")
            self._push(pickle.decode_long(self.read(n)))
        elif code == op["BINFLOAT"]:
            self._push(struct.unpack(">d", self.read(8))[0])
        elif code in (op["BINUNICODE"], op["SHORT_BINUNICODE"], op["BINUNICODE8"]):
            self._push(str(self.read(self._length(code)), "utf-8", "surrogatepass"))
        elif code in (op["BINSTRING"], op["SHORT_BINSTRING"]):
            raw = self.read(self._length(code))
            self._push(raw if self.encoding == "bytes" else raw.decode(self.encoding, "strict"))
        elif code in (op["BINBYTES"], op["SHORT_BINBYTES"], op["BINBYTES8"]):
            self._push(self.read(self._length(code)))
        elif code == op["EMPTY_TUPLE"]:
            self._push(())
        elif code == op["TUPLE"]:
            self._push(tuple(self.pop_mark()))
        elif code == op["TUPLE1"]:
            self.stack[-1:] = [(self.top(),)]
        elif code == op["TUPLE2"]:
            self._tuple(2)
        elif code == op["TUPLE3"]:
            self._tuple(3)
        elif code == op["EMPTY_LIST"]:
            self._push([])
        elif code == op["LIST"]:
            self._push(self.pop_mark())
        elif code == op["APPEND"]:
            item = self.pop()
            self._target(list, "append to lists").append(item)
        elif code == op["APPENDS"]:
            items = self.pop_mark()
            self._target(list, "extend lists").extend(items)
        elif code == op["EMPTY_DICT"]:
            self._push({})
        elif code == op["DICT"]:
            items = self.pop_mark()
            self._push({items[i]: items[i + 1] for i in range(0, len(items) - 1, 2)})
        elif code == op["SETITEM"]:
            value, k = self.pop(), self.pop()
            self._mapping("SETITEM")[k] = value
        elif code == op["SETITEMS"]:
            items = self.pop_mark()
            target = self._mapping("SETITEMS")
            for i in range(0, len(items) - 1, 2):
                target[items[i]] = items[i + 1]
        elif code == op["EMPTY_SET"]:
            self._push(set())
        elif code == op["ADDITEMS"]:
            items = self.pop_mark()
            self._target(set, "add to sets").update(items)
        elif code == op["FROZENSET"]:
            self._push(frozenset(self.pop_mark()))
        elif code == op["GLOBAL"]:
            module = self.readline().decode("utf-8")
            name = self.readline().decode("utf-8")
            if (module, name) in _compat_pickle.NAME_MAPPING:  # Python 2 names (protocol 2)
                module, name = _compat_pickle.NAME_MAPPING[(module, name)]
            module = _compat_pickle.IMPORT_MAPPING.get(module, module)
            self._push(self.find_class(module, name))
        elif code == op["STACK_GLOBAL"]:
            name, module = self.pop(), self.pop()
            if not (isinstance(module, str) and isinstance(name, str)):
                raise _U("STACK_GLOBAL requires str")
            self._push(self.find_class(module, name))
        elif code == op["REDUCE"]:
            args = self.pop()
            func = self.top()
            if id(func) not in self.callables or not isinstance(args, tuple):
                raise _U(f"Trying to call reduce for unrecognized function {func!r}")
            self.stack[-1] = func(*args)
        elif code == op["NEWOBJ"]:
            args, cls = self.pop(), self.pop()
            if not isinstance(args, tuple):
                raise _U("NEWOBJ expects a tuple of arguments")
            if cls is TORCH_PARAMETER:
                self._push(self._parameter(*args))
            elif id(cls) in self.classes:
                self._push(cls.__new__(cls, *args))
            else:
                raise _U(
                    "Can only create new object for nn.Parameter or classes allowlisted via "
                    f"`add_safe_globals` but got {cls!r}"
                )
        elif code == op["BUILD"]:
            self._build(self.pop(), self.top())
        elif code == op["BINPERSID"]:
            pid = self.pop()
            if type(pid) is not tuple or not pid or _ascii(pid[0]) != "storage":
                raise _U(f"Only persistent_load of storage is allowed, but got {pid!r:.80}")
            self._push(self.persistent_load(pid))
        elif code in (op["BINGET"], op["LONG_BINGET"]):
            idx = self.read(1)[0] if code == op["BINGET"] else struct.unpack("<I", self.read(4))[0]
            if idx not in self.memo:
                raise _U(f"Memo value not found at index {idx}")
            self._push(self.memo[idx])
        elif code in (op["BINPUT"], op["LONG_BINPUT"]):
            idx = self.read(1)[0] if code == op["BINPUT"] else struct.unpack("<I", self.read(4))[0]
            self.memo[idx] = self.top()
        elif code == op["MEMOIZE"]:
            self.memo[len(self.memo)] = self.top()
        else:
            raise _U(f"Unsupported operand {code}")

    def _push(self, obj: Any) -> None:
        self.stack.append(obj)  # (not a cached bound method: MARK and pop_mark swap the stack)

    def _length(self, code: int) -> int:
        op = _OP
        if code in (op["SHORT_BINUNICODE"], op["SHORT_BINSTRING"], op["SHORT_BINBYTES"]):
            return self.read(1)[0]
        if code in (op["BINUNICODE8"], op["BINBYTES8"]):
            return int(struct.unpack("<Q", self.read(8))[0])
        n = struct.unpack("<I" if code != op["BINSTRING"] else "<i", self.read(4))[0]
        if n < 0:
            raise _U("negative string length")
        return int(n)

    def _tuple(self, n: int) -> None:
        if len(self.stack) < n:
            raise _U("unpickling stack underflow")
        self.stack[-n:] = [tuple(self.stack[-n:])]

    def _target(self, kind: type, what: str) -> Any:
        obj = self.top()
        if type(obj) is not kind:
            raise _U(f"Can only {what}, but got {type(obj)}")
        return obj

    def _mapping(self, opcode: str) -> Any:
        obj = self.top()
        if type(obj) not in (dict, OrderedDict, Counter):
            raise _U(
                f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, "
                f"but got {type(obj)}"
            )
        return obj

    def _build(self, state: Any, inst: Any) -> None:
        if type(inst) is OrderedDict and isinstance(state, dict):
            if not all(isinstance(k, str) for k in state):
                raise _U("BUILD of an OrderedDict takes a dict of attribute names")
            inst.__dict__.update(state)
        elif isinstance(inst, Tensor) and not state:
            return
        elif id(type(inst)) in self.user_types:
            setstate = getattr(inst, "__setstate__", None)
            if setstate is not None:
                setstate(state)
                return
            slots = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slots = state
            if state:
                inst.__dict__.update(state)
            for k, v in (slots or {}).items():
                setattr(inst, k, v)
        else:
            raise _U(
                "Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                f"`add_safe_globals`, but got {type(inst)}"
            )


def _ascii(value: Any) -> Any:
    return value.decode("ascii", "replace") if isinstance(value, bytes) else value


class FullUnpickler(pickle.Unpickler):
    """``weights_only=False``: ``pickle.Unpickler`` with torch's names mapped to lucid's."""

    def __init__(self, data: IO[bytes], allowed: dict[str, Any],
                 persistent_load: Callable[[Any], Any], **kwargs: Any) -> None:  # fmt: skip
        super().__init__(data, **kwargs)
        self._allowed, self._persistent = allowed, persistent_load

    def find_class(self, module: str, name: str) -> Any:
        """torch's names as the weights-only table maps them; others imported as pickle does."""
        full = f"{module}.{name}"
        if full in self._allowed:
            return self._allowed[full]
        if module == "torch" or module.startswith("torch."):
            raise FormatError(
                f"this checkpoint holds {full}, a PyTorch class lucid can't rebuild; in PyTorch "
                "save the model's state_dict() instead and load it into the lucid model"
            )
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:
        """The storage a ``("storage", ...)`` id names."""
        return self._persistent(pid)


# -- reading the archives ----------------------------------------------------------------------


class Loader:
    """One load: the unpickler to use and how storages are read."""

    def __init__(self, place: Place, weights_only: bool, user_globals: dict[str, Any],
                 encoding: str = "utf-8") -> None:  # fmt: skip
        self.rb = Rebuilder(place)
        self.allowed = torch_globals(self.rb)
        self.weights_only, self.user, self.encoding = weights_only, user_globals, encoding

    def unpickle(self, data: IO[bytes], persistent_load: Callable[[Any], Any]) -> Any:
        """One pickle from ``data``, with the unpickler ``weights_only`` asks for."""
        if self.weights_only:
            return WeightsOnlyUnpickler(data, self.allowed, self.user, persistent_load,
                                        self.rb.parameter, self.encoding).load()  # fmt: skip
        allowed = dict(self.allowed)
        allowed["torch.nn.parameter.Parameter"] = self.rb.parameter
        return FullUnpickler(data, allowed, persistent_load, encoding=self.encoding).load()


def _storage_pid(pid: Any, length: int) -> tuple[StorageType, str, str, int, Any]:
    if type(pid) is not tuple or len(pid) != length or _ascii(pid[0]) != "storage":
        raise FormatError(f"unsupported persistent id {pid!r:.120}")
    storage_type, key, location, numel = pid[1], _ascii(pid[2]), _ascii(pid[3]), pid[4]
    if not isinstance(storage_type, StorageType):
        raise FormatError(f"persistent id names {storage_type!r}, not a storage class")
    if storage_type.dtype_name is None:
        raise FormatError(f"lucid can't load tensors of {storage_type!r}")
    if not (isinstance(key, str) and re.fullmatch(r"[A-Za-z0-9_]+", key)):
        raise FormatError(f"a storage key must be letters, digits or _, got {key!r:.80}")
    if not isinstance(location, str) or type(numel) is not int or numel < 0:
        raise FormatError(f"malformed storage persistent id {pid!r:.120}")
    return storage_type, key, location, numel, (pid[5] if length == 6 else None)


def load_zip(zf: zipfile.ZipFile, loader: Loader, mmap_path: str | None) -> Any:
    """The object a torch.save zip archive holds."""
    names = zf.namelist()
    pkl = [n for n in names if n.endswith("data.pkl") and n.count("/") == 1]
    if not pkl:
        if any(n.endswith("constants.pkl") for n in names):
            raise FormatError("this is a TorchScript archive (torch.jit.save); lucid can't load it")
        raise FormatError("a zip archive without data.pkl is not a torch.save checkpoint")
    prefix = pkl[0][: -len("data.pkl")]
    order = _byteorder(zf, prefix)
    info = zf.getinfo(pkl[0])
    if info.file_size > _MAX_PICKLE:
        raise FormatError(f"data.pkl declares {info.file_size} bytes, past the {_MAX_PICKLE} limit")
    data = zf.read(pkl[0])
    storages: dict[str, Storage] = {}

    def persistent_load(pid: Any) -> Storage:
        st, key, location, numel, _ = _storage_pid(pid, 5)
        if key in storages:
            return storages[key]
        np_type = np.dtype(_DTYPES[st.dtype_name or "uint8"][0]).newbyteorder(
            "<" if order == "<" else ">"
        )
        record = f"{prefix}data/{key}"
        try:
            rinfo = zf.getinfo(record)
        except KeyError:
            raise FormatError(
                f"storage {key!r} names a record that is not in the archive"
            ) from None
        nbytes = numel * np_type.itemsize
        if rinfo.file_size < nbytes:
            raise FormatError(
                f"storage {key!r} declares {numel} elements ({nbytes} bytes) but its record "
                f"holds {rinfo.file_size} bytes"
            )
        arr = _read_record(zf, rinfo, nbytes, np_type, mmap_path)
        if order == ">":
            arr = arr.astype(np_type.newbyteorder("<"))
        storages[key] = Storage(arr, st.dtype_name or "uint8", location)
        return storages[key]

    return loader.unpickle(io.BytesIO(data), persistent_load)


def _byteorder(zf: zipfile.ZipFile, prefix: str) -> str:
    try:
        order = zf.read(f"{prefix}byteorder")
    except KeyError:
        return "<"
    if order not in (b"little", b"big"):
        raise FormatError(f"unknown byteorder record {order[:16]!r}")
    return "<" if order == b"little" else ">"


def _read_record(zf: zipfile.ZipFile, info: zipfile.ZipInfo, nbytes: int, np_type: np.dtype,
                 mmap_path: str | None) -> np.ndarray:  # fmt: skip
    if mmap_path is not None and info.compress_type == zipfile.ZIP_STORED:
        start = _data_offset(zf, info)
        raw = np.memmap(mmap_path, mode="c", dtype=np.uint8, offset=start, shape=(nbytes,))
        return raw.view(np_type) if nbytes else np.zeros(0, np_type)
    buf = bytearray(nbytes)
    with zf.open(info) as src:
        view = memoryview(buf)
        pos = 0
        while pos < nbytes:
            n = src.readinto(view[pos:])  # type: ignore[attr-defined]
            if not n:
                raise FormatError(f"record {info.filename!r} is truncated")
            pos += n
        del view
    return np.frombuffer(buf, dtype=np_type)


def _data_offset(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> int:
    fp = zf.fp
    assert fp is not None
    fp.seek(info.header_offset)
    header = fp.read(30)
    if len(header) != 30 or header[:4] != b"PK\x03\x04":
        raise FormatError(f"bad local header for {info.filename!r}")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    return int(info.header_offset + 30 + name_len + extra_len)


def _no_pid(pid: Any) -> Any:
    raise FormatError(f"unexpected persistent id {pid!r:.80} outside the object's pickle")


def load_legacy(buf: bytes, loader: Loader) -> Any:
    """The object a legacy (``_use_new_zipfile_serialization=False``) torch.save file holds."""
    f = io.BytesIO(buf)
    if loader.unpickle(f, _no_pid) != MAGIC_NUMBER:
        raise FormatError("Invalid magic number; corrupt file?")
    if loader.unpickle(f, _no_pid) != PROTOCOL_VERSION:
        raise FormatError("Invalid protocol version")
    loader.unpickle(f, _no_pid)  # system info (byte order, sizes of C types)
    body = f.tell()
    # First pass: which storages, of which dtype and size (their bytes come after the object)
    declared: dict[str, tuple[str, int, str]] = {}

    def survey(pid: Any) -> Storage:
        st, key, location, numel, view = _storage_pid(pid, 6)
        if view is not None:
            raise FormatError("lucid can't load legacy storage views")
        declared.setdefault(key, (st.dtype_name or "uint8", numel, location))
        return Storage(None, st.dtype_name or "uint8", location)

    loader.unpickle(f, survey)
    keys = loader.unpickle(f, _no_pid)
    if not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
        raise FormatError("malformed storage key list")
    arrays: dict[str, np.ndarray] = {}
    pos = f.tell()
    for key in keys:
        if key not in declared:
            raise FormatError(f"storage {key!r} is listed but no tensor uses it")
        name, numel, _ = declared[key]
        np_type = np.dtype(_DTYPES[name][0])
        if pos + 8 > len(buf):
            raise FormatError(f"truncated file: storage {key!r} is missing")
        (count,) = struct.unpack("<q", buf[pos : pos + 8])
        nbytes = count * np_type.itemsize
        if count != numel or pos + 8 + nbytes > len(buf):
            raise FormatError(
                f"storage {key!r} holds {count} elements where {numel} were declared, or the "
                "file is truncated"
            )
        arrays[key] = np.frombuffer(bytearray(buf[pos + 8 : pos + 8 + nbytes]), dtype=np_type)
        pos += 8 + nbytes
    missing = set(declared) - set(arrays)
    if missing:
        raise FormatError(f"storages {sorted(missing)} have no data in the file")

    def real(pid: Any) -> Storage:
        _, key, _, _, _ = _storage_pid(pid, 6)
        name, _, location = declared[key]
        return Storage(arrays[key], name, location)

    f.seek(body)
    return loader.unpickle(f, real)


# -- writing torch's zip format ----------------------------------------------------------------


class _Global:
    """A global written by name (``torch._utils._rebuild_tensor_v2``): torch need not exist."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any) -> Any:  # pickle's save_reduce wants a callable
        raise TypeError(f"{self.module}.{self.name} is a name written into a checkpoint")


class _StorageRef:
    __slots__ = ("key", "cls", "numel")

    def __init__(self, key: str, cls: str, numel: int) -> None:
        self.key, self.cls, self.numel = key, cls, numel


_REBUILD_V2 = _Global("torch._utils", "_rebuild_tensor_v2")
_FROM_TYPE = _Global("torch._tensor", "_rebuild_from_type_v2")


def _save_global(pickler: Any, obj: _Global) -> None:
    pickler.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
    pickler.memoize(obj)


class _TorchPickler(pickle._Pickler):
    """Pickles tensors as torch does (storages out of line, torch's rebuild names)."""

    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[_Global] = _save_global

    def __init__(self, file: IO[bytes], protocol: int, subclasses: bool,
                 storages: list[np.ndarray], to_numpy: Callable[[Tensor], np.ndarray]
                 ) -> None:  # fmt: skip
        super().__init__(file, protocol)
        self.subclasses, self.storages, self.to_numpy = subclasses, storages, to_numpy

    def persistent_id(self, obj: Any) -> Any:
        """A storage reference becomes ``("storage", torch.<X>Storage, key, "cpu", numel)``."""
        if isinstance(obj, _StorageRef):
            return ("storage", _Global("torch", obj.cls), obj.key, "cpu", obj.numel)
        return None

    def reducer_override(self, obj: Any) -> Any:
        """Each tensor as ``_rebuild_tensor_v2(storage, 0, size, stride, requires_grad, {})``."""
        if not isinstance(obj, Tensor):
            return NotImplemented
        arr = self.to_numpy(obj)
        name = obj.dtype.name
        if name not in _DTYPES:
            raise pickle.PicklingError(f"can't save a tensor of dtype {name} in torch's format")
        self.storages.append(arr)
        ref = _StorageRef(str(len(self.storages) - 1), _DTYPES[name][1], int(arr.size))
        shape = tuple(int(n) for n in obj.shape)
        stride: list[int] = []
        acc = 1
        for n in reversed(shape):
            stride.append(acc)
            acc *= n
        hooks: OrderedDict[Any, Any] = OrderedDict()
        args = (ref, 0, shape, tuple(reversed(stride)), bool(obj.requires_grad), hooks)
        if type(obj) is Tensor or not self.subclasses:
            return (_REBUILD_V2, args)
        state = dict(getattr(obj, "__dict__", {}))
        return (_FROM_TYPE, (_REBUILD_V2, type(obj), args, state))


def write_zip(f: IO[bytes], obj: Any, archive: str, protocol: int, subclasses: bool,
              to_numpy: Callable[[Tensor], np.ndarray]) -> None:  # fmt: skip
    """Write ``obj`` in torch.save's zip format (readable by ``torch.load``)."""
    storages: list[np.ndarray] = []
    pkl = io.BytesIO()
    _TorchPickler(pkl, protocol, subclasses, storages, to_numpy).dump(obj)
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        _record(zf, f"{archive}/data.pkl", pkl.getvalue())
        _record(zf, f"{archive}/.format_version", b"1")
        _record(zf, f"{archive}/.storage_alignment", str(_ALIGN).encode())
        _record(zf, f"{archive}/byteorder", b"little")
        for i, arr in enumerate(storages):
            _record(zf, f"{archive}/data/{i}", arr, align=True)
        _record(zf, f"{archive}/version", b"3\n")
        _record(zf, f"{archive}/.data/serialization_id", b"0" * 40)


def _record(zf: zipfile.ZipFile, name: str, data: bytes | np.ndarray, align: bool = False
            ) -> None:  # fmt: skip
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    size = data.nbytes if isinstance(data, np.ndarray) else len(data)
    big = size > zipfile.ZIP64_LIMIT
    if align:
        assert zf.fp is not None
        start = zf.fp.tell() + 30 + len(name.encode()) + (20 if big else 0) + 4
        pad = -start % _ALIGN
        info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad  # torch's padding field id
    info.file_size = size
    with zf.open(info, "w", force_zip64=big) as out:
        if isinstance(data, np.ndarray):
            if data.nbytes:
                out.write(memoryview(data.reshape(-1)).cast("B"))  # type: ignore[arg-type]
        else:
            out.write(data)
