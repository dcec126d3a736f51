# ruff: noqa: F403  (the star imports bind each module's __all__)
"""Fused kernels, layer 0 of lucid-core: array-level contracts, window geometry, reference code.

- ``contracts``: the ``Protocol`` each fused kernel follows (arrays in, arrays out) and the
  ``KernelContract`` keys of ``Backend.kernels`` (``CONV_ARRAYS``, ``BATCH_NORM``, ...);
- ``geometry``: output sizes, padding, strides (``ConvGeometry``, ``conv_geometry``, ...);
- ``reference``: readable array code taking ``xp`` (the im2col layout, max pooling, ReLU's
  gradient), the backends' fallback and the fast kernels' test oracle.

Nothing here imports a backend, a Tensor or autograd. Every public name of the three modules
(each module's ``__all__``, the one list of it) is importable from ``lucid.kernels`` too.
"""

from __future__ import annotations

from lucid.kernels import contracts, geometry, reference
from lucid.kernels.contracts import *
from lucid.kernels.geometry import *
from lucid.kernels.reference import *

__all__ = [*contracts.__all__, *geometry.__all__, *reference.__all__]
