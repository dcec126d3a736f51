"""Ready-made parametrizations (``torch.nn.utils.parametrizations``): ``weight_norm``,
``spectral_norm``, ``orthogonal``.

Each registers a module with :func:`lucid.nn.utils.parametrize.register_parametrization`,
so the state_dict keys are torch's: ``parametrizations.weight.original0`` /
``original1`` (weight norm's g and v), ``parametrizations.weight.original`` with
``parametrizations.weight.0._u`` / ``_v`` (spectral norm), ``parametrizations.weight.0.base``
(orthogonal).
"""

from __future__ import annotations

from enum import Enum, auto
from typing import Any

import numpy as np

import lucid
import lucid.linalg
from lucid import Tensor, dtypes
from lucid.autograd import no_grad
from lucid.nn.functional import normalize
from lucid.nn.module import Module
from lucid.nn.utils import parametrize
from lucid.nn.utils._norms import norm_except_dim
from lucid.nn.utils._norms import weight_norm as _weight_norm_fn

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

_EPS = {dtypes.float64: 2.220446049250313e-16, dtypes.float16: 9.765625e-4}
_EPS_DEFAULT = 1.1920928955078125e-07  # float32's machine epsilon


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.shape[-2], q.shape[-1]
    eye = lucid.eye(k, dtype=q.dtype, device=q.device)
    eps = 10.0 * n * _EPS.get(q.dtype, _EPS_DEFAULT)
    return bool(lucid.allclose(q.mT @ q, eye, atol=eps))


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of ``a``'s QR with R's diagonal made positive (torch: geqrf, householder_product,
    times the sign of the diagonal; LAPACK's QR gives the same Q)."""
    q, r = lucid.linalg.qr(a)
    signs: Tensor = r.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)
    result: Tensor = q * signs
    return result


def _householder_reflectors(q: Tensor) -> Tensor:
    """``torch.geqrf``'s reflectors of ``q`` (LAPACK, through NumPy's raw QR) with the diagonal
    replaced by its sign (flipped where tau is 0), as torch's orthogonal right_inverse."""
    host = np.asarray(q.detach().numpy())
    flat = host.reshape(-1, *host.shape[-2:])
    out = np.empty_like(flat)
    for i, mat in enumerate(flat):
        h, tau = np.linalg.qr(mat, mode="raw")  # h is geqrf's output, transposed
        a = np.array(h.T, dtype=host.dtype)
        diag = np.sign(np.diagonal(a)).copy()
        diag[tau == 0.0] *= -1
        np.fill_diagonal(a, diag)
        out[i] = a
    return lucid.as_tensor(out.reshape(host.shape), dtype=q.dtype, device=q.device)


def householder_product(a: Tensor, tau: Tensor) -> Tensor:
    """The first ``k`` columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^T`` where ``v_i``
    is column ``i`` of ``a`` below the diagonal with a 1 on it (``torch.linalg.
    householder_product``), built from differentiable ops."""
    n, k = a.shape[-2], a.shape[-1]
    below = a.tril(-1)
    eye = lucid.eye(n, dtype=a.dtype, device=a.device)
    q = eye[:, :k].expand(*a.shape[:-2], n, k)
    for i in reversed(range(k)):
        v = below[..., :, i : i + 1] + eye[:, i : i + 1]
        q = q - tau[..., i : i + 1].unsqueeze(-1) * (v @ (v.mT @ q))
    return q


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    base: Tensor

    def __init__(
        self, weight: Tensor, orthogonal_map: _OrthMaps, *, use_trivialization: bool = True
    ) -> None:
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = lucid.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = lucid.linalg.matrix_exp(A)
            else:
                eye = lucid.eye(n, dtype=A.dtype, device=A.device)
                Q = lucid.linalg.solve(eye - 0.5 * A, eye + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder_product(A, tau)
            # torch truncates the diagonal to an integer (it is -1 after right_inverse)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).to(dtypes.int32).unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. "
                f"Got a tensor of shape {Q.shape}."
            )
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transposed = n < k
        if transposed:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False."
                )
            A = _householder_reflectors(Q)
            return A.mT if transposed else A
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:
            N = lucid.randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(lucid.cat([Q, N], dim=-1))
        self.base = Q
        rows, cols = Q_init.shape[-2], Q_init.shape[-1]
        eye = lucid.eye(max(rows, cols), dtype=Q.dtype, device=Q.device)[:rows, :cols]
        return (-eye).expand(*Q_init.shape).contiguous()


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Constrain ``module.<name>`` (a matrix or a batch of them) to be orthogonal.

    ``orthogonal_map``: ``"matrix_exp"`` (default for square matrices), ``"cayley"`` or
    ``"householder"`` (default otherwise). With ``use_trivialization=True`` (default) the
    weight is ``base @ map(original)`` with a ``base`` buffer refreshed on assignment; with
    ``False`` the map alone (assigning to the weight then works for ``householder`` only,
    as in torch).
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if weight.is_complex():
        raise NotImplementedError(
            "orthogonal() on a complex weight (unitary matrices) is not supported in lucid; "
            f"got dtype {weight.dtype}"
        )
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm_fn(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (Salimans & Kingma, 2016).

    The norm is over every dim but ``dim`` (``None``: over the whole tensor). ``g`` and ``v``
    are ``module.parametrizations.<name>.original0`` and ``original1``. A state_dict of the
    legacy :func:`lucid.nn.utils.weight_norm` (``<name>_g``, ``<name>_v``) loads into it.
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict: dict[str, Any], prefix: str, *args: Any) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


def _default_dim(module: Module) -> int:
    """1 for transposed convolutions (their weight is ``(C_in, C_out, ...)``), else 0."""
    return 1 if getattr(type(module), "transposed", False) is True else 0


class _SpectralNorm(Module):
    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] "
                f"but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight.detach())
            h, w = weight_mat.shape
            u = lucid.randn(h, dtype=weight.dtype, device=weight.device)
            v = lucid.randn(w, dtype=weight.dtype, device=weight.device)
            self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # u and v are written in place: they are buffers, and torch's out= keeps them shared
        with no_grad():
            weight_mat = weight_mat.detach()
            for _ in range(n_power_iterations):
                self._u.copy_(normalize(lucid.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(lucid.mv(weight_mat.mT, self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = lucid.dot(u, lucid.mv(weight_mat, v))
        result: Tensor = weight / sigma
        return result

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Divide ``module.<name>`` by its spectral norm, estimated by power iteration
    (Miyato et al., 2018).

    The weight is seen as a matrix with ``dim`` (default 0, 1 for transposed convolutions)
    as rows. In training mode each read of the weight runs ``n_power_iterations`` steps and
    updates the buffers ``parametrizations.<name>.0._u`` / ``_v`` in place; in eval mode
    they are used as they are.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _default_dim(module)
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
