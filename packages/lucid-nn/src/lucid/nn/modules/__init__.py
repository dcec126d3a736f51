"""Layer classes: thin Module wrappers over ``lucid.nn.functional``.

Each file defines ``__all__``; add one star-import line per file.
"""

from lucid.nn.module import Module as Module
from lucid.nn.modules.linear import *  # noqa: F403
