"""``lucid.nested``: torch.nested's functions, each refusing with an error that says lucid has
no nested tensors and what to use instead (docs/differences.md)."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import lucid
import lucid.nested


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("nested_tensor", ([lucid.zeros(2, 3), lucid.zeros(4, 3)],)),
        ("as_nested_tensor", ([lucid.zeros(2, 3)],)),
        ("nested_tensor_from_jagged", (lucid.zeros(6, 3), lucid.tensor([0, 2, 6]))),
        ("to_padded_tensor", (lucid.zeros(2), 0.0)),
        ("narrow", (lucid.zeros(2, 3), 1, 0, 2)),
        ("masked_select", (lucid.zeros(2, 3), lucid.ones(2, 3, dtype=lucid.bool))),
    ],
)
def test_every_nested_function_refuses_with_what_to_do_instead(name: str, args: tuple) -> None:
    fn = getattr(lucid.nested, name)
    assert name in lucid.nested.__all__
    with pytest.raises(RuntimeError, match=rf"^torch\.nested\.{name}: lucid has no nested"):
        fn(*args)
    with pytest.raises(RuntimeError, match="pad_sequence"):
        fn(*args)


def test_the_namespace_is_reachable_as_torchs_is() -> None:
    # ``import lucid`` alone gives ``lucid.nested`` (as ``torch.nested`` after ``import torch``)
    code = "import lucid; print(lucid.nested.__name__, 'nested' in lucid.__all__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["lucid.nested", "True"]
    sig = inspect.signature(lucid.nested.nested_tensor)
    assert list(sig.parameters) == [
        "tensor_list", "dtype", "layout", "device", "requires_grad", "pin_memory"
    ]  # fmt: skip
