"""Check an export: onnxruntime and ``lucid.onnx.load`` give the model's outputs.

``verify`` needs onnxruntime (``pip install "lucid-onnx[runtime]"``).

>>> import lucid, lucid.nn as nn
>>> data = verify(nn.Linear(3, 2), lucid.randn(2, 3), others=[lucid.randn(5, 3)])
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import numpy as np

import lucid
from lucid import Tensor, nn
from lucid.onnx._export import export
from lucid.onnx._runtime import load
from lucid.onnx._trace import flatten


def verify(
    model: nn.Module,
    args: Any,
    *,
    others: Sequence[Any] = (),
    batch_dynamic: bool = True,
    rtol: float = 1e-4,
    atol: float = 1e-4,
    **export_kwargs: Any,
) -> bytes:
    """Export ``model`` on ``args`` and compare, on ``args`` and each of ``others``, the
    model's outputs with onnxruntime's and with the file loaded back by ``lucid.onnx.load``.

    With ``batch_dynamic`` dim 0 of every input and output is a dynamic axis (so ``others``
    may have other batch sizes). Raises ``AssertionError`` naming the output and the largest
    difference; returns the ONNX file's bytes.
    """
    import onnxruntime as ort

    args = args if isinstance(args, tuple) else (args,)
    n_in = len([a for a in flatten(args) if isinstance(a, Tensor)])
    n_out = len(list(flatten(_run(model, args))))
    ins, outs = [f"input_{i}" for i in range(n_in)], [f"output_{i}" for i in range(n_out)]
    if batch_dynamic:
        export_kwargs.setdefault("dynamic_axes", {n: {0: "batch"} for n in ins + outs})
    buf = io.BytesIO()
    export(model, args, buf, input_names=ins, output_names=outs, **export_kwargs)
    data = buf.getvalue()
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    first = next((a for a in flatten(args) if isinstance(a, Tensor)), None)
    back = load(io.BytesIO(data))
    if first is not None:
        back = back.to(first.device)
    for case in (args, *(o if isinstance(o, tuple) else (o,) for o in others)):
        expected = _arrays(_run(model, case))
        feeds = dict(zip(ins, _arrays(case)))
        _compare("onnxruntime", session.run(None, feeds), expected, outs, rtol, atol)
        _compare("lucid.onnx.load", _arrays(_run(back, case)), expected, outs, rtol, atol)
    return data


def _run(model: nn.Module, args: tuple[Any, ...]) -> Any:
    with lucid.no_grad():
        return model(*args)


def _arrays(value: Any) -> list[np.ndarray]:
    return [np.asarray(t.numpy()) for t in flatten(value) if isinstance(t, Tensor)]


def _compare(
    what: str,
    got: Sequence[np.ndarray],
    expected: list[np.ndarray],
    names: list[str],
    rtol: float,
    atol: float,
) -> None:
    for name, g, e in zip(names, got, expected):
        if g.shape != e.shape or not np.allclose(g, e, rtol=rtol, atol=atol):
            diff = np.abs(g - e).max() if g.shape == e.shape else "shape mismatch"
            raise AssertionError(
                f"{what}'s {name} differs from the model's: shapes {list(g.shape)} and "
                f"{list(e.shape)}, largest difference {diff} (rtol={rtol}, atol={atol})"
            )
