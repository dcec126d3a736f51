"""``lucid.save`` / ``lucid.load``: safetensors written and read by hand, and PyTorch's formats.

A lucid file is safetensors: an 8-byte little-endian header length, a JSON header naming each
tensor's dtype, shape and byte range, then the raw little-endian bytes. Anything that is not a
tensor (dicts with int keys, lists, tuples, numbers, strings, None, ``argparse.Namespace``: an
optimizer's ``state_dict``, a training script's config) is kept as JSON in the header's
``__metadata__`` with references to the tensors by name; numpy arrays are stored as tensors and
load back as numpy arrays. Reading one parses JSON and copies bytes: it never runs code.

Files written by ``torch.save`` (its zip format and its legacy one) load with PyTorch's
security model: by default (``weights_only=True``) an allowlist unpickler reads them, which
rebuilds tensors, plain containers, numbers, strings, ``torch.Size``, dtypes and the classes
registered with :func:`add_safe_globals`, imports nothing, calls nothing else and refuses any
other global by name; ``weights_only=False`` unpickles whole objects, and only when asked.
``lucid.save`` of an object that is not tensors and containers (a whole ``nn.Module``)
pickles it in torch's zip format, as ``torch.save`` does; ``format="torch"`` writes a state
dict in torch's zip format, which ``torch.load(weights_only=True)`` reads.

Files from ``safetensors.torch.save_file`` load as a ``{name: Tensor}`` dict, and a dict of
tensors saved here loads there under the same names. Writes are atomic: the data goes to a
temporary file in the same directory, is fsynced, then renamed over the target; a temporary
file left by a killed save is removed by the next save of that target. A file that is not a
valid file of these formats raises ``SerializationError`` saying what is wrong with it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import pickle
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from typing import IO, Any, Union

import numpy as np

from lucid import _torch_pickle, dtypes
from lucid._tensor import Tensor
from lucid.backends import get_backend
from lucid.utils.files import atomic_write

PathLike = Union[str, "os.PathLike[str]"]
_FORMAT = "lucid.format"
_STRUCTURE = "lucid.structure"
_COMPLEX128 = "lucid.complex128"
_MAX_HEADER = 100 * 1024 * 1024  # the limit the safetensors reference reader uses

# lucid dtype <-> safetensors dtype tag and the numpy type of the stored bytes.
_TAGS: dict[str, tuple[str, str]] = {
    "bool": ("BOOL", "|b1"),
    "uint8": ("U8", "|u1"),
    "int8": ("I8", "|i1"),
    "int16": ("I16", "<i2"),
    "int32": ("I32", "<i4"),
    "int64": ("I64", "<i8"),
    "float16": ("F16", "<f2"),
    "bfloat16": ("BF16", "<u2"),  # raw bits: numpy has no bfloat16
    "float32": ("F32", "<f4"),
    "float64": ("F64", "<f8"),
    "complex64": ("C64", "<c8"),
    "complex128": ("F64", "<f8"),  # safetensors has no C128: float64 pairs, flagged in metadata
    # float8 as its bits (the fnuz types have no safetensors tag, as torch's safetensors)
    "float8_e4m3fn": ("F8_E4M3", "|u1"),
    "float8_e5m2": ("F8_E5M2", "|u1"),
    "float8_e8m0fnu": ("F8_E8M0", "|u1"),
}
_BY_TAG = {tag: name for name, (tag, _) in _TAGS.items() if name != "complex128"}


class SerializationError(RuntimeError):
    """A file that is not a valid lucid/safetensors file, or an object that can't be saved."""


class UnpicklingError(SerializationError, pickle.UnpicklingError):
    """What the ``weights_only=True`` loader refused (``pickle.UnpicklingError``, as torch).

    The message names the global or the operation it met and how to load the file anyway.
    """


_UNSAFE_MESSAGE = (
    "Re-running `lucid.load` with `weights_only` set to `False` will likely succeed, but it can "
    "result in arbitrary code execution. Do it only if you got the file from a trusted source."
)


# -- saving ----------------------------------------------------------------------------------


