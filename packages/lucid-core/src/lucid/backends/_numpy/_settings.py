"""``lucid.backends.cpu``: the NumPy backend's switches, read and changed at run time.

As ``torch.backends.cudnn`` and ``torch.backends.mkldnn`` do for PyTorch, ``lucid.backends.cpu``
holds the switches of lucid's CPU kernels; every kernel reads them when it runs, so a change
takes effect at the next call::

    import lucid
    lucid.backends.cpu.numba_enabled = False        # the NumPy code from now on
    with lucid.backends.cpu.flags(winograd_tiling="F2"):
        y = conv(x)                                  # F(2x2, 3x3) inside, as before after

The defaults come from the environment, read once when lucid is imported, here and nowhere
else (``ENVIRONMENT`` lists the variables). They are for A/B comparisons and for turning the
compiled kernels off without changing code:

- ``LUCID_NUMBA=0``: ``numba_enabled = False`` (no compiled kernels of ``lucid-core[numba]``);
- ``LUCID_CONV=im2col``: ``winograd_enabled = False`` (no Winograd convolutions);
- ``LUCID_WINOGRAD=F2`` or ``F4``: ``winograd_tiling`` (that tiling for every Winograd layer;
  any other value but ``auto`` means ``F2``);
- ``LUCID_MALLOPT=0``: ``tune_malloc = False`` (glibc's allocator thresholds left alone).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from typing import Any

TILINGS = ("auto", "F2", "F4")

# Environment variable -> (setting, how its text becomes the setting's value).
ENVIRONMENT: dict[str, tuple[str, Any]] = {
    "LUCID_NUMBA": ("numba_enabled", lambda v: v != "0"),
    "LUCID_CONV": ("winograd_enabled", lambda v: v != "im2col"),
    "LUCID_WINOGRAD": ("winograd_tiling", lambda v: v if v in ("auto", "F4") else "F2"),
    "LUCID_MALLOPT": ("tune_malloc", lambda v: v != "0"),
}


class CpuSettings:
    """The NumPy backend's switches (``lucid.backends.cpu``).

    Attributes:
        numba_enabled: run the compiled kernels of ``lucid-core[numba]`` where numba is
            installed (default True). False: every kernel runs its NumPy code.
        winograd_enabled: run 3x3 stride-1 convolutions as Winograd where it measured faster
            than im2col + GEMM (default True).
        winograd_tiling: ``"auto"`` (F(4x4, 3x3) for outputs of 8x8 and more where its compiled
            transforms load, else F(2x2, 3x3)), ``"F2"`` or ``"F4"`` for every Winograd layer.
        tune_malloc: raise glibc's mmap and trim thresholds when the first NumPy backend is
            created (default True; later changes do not undo it).
    """

    __slots__ = ("numba_enabled", "tune_malloc", "winograd_enabled", "winograd_tiling")

    numba_enabled: bool
    winograd_enabled: bool
    winograd_tiling: str
    tune_malloc: bool

    def __init__(
        self,
        numba_enabled: bool = True,
        winograd_enabled: bool = True,
        winograd_tiling: str = "auto",
        tune_malloc: bool = True,
    ) -> None:
        self.numba_enabled = numba_enabled
        self.winograd_enabled = winograd_enabled
        self.winograd_tiling = winograd_tiling
        self.tune_malloc = tune_malloc

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> CpuSettings:
        """The defaults, changed by the variables of ``ENVIRONMENT`` that ``environ`` sets."""
        settings = cls()
        for variable, (name, parse) in ENVIRONMENT.items():
            if variable in environ:
                setattr(settings, name, parse(environ[variable]))
        return settings

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "winograd_tiling":
            if value not in TILINGS:
                raise ValueError(f"winograd_tiling must be one of {TILINGS}, got {value!r}")
        elif name in self.__slots__ and not isinstance(value, bool):
            raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
        object.__setattr__(self, name, value)  # an unknown name raises AttributeError here

    @contextlib.contextmanager
    def flags(self, **changes: Any) -> Iterator[None]:
        """Change some settings inside a ``with`` block, restored after (as
        ``torch.backends.cudnn.flags``)."""
        saved = {name: getattr(self, name) for name in changes}
        try:
            for name, value in changes.items():
                setattr(self, name, value)
            yield
        finally:
            for name, value in saved.items():
                setattr(self, name, value)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in sorted(self.__slots__))
        return f"CpuSettings({fields})"


cpu = CpuSettings.from_environ(os.environ)
