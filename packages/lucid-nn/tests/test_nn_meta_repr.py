"""A module run on the meta device prints as torch's (pytorch/tutorials' reasoning_about_shapes)."""

from __future__ import annotations

import lucid
import lucid.nn as nn


def test_meta_conv2d_output_repr_shows_its_grad_fn_as_torch() -> None:
    conv = nn.Conv2d(3, 5, 2, device="meta")
    out = conv(lucid.rand(2, 3, 10, 10, device="meta"))
    assert (
        repr(out) == "tensor(..., device='meta', size=(2, 5, 9, 9), grad_fn=<ConvolutionBackward0>)"
    )
