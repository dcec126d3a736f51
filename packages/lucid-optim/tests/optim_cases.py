"""The optimizer cases several lucid.optim tests share (not a pytest file): each is a class
name of ``lucid.optim`` and constructor options, together every option each algorithm has."""

from __future__ import annotations

from typing import Any

Case = tuple[str, dict[str, Any]]

# The algorithms PyTorch has too (test_optim_parity compares them with it)
TORCH_CASES: list[Case] = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.5)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, weight_decay=0.1, maximize=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=1e-2, alpha=0.5, t0=3, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, t0=2, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.2)),
    ("Adagrad", dict(lr=0.1, eps=1e-6, maximize=True)),
    ("Adadelta", dict(lr=1.0)),
    ("Adadelta", dict(lr=0.5, rho=0.5, eps=1e-4, weight_decay=0.1)),
    ("Adadelta", dict(lr=1.0, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, centered=True, momentum=0.5, maximize=True)),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-3, 0.05))),
    ("Rprop", dict(lr=0.01, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01, maximize=True)),
    ("Adamax", dict(lr=0.02)),
    ("Adamax", dict(lr=0.02, betas=(0.8, 0.9), weight_decay=0.1)),
    ("Adamax", dict(lr=0.02, maximize=True)),
    ("NAdam", dict(lr=0.02)),
    ("NAdam", dict(lr=0.02, momentum_decay=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.02, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.02, maximize=True)),
    ("RAdam", dict(lr=0.01)),  # 12 steps: the rectified branch from step 6 on
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), maximize=True)),
    ("Adafactor", dict(lr=0.01)),
    ("Adafactor", dict(lr=0.01, beta2_decay=-0.5, d=2.0, weight_decay=0.1)),
    ("Adafactor", dict(lr=0.05, eps=(1e-20, 1e-2), maximize=True)),
]

# Steps too large to follow PyTorch for long: the multi-tensor update's edge branches
LARGE_STEP_CASES: list[Case] = [
    ("SGD", dict(lr=1, momentum=1, weight_decay=1)),  # alpha == 1: no multiply, as the ops
    ("AdamW", dict(lr=1, betas=(0, 0), weight_decay=0)),
]

# Not in PyTorch (the paper's and mlx.optimizers' formula)
LION_CASES: list[Case] = [
    ("Lion", dict(lr=0.01)),
    ("Lion", dict(lr=0.01, weight_decay=0.1, maximize=True)),
]

ALL_CASES: list[Case] = TORCH_CASES + LARGE_STEP_CASES + LION_CASES

# The algorithms with a multi-tensor (foreach) update: all but Adafactor
MULTI_TENSOR_CASES: list[Case] = [case for case in ALL_CASES if case[0] != "Adafactor"]
