"""``lucid.compile`` on MLX: captures compiled by ``mx.compile``.

Registered with ``lucid.compiler.register_backend_compiler`` for :class:`MlxBackend`: core
hands over a capture's forward as a pure function of arrays; this module compiles it (and the
vector-Jacobian product of it, for backward) with ``mx.compile``.

Index-bounds checks (``_checks.PendingChecks``) an op adds while ``mx.compile`` traces are
returned by the compiled function as extra outputs, and queued again at each call, so an
out-of-range index still raises at the next sync point, as in eager mode.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mlx.core as mx
from lucid.backends.mlx._backend import MlxBackend


class MlxCompiler:
    """``mx.compile`` as lucid's :class:`lucid.compiler.BackendCompiler` for one backend."""

    name = "mx.compile"

    def __init__(self, backend: MlxBackend) -> None:
        self.backend = backend

    def compile(self, fn: Callable[[list[Any]], list[Any]]) -> Callable[..., list[Any]]:
        """``fn`` compiled; the bounds checks its trace adds come back as extra outputs."""
        checks = self.backend.checks
        found: list[tuple[int, int, Any]] = []  # (low, high, error) per extra output

        def traced(*args: Any) -> list[Any]:
            pending = checks._pending
            before = len(pending)
            out = _keyless(self.backend, fn, args)
            new = pending[before:]
            del pending[before:]
            found[:] = [(low, high, err) for _, low, high, err in new]
            return [*out, *[bounds for bounds, *_ in new]]

        compiled = mx.compile(traced)

        def run(*args: Any) -> list[Any]:
            got = compiled(*args)
            n = len(got) - len(found)
            for bounds, (low, high, err) in zip(got[n:], found):
                checks._pending.append((bounds, low, high, err))
            return list(got[:n])

        return run

    def vjp(self, fn: Callable[..., list[Any]], primals: list[Any],
            cotangents: list[Any]) -> list[Any]:  # fmt: skip
        """``mx.vjp``'s gradients (the checks of the forward it re-traces were queued by the
        forward's own call)."""
        checks = self.backend.checks
        before = len(checks._pending)
        _, grads = _keyless(self.backend, lambda: mx.vjp(fn, primals, cotangents), ())
        del checks._pending[before:]
        return list(grads)

    @staticmethod
    def stop_gradient(a: Any) -> Any:
        """``mx.stop_gradient``: ``a`` with no gradient through it."""
        return mx.stop_gradient(a)


def _keyless(backend: MlxBackend, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """``fn(*args)``, refused where it draws from the backend's random key (an op that samples
    inside its forward, as attention's ``dropout_p``): the draw would be frozen into the
    compiled function. The key is left as it was."""
    key = backend._key
    try:
        out = fn(*args)
    finally:
        drew, backend._key = backend._key is not key, key
    if drew:
        raise RuntimeError(
            "an op draws random numbers inside its forward (as scaled_dot_product_attention's "
            "dropout_p): mx.compile would freeze the draw"
        )
    return out


def make_compiler(backend: Any) -> MlxCompiler:
    """The compiler ``lucid.compile`` uses for tensors on ``backend`` (an MlxBackend)."""
    return MlxCompiler(backend)
