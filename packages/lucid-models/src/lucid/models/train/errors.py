"""The one error ``lucid-train`` reports as a single line and exit code 2."""

from __future__ import annotations


class TrainError(ValueError):
    """A setting, folder or checkpoint the run cannot use; the message says what to do."""


def one_line(exc: BaseException) -> str:
    """``exc``'s message on one line (a state-dict mismatch lists its keys over several)."""
    return " ".join(str(exc).split()) or type(exc).__name__
