"""``lucid.device``: a device name such as "cpu", "mlx", "mlx:gpu" (compares equal to strings)."""

from __future__ import annotations

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
        """``with torch.device(...):`` makes it the factories' default device in torch. lucid's
        default device is always ``"cpu"``, so ``with lucid.device("cpu"):`` changes nothing and
        any other device raises (as :func:`lucid.set_default_device` does)."""
        if self.type != "cpu":
            raise RuntimeError(
                f"with lucid.device({str(self)!r}): lucid's factories do not follow a default "
                f"device, so only 'cpu' (the default) works as a context manager. Pass "
                f"device={str(self)!r} to the factories and module constructors (e.g. "
                f"nn.Linear(4, 4, device={str(self)!r})) or move with .to({str(self)!r}) "
                "(see docs/differences.md)"
            )
        return self

    def __exit__(self, *exc: object) -> None:
        """Leaves the default device as it was (always ``"cpu"``)."""