def save(obj: Any, f: PathLike | IO[bytes], pickle_module: Any = None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False,
         *, format: str | None = None) -> None:  # fmt: skip
    """Save a tensor, a nested structure of tensors and plain values, or any object, to ``f``.

    Tensors, numpy arrays, dicts, lists, tuples, numbers, strings, bools, None, dtypes and
    ``argparse.Namespace``, nested, go into a safetensors file and each comes back as the same
    type. Any other object (a whole ``nn.Module``) is pickled in ``torch.save``'s zip format,
    its tensors stored out of line as torch does; loading it back takes
    ``lucid.load(f, weights_only=False)``, as in PyTorch.

    ``format``: ``None`` (the choice above), ``"safetensors"`` (refuse what safetensors can't
    hold) or ``"torch"`` (torch's zip format even for a state dict: ``torch.load(f)`` reads
    it with ``weights_only=True``; tensors are written as CPU tensors). ``pickle_protocol``
    is used for torch's format; ``pickle_module`` and ``_use_new_zipfile_serialization`` are
    accepted and unused (lucid writes torch's zip format, never the legacy one).

    >>> lucid.save({"w": lucid.ones(2, 3), "step": 10}, "ckpt.safetensors")
    >>> lucid.load("ckpt.safetensors")["step"]
    10
    """
    if format not in (None, "safetensors", "torch"):
        raise ValueError(f"format must be None, 'safetensors' or 'torch', got {format!r}")
    tensors: dict[str, Any] = {}
    try:
        structure = _encode(obj, "", tensors, {})
    except SerializationError:
        if format == "safetensors":
            raise
        _save_torch(obj, f, pickle_protocol, subclasses=True)
        return
    if format == "torch":
        _save_torch(obj, f, pickle_protocol, subclasses=False)
        return
    header, arrays = _build_header(tensors, structure)
    _write(f, lambda out: _write_payload(out, header, arrays))


def _write(f: PathLike | IO[bytes], write: Callable[[IO[bytes]], object]) -> None:
    if isinstance(f, (str, os.PathLike)):
        atomic_write(f, write)
    else:
        write(f)


def _save_torch(obj: Any, f: PathLike | IO[bytes], protocol: int, subclasses: bool) -> None:
    """``obj`` pickled in torch.save's zip format (``subclasses``: keep Parameter/Buffer types)."""
    if isinstance(f, (str, os.PathLike)):
        archive = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    else:
        archive = "archive"
    archive = "".join(c if c.isalnum() or c in "_-." else "_" for c in archive)

    def write(out: IO[bytes]) -> None:
        try:
            _torch_pickle.write_zip(out, obj, archive, protocol, subclasses, _raw_array)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            raise SerializationError(
                f"can't save an object of type {type(obj).__name__}: pickling it failed "
                f"({type(exc).__name__}: {exc})"
            ) from None

    _write(f, write)


def _raw_array(t: Tensor) -> np.ndarray:
    """A tensor's elements as torch stores them: C order, little-endian, bfloat16 as bits."""
    if t.dtype.name == "complex128":
        arr = np.asarray(t.backend.to_numpy(t._data), dtype="<c16")
        return arr if arr.flags.c_contiguous else arr.copy()
    return _stored_array(t)


def _encode(obj: Any, path: str, tensors: dict[str, Any], seen: dict[int, str]) -> Any:
    """JSON-able description of ``obj``; tensors are collected into ``tensors`` by name."""
    if isinstance(obj, Tensor):
        name = seen.get(id(obj))
        if name is None:
            name = _unique(path or "tensor", tensors)
            tensors[name] = obj
            seen[id(obj)] = name
        ref: dict[str, Any] = {"tensor": name}
        if obj.requires_grad:
            ref["requires_grad"] = True
        if str(obj.device) != "cpu":
            ref["device"] = str(obj.device)
        return ref
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else {"float": repr(obj)}
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return _encode(obj.item(), path, tensors, seen)
    if isinstance(obj, np.ndarray):
        return {"ndarray": _encode(_array_tensor(obj, path), path, tensors, seen)["tensor"]}
    if isinstance(obj, argparse.Namespace):
        return {"namespace": _encode(vars(obj), path, tensors, seen)["dict"]}
    if isinstance(obj, dtypes.dtype):
        return {"dtype": obj.name}
    if isinstance(obj, list):
        return [_encode(v, _join(path, i), tensors, seen) for i, v in enumerate(obj)]
    if isinstance(obj, tuple):
        return {"tuple": [_encode(v, _join(path, i), tensors, seen) for i, v in enumerate(obj)]}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not (k is None or isinstance(k, (bool, int, float, str, tuple))):
                raise SerializationError(
                    f"can't save a dict key of type {type(k).__name__} at {path or '<root>'!r}; "
                    "keys must be str, int, float, bool, None or tuples of those"
                )
            items.append([_encode(k, path, {}, {}), _encode(v, _join(path, k), tensors, seen)])
        return {"dict": items}
    raise SerializationError(_refusal(obj, path))


