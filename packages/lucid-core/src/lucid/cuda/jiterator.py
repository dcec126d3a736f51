"""``lucid.cuda.jiterator``: CUDA kernels written as C++ strings. Making one works and calling
it raises AssertionError, as on PyTorch's CPU build (lucid compiles no CUDA)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lucid.cuda._errors import refusal

__all__: list[str] = []


class _JittedFunction:
    """A jiterator kernel: calling it raises (there is no CUDA device to run it on)."""

    def __init__(self, code_string: str, return_by_ref: bool, num_outputs: int, **kwargs: Any):
        self.code_string = code_string
        self.return_by_ref = return_by_ref
        self.num_outputs = num_outputs
        self.kwargs_dict = kwargs

    def __call__(self, *tensors: Any, **kwargs: Any) -> Any:
        raise refusal("jiterator (Jiterator runs only on CUDA and ROCm GPUs)")


def _create_jit_fn(code_string: str, **kwargs: Any) -> Callable[..., Any]:
    """A jiterator kernel of one output (calling it raises)."""
    return _JittedFunction(code_string, return_by_ref=False, num_outputs=1, **kwargs)


def _create_multi_output_jit_fn(
    code_string: str, num_outputs: int, **kwargs: Any
) -> Callable[..., Any]:
    """A jiterator kernel of ``num_outputs`` outputs (calling it raises)."""
    return _JittedFunction(code_string, return_by_ref=True, num_outputs=num_outputs, **kwargs)
