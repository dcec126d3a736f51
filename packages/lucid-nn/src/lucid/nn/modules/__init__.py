"""Layer classes: thin Module wrappers over ``lucid.nn.functional``.

Each file defines ``__all__``; add one star-import line per file.
"""

from lucid.nn.module import Module as Module
from lucid.nn.modules.activation import *  # noqa: F403
from lucid.nn.modules.activation_attention import *  # noqa: F403
from lucid.nn.modules.adaptive import *  # noqa: F403
from lucid.nn.modules.container import *  # noqa: F403
from lucid.nn.modules.conv import *  # noqa: F403
from lucid.nn.modules.distance import *  # noqa: F403
from lucid.nn.modules.dropout import *  # noqa: F403
from lucid.nn.modules.extra import *  # noqa: F403
from lucid.nn.modules.fold import *  # noqa: F403
from lucid.nn.modules.lazy import *  # noqa: F403
from lucid.nn.modules.linear import *  # noqa: F403
from lucid.nn.modules.loss import *  # noqa: F403
from lucid.nn.modules.normalization import *  # noqa: F403
from lucid.nn.modules.padding import *  # noqa: F403
from lucid.nn.modules.pixelshuffle import *  # noqa: F403
from lucid.nn.modules.pooling import *  # noqa: F403
from lucid.nn.modules.rnn import *  # noqa: F403
from lucid.nn.modules.sparse import *  # noqa: F403
from lucid.nn.modules.transformer import *  # noqa: F403
from lucid.nn.modules.upsampling import *  # noqa: F403