def _refusal(obj: Any, path: str) -> str:
    kind = type(obj).__name__
    where = path or "<root>"
    text = (
        f"can't save an object of type {kind} at {where!r} as safetensors, which stores "
        "tensors, numpy arrays, dicts, lists, tuples, numbers, strings, bools, None, dtypes and "
        "argparse.Namespace (without format='safetensors' lucid.save pickles other objects in "
        "torch's format, which loads only with weights_only=False): "
    )
    if callable(getattr(obj, "state_dict", None)):
        return (
            text + f"save its state_dict() instead (lucid.save(obj.state_dict(), f)), and "
            f"rebuild the {kind} in code and load_state_dict() the result"
        )
    return text + "save the values it holds (a dict of them) and rebuild the object in code"


def _array_tensor(arr: np.ndarray, path: str) -> Tensor:
    """A CPU tensor holding a numpy array (its dtype must be one lucid has)."""
    backend = get_backend("cpu")
    try:
        backend.dtype_of(arr)
    except TypeError:
        raise SerializationError(
            f"can't save a numpy array of dtype {arr.dtype} at {path or '<root>'!r}: lucid.save "
            f"stores arrays of {', '.join(sorted(_TAGS))}"
        ) from None
    return Tensor.from_backend_array(arr, backend)


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _unique(name: str, taken: dict[str, Any]) -> str:
    if name not in taken and name != "__metadata__":
        return name
    i = 1
    while f"{name}#{i}" in taken:
        i += 1
    return f"{name}#{i}"


def _stored_array(t: Tensor) -> np.ndarray:
    """The little-endian array whose bytes go into the file."""
    name = t.dtype.name
    backend = t.backend
    if name == "bfloat16":
        f32 = np.asarray(backend.to_numpy(backend.astype(t._data, dtypes.float32)), dtype="<f4")
        return (f32.view("<u4") >> 16).astype("<u2")  # exact: the values came from bfloat16
    arr = np.asarray(backend.to_numpy(t._data))
    if t.dtype._rank < 0 and name in _TAGS:  # float8: its bits
        return (arr if arr.flags.c_contiguous else arr.copy()).view(np.uint8)
    if name == "complex128":
        arr = np.stack([arr.real, arr.imag], axis=-1)
    arr = np.asarray(arr, dtype=_TAGS[name][1])
    return arr if arr.flags.c_contiguous else arr.copy()  # (ascontiguousarray makes 0-d 1-d)


def _build_header(tensors: dict[str, Any], structure: Any) -> tuple[bytes, list[np.ndarray]]:
    header: dict[str, Any] = {}
    arrays = []
    complex128 = []
    offset = 0
    for name, t in tensors.items():
        if t.dtype.name not in _TAGS:  # float8_e4m3fnuz / e5m2fnuz: safetensors has no tag
            raise SerializationError(
                f"can't save tensor {name!r} of dtype {t.dtype}: safetensors has no dtype tag "
                f"for it (it stores {', '.join(sorted(_TAGS))}); convert it first"
            )
        arr = _stored_array(t)
        if t.dtype.name == "complex128":
            complex128.append(name)
        header[name] = {
            "dtype": _TAGS[t.dtype.name][0],
            "shape": list(arr.shape),
            "data_offsets": [offset, offset + arr.nbytes],
        }
        offset += arr.nbytes
        arrays.append(arr)
    meta = {_FORMAT: "1", _STRUCTURE: json.dumps(structure, separators=(",", ":"))}
    if complex128:
        meta[_COMPLEX128] = json.dumps(complex128)
    header["__metadata__"] = meta
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # keep the data 8-byte aligned, as safetensors does
    return raw, arrays


