"""Function transforms (``torch.func``): ``grad``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``,
``hessian``, ``linearize``, ``vmap``, ``functional_call``, ``stack_module_state``, einops-style
``rearrange`` and ``debug_unwrap``.

They compose (``vmap(grad(f))`` gives per-sample gradients, ``jacrev(jacrev(f))`` and
``jvp(grad(f))`` second derivatives) and work on every backend. How lucid computes them:

- ``grad``/``vjp``/``jacrev`` run lucid's reverse-mode autograd, recording the backward graph
  only where an enclosing transform differentiates again.
- ``jvp`` uses the double-vjp identity (exact, on reverse mode; the fused ops compute a
  differentiable backward when a graph is recorded); ``jacfwd`` computes the same Jacobian as
  ``jacrev``.
- ``vmap`` runs the function once on ``BatchedTensor`` inputs; each op goes to its batching
  rule (``lucid.func._rules``), an op without one loops over the batch with a warning.
- ``functional_call`` swaps a module's parameters and buffers for the call (any object laid
  out as ``nn.Module``; lucid-core does not import lucid-nn).
"""

from __future__ import annotations

from lucid.func._debug import debug_unwrap
from lucid.func._einops import rearrange
from lucid.func._functional_call import (
    functional_call,
    functionalize,
    replace_all_batch_norm_modules_,
    stack_module_state,
)
from lucid.func._transforms import (
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    vjp,
)
from lucid.func._vmap import vmap

__all__ = [
    "debug_unwrap",
    "functional_call",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "rearrange",
    "replace_all_batch_norm_modules_",
    "stack_module_state",
    "vjp",
    "vmap",
]
