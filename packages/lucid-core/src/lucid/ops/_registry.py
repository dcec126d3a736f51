"""The op tables: each op module lists its public ops once, as the rows of an ``OpTable``.

A row names the op, says whether it is also a ``Tensor`` method, and carries its samples:
compact input specs (shapes, a value domain, extra arguments) that the gradcheck, the forward
check against NumPy, the PyTorch parity table and the MLX parity list all run as
``lucid.<name>(*inputs, *args, **kwargs)``. From the tables come each module's ``__all__``,
``lucid.ops``'s exports, the Tensor methods and their typing stub (``tools/gen_stubs.py``).

>>> row = op("exp", sample((2, 3), ref="exp"))
>>> row.name, row.method, row.samples[0].shapes
('exp', True, ((2, 3),))
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

DOMAINS = ("any", "pos", "unit", "gt1", "prob", "away", "int", "bool")


@dataclass(frozen=True)
class Sample:
    """One call ``op(*inputs, *args, **kwargs)``: ``inputs`` drawn by shape from ``domain``.

    Domains: any (standard normal), pos (> 0.5), unit (|x| < 0.8), gt1 (> 1.5), prob (in (0, 1)),
    away (distinct, |x| > 0.2: no ties or kinks), int (0..high-1), bool. ``ref`` names the NumPy
    function that gives the same values (``np.<ref>(*inputs, *args, **kwargs)``); ``gg`` adds a
    second-order check; ``tag`` tells a row's samples apart in test ids.
    """

    shapes: tuple[tuple[int, ...], ...]
    domain: str = "any"
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    gg: bool = False
    ref: str = ""
    tag: str = ""
    high: int = 8

    def arrays(self, seed: int = 0) -> list[np.ndarray]:
        """The inputs as NumPy arrays (float64, int64 or bool), the same for every seed use."""
        rng = np.random.default_rng(seed)
        return [_draw(rng, shape, self.domain, self.high) for shape in self.shapes]


def _draw(rng: np.random.Generator, shape: tuple[int, ...], domain: str, high: int) -> Any:
    if domain == "int":
        return rng.integers(0, high, shape)
    if domain == "bool":
        return rng.random(shape) < 0.5
    x = rng.standard_normal(shape)  # drawn for every float domain: keeps later draws aligned
    if domain == "pos":
        return np.abs(x) + 0.5
    if domain == "unit":
        return np.tanh(x) * 0.8
    if domain == "gt1":
        return np.abs(x) + 1.5
    if domain == "prob":
        return 1 / (1 + np.exp(-x))
    if domain == "away":
        n = int(np.prod(shape)) if shape else 1
        return ((rng.permutation(n) + 1.0) * 0.37 * rng.choice([-1, 1], n)).reshape(shape)
    return x


@dataclass(frozen=True)
class Op:
    """A public op: ``name`` in ``lucid`` (and on ``Tensor`` if ``method``) and its samples.

    ``nograd`` says why the op is not differentiable (its samples then check values only);
    ``untested`` says why it has no sample and names the test that covers it instead; ``alias``
    names the op this one is another name of (the same function, tested once).
    """

    name: str
    method: bool = True
    samples: tuple[Sample, ...] = ()
    nograd: str = ""
    untested: str = ""
    alias: str = ""


def sample(
    *shapes: tuple[int, ...],
    domain: str = "any",
    args: tuple[Any, ...] = (),
    gg: bool = False,
    ref: str = "",
    tag: str = "",
    high: int = 8,
    **kwargs: Any,
) -> Sample:
    """A :class:`Sample`; keyword arguments not named here are the op's own."""
    if domain not in DOMAINS:
        raise ValueError(f"sample domain must be one of {DOMAINS}, got {domain!r}")
    return Sample(shapes, domain, args, kwargs, gg, ref, tag, high)


def op(
    name: str,
    *samples: Sample,
    method: bool = True,
    nograd: str = "",
    untested: str = "",
    alias: str = "",
) -> Op:
    """A row of an :class:`OpTable`."""
    return Op(name, method, samples, nograd, untested, alias)


class OpTable:
    """The public ops of one module, in the order written."""

    def __init__(self, *rows: Op) -> None:
        names = [r.name for r in rows]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"op table lists {repeated} more than once")
        self.rows = rows

    def __iter__(self) -> Iterator[Op]:
        return iter(self.rows)

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.rows]
