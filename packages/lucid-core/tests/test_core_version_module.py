"""``lucid.version``: torch.version's names, lucid's own version, no accelerator builds."""

from __future__ import annotations

import pytest

import lucid


def test_the_version_is_lucids_and_no_accelerator_build_is_named() -> None:
    assert lucid.version.__version__ == lucid.__version__
    assert lucid.version.cuda is None and lucid.version.hip is None
    assert lucid.version.rocm is None and lucid.version.xpu is None
    assert lucid.version.debug is False and isinstance(lucid.version.git_version, str)


@pytest.mark.parity
def test_the_names_are_torch_versions() -> None:
    torch = pytest.importorskip("torch")
    assert sorted(lucid.version.__all__) == sorted(torch.version.__all__)
    assert lucid.version.cuda == torch.version.cuda  # the CPU build's None
