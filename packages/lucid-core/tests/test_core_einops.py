"""einops on lucid tensors: einops finds lucid's backend whichever is imported first; results
equal einops on numpy arrays; gradients match finite differences; einops's own operation tests
pass with the lucid backend."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck

einops = pytest.importorskip("einops")


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


def test_operations_match_einops_on_numpy() -> None:
    x = _rng().standard_normal((2, 3, 4, 6))
    t = lucid.from_numpy(x)
    cases = [
        (einops.rearrange, ("b c h w -> b (h w) c",), {}),
        (einops.rearrange, ("b c h (w2 w) -> (b w2) c h w",), {"w2": 2}),
        (einops.reduce, ("b c (h h2) (w w2) -> b c h w", "max"), {"h2": 2, "w2": 2}),
        (einops.reduce, ("b c h w -> c", "mean"), {}),
        (einops.reduce, ("b c h w -> b h", "min"), {}),
        (einops.reduce, ("b c h w -> b", "sum"), {}),
        (einops.reduce, ("b c h w -> b w", "prod"), {}),
        (einops.repeat, ("b c h w -> b c h w r",), {"r": 3}),
        (einops.repeat, ("b c h w -> (r b) c h w",), {"r": 2}),
    ]
    for fn, args, kw in cases:
        got = fn(t, *args, **kw)
        assert isinstance(got, lucid.Tensor)
        np.testing.assert_allclose(got.numpy(), fn(x, *args, **kw), rtol=1e-12, atol=1e-12)
    a, b = _rng().standard_normal((3, 4)), _rng().standard_normal((4, 5))
    got = einops.einsum(lucid.from_numpy(a), lucid.from_numpy(b), "i j, j k -> i k")
    np.testing.assert_allclose(got.numpy(), a @ b, rtol=1e-12, atol=1e-12)
    packed, ps = einops.pack([t, lucid.from_numpy(x[..., 0])], "b c h *")
    assert packed.shape == (2, 3, 4, 7)
    first, second = einops.unpack(packed, ps, "b c h *")
    np.testing.assert_array_equal(first.numpy(), x)
    np.testing.assert_array_equal(second.numpy(), x[..., 0])


def test_gradients_flow_through_einops() -> None:
    x = lucid.from_numpy(_rng().standard_normal((2, 3, 4))).requires_grad_()
    w = lucid.from_numpy(_rng().standard_normal((4, 5))).requires_grad_()

    def f(x: lucid.Tensor, w: lucid.Tensor) -> lucid.Tensor:
        y = einops.rearrange(x, "b c h -> (b c) h")
        y = einops.einsum(y, w, "n h, h k -> n k")
        y = einops.repeat(y, "n k -> n k r", r=2)
        m = einops.reduce(y, "(b c) k r -> b k", "max", b=2)
        return m + einops.reduce(y, "(b c) k r -> b k", "mean", b=2)

    assert gradcheck(f, (x, w), eps=1e-6, atol=1e-6, rtol=1e-5)
    out = f(x, w).sum()
    out.backward()
    assert x.grad is not None and x.grad.shape == x.shape and w.grad is not None


def test_either_import_order_finds_the_backend() -> None:
    code = textwrap.dedent(
        """
        import einops
        import lucid
        x = lucid.ones(2, 3)
        assert einops.rearrange(x, "a b -> b a").shape == (3, 2)
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


EINOPS_OWN_TESTS = """
import os, sys
os.environ["EINOPS_TEST_BACKENDS"] = "lucid"
import lucid, einops, einops.tests as et
from lucid._einops_backend import LucidBackend
et.collect_test_backends = lambda symbolic=False, layers=False: (
    [] if symbolic or layers else [LucidBackend()])
import pytest
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--pyargs",
                      "einops.tests.test_ops", "einops.tests.test_packing",
                      "einops.tests.test_einsum"]))
"""


def test_einops_own_operation_tests_pass_on_lucid() -> None:
    pytest.importorskip("einops.tests")
    out = subprocess.run([sys.executable, "-c", EINOPS_OWN_TESTS], capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and "failed" not in out.stdout
