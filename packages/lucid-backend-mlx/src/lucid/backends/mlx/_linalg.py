"""``xp.linalg`` for MLX: ``numpy.linalg``'s names over ``mlx.core.linalg``.

MLX runs its factorizations (inv, solve, qr, svd, eigh, cholesky, ...) on the CPU stream only,
so those go there whatever the backend's device; the results join the lazy graph as usual.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import mlx.core as mx

_CPU_ONLY = (
    "inv", "pinv", "solve", "solve_triangular", "cholesky", "cholesky_inv", "qr", "svd",
    "eig", "eigh", "eigvals", "eigvalsh", "lu", "lu_factor", "tri_inv", "det", "slogdet",
)  # fmt: skip


class MlxLinalg:
    """A ``numpy.linalg``-like namespace for MLX arrays."""

    LinAlgError = np.linalg.LinAlgError

    def __init__(self, stream: Any, host: Any) -> None:
        self._s = stream
        self._host = host

    def __getattr__(self, name: str) -> Any:
        try:
            fn = getattr(mx.linalg, name)
        except AttributeError:
            raise AttributeError(
                f"the MLX backend's xp.linalg has no {name!r}; add it to "
                "lucid/backends/mlx/_linalg.py"
            ) from None
        stream = mx.cpu if name in _CPU_ONLY else self._s

        def call(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, stream=stream, **kwargs)

        setattr(self, name, call)
        return call

    def norm(self, x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002
        axis = list(axis) if isinstance(axis, tuple) else axis
        return mx.linalg.norm(x, ord, axis, keepdims, stream=self._s)

    def svd(self, a: Any, full_matrices: bool = True, compute_uv: bool = True) -> Any:
        if not compute_uv:
            return mx.linalg.svd(a, compute_uv=False, stream=mx.cpu)
        u, s, vt = mx.linalg.svd(a, stream=mx.cpu)
        if not full_matrices:
            k = s.shape[-1]
            u, vt = u[..., :, :k], vt[..., :k, :]
        return u, s, vt

    def qr(self, a: Any, mode: str = "reduced") -> Any:
        if mode != "reduced":
            raise NotImplementedError(f"qr(mode={mode!r}) is not supported on MLX (only 'reduced')")
        return mx.linalg.qr(a, stream=mx.cpu)

    def eigh(self, a: Any, UPLO: str = "L") -> Any:  # noqa: N803 - NumPy's name
        return mx.linalg.eigh(a, UPLO, stream=mx.cpu)

    def eigvalsh(self, a: Any, UPLO: str = "L") -> Any:  # noqa: N803
        return mx.linalg.eigvalsh(a, UPLO, stream=mx.cpu)

    def matrix_rank(self, a: Any, tol: Any = None) -> Any:
        return mx.array(np.linalg.matrix_rank(self._host(a), tol))
