"""``torch.version``'s names for lucid: ``__version__`` is lucid's own (programs that gate on
torch's version see lucid's; docs/differences.md), and the accelerator builds lucid has none of
answer as PyTorch's CPU-only build does (``cuda``, ``hip``, ``rocm``, ``xpu`` are None)."""

from __future__ import annotations

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu"]

__version__ = "0.1.0"  # lucid-core's (``lucid.__version__`` is this one)
cuda: str | None = None
hip: str | None = None
rocm: str | None = None
xpu: str | None = None
debug = False
git_version = "unknown"
