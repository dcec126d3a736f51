"""``lucid.Tensor`` bare: a backend array plus the fields autograd keeps on it.

This module is layer 2 of lucid-core (see CONTRIBUTING, "Layers inside lucid-core"): it imports
only dtypes, devices and backends. Arithmetic, the ops' methods, conversions that record a graph
and in-place updates are attached to the class by ``lucid._binder`` (as JAX's
``array_methods.py`` does), so that Tensor and the ops do not import each other.
"""

from __future__ import annotations

import builtins
import operator
import os
import sys
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.reduction import ForkingPickler
from typing import Any, SupportsIndex, overload

import numpy as np

from lucid import _memory_format, dtypes
from lucid._device import NOT_COMPILED
from lucid._device import device as _device_cls
from lucid._repr import tensor_repr
from lucid._tensor_methods import TensorMethods
from lucid.backends import Backend, get_backend
from lucid.backends._numpy import _shared
from lucid.utils.hooks import RemovableHandle

_NDARRAY = np.ndarray

# Builtin names for annotations inside Tensor, whose methods .bool()/.int()/.float() shadow them.
_bool = bool
_int = int
_float = float


def _size_item(i: int, v: Any) -> int:
    """One entry of ``Size(...)`` as an int: anything with ``__index__`` (NumPy integers, bools,
    one-element integer tensors) converts, as torch.Size converts it; anything else is refused."""
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(
            f"lucid.Size() takes an iterable of 'int' (item {i} is '{type(v).__name__}')"
        ) from None


class Size(tuple[int, ...]):
    """The shape of a tensor (``torch.Size``): a tuple of ints, equal to the plain tuple of the
    same sizes, whose slices and sums with tuples stay ``Size``.

    >>> lucid.zeros(2, 3).shape
    lucid.Size([2, 3])
    >>> lucid.zeros(2, 3).shape == (2, 3)
    True
    """

    __slots__ = ()

    def __new__(cls, sizes: Iterable[SupportsIndex] = ()) -> Size:
        items = tuple(sizes)
        for s in items:
            if type(s) is not int:
                return tuple.__new__(cls, [_size_item(i, v) for i, v in enumerate(items)])
        return tuple.__new__(cls, items)

    def __repr__(self) -> str:
        return f"lucid.Size({list(self)})"

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds."""
        n = 1
        for s in self:
            n *= s
        return n

    @overload
    def __getitem__(self, key: SupportsIndex) -> int: ...
    @overload
    def __getitem__(self, key: slice) -> Size: ...
    def __getitem__(self, key: SupportsIndex | slice) -> int | Size:
        if isinstance(key, slice):
            return Size(tuple.__getitem__(self, key))
        return tuple.__getitem__(self, key)

    def __add__(self, other: tuple[Any, ...]) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(self) + other)

    def __reduce__(self) -> tuple[type[Size], tuple[tuple[int, ...]]]:
        return (Size, (tuple(self),))


class VersionCounter:
    """Counts in-place changes of a tensor's data (shared by views of one buffer)."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


# torch's warning for ``.grad`` read on a non-leaf tensor (TensorBody.h's ``grad()``)
_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information."
)