def _write_payload(f: IO[bytes], header: bytes, arrays: list[np.ndarray]) -> None:
    f.write(len(header).to_bytes(8, "little"))
    f.write(header)
    for arr in arrays:
        _write_array(f, arr)


def _write_array(f: IO[bytes], arr: np.ndarray) -> None:
    if arr.nbytes:
        f.write(memoryview(arr.reshape(-1)).cast("B"))  # type: ignore[arg-type]


# -- loading ---------------------------------------------------------------------------------

MapLocation = Any  # None, a device, a {saved: target} dict, or (tensor, saved) -> tensor


def load(f: PathLike | IO[bytes], map_location: MapLocation = None, pickle_module: Any = None,
         *, weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:  # fmt: skip
    """Load what :func:`save` or ``torch.save`` wrote, or any safetensors file.

    ``map_location``: a device ("cpu", "mlx") for every tensor, a dict mapping saved devices
    to devices, or a callable ``(tensor, saved_device) -> tensor``. By default tensors go back
    to the device they were saved from (a torch checkpoint saved on "cuda" needs
    ``map_location="cpu"``, as on PyTorch without CUDA). bfloat16 data loads as bfloat16 where
    the device has it (on "cpu" through ml_dtypes) and as float32 where it has not. numpy
    arrays load as numpy arrays.

    ``weights_only`` (default True, False when a ``pickle_module`` is given, as torch):
    torch.save files are read by an allowlist unpickler that only rebuilds tensors, plain
    containers, numbers, strings, ``torch.Size`` and dtypes and the classes registered with
    :func:`add_safe_globals`; anything else raises :class:`UnpicklingError` naming it, before
    any of it runs. ``weights_only=False`` unpickles arbitrary objects (a whole module): only
    for files you trust. Tensors of a torch checkpoint load as ``Tensor`` (an
    ``nn.Parameter`` of torch's as a Tensor that requires grad). ``mmap=True`` maps the
    storages of a file path instead of reading them (copy-on-write, as torch's default
    ``MAP_PRIVATE``). Safetensors files never run code whatever ``weights_only`` says.
    """
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    encoding = pickle_load_args.pop("encoding", "utf-8")
    if isinstance(f, (str, os.PathLike)):
        where: Any = os.fspath(f)
        with open(where, "rb") as fh:
            head = fh.read(len(_TORCH_LEGACY_MAGIC))
        if head.startswith(b"PK\x03\x04"):
            with _torch_errors(where), zipfile.ZipFile(where) as zf:
                return _load_torch_zip(zf, map_location, weights_only, encoding,
                                       where if mmap else None)  # fmt: skip
        _check_mmap(mmap, head, where)
        if mmap and os.path.getsize(where) >= 8:
            buf: Any = np.memmap(where, mode="c", dtype=np.uint8)
        else:
            with open(where, "rb") as fh:
                buf = _read_all(fh)
    else:
        if mmap:
            raise ValueError("f must be a file path in order to use the mmap argument")
        where = getattr(f, "name", "<stream>")
        buf = bytearray(f.read())
        if buf.startswith(b"PK\x03\x04"):
            with _torch_errors(where), zipfile.ZipFile(io.BytesIO(buf)) as zf:
                return _load_torch_zip(zf, map_location, weights_only, encoding, None)
    if bytes(buf[: len(_TORCH_LEGACY_MAGIC)]) == _TORCH_LEGACY_MAGIC:
        loader = _loader(map_location, weights_only, encoding)
        with _torch_errors(where):
            return _torch_pickle.load_legacy(bytes(buf), loader)
    try:
        return _load_buffer(buf, where, map_location)
    except RecursionError:
        raise SerializationError(
            f"{where}: corrupt file: its header or structure is nested too deeply to read"
        ) from None


def _check_mmap(mmap: bool | None, head: bytes, where: str) -> None:
    if mmap and head == _TORCH_LEGACY_MAGIC:
        raise RuntimeError(
            "mmap can only be used with files saved with "
            f"`torch.save({where}, _use_new_zipfile_serialization=True), "
            "please torch.save your checkpoint with this option in order to use mmap."
        )


def _loader(map_location: MapLocation, weights_only: bool, encoding: str
            ) -> _torch_pickle.Loader:  # fmt: skip
    def place(arr: np.ndarray, saved: str, bf16: bool) -> Tensor:
        if map_location is None and saved != "cpu":
            raise _PlacementError(
                f"Attempting to deserialize object on device {saved!r}, which lucid does not "
                f"have; use lucid.load with map_location='cpu' (or a lucid device) to map "
                "your storages to it."
            )
        try:
            return _place(arr, saved, map_location, bf16)
        except Exception as exc:
            raise _PlacementError from exc

    return _torch_pickle.Loader(place, weights_only, _user_globals(), encoding)


def _load_torch_zip(zf: zipfile.ZipFile, map_location: MapLocation, weights_only: bool,
                    encoding: str, mmap_path: str | None) -> Any:  # fmt: skip
    return _torch_pickle.load_zip(zf, _loader(map_location, weights_only, encoding), mmap_path)


@contextlib.contextmanager
def _torch_errors(where: Any) -> Iterator[None]:
    """Errors of reading a torch.save file as lucid raises them (torch's words where it has)."""
    try:
        yield
    except _PlacementError as exc:
        cause = exc.__cause__
        if cause is None:
            raise RuntimeError(str(exc)) from None
        raise cause from None
    except pickle.UnpicklingError as exc:
        if isinstance(exc, UnpicklingError):
            raise
        raise UnpicklingError(f"{where}: {_weights_only_message(str(exc))}") from None
    except (_torch_pickle.FormatError, zipfile.BadZipFile, EOFError, struct.error, zlib.error,
            zipfile.LargeZipFile) as exc:  # fmt: skip
        raise SerializationError(f"{where}: not a valid torch.save file: {exc}") from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError,
            RecursionError, UnicodeDecodeError) as exc:  # fmt: skip
        raise SerializationError(
            f"{where}: corrupt torch.save file ({type(exc).__name__}: {exc})"
        ) from None


