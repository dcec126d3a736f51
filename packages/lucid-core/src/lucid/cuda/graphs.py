"""``lucid.cuda.graphs``: CUDA graph capture. Lucid has no CUDA device, so each call raises
RuntimeError, as on PyTorch's CPU build; the names exist for code that mentions them."""

from __future__ import annotations

from typing import Any

from lucid.cuda._errors import refusal

__all__ = [
    "is_current_stream_capturing",
    "graph_pool_handle",
    "CUDAGraph",
    "graph",
    "make_graphed_callables",
]


def is_current_stream_capturing() -> bool:
    """Raises RuntimeError, as PyTorch's CPU build does."""
    raise refusal("is_current_stream_capturing", RuntimeError)


def graph_pool_handle() -> Any:
    """Raises RuntimeError, as PyTorch's CPU build does."""
    raise refusal("graph_pool_handle", RuntimeError)


class CUDAGraph:
    """A CUDA graph: making one raises RuntimeError, as on PyTorch's CPU build."""

    def __init__(self, keep_graph: bool = False) -> None:
        raise refusal("CUDAGraph", RuntimeError)


class graph:  # noqa: N801 - PyTorch's name
    """The context manager capturing into a :class:`CUDAGraph`: making one raises
    RuntimeError (it needs a CUDA stream), as on PyTorch's CPU build."""

    def __init__(
        self,
        cuda_graph: CUDAGraph,
        pool: Any = None,
        stream: Any = None,
        capture_error_mode: str = "global",
        enable_annotations: bool = False,
        check_input_liveness: bool = False,
    ) -> None:
        raise refusal("graph", RuntimeError)


def make_graphed_callables(
    callables: Any,
    sample_args: Any,
    num_warmup_iters: int = 3,
    allow_unused_input: bool = False,
    pool: Any = None,
) -> Any:
    """Raises RuntimeError (it makes CUDA graphs), as PyTorch's CPU build does."""
    raise refusal("make_graphed_callables", RuntimeError)
