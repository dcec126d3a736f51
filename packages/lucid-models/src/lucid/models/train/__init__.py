"""``lucid-train``: train a registered model on a standard dataset (``lucid-models[train]``).

Examples: ``lucid-train lenet5 --dataset mnist``;
``lucid-train resnet18_cifar --dataset cifar10 --data-root ../shared/data/cifar10 --epochs 30``;
``python -m lucid.models.train`` is the same command.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lucid-train`` command; returns the process exit code."""
    try:
        from lucid.models.train.cli import run
    except ModuleNotFoundError as exc:  # the [train] extra is missing
        missing = exc.name or "a dependency"
        print(
            f"lucid-train needs {missing}: install it with  pip install 'lucid-models[train]'",
            file=sys.stderr,
        )
        return 2
    return run(argv)


__all__ = ["main"]
