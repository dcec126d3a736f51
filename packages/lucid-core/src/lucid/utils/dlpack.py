"""``lucid.utils.dlpack``: tensors exchanged with other libraries through DLPack
(``torch.utils.dlpack``), without copying on the CPU.

``from_dlpack(x)`` takes any object with ``__dlpack__`` (a NumPy array, a PyTorch or JAX CPU
tensor, ...) or a DLPack capsule, and returns a lucid tensor on "cpu" that shares its memory:
a write through either one is seen by the other. ``Tensor.__dlpack__`` gives the other
direction (``numpy.from_dlpack(t)``, ``torch.from_dlpack(t)``). An MLX tensor is exported
through a CPU copy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid._tensor import Tensor
from lucid.backends import get_backend

__all__ = ["from_dlpack", "to_dlpack"]


class _Capsule:
    """A bare DLPack capsule dressed as a producer (``numpy.from_dlpack`` wants one)."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A lucid CPU tensor sharing the memory of ``ext_tensor`` (``torch.from_dlpack``).

    >>> import numpy as np
    >>> a = np.zeros(3, dtype=np.float32)
    >>> t = lucid.from_dlpack(a)
    >>> a[0] = 5.0
    >>> t.tolist()
    [5.0, 0.0, 0.0]
    """
    if isinstance(ext_tensor, Tensor):
        return Tensor.from_backend_array(ext_tensor._data, ext_tensor.backend)
    producer = ext_tensor if hasattr(ext_tensor, "__dlpack__") else _Capsule(ext_tensor)
    try:
        arr = np.from_dlpack(producer)
    except (BufferError, TypeError, RuntimeError) as exc:
        raise RuntimeError(
            f"from_dlpack: can't take the memory of a {type(ext_tensor).__name__} ({exc}); "
            "lucid shares CPU memory only (move the tensor to the CPU first)"
        ) from None
    backend = get_backend("cpu")
    try:
        backend.dtype_of(arr)
    except TypeError:
        raise TypeError(f"from_dlpack: lucid has no tensors of dtype {arr.dtype}") from None
    return Tensor.from_backend_array(arr, backend)


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule of ``tensor``'s memory (``torch.utils.dlpack.to_dlpack``).

    A versioned (DLPack 1.0) capsule, which says whether the memory is writable; the memory of
    a legacy capsule from elsewhere loads read-only, as NumPy reads it.
    """
    return tensor.__dlpack__(max_version=(1, 0))
