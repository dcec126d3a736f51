"""``linalg.eig`` / ``eigvals``: the eigen decomposition of a general square matrix, complex
as torch's (float32 in, complex64 out), differentiable with torch's ``linalg_eig_backward``."""

from __future__ import annotations

from typing import Any, NamedTuple

from lucid import _creation
from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.linalg._common import check_matrix
from lucid.linalg._inverse import solve
from lucid.ops import diag_embed, diagonal
from lucid.ops.complex import complex_dtype, real


class EigResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class Eig(Function):
    _node_name = "LinalgEigBackward0"  # torch's name of this node
    complex_aware = True

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        b = ctx.backend
        cdt = complex_dtype(b.dtype_of(a))
        ctx.real_input = not b.dtype_of(a).is_complex
        w, v = ctx.xp.linalg.eig(a)
        # NumPy gives real arrays when every eigenvalue is real: torch's are always complex
        w, v = b.astype(w, cdt), b.astype(v, cdt)
        ctx.save_for_backward(w, v)
        return w, v

    @staticmethod
    def backward(ctx: Any, gl: Tensor, gv: Tensor) -> Any:
        lam, v = ctx.saved_tensors
        vh = v.mH
        # gA = V^-H (diag(gL) + (V^H gV - V^H V diag(re(V^H gV))) / conj(E)) V^H,
        # E_ij = L_j - L_i (1 on the diagonal), as torch's linalg_eig_backward
        vhgv = vh @ gv
        imag_diag = diagonal(vhgv, 0, -2, -1).imag.abs().max().item() if vhgv.numel() else 0.0
        if imag_diag > 1e-6 * max(1.0, float(vhgv.abs().max().item())):
            raise RuntimeError(
                "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this "
                "quantity, so it is ill-defined."
            )
        lc = lam.conj()
        econj = lc.unsqueeze(-2) - lc.unsqueeze(-1)
        eye = _creation.eye(lam.shape[-1], dtype=real(lam).dtype, device=lam.device)
        econj = econj + eye  # the diagonal of E - 0 becomes 1
        re_diag = real(diagonal(vhgv, 0, -2, -1))
        ga = (vhgv - vh @ (v * re_diag.unsqueeze(-2))) / econj
        ga = ga * (1 - eye) + diag_embed(gl)
        ga = solve(vh, ga @ vh)
        return ga.real if ctx.real_input else ga


def eig(input: Tensor) -> EigResult:  # noqa: N803
    """The eigenvalues and eigenvectors of square matrices: ``A = V diag(L) V^-1``, complex
    for real input too (float32 in, complex64 out), eigenvectors of unit norm. Differentiable
    where the eigenvalues are distinct and the loss does not depend on the eigenvectors'
    phase (otherwise torch's error)."""
    a = check_matrix("eig", input)
    w, v = Eig.apply(a)
    return EigResult(w, v)


def eigvals(input: Tensor) -> Tensor:  # noqa: N803
    """The eigenvalues of square matrices (complex), as ``eig(A).eigenvalues``."""
    return eig(input).eigenvalues
