"""Issue 3's names are exported from lucid and lucid.ops (literal __all__ lists, for mypy)."""

from __future__ import annotations

import importlib

import lucid


def test_ops_all_lists_every_issue3_op() -> None:
    names = {"softmax", "log_softmax", "erf", "erfc", "erfinv"}
    for mod in ("blas", "grids", "sorting"):
        names |= set(importlib.import_module(f"lucid.ops.{mod}").__all__)
    assert names <= set(lucid.ops.__all__)
    for name in names:
        assert getattr(lucid, name) is getattr(lucid.ops, name), name


def test_top_level_names() -> None:
    for name in ("linalg", "special", "viz", "save", "load", "normal", "bernoulli", "multinomial",
                 "randperm", "get_rng_state", "set_rng_state", "det", "logdet", "slogdet",
                 "inverse", "pinverse", "matrix_power"):  # fmt: skip
        assert name in lucid.__all__ and hasattr(lucid, name), name
    assert lucid.inverse is lucid.linalg.inv and lucid.pinverse is lucid.linalg.pinv
    assert callable(lucid.autograd.functional.jacobian)
    assert callable(lucid.random.uniform) and callable(lucid.random.fork_rng)
