"""``lucid._dynamo.exc`` (``torch._dynamo.exc``): the errors ``lucid.compile`` raises, under
torch's names, so a program's ``except torch._dynamo.exc.Unsupported:`` catches lucid's.

- ``Unsupported``: a graph break under ``fullgraph=True``;
- ``RecompileError``: a new input signature with ``config.error_on_recompile`` set;
- ``FailOnRecompileLimitHit``: ``fullgraph=True`` and the recompile limit reached (an
  ``Exception``, not a ``RuntimeError``, as torch's);
- ``InvalidBackend``: a ``backend=`` name ``list_backends()`` does not list.

``TorchDynamoException`` is the base of all but ``FailOnRecompileLimitHit``; the others torch
defines (``BackendCompilerFailed``, ``UserError``, ...) are here for ``except`` clauses and
are never raised by lucid, which has no backend compiler to fail.
"""

from __future__ import annotations

from lucid.compiler._capture import (
    FailOnRecompileLimitHit,
    InvalidBackend,
    RecompileError,
    TorchDynamoException,
    Unsupported,
)

__all__ = [
    "BackendCompilerFailed",
    "FailOnRecompileLimitHit",
    "InternalTorchDynamoError",
    "InvalidBackend",
    "RecompileError",
    "TorchDynamoException",
    "TorchRuntimeError",
    "Unsupported",
    "UserError",
]


class BackendCompilerFailed(TorchDynamoException):
    """A backend compiler's failure (``torch._dynamo.exc.BackendCompilerFailed``)."""


class UserError(TorchDynamoException):
    """A misuse torch's compiler reports (``torch._dynamo.exc.UserError``)."""


class TorchRuntimeError(TorchDynamoException):
    """An op failing while traced (``torch._dynamo.exc.TorchRuntimeError``)."""


class InternalTorchDynamoError(TorchDynamoException):
    """A compiler bug (``torch._dynamo.exc.InternalTorchDynamoError``)."""
