"""What ``lucid`` and ``Tensor`` export comes from the op tables, and the committed stubs that
spell it out for mypy are the ones the tables give."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import lucid

ROOT = Path(__file__).resolve().parents[3]


def _gen_stubs() -> Any:
    spec = importlib.util.spec_from_file_location("gen_stubs", ROOT / "tools" / "gen_stubs.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_stubs_are_up_to_date() -> None:
    stale = _gen_stubs().stale()
    assert not stale, f"{stale} differ from the op tables: run python tools/gen_stubs.py"


def test_every_tabled_op_is_exported_once_from_lucid() -> None:
    names = [row.name for _, row in lucid.ops.rows()]
    assert len(names) == len(set(names))
    assert lucid.ops.__all__ == names
    for module, row in lucid.ops.rows():
        fn = getattr(module, row.name)
        public = getattr(lucid, row.name)
        assert public is getattr(lucid.ops, row.name), row.name
        # the module's function, or (a reduction) it taking NumPy's axis=/keepdims= too
        assert public is fn or getattr(public, "__wrapped__", None) is fn, row.name


def test_tensor_methods_are_the_rows_marked_method() -> None:
    for name, fn in lucid.ops.methods().items():
        assert getattr(lucid.Tensor, name) is fn or name in vars(lucid.Tensor), name
    x = lucid.ones(2)
    assert x.addmm is not None and x.nanmedian().item() == 1.0
    assert not hasattr(lucid.Tensor, "__getattr__")
    assert not hasattr(x, "sume_typo")


def test_top_level_names() -> None:
    for name in ("linalg", "special", "viz", "save", "load", "normal", "bernoulli", "multinomial",
                 "randperm", "get_rng_state", "set_rng_state", "det", "logdet", "slogdet",
                 "inverse", "pinverse", "matrix_power"):  # fmt: skip
        assert name in lucid.__all__ and hasattr(lucid, name), name
    # torch's top-level names take `input` where linalg's take `A`: wrappers, the same values
    a = lucid.tensor([[2.0, 1.0], [1.0, 3.0]])
    assert lucid.allclose(lucid.inverse(input=a), lucid.linalg.inv(a), rtol=1e-6, atol=1e-7)
    assert lucid.allclose(lucid.pinverse(a), lucid.linalg.pinv(a), rtol=1e-5, atol=1e-6)
    assert lucid.allclose(lucid.det(input=a), lucid.linalg.det(A=a), rtol=1e-6, atol=1e-7)
    assert callable(lucid.autograd.functional.jacobian)
    assert callable(lucid.random.uniform) and callable(lucid.random.fork_rng)
