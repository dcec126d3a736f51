"""All tensor operations. ``lucid.<op>`` and ``Tensor.<op>`` both come from here."""

from __future__ import annotations

from lucid.ops import elementwise as _elementwise
from lucid.ops import indexing as _indexing
from lucid.ops import join as _join
from lucid.ops import matmul as _matmul
from lucid.ops import movement as _movement
from lucid.ops import reduction as _reduction
from lucid.ops import shape as _shape
from lucid.ops import unary as _unary
from lucid.ops.elementwise import *  # noqa: F403
from lucid.ops.indexing import *  # noqa: F403
from lucid.ops.join import *  # noqa: F403
from lucid.ops.matmul import *  # noqa: F403
from lucid.ops.movement import *  # noqa: F403
from lucid.ops.reduction import *  # noqa: F403
from lucid.ops.shape import *  # noqa: F403
from lucid.ops.unary import *  # noqa: F403

__all__ = [
    *_elementwise.__all__, *_indexing.__all__, *_join.__all__, *_matmul.__all__,
    *_movement.__all__, *_reduction.__all__, *_shape.__all__, *_unary.__all__,
]  # fmt: skip

# -- issue 3's ops (softmax family, sorting, special functions, ...) ---------------------------
from lucid.ops import blas as _blas  # noqa: E402
from lucid.ops import grids as _grids  # noqa: E402
from lucid.ops import sorting as _sorting  # noqa: E402
from lucid.ops.blas import *  # noqa: E402, F403
from lucid.ops.grids import *  # noqa: E402, F403
from lucid.ops.softmax import log_softmax, softmax  # noqa: E402
from lucid.ops.sorting import *  # noqa: E402, F403
from lucid.ops.special import erf, erfc, erfinv  # noqa: E402

__all__ += ["erf", "erfc", "erfinv", "log_softmax", "softmax"]  # fmt: skip
__all__ += [*_blas.__all__, *_grids.__all__, *_sorting.__all__]
