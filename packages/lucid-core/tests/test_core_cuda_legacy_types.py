"""``torch.cuda.FloatTensor`` and the other nine: named by CPU programs (isinstance checks,
``Tensor = cuda.FloatTensor if cuda else FloatTensor``), never made (PyTorch-GAN's
cluster_gan read the attribute, which lucid lacked)."""

from __future__ import annotations

from typing import Any

import pytest

import lucid

NAMES = ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
         "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor")  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_cuda_legacy_types_are_named_never_made(name: str) -> None:
    kind = getattr(lucid.cuda, name)
    assert repr(kind) == f"<class 'lucid.cuda.{name}'>"
    cpu_kind = getattr(lucid, name)
    x = lucid.zeros(2, dtype=cpu_kind.dtype)
    assert isinstance(x, cpu_kind) and not isinstance(x, kind)
    with pytest.raises(TypeError, match=rf"^type lucid.cuda.{name} not available"):
        kind(2, 3)


def test_complex_cuda_types_are_absent_as_in_torch() -> None:
    with pytest.raises(AttributeError):
        lucid.cuda.ComplexFloatTensor  # noqa: B018


@pytest.mark.parity
def test_the_same_names_as_torchs() -> None:
    torch: Any = pytest.importorskip("torch")
    theirs = {n for n in dir(torch.cuda) if n.endswith("Tensor") and n[0].isupper()}
    assert theirs == set(NAMES)
    for name in NAMES:
        assert isinstance(torch.zeros(2), getattr(torch.cuda, name)) is False
        with pytest.raises(TypeError):
            getattr(torch.cuda, name)(2)