def _weights_only_message(message: str) -> str:
    """torch's explanation around what the weights-only unpickler refused."""
    docs = (
        "\n\nCheck the documentation of lucid.load to learn more about types accepted by "
        "default with weights_only."
    )
    if "was not an allowed global by default" in message:
        return (
            "Weights only load failed. This file can still be loaded, to do so you have two "
            "options, do those steps only if you trust the source of the checkpoint. "
            f"\n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` "
            "please check the recommended steps in the following error message.\n\t"
            "WeightsUnpickler error: " + message + docs
        )
    return f"Weights only load failed. {_UNSAFE_MESSAGE}\n\nWeightsUnpickler error: {message}{docs}"


def _load_buffer(buf: bytearray, where: Any, map_location: MapLocation) -> Any:
    header, data_start = _parse_header(buf, where)
    meta = _metadata(header, where)
    bf16 = {name for name, info in header.items() if _entry(name, info, where)[0] == "BF16"}
    arrays = _read_arrays(header, buf, data_start, where, _complex128_names(meta, where))
    if _STRUCTURE not in meta:
        return {n: _place(a, "cpu", map_location, n in bf16) for n, a in arrays.items()}
    structure = _json_field(meta, _STRUCTURE, where)
    return _Decoder(arrays, bf16, map_location, where).decode_root(structure)


def _read_all(fh: IO[bytes]) -> bytearray:
    """The whole file in one writable buffer (read straight into it: no second copy)."""
    buf = bytearray(os.fstat(fh.fileno()).st_size)
    view = memoryview(buf)
    pos = 0
    while pos < len(buf):
        n = fh.readinto(view[pos:])  # type: ignore[attr-defined]
        if not n:
            del view
            return buf[:pos]  # the file shrank while we read it
        pos += n
    return buf


