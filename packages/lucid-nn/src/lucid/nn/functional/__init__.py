"""Functional forms of the layers (``torch.nn.functional``): ``import lucid.nn.functional as F``.

Each file defines ``__all__``; add one star-import line per file.
"""

from lucid.nn.functional.activation import *  # noqa: F403
from lucid.nn.functional.attention import *  # noqa: F403
from lucid.nn.functional.conv import *  # noqa: F403
from lucid.nn.functional.ctc import *  # noqa: F403
from lucid.nn.functional.distance import *  # noqa: F403
from lucid.nn.functional.dropout import *  # noqa: F403
from lucid.nn.functional.extra import *  # noqa: F403
from lucid.nn.functional.fold import *  # noqa: F403
from lucid.nn.functional.grid import *  # noqa: F403
from lucid.nn.functional.linear import *  # noqa: F403
from lucid.nn.functional.linear_cross_entropy import *  # noqa: F403
from lucid.nn.functional.loss import *  # noqa: F403
from lucid.nn.functional.normalization import *  # noqa: F403
from lucid.nn.functional.padding import *  # noqa: F403
from lucid.nn.functional.pooling import *  # noqa: F403
from lucid.nn.functional.sparse import *  # noqa: F403
from lucid.nn.functional.vision import *  # noqa: F403
