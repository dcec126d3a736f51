"""Optimizers and learning-rate schedulers for Lucid (``import lucid.optim as optim``).

Every optimizer works on any leaf tensor that requires grad (so on ``nn.Parameter``s) and
follows ``torch.optim``'s names, defaults, ``param_groups`` and ``state_dict`` layout.

As in PyTorch, an algorithm has a per-tensor update and, where it measures faster, a
multi-tensor one over the whole parameter group, chosen by the ``foreach`` option:
``None`` (the default) takes the multi-tensor update wherever the backend can write arrays in
place (NumPy; PyTorch's CPU default is the per-tensor one), ``True`` asks for it, ``False``
turns it off. Both give the same bits: the multi-tensor update runs the same ufuncs in the
same order, on the arrays, writing into the parameters and the state (no op calls, no
temporaries beyond a small scratch buffer). Parameters it cannot take (MLX arrays, complex
or mixed dtypes, hyper-parameters that are not Python numbers) take the per-tensor update.
"""

import importlib
from typing import TYPE_CHECKING, Any

from . import lr_scheduler
from ._stateless import swap_in_optimizer_params_and_state
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .lion import Lion
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer, required
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = [
    "ASGD",
    "LBFGS",
    "SGD",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "Lion",
    "Muon",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "lr_scheduler",
    "required",
    "swap_in_optimizer_params_and_state",
]  # not swa_utils: `from lucid.optim import *` must work without lucid-nn

if TYPE_CHECKING:
    from . import swa_utils as swa_utils
else:

    def __getattr__(name: str) -> Any:
        """``optim.swa_utils`` is imported on first use: it needs lucid-nn (the ``nn`` extra),
        which the rest of lucid.optim does not."""
        if name == "swa_utils":
            return importlib.import_module("lucid.optim.swa_utils")
        raise AttributeError(f"module 'lucid.optim' has no attribute '{name}'")