def _parse_header(buf: bytearray, where: Any) -> tuple[dict[str, Any], int]:
    if len(buf) < 8:
        raise SerializationError(
            f"{where}: not a safetensors file (truncated: {len(buf)} bytes, expected at least 8)"
        )
    n = int.from_bytes(buf[:8], "little")
    if n > _MAX_HEADER or 8 + n > len(buf):
        _refuse_foreign(buf, where)
        raise SerializationError(
            f"{where}: corrupt or truncated file: the header claims {n} bytes but the file has "
            f"{len(buf) - 8} after the length field"
        )
    try:
        header = json.loads(bytes(buf[8 : 8 + n]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        _refuse_foreign(buf, where)
        raise SerializationError(f"{where}: corrupt header (not valid JSON: {exc})") from None
    if not isinstance(header, dict):
        raise SerializationError(f"{where}: corrupt header (expected a JSON object)")
    return header, 8 + n


# The first bytes of PyTorch's legacy torch.save format: a protocol-2 pickle of its magic number.
_TORCH_LEGACY_MAGIC = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"


def _refuse_foreign(buf: Any, where: Any) -> None:
    """Name the format of a file that is a plain pickle or a zip archive of another kind."""
    kind = _foreign_kind(bytes(buf[:4096]), bytes(buf[-65536:]))
    if kind is None:
        return
    raise SerializationError(
        f"{where}: this is {kind}, not a safetensors or torch.save file; lucid.load does not "
        "unpickle plain pickle files (unpickling can run code): save the data with lucid.save, "
        "torch.save or safetensors instead"
    )


def _foreign_kind(head: bytes, tail: bytes) -> str | None:
    """What a file starting with ``head`` and ending with ``tail`` is, if it is a known kind."""
    if head.startswith(b"PK\x03\x04"):
        first_name = head[30 : 30 + int.from_bytes(head[26:28], "little")]  # its first entry
        if first_name.endswith(b"data.pkl") or b"/data.pkl" in tail:  # (tail: the directory)
            return "a torch.save file, a zip archive holding data.pkl"
        return "a zip archive"
    if head.startswith(_TORCH_LEGACY_MAGIC):
        return "a torch.save file, the legacy pickle format"
    if len(head) > 1 and head[0] == 0x80 and 2 <= head[1] <= 5:
        return "a pickle file"
    return None


def _metadata(header: dict[str, Any], where: Any) -> dict[str, Any]:
    meta = header.pop("__metadata__", None) or {}
    if not isinstance(meta, dict):
        raise SerializationError(
            f"{where}: corrupt header (__metadata__ must be an object, got {type(meta).__name__})"
        )
    return meta


def _json_field(meta: dict[str, Any], key: str, where: Any) -> Any:
    """The JSON value that the metadata string ``meta[key]`` holds."""
    raw = meta[key]
    if not isinstance(raw, str):
        raise SerializationError(
            f"{where}: corrupt metadata: {key!r} must be a JSON string, got {type(raw).__name__}"
        )
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise SerializationError(
            f"{where}: corrupt lucid structure metadata {key!r} (not valid JSON: {exc})"
        ) from None


def _complex128_names(meta: dict[str, Any], where: Any) -> set[str]:
    if _COMPLEX128 not in meta:
        return set()
    names = _json_field(meta, _COMPLEX128, where)
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        raise SerializationError(
            f"{where}: corrupt metadata {_COMPLEX128!r} (expected a list of tensor names, got "
            f"{names!r:.80})"
        )
    return set(names)


def _read_arrays(
    header: dict[str, Any], buf: bytearray, start: int, where: Any, complex128: set[str]
) -> dict[str, np.ndarray]:
    size = len(buf) - start
    spans = []
    arrays = {}
    for name, info in header.items():
        dtype_tag, shape, (begin, end) = _entry(name, info, where)
        lucid_name = _BY_TAG.get(dtype_tag)
        if lucid_name is None:
            raise SerializationError(
                f"{where}: tensor {name!r} has dtype {dtype_tag!r}, which lucid can't load "
                f"(supported: {', '.join(sorted(_BY_TAG))})"
            )
        np_type = np.dtype(_TAGS[lucid_name][1])
        count = math.prod(shape)
        if end - begin != count * np_type.itemsize:
            raise SerializationError(
                f"{where}: tensor {name!r} has shape {shape} ({count * np_type.itemsize} bytes "
                f"as {dtype_tag}) but its data_offsets [{begin}, {end}] cover {end - begin} bytes"
            )
        if end > size:
            raise SerializationError(
                f"{where}: truncated file: tensor {name!r} needs bytes up to {end} but only "
                f"{size} data bytes are present"
            )
        spans.append((begin, end, name))
        arr = np.frombuffer(buf, dtype=np_type, count=count, offset=start + begin)
        if (start + begin) % np_type.itemsize:
            arr = arr.copy()
        arr = arr.reshape(shape)
        if lucid_name == "bfloat16":
            arr = _bf16_bits_to_f32(arr)
        elif lucid_name.startswith("float8_"):  # the bits, as ml_dtypes' float8 type
            arr = arr.view(get_backend("cpu").native_dtype(dtypes.to_dtype(lucid_name)))
        elif name in complex128:
            arr = _pairs_to_complex(arr, name, where)
        arrays[name] = arr
    _check_coverage(spans, size, where)
    return arrays


def _entry(name: str, info: Any, where: Any) -> tuple[str, list[int], tuple[int, int]]:
    try:
        tag, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        ok = (
            isinstance(tag, str)
            and isinstance(shape, list)
            and all(type(s) is int and s >= 0 for s in shape)  # (bool is an int subclass)
            and isinstance(offsets, list)
            and len(offsets) == 2
            and all(type(o) is int for o in offsets)
            and 0 <= offsets[0] <= offsets[1]
        )
    except (TypeError, KeyError):
        ok = False
    if not ok:
        raise SerializationError(
            f"{where}: corrupt header entry for {name!r}: expected "
            f'{{"dtype": str, "shape": [int, ...], "data_offsets": [begin, end]}}, got {info!r}'
        )
    return tag, list(shape), (offsets[0], offsets[1])


def _check_coverage(spans: list[tuple[int, int, str]], size: int, where: Any) -> None:
    pos = 0
    for begin, end, name in sorted(spans):
        if begin != pos:
            what = "overlaps the previous tensor" if begin < pos else "leaves a gap before it"
            raise SerializationError(
                f"{where}: header/offset mismatch: tensor {name!r} starts at byte {begin}, "
                f"expected {pos} ({what})"
            )
        pos = end
    if pos != size:
        raise SerializationError(
            f"{where}: header/offset mismatch: the tensors cover {pos} bytes but the file holds "
            f"{size} data bytes"
        )


def _bf16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype("<u4") << 16).view("<f4")


def _pairs_to_complex(arr: np.ndarray, name: str, where: Any) -> np.ndarray:
    if arr.ndim == 0 or arr.shape[-1] != 2:
        raise SerializationError(
            f"{where}: tensor {name!r} is flagged complex128 but its last dim is not 2"
        )
    return arr[..., 0] + 1j * arr[..., 1]


def _place(arr: np.ndarray, saved: str, map_location: MapLocation, bf16: bool) -> Tensor:
    """A tensor of ``arr`` on the device ``map_location`` picks for one saved on ``saved``."""
    t = Tensor.from_backend_array(arr, get_backend("cpu"))
    if callable(map_location) and not isinstance(map_location, (str, dict)):
        moved: Tensor = map_location(t, saved)
        return moved
    if isinstance(map_location, dict):
        target = map_location.get(saved, saved)
    else:
        target = saved if map_location is None else str(map_location)
    backend = get_backend(target)
    if backend is not t.backend:
        t = Tensor.from_backend_array(backend.from_numpy(arr), backend)
    if bf16 and _has_bfloat16(backend):
        t = t.to(dtypes.bfloat16)
    return t


def _has_bfloat16(backend: Any) -> bool:
    try:
        backend.native_dtype(dtypes.bfloat16)
    except TypeError:
        return False
    return True


class _Decoder:
    """Rebuilds the saved structure from its JSON description and the loaded arrays."""

    def __init__(self, arrays: dict[str, Any], bf16: set[str], loc: MapLocation, where: Any):
        self.arrays, self.bf16, self.loc, self.where = arrays, bf16, loc, where
        self.done: dict[str, Tensor] = {}

    def decode_root(self, structure: Any) -> Any:
        """The saved object; a malformed structure raises SerializationError saying how."""
        try:
            return self.decode(structure)
        except _PlacementError as exc:  # an error of map_location or a device: the caller's
            assert exc.__cause__ is not None
            raise exc.__cause__ from None
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
            raise SerializationError(
                f"{self.where}: corrupt lucid structure metadata ({type(exc).__name__}: {exc})"
            ) from None

    def decode(self, obj: Any) -> Any:
        if isinstance(obj, list):
            return [self.decode(v) for v in obj]
        if not isinstance(obj, dict):
            return obj
        if "tensor" in obj:
            return self.tensor(obj)
        if "float" in obj:
            return float(obj["float"])
        if "dtype" in obj:
            return dtypes.to_dtype(obj["dtype"])
        if "tuple" in obj:
            return tuple(self.decode(v) for v in obj["tuple"])
        if "ndarray" in obj:
            return self.ndarray(obj["ndarray"])
        if "namespace" in obj:
            return argparse.Namespace(**self.decode({"dict": obj["namespace"]}))
        if "dict" in obj:
            return {_hashable(self.decode(k)): self.decode(v) for k, v in obj["dict"]}
        raise SerializationError(
            f"{self.where}: corrupt lucid structure metadata (unknown node {obj!r})"
        )

    def ndarray(self, name: str) -> Any:
        arr = self._array(name)
        if name in self.bf16 and _has_bfloat16(get_backend("cpu")):
            arr = arr.astype(get_backend("cpu").native_dtype(dtypes.bfloat16))
        return arr

    def _array(self, name: Any) -> Any:
        if not isinstance(name, str) or name not in self.arrays:
            raise SerializationError(
                f"{self.where}: the structure refers to a missing tensor {name!r}"
            )
        return self.arrays[name]

    def tensor(self, ref: dict[str, Any]) -> Tensor:
        name = ref["tensor"]
        if name in self.done:  # one tensor saved under several references stays shared
            return self.done[name]
        self._array(name)
        device = ref.get("device", "cpu")
        if not isinstance(device, str):
            raise TypeError(f"the device of tensor {name!r} must be a string, got {device!r}")
        try:
            t = _place(self.arrays[name], device, self.loc, name in self.bf16)
        except Exception as exc:
            raise _PlacementError from exc
        if ref.get("requires_grad"):
            t.requires_grad_(True)
        self.done[name] = t
        return t


class _PlacementError(Exception):
    """Carries an error raised while placing a tensor, so it is not taken for corrupt data."""


def _hashable(key: Any) -> Any:
    return tuple(_hashable(k) for k in key) if isinstance(key, (list, tuple)) else key


# -- safe globals ----------------------------------------------------------------------------
# PyTorch's allowlist for classes its weights_only unpickler may rebuild: a torch.save file
# may name these (GLOBAL, NEWOBJ, REDUCE, BUILD) besides the built-in allowlist.

SafeGlobal = Callable[..., Any] | tuple[Callable[..., Any], str]
_safe_globals: list[SafeGlobal] = []


def _checked(safe_globals: Any) -> list[SafeGlobal]:
    if not isinstance(safe_globals, (list, tuple)):
        raise TypeError(
            f"expected a list of classes/functions or (class, name) pairs, got "
            f"{type(safe_globals).__name__}"
        )
    for g in safe_globals:
        pair = isinstance(g, tuple) and len(g) == 2 and isinstance(g[1], str)
        if not (callable(g) or (pair and callable(g[0]))):
            raise TypeError(
                f"expected a class/function or a (class, name) pair in the safe globals list, "
                f"got {g!r}"
            )
    return list(safe_globals)


def _user_globals() -> dict[str, Any]:
    """The registered safe globals by the ``module.qualname`` a pickle names them with."""
    out: dict[str, Any] = {}
    for g in _safe_globals:
        if isinstance(g, tuple):
            out[g[1]] = g[0]
        else:
            out[f"{g.__module__}.{g.__qualname__}"] = g
    return out


def add_safe_globals(safe_globals: list[SafeGlobal]) -> None:
    """Allow a ``weights_only`` load to rebuild these classes and call these functions.

    As ``torch.serialization.add_safe_globals``: each entry is a class/function, named in a
    pickle by its ``__module__`` and ``__qualname__``, or a ``(class, "module.name")`` pair.
    Only add what you trust: a pickle may call it with any arguments.
    """
    _safe_globals.extend(_checked(safe_globals))


def get_safe_globals() -> list[SafeGlobal]:
    """The classes recorded by ``add_safe_globals`` (``torch.serialization.get_safe_globals``)."""
    return list(_safe_globals)


def clear_safe_globals() -> None:
    """Forget the classes recorded by ``add_safe_globals`` (``torch.serialization`` too)."""
    _safe_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list[SafeGlobal]) -> Iterator[None]:
    """Within the block the classes are recorded as safe (``torch.serialization.safe_globals``)."""
    before = list(_safe_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _safe_globals[:] = before
