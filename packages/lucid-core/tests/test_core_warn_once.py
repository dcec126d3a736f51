"""torch's deprecation warnings given once a process (``TORCH_WARN_ONCE``), in torch's words:
``torch.lu``/``Tensor.lu``, ``torch.meshgrid`` without ``indexing``, and the other deprecated
linear-algebra names (``qr``, ``cholesky``, ``lu_solve``, ``triangular_solve``,
``chain_matmul``), each once whether called as a function or a method.

Found by karpathy/pytorch-normalizing-flows (``Invertible1x1Conv``:
``torch.lu_unpack(*Q.lu())``) and lucidrains' lambda-networks (``torch.meshgrid(...)`` without
``indexing``), where torch warned and lucid said nothing. Each check runs in a fresh
interpreter, as the warning is once a process.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

_PROGRAM = """
import warnings
import {lib} as m
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
{calls}
messages = [str(w.message).split(" (Triggered internally")[0] for w in caught]
print(len(messages))
print(repr(messages))
print(sorted({{w.category.__name__ for w in caught}}))
"""

CALLS = {
    "lu": (
        "    m.ones(3, 3).add(m.eye(3)).lu()\n    m.lu(m.eye(2))\n    m.eye(2).lu(get_infos=True)\n"
    ),
    "meshgrid": (
        "    m.meshgrid(m.arange(2), m.arange(3))\n"
        "    m.meshgrid([m.arange(2)])\n"
        "    m.meshgrid(m.arange(2), indexing=None)\n"
        "    m.meshgrid(m.arange(2), m.arange(2), indexing='xy')\n"
        "    m.cartesian_prod(m.arange(2), m.arange(3))\n"
    ),
    "qr": "    m.qr(m.eye(3))\n    m.eye(2).qr(some=False)\n",
    "cholesky": "    m.cholesky(m.eye(3))\n    m.eye(2).cholesky(upper=True)\n",
    "lu_solve": (
        "    lu, piv = m.linalg.lu_factor(m.eye(3) * 2)\n"
        "    m.lu_solve(m.ones(3, 1), lu, piv)\n"
        "    m.ones(3, 1).lu_solve(lu, piv)\n"
    ),
    "triangular_solve": (
        "    m.triangular_solve(m.ones(3, 1), m.eye(3))\n"
        "    m.ones(3, 1).triangular_solve(m.eye(3), upper=False)\n"
    ),
    "chain_matmul": "    m.chain_matmul(m.eye(2), m.eye(2))\n    m.chain_matmul(m.eye(2))\n",
}


def _run(lib: str, what: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM.format(lib=lib, calls=CALLS[what])],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.splitlines()


@pytest.mark.parametrize("what", sorted(CALLS))
def test_warns_once_a_process(what: str) -> None:
    out = _run("lucid", what)
    assert out[0] == "1"
    assert "torch." + what in out[1]
    assert out[2] == "['UserWarning']"


@pytest.mark.parity
@pytest.mark.parametrize("what", sorted(CALLS))
def test_the_warning_is_torchs(what: str) -> None:
    pytest.importorskip("torch")
    assert _run("lucid", what) == _run("torch", what)
