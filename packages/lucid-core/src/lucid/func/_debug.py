"""``lucid.func.debug_unwrap``: the plain Tensor under a transform's wrapper, for debugging."""

from __future__ import annotations

from lucid._tensor import Tensor
from lucid.func._batched import BatchedTensor

__all__ = ["debug_unwrap"]


def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """Unwrap a functorch tensor (a ``vmap`` BatchedTensor) to the Tensor under it
    (``torch.func.debug_unwrap``).

    Inside ``vmap`` that is the physical Tensor, with the batch as dimension 0 (lucid moves a
    mapped dimension to the front whatever ``in_dims`` says); ``recurse=True`` unwraps every
    nested ``vmap`` level, ``recurse=False`` one. ``grad``/``vjp``/``jvp`` do not wrap the
    Tensors they differentiate in lucid (they run its autograd on plain Tensors), so there and
    outside any transform the result is ``tensor`` itself.

    Only for a debug setting (printing values in a debugger): using the result inside the
    function being transformed is undefined behaviour, as in torch.
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"debug_unwrap(): expected a Tensor, got {type(tensor).__name__}")
    if type(tensor) is not BatchedTensor:
        return tensor
    result = tensor._phys
    if recurse:
        return debug_unwrap(result)
    return result
