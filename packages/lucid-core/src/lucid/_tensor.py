"""``lucid.Tensor``: a backend array plus what autograd needs to know about it.

Arithmetic and the many methods are one-liners that call the functions in ``lucid.ops``;
the autograd bookkeeping lives in ``lucid.autograd``.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from typing import Any

from lucid import _legacy, dtypes
from lucid._device import device as _device_cls
from lucid._tensor_methods import TensorMethods
from lucid.autograd import grad_mode
from lucid.autograd.function import (
    VersionCounter,
    _observers,
    rebind_saved_output,
    replace_saved_output_array,
    snapshot_saved_input,
)
from lucid.backends import Backend, get_backend
from lucid.cuda import NOT_COMPILED
from lucid.utils.hooks import RemovableHandle
from lucid.utils.to_args import parse_to

# Builtin names for annotations inside Tensor, whose methods .bool()/.int()/.float() shadow them.
_bool = bool
_int = int
_float = float
_NUMBERS = (int, float)  # exact types: bool and complex take the ops' promotion rules


def _array_of(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else x


def _scaled(xp: Any, b: Any, value: Any) -> Any:
    """``b * value`` as the ops scale (not at all for 1)."""
    return b if value == 1 else xp.multiply(b, value)


def _ufunc(fn: Any, x: Any, y: Any, out: Any) -> Any:
    """``fn(x, y)``, written into ``out`` where the backend gave one (see ``_write_plain``)."""
    return fn(x, y) if out is None else fn(x, y, out=out)


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
        "grad",
        "grad_fn",
        "_output_nr",
        "_vc",
        "_hooks",
        "_base",
        "_view_src",
        "_storage_of",
        "__weakref__",
    )
    __array_priority__ = 1000  # numpy defers to Tensor in mixed arithmetic

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
        from lucid._creation import _to_array

        if data is None or type(data) is _int:
            arr, backend = _legacy.sized_array(data, size, dtype, device)
        elif size:
            raise TypeError(f"Tensor(): expected data or sizes (ints), got {(data, *size)!r}")
        else:
            if dtype is None and not isinstance(data, Tensor):
                dtype = dtypes.get_default_dtype()
            arr, backend = _to_array(data, dtype, device)
        self._data = arr
        self._backend = backend
        self.grad: Tensor | None = None
        self.grad_fn: Any = None
        self._output_nr = 0
        self._vc: VersionCounter | None = None  # made on first need (_counter)
        self._hooks: dict[int, Callable[[Tensor], Tensor | None]] | None = None
        self._base: Tensor | None = None  # the tensor this one is a view of (shares its data)
        self._view_src: Any = None  # (base, node) when made by one view op straight from base
        self._storage_of: Callable[[], Tensor | None] | None = None  # see _sharing_storage
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    @classmethod
    def from_backend_array(cls, data: Any, backend: Backend, requires_grad: bool = False) -> Tensor:
        """Wrap a backend array as a Tensor without copying or checking it (for op and backend
        code: ``data`` must already be ``backend``'s native array)."""
        t = object.__new__(Tensor)
        t._data = data
        t._backend = backend
        t.requires_grad = requires_grad
        t.grad = None
        t.grad_fn = None
        t._output_nr = 0
        t._vc = None
        t._hooks = None
        t._base = None
        t._view_src = None
        t._storage_of = None
        return t

    # -- basic properties -------------------------------------------------------------------------
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
    def shape(self) -> tuple[int, ...]:
        """The size of each dimension, as a tuple (``torch.Tensor.shape``)."""
        return tuple(self._data.shape)

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
    def numpy(self) -> Any:
        """The data as a numpy array (shares memory on "cpu"; like torch, refuses with grad)."""
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

    # -- new tensors like this one (same dtype and device unless given) ---------------------------
    def new_tensor(self, data: Any, dtype: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Tensor:  # fmt: skip
        """A new tensor from ``data``, with this tensor's dtype and device unless given."""
        from lucid._creation import tensor

        return tensor(data, dtype=dtype or self.dtype, device=device or self.device,  # type: ignore[no-any-return]
                      requires_grad=requires_grad)  # fmt: skip

    def new_full(self, size: Any, fill_value: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:  # fmt: skip
        """A tensor of ``size`` filled with ``fill_value``, with this tensor's dtype and device
        unless given."""
        from lucid._creation import full

        return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,  # type: ignore[no-any-return]
                    requires_grad=requires_grad)  # fmt: skip

    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:  # fmt: skip
        """A tensor of zeros, with this tensor's dtype and device unless given."""
        return self.new_full(_size(size), 0, dtype, device, requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:  # fmt: skip
        """A tensor of ones, with this tensor's dtype and device unless given."""
        return self.new_full(_size(size), 1, dtype, device, requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:  # fmt: skip
        """An uninitialized tensor, with this tensor's dtype and device unless given."""
        return self.new_full(_size(size), 0, dtype, device, requires_grad)

    def _fresh_copy(self) -> Tensor:
        return Tensor.from_backend_array(self._backend.copy(self._data), self._backend)

    def clone(self) -> Tensor:
        """A copy of the tensor with its own storage; gradients flow back to the original."""
        return _ops.clone(self)

    def contiguous(self, memory_format: Any = None) -> Tensor:
        """``self``, or a copy where ``self`` is a view whose layout is not row-major (a
        transposed or strided view), so that ``view`` works on the result as in torch."""
        strides = _ops.shape.layout_strides(self)
        if strides is None or _ops.shape.is_contiguous_layout(self.shape, strides):
            return self
        return self.clone()

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other_tensor)``."""
        device, dtype, _, copy = parse_to(*args, **kwargs)
        out = self
        if device is not None:
            backend = get_backend(str(device))
            if backend is not self._backend:
                out = _ops.to_device(out, backend)
        if dtype is not None and dtype is not out.dtype:
            out = _ops.cast(out, dtype)
        if copy and out is self:
            out = self.clone()
        return out

    def type(self, dtype: Any = None, non_blocking: _bool = False) -> Any:
        """No argument: the legacy type's name (``'lucid.FloatTensor'``). With a dtype, a
        legacy type (``lucid.LongTensor``) or its name (``'torch.LongTensor'``): converted."""
        if dtype is None:
            return _legacy.type_name(self.dtype, self._backend.device.partition(":")[0])
        return self.to(_legacy.dtype_of_type(dtype))

    def type_as(self, other: Tensor) -> Tensor:
        """This tensor converted to ``other``'s dtype."""
        return self.to(other.dtype)

    def cpu(self) -> Tensor:
        """This tensor on the ``"cpu"`` device (itself if already there)."""
        return self.to("cpu")

    def cuda(self, device: Any = None, non_blocking: _bool = False) -> Tensor:
        """Always raises: lucid has no CUDA device (see ``lucid.cuda``)."""
        raise AssertionError(NOT_COMPILED)

    @property
    def is_cuda(self) -> _bool:
        """Whether the tensor is on a CUDA device: always False in lucid."""
        return False

    def pin_memory(self, device: Any = None) -> Tensor:
        """``self``: pinned host memory speeds CUDA transfers, and lucid has no CUDA device."""
        return self

    def is_pinned(self, device: Any = None) -> _bool:
        """Whether the tensor is in pinned memory: always False in lucid."""
        return False

    def float(self) -> Tensor:
        """``self.to(lucid.float32)``."""
        return self.to(dtypes.float32)

    def double(self) -> Tensor:
        """``self.to(lucid.float64)``."""
        return self.to(dtypes.float64)

    def half(self) -> Tensor:
        """``self.to(lucid.float16)``."""
        return self.to(dtypes.float16)

    def bfloat16(self) -> Tensor:
        """``self.to(lucid.bfloat16)``."""
        return self.to(dtypes.bfloat16)

    def long(self) -> Tensor:
        """``self.to(lucid.int64)``."""
        return self.to(dtypes.int64)

    def int(self) -> Tensor:
        """``self.to(lucid.int32)``."""
        return self.to(dtypes.int32)

    def short(self) -> Tensor:
        """``self.to(lucid.int16)``."""
        return self.to(dtypes.int16)

    def bool(self) -> Tensor:
        """``self.to(lucid.bool)``."""
        return self.to(dtypes.bool_)

    def byte(self) -> Tensor:
        """``self.to(lucid.uint8)``."""
        return self.to(dtypes.uint8)

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

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: _bool | None = None,
        create_graph: _bool = False,
        inputs: Any = None,
    ) -> None:
        """Compute the gradient of this tensor with respect to the graph's leaves, into their
        ``.grad``."""
        from lucid.autograd import backward

        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # -- in-place machinery ------------------------------------------------------------------------
    def _check_inplace(self) -> None:
        if not grad_mode._state.enabled:
            return
        if self.requires_grad and self.grad_fn is None:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        base = self._base
        if base is not None and base.requires_grad and base.grad_fn is None:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place "
                "operation."
            )

    def _set_data_inplace(self, new: Any) -> Tensor:
        """Write ``new`` into this tensor (in place where the backend allows); bump the version."""
        self._rebind_inplace(self._backend.assign(self._data, new))
        self._counter().value += 1
        return self

    def _rebind_inplace(self, arr: Any) -> None:
        """Hold ``arr``, the result of an in-place change of this tensor. Where the backend made
        a new array rather than writing into the old one (MLX; views that are copies), the
        tensor this one is the ``.data`` or ``detach()`` of gets it too, unless that tensor has
        since been given other storage (the version counter is not bumped again: ``.data`` has
        its own, ``detach()`` shares it)."""
        old = self._data
        self._data = arr
        link = self._storage_of
        if link is None or arr is old:
            return
        owner = link()
        if owner is None or owner._data is not old:
            return
        owner._rebind_inplace(arr)
        if owner.grad_fn is not None:
            replace_saved_output_array(owner.grad_fn, old, arr)
        if owner._base is not None and not owner._backend.views_share_memory:
            owner._write_back()

    def _inplace_result(self, result: Tensor) -> Tensor:
        """Make ``self`` hold ``result`` (computed out of place), keeping autograd consistent."""
        self._check_inplace()
        if result._data.dtype != self._data.dtype:
            if not _can_cast(result.dtype, self.dtype):
                raise RuntimeError(
                    f"result type {result.dtype.name.capitalize()} can't be cast to the desired "
                    f"output type {self.dtype.name.capitalize()}"
                )
            result = result.to(self.dtype)
        if result._data.shape != self._data.shape:
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                f"{list(result.shape)}"
            )
        if not result.requires_grad and grad_mode._state.enabled and self._in_graph():
            # A constant written over a tensor in a graph: its old value gets zero gradient.
            result = _ops.shape.Overwrite.apply(self, result)
        node = result.grad_fn
        if node is not None and node._saved:
            snapshot_saved_input(node, self)
        rebased = self._rebase_view(result) if self._base is not None else None
        self._set_data_inplace(result._data)
        if self._base is not None and not self._backend.views_share_memory:
            self._write_back()
        # Adopt the result's graph only when it was recorded (not e.g. copy_(param) under
        # no_grad, where ``result`` may be the source tensor itself).
        recorded = result.requires_grad and grad_mode._state.enabled
        if recorded and result.grad_fn is not None and result._vc is not None:
            # The node's saved output is now this tensor: later in-place changes of it must
            # be caught by the version check.
            rebind_saved_output(result.grad_fn, result._vc, self._counter())
        if rebased is not None:
            return self._adopt(rebased)
        return self._adopt(result) if recorded else self

    def _write_back(self) -> None:
        """Put this view's new value into its base (backends whose views are copies)."""
        src = self._view_src
        write_back = getattr(src[1], "write_back", None) if src is not None else None
        if write_back is None:
            raise RuntimeError(
                f"in-place change of a view is not supported on device '{self.device}' for "
                "this view (only views made by one indexing, reshape or permute step); use "
                "index assignment on the base tensor or an out-of-place op"
            )
        base = src[0]
        base._rebind_inplace(write_back(base._data, self._data))

    def _plain_update(self, operands: tuple[Any, ...], scalar: Any, numbers: _bool = True) -> _bool:
        """Whether an in-place update of ``self`` from ``operands`` and the Python number
        ``scalar`` can skip the op machinery (an optimizer's or a running statistic's update):
        nothing records or observes ops, ``self`` is a floating tensor that is no view, and
        each operand is a tensor of its dtype, shape and backend (or, with ``numbers``, a
        Python number), so no promotion, broadcasting or graph is involved. The update then
        runs the ufuncs the ops would run, in their order: the same bits."""
        if grad_mode._state.enabled or _observers or self._base is not None:
            return False
        if type(scalar) not in _NUMBERS or not self._backend.weak_python_scalars:
            return False
        if not self.dtype.is_floating_point:
            return False
        mine = self._data
        for x in operands:
            if not isinstance(x, Tensor):
                if numbers and type(x) in _NUMBERS:
                    continue
                return False
            data = x._data
            if x._backend is not self._backend or data.dtype != mine.dtype:
                return False
            if data.shape != mine.shape:
                return False
        return True

    def _write_plain(self, compute: Callable[[Any, Any, Any], Any]) -> Tensor:
        """``self = compute(xp, self's array, out)`` in place, under the ops' floating-point
        error state (no warnings), with the version bump of any in-place op. ``out`` is the
        array itself where the backend can write a result into it (NumPy: the last ufunc
        writes there, one pass and no temporary: an optimizer step over ResNet-18's 11M
        parameters 43 -> 28 ms), else None (the result is computed, then assigned)."""
        backend = self._backend
        out = backend.inplace_out(self._data)
        quiet = backend.fp_quiet
        token = None if quiet is None else quiet[0].set(quiet[1])
        try:
            new = compute(backend.xp, self._data, out)
        finally:
            if quiet is not None:
                quiet[0].reset(token)
        if out is not None and new is out:
            self._counter().value += 1
            return self
        return self._set_data_inplace(new)

    def _in_graph(self) -> _bool:
        base = self._base
        return self.requires_grad or (base is not None and base.requires_grad)

    def _rebase_view(self, result: Tensor) -> Tensor | None:
        """In-place change of an indexed view under autograd: give the base the graph of
        ``base[index] = result`` (PyTorch's CopySlices) and return the view's new value
        ``new_base[index]``. Other views keep their graph (see CONTRIBUTING)."""
        base = self._base
        assert base is not None
        if not (grad_mode._state.enabled and (base.requires_grad or result.requires_grad)):
            return None
        src = self._view_src
        rebase = getattr(src[1], "rebase", None) if src is not None else None
        if rebase is None:
            return None
        new_base, new_view = rebase(base, result)
        base._adopt(new_base)
        return new_view  # type: ignore[no-any-return]

    def _adopt(self, result: Tensor) -> Tensor:
        self.requires_grad = True
        self.grad_fn = result.grad_fn
        self._output_nr = result._output_nr
        return self

    # -- repr --------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        from lucid._repr import tensor_repr

        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self.item(), spec)
        return format(repr(self), spec)

    def __contains__(self, value: Any) -> _bool:
        return _bool((self == value).any())

    def __hash__(self) -> _int:
        return id(self)

    def __iter__(self) -> Iterator[Tensor]:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild, (self._backend.to_numpy(self._data), str(self.device),
                           self.requires_grad))  # fmt: skip

    # -- dunders -----------------------------------------------------------------------------------
    def __add__(self, other: Any) -> Tensor:
        return _ops.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _ops.add(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return _ops.sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _ops.sub(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return _ops.mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _ops.mul(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return _ops.div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _ops.div(other, self)

    def __floordiv__(self, other: Any) -> Tensor:
        return _ops.floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _ops.floor_divide(other, self)

    def __mod__(self, other: Any) -> Tensor:
        return _ops.remainder(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return _ops.remainder(other, self)

    def __pow__(self, other: Any) -> Tensor:
        return _ops.pow(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return _ops.pow(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return _ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _ops.matmul(other, self)

    def __neg__(self) -> Tensor:
        return _ops.neg(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return _ops.abs(self)

    def __invert__(self) -> Tensor:
        return _ops.bitwise_not(self)

    def __and__(self, other: Any) -> Tensor:
        return _ops.bitwise_and(self, other)

    def __or__(self, other: Any) -> Tensor:
        return _ops.bitwise_or(self, other)

    def __xor__(self, other: Any) -> Tensor:
        return _ops.bitwise_xor(self, other)

    def __rand__(self, other: Any) -> Tensor:
        return _ops.bitwise_and(other, self)

    def __ror__(self, other: Any) -> Tensor:
        return _ops.bitwise_or(other, self)

    def __rxor__(self, other: Any) -> Tensor:
        return _ops.bitwise_xor(other, self)

    def __lshift__(self, other: Any) -> Tensor:
        return _ops.bitwise_left_shift(self, other)

    def __rshift__(self, other: Any) -> Tensor:
        return _ops.bitwise_right_shift(self, other)

    def __rlshift__(self, other: Any) -> Tensor:
        return _ops.bitwise_left_shift(other, self)

    def __rrshift__(self, other: Any) -> Tensor:
        return _ops.bitwise_right_shift(other, self)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _ops.eq(self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _ops.ne(self, other)

    def __lt__(self, other: Any) -> Tensor:
        return _ops.lt(self, other)

    def __le__(self, other: Any) -> Tensor:
        return _ops.le(self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _ops.gt(self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _ops.ge(self, other)

    def __getitem__(self, index: Any) -> Tensor:
        return _ops.getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        _ops.setitem(self, index, value)

    def __iadd__(self, other: Any) -> Tensor:
        return self.add_(other)

    def __isub__(self, other: Any) -> Tensor:
        return self.sub_(other)

    def __imul__(self, other: Any) -> Tensor:
        return self.mul_(other)

    def __itruediv__(self, other: Any) -> Tensor:
        return self.div_(other)

    @property
    def T(self) -> Tensor:  # noqa: N802
        """The tensor with its dimensions reversed."""
        return _ops.permute(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:  # noqa: N802
        """The tensor with its last two dimensions swapped (a batch of transposed matrices)."""
        return _ops.transpose(self, -2, -1)

    # -- in-place ops ------------------------------------------------------------------------------
    def add_(self, other: Any, alpha: Any = 1) -> Tensor:
        """In-place ``add``: ``self += alpha * other``."""
        if self._plain_update((other,), alpha) and (alpha == 1 or isinstance(other, Tensor)):
            b = _array_of(other)
            return self._write_plain(lambda xp, a, o: _ufunc(xp.add, a, _scaled(xp, b, alpha), o))
        return self._inplace_result(_ops.add(self, other, alpha=alpha))

    def sub_(self, other: Any, alpha: Any = 1) -> Tensor:
        """In-place ``sub``: ``self -= alpha * other``."""
        return self._inplace_result(_ops.sub(self, other, alpha=alpha))

    def mul_(self, other: Any) -> Tensor:
        """In-place ``mul``."""
        if self._plain_update((other,), 1):
            b = _array_of(other)
            return self._write_plain(lambda xp, a, o: _ufunc(xp.multiply, a, b, o))
        return self._inplace_result(_ops.mul(self, other))

    def div_(self, other: Any) -> Tensor:
        """In-place ``div``."""
        return self._inplace_result(_ops.div(self, other))

    def pow_(self, other: Any) -> Tensor:
        """In-place ``pow``."""
        return self._inplace_result(_ops.pow(self, other))

    def neg_(self) -> Tensor:
        """In-place ``neg``."""
        return self._inplace_result(_ops.neg(self))

    def abs_(self) -> Tensor:
        """In-place ``abs``."""
        return self._inplace_result(_ops.abs(self))

    def exp_(self) -> Tensor:
        """In-place ``exp``."""
        return self._inplace_result(_ops.exp(self))

    def log_(self) -> Tensor:
        """In-place ``log``."""
        return self._inplace_result(_ops.log(self))

    def sqrt_(self) -> Tensor:
        """In-place ``sqrt``."""
        return self._inplace_result(_ops.sqrt(self))

    def sigmoid_(self) -> Tensor:
        """In-place ``sigmoid``."""
        return self._inplace_result(_ops.sigmoid(self))

    def tanh_(self) -> Tensor:
        """In-place ``tanh``."""
        return self._inplace_result(_ops.tanh(self))

    def relu_(self) -> Tensor:
        """In-place ``relu``."""
        return self._inplace_result(_ops.relu(self))

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        """In-place ``clamp``."""
        return self._inplace_result(_ops.clamp(self, min, max))

    clip_ = clamp_

    def addcmul_(self, tensor1: Any, tensor2: Any, value: Any = 1) -> Tensor:
        """In-place ``addcmul``: ``self += value * tensor1 * tensor2``."""
        if self._plain_update((tensor1, tensor2), value, numbers=False):
            b, c = tensor1._data, tensor2._data
            return self._write_plain(
                lambda xp, a, o: _ufunc(xp.add, a, _scaled(xp, xp.multiply(b, c), value), o)
            )
        return self._inplace_result(_ops.addcmul(self, tensor1, tensor2, value=value))

    def addcdiv_(self, tensor1: Any, tensor2: Any, value: Any = 1) -> Tensor:
        """In-place ``addcdiv``: ``self += value * tensor1 / tensor2``."""
        if self._plain_update((tensor1, tensor2), value, numbers=False):
            b, c = tensor1._data, tensor2._data
            return self._write_plain(
                lambda xp, a, o: _ufunc(xp.add, a, _scaled(xp, xp.true_divide(b, c), value), o)
            )
        return self._inplace_result(_ops.addcdiv(self, tensor1, tensor2, value=value))

    def lerp_(self, end: Any, weight: Any) -> Tensor:
        """In-place ``lerp``: ``self += weight * (end - self)``."""
        if self._plain_update((end,), weight, numbers=False):
            b = end._data
            return self._write_plain(
                lambda xp, a, o: _ufunc(xp.add, a, xp.multiply(xp.subtract(b, a), weight), o)
            )
        return self._inplace_result(_ops.lerp(self, end, weight))

    def maximum_(self, other: Any) -> Tensor:
        """In-place ``maximum``."""
        return self._inplace_result(_ops.maximum(self, other))

    def masked_fill_(self, mask: Any, value: Any) -> Tensor:
        """In-place ``masked_fill``: ``value`` where ``mask`` is True."""
        return self._inplace_result(_ops.masked_fill(self, mask, value))

    def scatter_(self, dim: _int, index: Any, src: Any = None, *, value: Any = None,
                 reduce: str | None = None) -> Tensor:  # fmt: skip
        """In-place ``scatter``."""
        return self._inplace_result(_ops.scatter(self, dim, index, src, value=value, reduce=reduce))

    def scatter_add_(self, dim: _int, index: Any, src: Any) -> Tensor:
        """In-place ``scatter_add``."""
        return self._inplace_result(_ops.scatter_add(self, dim, index, src))

    def scatter_reduce_(self, dim: _int, index: Any, src: Any, reduce: str, *,
                        include_self: _bool = True) -> Tensor:  # fmt: skip
        """In-place ``scatter_reduce``."""
        out = _ops.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)
        return self._inplace_result(out)

    def index_add_(self, dim: _int, index: Any, source: Any, *, alpha: Any = 1) -> Tensor:
        """In-place ``index_add``."""
        return self._inplace_result(_ops.index_add(self, dim, index, source, alpha=alpha))

    def floor_(self) -> Tensor:
        """In-place ``floor``."""
        return self._inplace_result(_ops.floor(self))

    def ceil_(self) -> Tensor:
        """In-place ``ceil``."""
        return self._inplace_result(_ops.ceil(self))

    def round_(self, *, decimals: _int = 0) -> Tensor:
        """In-place ``round``."""
        return self._inplace_result(_ops.round(self, decimals=decimals))

    def trunc_(self) -> Tensor:
        """In-place ``trunc``."""
        return self._inplace_result(_ops.trunc(self))

    def square_(self) -> Tensor:
        """In-place ``square``."""
        return self._inplace_result(_ops.square(self))

    def reciprocal_(self) -> Tensor:
        """In-place ``reciprocal``."""
        return self._inplace_result(_ops.reciprocal(self))

    def rsqrt_(self) -> Tensor:
        """In-place ``rsqrt``."""
        return self._inplace_result(_ops.rsqrt(self))

    def sign_(self) -> Tensor:
        """In-place ``sign``."""
        return self._inplace_result(_ops.sign(self))

    def fmod_(self, other: Any) -> Tensor:
        """In-place ``fmod``."""
        return self._inplace_result(_ops.fmod(self, other))

    def remainder_(self, other: Any) -> Tensor:
        """In-place ``remainder``."""
        return self._inplace_result(_ops.remainder(self, other))

    def clamp_min_(self, min: Any) -> Tensor:  # noqa: A002
        """In-place ``clamp(min=min)``."""
        return self._inplace_result(_ops.clamp(self, min, None))

    def clamp_max_(self, max: Any) -> Tensor:  # noqa: A002
        """In-place ``clamp(max=max)``."""
        return self._inplace_result(_ops.clamp(self, None, max))

    def copy_(self, src: Any) -> Tensor:
        """Copy ``src``'s values into this tensor, in place (broadcast, cast to this dtype)."""
        src_t = src if isinstance(src, Tensor) else Tensor(src)
        if src_t._backend is not self._backend:
            src_t = src_t.to(self.device)
        return self._inplace_result(_ops.expand_copy(src_t, self.shape, self.dtype))

    def zero_(self) -> Tensor:
        """Fill the tensor with zeros, in place."""
        return self.fill_(0)

    def fill_(self, value: Any) -> Tensor:
        """Fill the tensor with ``value``, in place."""
        self._check_inplace()
        xp = self._backend.xp
        v = value.item() if isinstance(value, Tensor) else value
        filled = xp.full(self._data.shape, v, dtype=self._data.dtype)
        return self._inplace_result(Tensor.from_backend_array(filled, self._backend))

    def uniform_(self, a: _float = 0.0, b: _float = 1.0, generator: Any = None) -> Tensor:
        """Fill the tensor with samples uniform on ``[a, b)``, in place."""
        from lucid._creation import rand

        r = rand(*self.shape, dtype=self.dtype, device=self.device, generator=generator)
        with grad_mode.no_grad():
            return self.copy_(r * (b - a) + a)

    def normal_(self, mean: _float = 0.0, std: _float = 1.0, generator: Any = None) -> Tensor:
        """Fill the tensor with samples from ``N(mean, std**2)``, in place."""
        from lucid._creation import randn

        r = randn(*self.shape, dtype=self.dtype, device=self.device, generator=generator)
        with grad_mode.no_grad():
            return self.copy_(r * std + mean)

    # -- methods that call ops ---------------------------------------------------------------------
    def add(self, other: Any, alpha: Any = 1) -> Tensor:
        """``self + alpha * other`` (``lucid.add``)."""
        return _ops.add(self, other, alpha=alpha)

    def sub(self, other: Any, alpha: Any = 1) -> Tensor:
        """``self - alpha * other`` (``lucid.sub``)."""
        return _ops.sub(self, other, alpha=alpha)

    def mul(self, other: Any) -> Tensor:
        """``self * other`` (``lucid.mul``)."""
        return _ops.mul(self, other)

    def div(self, other: Any, rounding_mode: str | None = None) -> Tensor:
        """``self / other``, with optional ``"trunc"`` or ``"floor"`` rounding (``lucid.div``)."""
        return _ops.div(self, other, rounding_mode=rounding_mode)

    def where(self, condition: Any, other: Any) -> Tensor:
        """``self`` where ``condition`` is True, else ``other`` (``lucid.where``)."""
        out: Tensor = _ops.where(condition, self, other)
        return out


def _size(size: tuple[Any, ...]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def _can_cast(src: dtypes.dtype, dst: dtypes.dtype) -> bool:
    return src.category <= dst.category


class _StrongRef:
    """A reference that keeps its tensor alive, called like a ``weakref.ref``."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor

    def __call__(self) -> Tensor:
        return self.tensor


def _rebuild(arr: Any, device: str, requires_grad: bool) -> Tensor:
    from lucid._creation import from_data

    rebuilt: Tensor = from_data(arr, device=device, requires_grad=requires_grad)
    return rebuilt


def _install_methods() -> None:
    """Attach the ops that their table marks as methods (called once, after lucid.ops is
    imported); a method the class writes out itself (add, where, ...) stays."""
    for name, fn in _ops.methods().items():
        if name not in Tensor.__dict__:
            setattr(Tensor, name, fn)


from lucid import ops as _ops  # noqa: E402