class Tensor(TensorMethods):
    """A multi-dimensional array on a backend, with autograd (``torch.Tensor``).

    >>> x = lucid.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """

    __slots__ = (
        "_data",
        "_backend",
        "requires_grad",
        "_grad",  # read and set as ``grad``, whose setter checks what it is given
        "grad_fn",
        "_output_nr",
        "_vc",
        "_hooks",
        "_base",
        "_view_src",
        "_storage_of",
        "_post_acc_hooks",  # left unset until a hook is registered (read with getattr)
        "__weakref__",
    )
    __array_priority__ = 1000  # numpy defers to Tensor in mixed arithmetic

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Subclasses (Parameter, Buffer) travel between processes as Tensors do: a shared
        one as a handle to its memory (``multiprocessing`` picks a reducer by exact type)."""
        super().__init_subclass__(**kwargs)
        ForkingPickler.register(cls, _reduce_for_process)

    def __init__(
        self,
        data: Any = None,
        *size: _int,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> None:
        """PyTorch's legacy constructor: ``Tensor(data)`` holds ``data`` in the default float
        dtype (a Tensor keeps its own), ``Tensor(2, 3)`` and ``Tensor()`` are zero-filled of
        that size (``(0,)`` for none); ``dtype`` overrides. ``lucid.tensor`` infers dtypes."""
        if data is None or type(data) is _int:
            arr, backend = sized_array(data, size, dtype, device)
        elif size:
            raise TypeError(f"Tensor(): expected data or sizes (ints), got {(data, *size)!r}")
        else:
            if dtype is None and not isinstance(data, Tensor):
                dtype = dtypes.get_default_dtype()
            arr, backend = to_array(data, dtype, device)
        self._set_fields(arr, backend, False)
        if requires_grad:
            self.requires_grad_(True)  # checks the dtype

    @classmethod
    def from_backend_array(cls, data: Any, backend: Backend, requires_grad: bool = False) -> Tensor:
        """Wrap a backend array as a Tensor without copying or checking it (for op and backend
        code: ``data`` must already be ``backend``'s native array)."""
        t = object.__new__(Tensor)
        if type(data) is not _NDARRAY and isinstance(data, np.generic):
            # NumPy gives a 0-dim result (a reduction, an op on 0-dim tensors) as an immutable
            # scalar: held as a 0-d array instead, so that its views, ``.data`` and
            # ``detach()`` share its storage as torch's do (``loss.detach().fill_(0)`` reaches
            # ``loss``)
            data = np.asarray(data)
        t._set_fields(data, backend, requires_grad)
        return t

    def _set_fields(self, data: Any, backend: Backend, requires_grad: bool) -> None:
        """Every field of a new tensor (both constructors): ``data`` on ``backend``, no graph."""
        self._data = data
        self._backend = backend
        self.requires_grad = requires_grad
        self._grad: Tensor | None = None
        self.grad_fn: Any = None
        self._output_nr = 0
        self._vc: VersionCounter | None = None  # made on first need (_counter)
        self._hooks: dict[int, Callable[[Tensor], Tensor | None]] | None = None
        self._base: Tensor | None = None  # the tensor this one is a view of (shares its data)
        self._view_src: Any = None  # (base, node) when made by one view op straight from base
        self._storage_of: Callable[[], Tensor | None] | None = None  # see _sharing_storage

    # -- basic properties -------------------------------------------------------------------------
    @property
    def grad(self) -> Tensor | None:
        """The gradient ``backward`` accumulated here (None until then), as torch's; read on
        a non-leaf tensor that does not retain its gradient, it warns as torch's does."""
        g = self._grad
        if g is None and self.grad_fn is not None and not self.retains_grad:
            warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return g

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        # torch's checks (python_variable.cpp's THPVariable_set_grad), with its messages: a
        # float set here failed only at the next backward's accumulation
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    "assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value.dtype != self.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{value.dtype}' to a tensor "
                    f"with dtype '{self.dtype}'. Please ensure that the gradient and the tensor "
                    "have the same dtype"
                )
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor "
                    f"of size '{list(self.shape)}'. Please ensure that the gradient and the "
                    "tensor are the same size"
                )
        self._grad = value

    @property
    def array(self) -> Any:
        """The native backend array this tensor holds (``numpy.ndarray`` on "cpu",
        ``mlx.core.array`` on "mlx"): no copy, no conversion, no autograd. Read-only: to give a
        tensor new storage assign ``t.data = other`` (as in PyTorch)."""
        return self._data

    @property
    def data(self) -> Tensor:
        """This tensor's storage as a new Tensor outside autograd, as ``torch.Tensor.data``.

        It shares the storage (in-place changes of it write through to this tensor), has
        ``requires_grad=False`` and no ``grad_fn``, and its in-place changes do not bump this
        tensor's version counter: a saved tensor changed through ``.data`` is not detected at
        backward (use :meth:`detach`, which shares the counter, to get that check). Assigning
        ``t.data = other`` makes ``t`` use ``other``'s storage (shape and dtype may change).
        For the native backend array use :attr:`array`.
        """
        return self._sharing_storage(Tensor.from_backend_array(self._data, self._backend))

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(
                f"Tensor.data must be set to a Tensor, but got {type(value).__name__} "
                "(wrap an array with lucid.tensor or Tensor.from_backend_array)"
            )
        self._data = value._data
        self._backend = value._backend

    @property
    def backend(self) -> Backend:
        """The backend that holds this tensor's data (NumPy's for ``"cpu"``)."""
        return self._backend

    @property
    def shape(self) -> Size:
        """The size of each dimension, a :class:`Size` (a tuple; ``torch.Tensor.shape``)."""
        return tuple.__new__(Size, self._data.shape)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self._data.shape)

    @property
    def dtype(self) -> dtypes.dtype:
        """The element type, a ``lucid.dtype``."""
        return self._backend.dtype_of(self._data)

    @property
    def device(self) -> _device_cls:
        """The device the tensor lives on, a ``lucid.device`` (compares equal to ``"cpu"``)."""
        return _device_cls(self._backend.device)

    @property
    def is_leaf(self) -> bool:
        """Whether the tensor was made by the user rather than by a recorded op (``grad_fn`` is
        None)."""
        return self.grad_fn is None

    def _counter(self) -> VersionCounter:
        """The version counter, made on first use (most tensors never need one)."""
        vc = self._vc
        if vc is None:
            vc = self._vc = VersionCounter()
        return vc

    @property
    def _version(self) -> int:
        vc = self._vc
        return 0 if vc is None else vc.value

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating point type."""
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        """Whether the dtype is a complex type."""
        return self.dtype.is_complex

    def size(self, dim: int | None = None) -> Any:
        """The shape, or the size of dimension ``dim`` (``torch.Tensor.size``)."""
        shape = self.shape
        if dim is None:
            return shape
        return shape[dim]

    def dim(self) -> int:
        """The number of dimensions."""
        return self.ndim

    def numel(self) -> int:
        """The number of elements."""
        n = 1
        for s in self._data.shape:
            n *= int(s)
        return n

    nelement = numel

    def element_size(self) -> int:
        """The size of one element in bytes."""
        return self.dtype.itemsize

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return int(self._data.shape[0])

    # -- conversion -------------------------------------------------------------------------------
    def numpy(self, *, force: _bool = False) -> Any:
        """The data as a numpy array (shares memory on "cpu"; like torch, refuses with grad
        unless ``force``, which detaches first)."""
        if force:
            return self.detach().numpy()
        if self.requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        return self._backend.to_numpy(self._data)

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self.numel() != 1:
            raise RuntimeError(
                f"a Tensor with {self.numel()} elements cannot be converted to Scalar"
            )
        if self._backend.device == "meta":
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return self._backend.to_numpy(self._data).reshape(()).item()

    def tolist(self) -> Any:
        """The data as (nested) Python lists of numbers."""
        return self._backend.to_numpy(self._data).tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.category > dtypes.INT or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self.numel()} elements is ambiguous")
        return bool(self.item())

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        arr = self._backend.to_numpy(self._data)
        return arr if dtype is None else arr.astype(dtype)

    def detach(self) -> Tensor:
        """A new tensor on the same storage, cut from the graph (no ``grad_fn``, no grad)."""
        t = Tensor.from_backend_array(self._data, self._backend)
        t._vc = self._counter()
        return self._sharing_storage(t)

    def _sharing_storage(self, t: Tensor) -> Tensor:
        """``t`` holds this tensor's array: where the backend's writes make new arrays (views
        are copies), link it so that its in-place changes reach this tensor. The link keeps a
        tensor outside any graph alive (a leaf, a view of one, a ``.data``: so that
        ``w[0].data.fill_(1)`` reaches ``w``), but is weak to a tensor that a graph made, so
        that ``losses.append(loss.detach())`` keeps no graph alive."""
        if not self._backend.views_share_memory:
            base = self._base if self._base is not None else self
            graph_free = base.grad_fn is None
            t._storage_of = _StrongRef(self) if graph_free else weakref.ref(self)
        return t

    def detach_(self) -> Tensor:
        """Cut this tensor from the graph in place: it becomes a leaf that does not require grad."""
        self.grad_fn = None
        self.requires_grad = False
        return self

    # -- conversions and new tensors, through the methods the binder attaches ------------------
    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False, **kwargs: Any) -> Tensor:  # fmt: skip
        """A tensor of zeros, with this tensor's dtype and device unless given; the size as
        ints, one sequence, or ``size=`` (as torch's)."""
        shape = _new_size("new_zeros", size, kwargs)
        return self.new_full(shape, 0, dtype, device, requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False, **kwargs: Any) -> Tensor:  # fmt: skip
        """A tensor of ones, with this tensor's dtype and device unless given; the size as
        ints, one sequence, or ``size=`` (as torch's)."""
        shape = _new_size("new_ones", size, kwargs)
        return self.new_full(shape, 1, dtype, device, requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False, **kwargs: Any) -> Tensor:  # fmt: skip
        """An uninitialized tensor, with this tensor's dtype and device unless given; the size
        as ints, one sequence, or ``size=`` (as torch's)."""
        shape = _new_size("new_empty", size, kwargs)
        return self.new_full(shape, 0, dtype, device, requires_grad)

    def type_as(self, other: Tensor) -> Tensor:
        """This tensor converted to ``other``'s dtype."""
        return self.to(other.dtype)

    def cpu(self, memory_format: Any = None) -> Tensor:
        """This tensor on the ``"cpu"`` device (itself if already there)."""
        if memory_format is not None:
            return self.to("cpu", memory_format=memory_format)
        return self.to("cpu")

    def float(self, memory_format: Any = None) -> Tensor:
        """``self.to(lucid.float32, memory_format=memory_format)``."""
        return self.to(dtypes.float32, memory_format=memory_format)

    def double(self, memory_format: Any = None) -> Tensor:
        """``self.to(lucid.float64, memory_format=memory_format)``."""
        return self.to(dtypes.float64, memory_format=memory_format)

    def half(self, memory_format: Any = None) -> Tensor:
        """``self.to(lucid.float16, memory_format=memory_format)``."""
        return self.to(dtypes.float16, memory_format=memory_format)

    def bfloat16(self, memory_format: Any = None) -> Tensor:
        """``self.to(lucid.bfloat16, memory_format=memory_format)``."""
        return self.to(dtypes.bfloat16, memory_format=memory_format)

    def long(self, memory_format: Any = None) -> Tensor:
        """``self.to(lucid.int64, memory_format=memory_format)``."""
        return self.to(dtypes.int64, memory_format=memory_format)

    def int(self, memory_format: Any = None) -> Tensor:
        """``self.to(lucid.int32, memory_format=memory_format)``."""
        return self.to(dtypes.int32, memory_format=memory_format)

    def short(self, memory_format: Any = None) -> Tensor:
        """``self.to(lucid.int16, memory_format=memory_format)``."""
        return self.to(dtypes.int16, memory_format=memory_format)

    def bool(self, memory_format: Any = None) -> Tensor:
        """``self.to(lucid.bool, memory_format=memory_format)``."""
        return self.to(dtypes.bool_, memory_format=memory_format)

    def byte(self, memory_format: Any = None) -> Tensor:
        """``self.to(lucid.uint8, memory_format=memory_format)``."""
        return self.to(dtypes.uint8, memory_format=memory_format)

    def __contains__(self, value: Any) -> _bool:
        return _bool((self == value).any())

    @property
    def T(self) -> Tensor:  # noqa: N802
        """The tensor with its dimensions reversed."""
        return self.permute(tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:  # noqa: N802
        """The tensor with its last two dimensions swapped (a batch of transposed matrices)."""
        return self.transpose(-2, -1)

    @property
    def itemsize(self) -> _int:
        """Bytes per element."""
        return int(self.dtype.itemsize)

    @property
    def nbytes(self) -> _int:
        """Bytes of the elements (``numel() * itemsize``)."""
        return int(self.numel() * self.dtype.itemsize)

    @property
    def is_cpu(self) -> builtins.bool:
        """Whether the tensor is on the CPU (NumPy) backend."""
        return str(self.device).startswith("cpu")

    @property
    def mH(self) -> Tensor:  # noqa: N802
        """The conjugate transpose of a batch of matrices (``mT`` for real dtypes)."""
        if self.ndim < 2:
            raise RuntimeError(
                f"tensor.mH is only supported on matrices or batches of matrices. Got "
                f"{self.ndim}-D tensor."
            )
        return self.transpose(-2, -1).conj()

    @property
    def H(self) -> Tensor:  # noqa: N802
        """The conjugate transpose of a matrix (0-d, 1-d or 2-d; ``T`` for real dtypes)."""
        if self.ndim > 2:
            raise RuntimeError(
                f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor."
            )
        return self.T.conj()

    @property
    def real(self) -> Tensor:
        """The real part (a view, writable on NumPy); a real tensor itself."""
        return self._real_part()

    @real.setter
    def real(self, value: Any) -> None:
        self._real_part().copy_(value)

    @property
    def imag(self) -> Tensor:
        """The imaginary part of a complex tensor (a view, writable on NumPy)."""
        return self._imag_part()

    @imag.setter
    def imag(self, value: Any) -> None:
        self._imag_part().copy_(value)

    def _fresh_copy(self) -> Tensor:
        """A tensor with its own copy of this one's array, outside autograd."""
        return Tensor.from_backend_array(self._backend.copy(self._data), self._backend)

    def cuda(
        self, device: Any = None, non_blocking: _bool = False, memory_format: Any = None
    ) -> Tensor:
        """Always raises: lucid has no CUDA device (see ``lucid.cuda``)."""
        raise AssertionError(NOT_COMPILED)

    @property
    def is_cuda(self) -> _bool:
        """Whether the tensor is on a CUDA device: always False in lucid."""
        return False

    @property
    def is_xpu(self) -> _bool:
        """Whether the tensor is on an Intel XPU: always False in lucid."""
        return False

    @property
    def is_mps(self) -> _bool:
        """Whether the tensor is on Apple's MPS device: always False (lucid's Apple GPU path is
        the MLX backend, device ``"mlx"``)."""
        return False

    @property
    def is_sparse(self) -> _bool:
        """Whether the tensor has a sparse COO layout: always False (lucid stores the tensors of
        ``lucid.sparse`` dense)."""
        return False

    @property
    def layout(self) -> _memory_format.layout:
        """The memory layout (``torch.Tensor.layout``): always ``lucid.strided`` (lucid stores
        the tensors of ``lucid.sparse`` dense)."""
        return _memory_format.strided

    @property
    def output_nr(self) -> _int:
        """Which output of its ``grad_fn`` this tensor is (``torch.Tensor.output_nr``): 0 for
        leaves and single-output ops, the output's index for ops with several outputs."""
        return int(self._output_nr)

    @property
    def is_sparse_csr(self) -> _bool:
        """Whether the tensor has a sparse CSR layout: always False (see :attr:`is_sparse`)."""
        return False

    @property
    def name(self) -> None:
        """None, as torch's for a tensor that is not a named tensor (lucid has none)."""
        return None

    @property
    def is_meta(self) -> _bool:
        """Whether the tensor is on the meta device (a shape and a dtype, no data)."""
        return self._backend.device == "meta"

    def pin_memory(self, device: Any = None) -> Tensor:
        """``self``: pinned host memory speeds CUDA transfers, and lucid has no CUDA device."""
        return self

    def is_pinned(self, device: Any = None) -> _bool:
        """Whether the tensor is in pinned memory: always False in lucid."""
        return False

    # -- autograd ----------------------------------------------------------------------------------
    def requires_grad_(self, requires_grad: _bool = True) -> Tensor:
        """Set whether autograd records operations on this leaf tensor, in place; returns it."""
        if not self.is_leaf:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and self.dtype.category < dtypes.FLOAT:
            raise RuntimeError(
                f"only Tensors of floating point and complex dtype can require gradients, "
                f"got {self.dtype}"
            )
        self.requires_grad = bool(requires_grad)
        return self

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after ``backward()``."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None:
            return
        node = self.grad_fn
        if node._retained is None:
            node._retained = {}
        node._retained[self._output_nr] = weakref.ref(self)

    @property
    def retains_grad(self) -> _bool:
        """Whether ``retain_grad()`` was called on this non-leaf tensor."""
        node = self.grad_fn
        return bool(node is not None and node._retained and self._output_nr in node._retained)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new one."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is None:
            if self._hooks is None:
                self._hooks = {}
            hooks = self._hooks
        else:
            node = self.grad_fn
            if node._pre_hooks is None:
                node._pre_hooks = {}
            hooks = node._pre_hooks.setdefault(self._output_nr, {})
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]) -> RemovableHandle:
        """Call ``hook(tensor)`` once this leaf's ``.grad`` has been accumulated in a backward
        pass (``torch.Tensor.register_post_accumulate_grad_hook``): the hook sees the final
        ``.grad`` and returns None (it may, say, step an optimizer on this parameter alone)."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        hooks: dict[int, Callable[[Tensor], None]] | None = getattr(self, "_post_acc_hooks", None)
        if hooks is None:
            hooks = {}
            self._post_acc_hooks = hooks
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    # -- repr and Python protocols ---------------------------------------------------------------
    def __repr__(self) -> str:
        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self.item(), spec)
        return format(repr(self), spec)

    def __hash__(self) -> _int:
        return id(self)

    def __iter__(self) -> Iterator[Tensor]:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def share_memory_(self) -> Tensor:
        """Move the data into memory shared with other processes (``Tensor.share_memory_``).

        On "cpu" the array moves into a named shared-memory segment: processes forked after
        this write into the same memory, and so do processes started by "spawn" or
        "forkserver" and processes that receive the tensor through a ``multiprocessing``
        queue or pipe (they map the segment): Hogwild training, as with torch. A no-op where
        the tensor is already shared, and on MLX.
        """
        if self._backend.device != "cpu" or self.is_shared():
            return self
        self._data = _shared.share(np.ascontiguousarray(self._data))
        return self

    def is_shared(self) -> _bool:
        """Whether the data is in shared memory (after ``share_memory_``)."""
        return _shared.is_shared(self._data)

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:  # fmt: skip
        """This tensor's memory as a DLPack capsule (zero-copy on "cpu"; see ``from_dlpack``)."""
        if self.requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        arr = self._data if self._backend.device == "cpu" else self._backend.to_numpy(self._data)
        kw = {"stream": stream, "max_version": max_version, "dl_device": dl_device, "copy": copy}
        given = {k: v for k, v in kw.items() if v is not None}
        try:
            return arr.__dlpack__(**given)
        except TypeError:  # NumPy 1.x knows only `stream`: a legacy (unversioned) capsule
            if any(k not in ("stream", "max_version") for k in given):
                raise
            return arr.__dlpack__(stream=stream)

    def __dlpack_device__(self) -> tuple[_int, _int]:
        """``(1, 0)``: DLPack's CPU (an MLX tensor is exported through a CPU copy)."""
        return (1, 0)

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild, (self._backend.to_numpy(self._data), str(self.device),
                           self.requires_grad))  # fmt: skip


