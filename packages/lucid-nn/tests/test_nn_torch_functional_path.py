"""``lucid.functional`` is ``torch.functional``'s path: the transfer-learning tutorial does
``from torch.functional import F``."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import lucid
import lucid.nn.functional


def test_torch_functional_names_and_f() -> None:
    from lucid.functional import F, einsum, meshgrid, norm

    assert F is lucid.nn.functional
    assert einsum is lucid.einsum and meshgrid is lucid.meshgrid and norm is lucid.norm
    lucid.manual_seed(0)
    a, b = lucid.randn(3, 4), lucid.randn(4, 2)
    np.testing.assert_allclose(
        einsum("ij,jk->ik", a, b).numpy(), (a @ b).numpy(), rtol=1e-5, atol=1e-6
    )


def test_reachable_after_import_lucid() -> None:
    code = "import lucid\nprint(lucid.functional.F.relu(lucid.tensor([-1.0, 2.0])).tolist())"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[0.0, 2.0]"


@pytest.mark.parity
def test_same_names_as_torch_functional() -> None:
    torch_functional = pytest.importorskip("torch.functional")
    import lucid.functional

    assert sorted(lucid.functional.__all__) == sorted(torch_functional.__all__)
    assert hasattr(torch_functional, "F") and hasattr(lucid.functional, "F")
