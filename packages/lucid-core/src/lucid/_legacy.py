"""PyTorch's legacy tensor types: ``lucid.FloatTensor``, ``lucid.LongTensor``, ...

Each is a callable that makes a CPU tensor of its dtype (``lucid.LongTensor([1, 2])``,
``lucid.FloatTensor(2, 3)``) and a type that ``isinstance`` answers by dtype and device, as
PyTorch's do; they are not Tensor subclasses (``type(x)`` stays ``lucid.Tensor``).
``Tensor.type()`` names them and ``Tensor.type(t)`` converts to them.

>>> isinstance(lucid.zeros(2), lucid.FloatTensor), lucid.zeros(2).type()
(True, 'lucid.FloatTensor')
"""

from __future__ import annotations

from typing import Any

from lucid import dtypes
from lucid._tensor import Tensor

TYPE_NAMES = {
    dtypes.float32: "FloatTensor",
    dtypes.float64: "DoubleTensor",
    dtypes.float16: "HalfTensor",
    dtypes.bfloat16: "BFloat16Tensor",
    dtypes.uint8: "ByteTensor",
    dtypes.int8: "CharTensor",
    dtypes.int16: "ShortTensor",
    dtypes.int32: "IntTensor",
    dtypes.int64: "LongTensor",
    dtypes.bool_: "BoolTensor",
    dtypes.complex64: "ComplexFloatTensor",
    dtypes.complex128: "ComplexDoubleTensor",
}


class tensortype(type):  # noqa: N801 - PyTorch's name
    """The metaclass of the legacy types: calling one makes a tensor, ``isinstance`` checks
    the dtype and that the tensor is on the CPU."""

    dtype: dtypes.dtype

    def __call__(cls, *args: Any, device: Any = None) -> Any:
        if len(args) == 1 and isinstance(args[0], Tensor):
            return args[0].to(cls.dtype)
        return Tensor(*args, dtype=cls.dtype, device=device)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"

    def __repr__(cls) -> str:
        return f"<class 'lucid.{cls.__name__}'>"


def _make(d: dtypes.dtype) -> tensortype:
    doc = f"PyTorch's legacy {TYPE_NAMES[d]}: calling it makes a CPU tensor of dtype {d}."
    return tensortype(TYPE_NAMES[d], (), {"dtype": d, "__module__": "lucid", "__doc__": doc})


LEGACY_TYPES = {name: _make(d) for d, name in TYPE_NAMES.items()}
# In TYPE_NAMES' order (a test checks each name against its dtype).
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor, ShortTensor,
 IntTensor, LongTensor, BoolTensor, ComplexFloatTensor,
 ComplexDoubleTensor) = LEGACY_TYPES.values()  # fmt: skip


def type_name(dtype: dtypes.dtype, device_type: str) -> str:
    """``'lucid.FloatTensor'`` on the CPU, ``'lucid.mlx.FloatTensor'`` on MLX (as PyTorch
    writes ``'torch.cuda.FloatTensor'``)."""
    where = "" if device_type == "cpu" else f"{device_type}."
    name = TYPE_NAMES.get(dtype) or f"{dtypes.SCALAR_TYPE_NAMES[dtype.name]}Tensor"  # (float8)
    return f"lucid.{where}{name}"


def dtype_of_type(spec: Any) -> dtypes.dtype:
    """The dtype a ``Tensor.type`` argument names: a legacy type, ``'torch.FloatTensor'`` /
    ``'lucid.FloatTensor'``, or anything ``lucid.dtypes.to_dtype`` accepts."""
    if isinstance(spec, tensortype):
        return spec.dtype
    if isinstance(spec, str):
        prefix, _, name = spec.rpartition(".")
        if prefix in ("torch", "lucid") and name in LEGACY_TYPES:
            return LEGACY_TYPES[name].dtype
    return dtypes.to_dtype(spec)


class cudatensortype(type):  # noqa: N801 - the metaclass of torch.cuda's legacy types
    """The metaclass of ``lucid.cuda.FloatTensor`` and the rest: lucid has no ``"cuda"``
    device, so ``isinstance`` is False for every tensor (as on torch's CPU build) and calling
    one raises torch's TypeError. Code that only names them (``isinstance`` checks, a
    ``Tensor = cuda.FloatTensor if cuda else FloatTensor`` line) runs."""

    dtype: dtypes.dtype

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"type {cls.__module__}.{cls.__name__} not available. Lucid has no CUDA device "
            "(lucid.cuda.is_available() is False): use lucid." + cls.__name__ + " on 'cpu', or "
            "device 'mlx' for MLX's GPU"
        )

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cuda"

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__name__}'>"


# torch.cuda's ten (no complex ones)
CUDA_TYPES = {
    name: cudatensortype(
        name, (), {"dtype": d, "__module__": "lucid.cuda", "__doc__": f"torch.cuda.{name}."}
    )
    for d, name in TYPE_NAMES.items()
    if not d.is_complex
}

# torch.cuda.sparse's nine (no bool): sparse CUDA tensors, which lucid never makes
CUDA_SPARSE_TYPES = {
    name: cudatensortype(
        name,
        (),
        {
            "dtype": d,
            "is_sparse": True,
            "__module__": "lucid.cuda.sparse",
            "__doc__": f"torch.cuda.sparse.{name}.",
        },
    )
    for d, name in TYPE_NAMES.items()
    if not d.is_complex and d is not dtypes.bool_
}


class cudastoragetype(type):  # noqa: N801 - the metaclass of torch.cuda's storage types
    """The metaclass of ``lucid.cuda.FloatStorage`` and the rest: ``isinstance`` is False for
    everything and calling one raises AssertionError, as on PyTorch's CPU build."""

    dtype: dtypes.dtype

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        from lucid._device import NOT_COMPILED

        raise AssertionError(f"lucid.cuda.{cls.__name__} needs a CUDA device. {NOT_COMPILED}")

    def __instancecheck__(cls, obj: Any) -> bool:
        return False

    def __repr__(cls) -> str:
        return f"<class 'lucid.cuda.{cls.__name__}'>"


# torch.cuda's twelve legacy storages: FloatStorage, ..., ComplexDoubleStorage
CUDA_STORAGES = {
    name.replace("Tensor", "Storage"): cudastoragetype(
        name.replace("Tensor", "Storage"),
        (),
        {"dtype": d, "__module__": "lucid.cuda", "__doc__": f"torch.cuda.{name[:-6]}Storage."},
    )
    for d, name in TYPE_NAMES.items()
}