def _size(size: tuple[Any, ...]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def _new_size(name: str, size: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``new_zeros``/``new_ones``/``new_empty``'s size: positional (``_size``'s forms) or the
    ``size=`` keyword (torch's ``noop_mask`` calls ``new_ones(size=(), ...)``); Python's
    TypeErrors for both at once or another keyword."""
    if kwargs:
        extra = [k for k in kwargs if k != "size"]
        if extra:
            raise TypeError(f"{name}() got an unexpected keyword argument '{extra[0]}'")
        if size:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        return _size((kwargs["size"],))
    return _size(size)


class _StrongRef:
    """A reference that keeps its tensor alive, called like a ``weakref.ref``."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor

    def __call__(self) -> Tensor:
        return self.tensor


def shared_handle(t: Tensor) -> tuple[Any, ...] | None:
    """How another process maps ``t``'s shared memory (None where ``t`` is not shared)."""
    return _shared.handle(t._data) if t._backend.device == "cpu" else None


def _rebuild_shared(
    h: tuple[Any, ...], cls: type[Tensor], requires_grad: bool, state: dict[str, Any]
) -> Tensor:
    """A ``cls`` (Tensor, Parameter, Buffer...) over the shared memory ``h`` describes."""
    t = object.__new__(cls)
    t._set_fields(_shared.attach(h), get_backend("cpu"), requires_grad)
    if state:
        t.__dict__.update(state)
    return t


def _reduce_for_process(t: Tensor) -> Any:
    """How ``multiprocessing`` sends a Tensor (of any subclass) to another process: through a
    queue, a pipe, or as a spawned process's argument. A shared tensor goes as a handle to its
    memory, which the receiver maps; others by value (their ``__reduce_ex__``)."""
    h = shared_handle(t)
    if h is None:
        return t.__reduce_ex__(2)
    return (_rebuild_shared, (h, type(t), t.requires_grad, dict(getattr(t, "__dict__", {}))))


ForkingPickler.register(Tensor, _reduce_for_process)


def _rebuild(arr: Any, device: str, requires_grad: bool) -> Tensor:
    """Unpickle a tensor (``Tensor.__reduce_ex__``; pickles name this function)."""
    data, backend = to_array(arr, None, device)
    return Tensor.from_backend_array(data, backend).requires_grad_(requires_grad)


# -- user data to backend arrays (Tensor(...), lucid.tensor, lucid.as_tensor) ---------------------
# torch's warning for ``torch.tensor([np.zeros(3), ...])`` (given once a process)
_LIST_OF_ARRAYS = (
    "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider "
    "converting the list to a single numpy.ndarray with numpy.array() before converting to a "
    "tensor."
)
_warned_arrays: list[bool] = []
_LUCID_DIR = os.path.dirname(__file__)


def _caller_level() -> int:
    """The ``stacklevel`` that names the first frame outside lucid's package (the caller of
    ``to_array``'s caller's ... public function)."""
    frame: Any = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_LUCID_DIR):
        frame, level = frame.f_back, level + 1
    return level


def to_array(data: Any, dtype: Any, device: Any) -> tuple[Any, Backend]:
    """Turn user data (Tensor, array, nested lists, scalar) into a backend array."""
    dt = None if dtype is None else dtypes.to_dtype(dtype)
    if isinstance(data, Tensor):
        backend = get_backend(device) if device is not None else data.backend
        arr = data.backend.to_numpy(data._data) if backend is not data.backend else data._data
        if backend is data.backend:
            arr = backend.copy(arr) if dt is None else backend.astype(backend.copy(arr), dt)
            return arr, backend
        data = arr
    backend = get_backend(device)
    if type(data) is list and data and type(data[0]) is np.ndarray and not _warned_arrays:
        _warned_arrays.append(True)  # once a process, as torch's TORCH_WARN_ONCE
        warnings.warn(_LIST_OF_ARRAYS, UserWarning, stacklevel=_caller_level())
    if dt is None and not is_array(data):
        dt = infer_dtype(data)
    if is_array(data) and not isinstance(data, np.ndarray) and backend.name != "numpy":
        return backend.asarray(data, dt), backend
    arr = np.asarray(data)
    if dt is None:
        return backend.from_numpy(arr) if backend.name != "numpy" else arr, backend
    if backend.name == "numpy" and dt._rank >= 0:  # (float8: rounded by the backend, as torch)
        return np.asarray(arr, dtype=backend.native_dtype(dt)), backend
    return backend.asarray(arr, dt), backend


def is_array(data: Any) -> bool:
    """Whether ``data`` is an array of some library (has a shape and a dtype)."""
    return hasattr(data, "shape") and hasattr(data, "dtype") and not isinstance(data, (list, tuple))


def infer_dtype(data: Any) -> dtypes.dtype:
    """Python data: floats become the default float, ints int64, bools bool (as torch)."""
    arr = np.asarray(data)
    kind = arr.dtype.kind
    if kind == "f":
        return dtypes.get_default_dtype()
    if kind in "iu":
        return dtypes.int64
    if kind == "b":
        return dtypes.bool_
    if kind == "c":
        return dtypes.complex64
    if arr.dtype == object:
        raise TypeError(
            f"can't convert {type(data).__name__} of mixed or unknown types to a tensor"
        )
    return dtypes.BY_NAME.get(arr.dtype.name, dtypes.get_default_dtype())


def sized_array(
    first: int | None, size: tuple[Any, ...], dtype: Any, device: Any
) -> tuple[Any, Backend]:
    """The ``(array, backend)`` of ``Tensor(2, 3)`` / ``Tensor()``: zeros of that size (``(0,)``
    for none), in the default float dtype unless ``dtype`` is given."""
    shape = (0,) if first is None else (first, *size)
    if any(type(s) is not int for s in shape):
        raise TypeError(f"Tensor(): expected sizes as ints, got {shape!r}")
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(shape)}")
    backend = get_backend(device)
    dt = dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)
    return backend.xp.full(shape, 0.0, dtype=backend.native_dtype(dt)), backend
