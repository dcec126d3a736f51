"""``torch._dynamo._trace_wrapped_higher_order_op``'s ``TransformGetItemToIndex``.

Hugging Face transformers' ``masking_utils`` (imported by every one of its models) wraps the
``vmap`` that builds attention masks in this context: in torch, indexing with a 0-d tensor
inside ``vmap`` calls ``.item()``, which ``vmap`` forbids, and the mode turns such a
``tensor[idx]`` into an index op. lucid's ``vmap`` indexes with batched 0-d tensors as it is,
so the context changes nothing here.
"""

from __future__ import annotations

from types import TracebackType

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex:
    """A context (torch's is a ``TorchFunctionMode``) under which ``A[idx]`` with tensor
    indices stays an index op inside ``vmap``; lucid's indexing already is one."""

    def __enter__(self) -> TransformGetItemToIndex:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None
