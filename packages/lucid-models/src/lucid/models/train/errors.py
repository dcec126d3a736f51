"""The one error ``lucid-train`` reports as a single line and exit code 2."""

from __future__ import annotations


class TrainError(ValueError):
    """A setting, folder or checkpoint the run cannot use; the message says what to do."""


def one_line(exc: BaseException, limit: int | None = None) -> str:
    """``exc``'s message on one line, cut to ``limit`` characters if given (a state-dict
    mismatch lists every key)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if limit is None or len(text) <= limit else text[: limit - 4] + " ..."
