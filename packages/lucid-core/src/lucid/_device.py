"""``lucid.device``: a device name such as "cpu", "mlx", "mlx:gpu" (compares equal to strings)."""

from __future__ import annotations

import threading
from typing import Any

NOT_COMPILED = (
    "Lucid has no CUDA device (lucid.cuda.is_available() is False): use 'cpu', or MLX's GPU as "
    "device 'mlx' where lucid.accelerator.is_available() (pip install lucid-backend-mlx)"
)


class device:  # noqa: N801 - PyTorch's name
    """A device a tensor lives on: a type (``"cpu"``, ``"mlx"``) and an optional index, as
    ``torch.device``."""

    __slots__ = ("type", "index")
    type: str
    index: str | None

    def __init__(self, spec: Any, index: Any = None) -> None:
        if isinstance(spec, device):
            self.type, self.index = spec.type, spec.index
            return
        text = str(spec)
        kind, _, rest = text.partition(":")
        self.type = kind
        self.index = rest if rest else (None if index is None else str(index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        return f"device(type={self.type!r}" + (
            ")" if self.index is None else f", index={self.index!r})"
        )

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (device, str)):
            return str(self) == str(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))

    def __enter__(self) -> device:
        """``with lucid.device(d):`` makes ``d`` the factories' default device inside the block
        (``with torch.device(d):``); blocks nest, and each thread has its own."""
        _contexts.stack.append(str(self))
        return self

    def __exit__(self, *exc: object) -> None:
        """Restores the default device of before the block."""
        _contexts.stack.pop()


class _Contexts(threading.local):
    """This thread's ``with device(...)`` blocks, innermost last."""

    def __init__(self) -> None:
        self.stack: list[str] = []


_contexts = _Contexts()
_global_default: list[str | None] = [None]  # set_default_device's device (None: "cpu")


def default_device() -> str | None:
    """The device factories use when given no ``device=``: the innermost ``with device(...)``
    block's, else ``set_default_device``'s; None means ``"cpu"``."""
    stack = _contexts.stack
    return stack[-1] if stack else _global_default[0]


def set_global_default(name: str | None) -> None:
    """Set the process-wide default device (``set_default_device``; None: ``"cpu"``)."""
    _global_default[0] = None if name in (None, "cpu") else name
