"""Optimizers and learning-rate schedulers for Lucid (``import lucid.optim as optim``).

Every optimizer works on any leaf tensor that requires grad (so on ``nn.Parameter``s) and
follows ``torch.optim``'s names, defaults, ``param_groups`` and ``state_dict`` layout.
"""

from . import lr_scheduler
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .lion import Lion
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
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "lr_scheduler",
    "required",
]
