"""MobileNet v4 Conv-Small/Medium/Large (Qin et al., "MobileNetV4: Universal Models for the
Mobile Ecosystem", ECCV 2024), in timm's layout (its ``MobileNetV3`` class with the
``mobilenetv4_conv_*`` architecture definitions).

The blocks are plain conv-BN-ReLU (``cn``), fused inverted bottlenecks (``er``: a full 3x3
expansion conv, then a 1x1 projection) and universal inverted bottlenecks (``uir``: an optional
depthwise conv before the 1x1 expansion and an optional one after it; without either it is an
FFN, with only the first a ConvNeXt-like block, with only the second MobileNetV2's). The head
pools first, then a 1x1 conv to 1280 channels with BN and ReLU, then the classifier.

The hybrid variants (``mobilenetv4_hybrid_medium``/``_large``) add mobile multi-query
attention blocks (``mqa``: a BN, then attention whose single key and value heads may come from
a strided depthwise conv, then a layer scale), and a layer scale (1e-5) on every universal
inverted bottleneck; the large one uses GELU throughout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import lucid
from lucid import nn
from lucid.models._layers import make_divisible
from lucid.models._registry import classifier
from lucid.models._timm_layers import BatchNormAct2d, ConvNormAct, DropPath

_PAPER = 'Qin et al., "MobileNetV4: Universal Models for the Mobile Ecosystem", ECCV 2024'
Act = Callable[..., Any]


class LayerScale2d(nn.Module):
    """A learnt per-channel scale of an NCHW tensor (timm's ``LayerScale2d``, key ``gamma``)."""

    def __init__(self, dim: int, init_values: float = 1e-5) -> None:
        super().__init__()
        self.gamma = nn.Parameter(lucid.full((dim,), init_values))

    def forward(self, x: Any) -> Any:
        return x * self.gamma.reshape(1, -1, 1, 1)


class ConvBnAct(nn.Module):
    """Conv (``k``x``k``), BN, ReLU: timm's ``ConvBnAct`` (keys ``conv``, ``bn1``)."""

    def __init__(self, in_chs: int, out_chs: int, kernel_size: int, stride: int = 1,
                 act_layer: Act = nn.ReLU) -> None:  # fmt: skip
        super().__init__()
        self.conv = nn.Conv2d(in_chs, out_chs, kernel_size, stride, (kernel_size - 1) // 2,
                              bias=False)  # fmt: skip
        self.bn1 = BatchNormAct2d(out_chs, act_layer=act_layer)

    def forward(self, x: Any) -> Any:
        return self.bn1(self.conv(x))


class EdgeResidual(nn.Module):
    """Fused inverted bottleneck: a full ``k``x``k`` expansion conv with BN-ReLU, a 1x1
    projection with BN, a residual when the shape allows."""

    def __init__(
        self,
        in_chs: int,
        out_chs: int,
        exp_kernel_size: int = 3,
        stride: int = 1,
        exp_ratio: float = 1.0,
        drop_path: float = 0.0,
        act_layer: Act = nn.ReLU,
    ) -> None:
        super().__init__()
        mid = make_divisible(in_chs * exp_ratio)
        self.has_skip = in_chs == out_chs and stride == 1
        pad = ((stride - 1) + (exp_kernel_size - 1)) // 2
        self.conv_exp = nn.Conv2d(in_chs, mid, exp_kernel_size, stride, pad, bias=False)
        self.bn1 = BatchNormAct2d(mid, act_layer=act_layer)
        self.conv_pwl = nn.Conv2d(mid, out_chs, 1, bias=False)
        self.bn2 = BatchNormAct2d(out_chs, apply_act=False)
        self.drop_path: nn.Module = DropPath(drop_path) if drop_path else nn.Identity()

    def forward(self, x: Any) -> Any:
        out = self.bn2(self.conv_pwl(self.bn1(self.conv_exp(x))))
        return self.drop_path(out) + x if self.has_skip else out


class UniversalInvertedResidual(nn.Module):
    """Universal inverted bottleneck: optional depthwise ``dw_start`` (no activation), 1x1
    expansion, optional depthwise ``dw_mid`` (which takes the stride when present), 1x1
    projection, a residual when the shape allows."""

    def __init__(
        self,
        in_chs: int,
        out_chs: int,
        dw_kernel_size_start: int = 0,
        dw_kernel_size_mid: int = 3,
        stride: int = 1,
        exp_ratio: float = 1.0,
        drop_path: float = 0.0,
        act_layer: Act = nn.ReLU,
        layer_scale_init_value: float | None = None,
    ) -> None:
        super().__init__()
        self.has_skip = in_chs == out_chs and stride == 1
        if stride > 1 and not (dw_kernel_size_start or dw_kernel_size_mid):
            raise ValueError("UniversalInvertedResidual: a strided block needs a depthwise conv")
        self.dw_start: nn.Module = nn.Identity()
        if dw_kernel_size_start:
            start_stride = stride if not dw_kernel_size_mid else 1
            self.dw_start = ConvNormAct(in_chs, in_chs, dw_kernel_size_start, start_stride,
                                        groups=in_chs, apply_act=False)  # fmt: skip
        mid = make_divisible(in_chs * exp_ratio)
        self.pw_exp = ConvNormAct(in_chs, mid, 1, act_layer=act_layer)
        self.dw_mid: nn.Module = nn.Identity()
        if dw_kernel_size_mid:
            self.dw_mid = ConvNormAct(mid, mid, dw_kernel_size_mid, stride, groups=mid,
                                      act_layer=act_layer)  # fmt: skip
        self.se = nn.Identity()
        self.pw_proj = ConvNormAct(mid, out_chs, 1, apply_act=False)
        self.dw_end = nn.Identity()
        self.layer_scale: nn.Module = nn.Identity()
        if layer_scale_init_value is not None:
            self.layer_scale = LayerScale2d(out_chs, layer_scale_init_value)
        self.drop_path: nn.Module = DropPath(drop_path) if drop_path else nn.Identity()

    def forward(self, x: Any) -> Any:
        out = self.pw_proj(self.se(self.dw_mid(self.pw_exp(self.dw_start(x)))))
        out = self.layer_scale(self.dw_end(out))
        return self.drop_path(out) + x if self.has_skip else out


class MultiQueryAttention2d(nn.Module):
    """Multi-query attention over an NCHW map (timm's ``MultiQueryAttention2d``): ``num_heads``
    query heads from a 1x1 conv, one key and one value head from 1x1 convs, each after a
    strided depthwise conv and BN when ``kv_stride`` > 1 (fewer keys than queries); the heads'
    outputs through a 1x1 conv. No biases."""

    def __init__(self, dim: int, dim_out: int, num_heads: int, key_dim: int, value_dim: int,
                 kv_stride: int = 1, dw_kernel_size: int = 3) -> None:  # fmt: skip
        super().__init__()
        self.num_heads, self.key_dim, self.value_dim = num_heads, key_dim, value_dim
        self.scale = key_dim**-0.5
        self.query = nn.Sequential()
        self.query.add_module("proj", nn.Conv2d(dim, num_heads * key_dim, 1, bias=False))
        self.key = self._kv(dim, key_dim, kv_stride, dw_kernel_size)
        self.value = self._kv(dim, value_dim, kv_stride, dw_kernel_size)
        self.output = nn.Sequential()
        self.output.add_module("proj", nn.Conv2d(value_dim * num_heads, dim_out, 1, bias=False))
        self.output.add_module("drop", nn.Dropout(0.0))
        for conv in (self.query.proj, self.output.proj, *self.key, *self.value):
            if isinstance(conv, nn.Conv2d):
                nn.init.xavier_uniform_(conv.weight)

    @staticmethod
    def _kv(dim: int, out: int, stride: int, kernel: int) -> nn.Sequential:
        seq = nn.Sequential()
        if stride > 1:
            pad = ((stride - 1) + (kernel - 1)) // 2
            seq.add_module("down_conv", nn.Conv2d(dim, dim, kernel, stride, pad, groups=dim,
                                                  bias=False))  # fmt: skip
            seq.add_module("norm", nn.BatchNorm2d(dim))
        seq.add_module("proj", nn.Conv2d(dim, out, 1, bias=False))
        return seq

    def forward(self, x: Any) -> Any:
        b, _, h, w = x.shape
        q = self.query(x).reshape(b, self.num_heads, self.key_dim, h * w).transpose(-1, -2)
        k = self.key(x).flatten(2).transpose(1, 2).unsqueeze(1)  # (b, 1, keys, key_dim)
        v = self.value(x).flatten(2).transpose(1, 2).unsqueeze(1)
        attn = ((q * self.scale) @ k.transpose(-1, -2)).softmax(dim=-1)
        o = (attn @ v).transpose(1, 2).reshape(b, h, w, self.num_heads * self.value_dim)
        return self.output(o.permute(0, 3, 1, 2))


class MobileAttention(nn.Module):
    """Mobile multi-query attention block (timm's ``MobileAttention`` with
    ``use_multi_query=True``): BN, :class:`MultiQueryAttention2d`, a layer scale, a residual
    when the shape allows."""

    def __init__(self, in_chs: int, out_chs: int, stride: int = 1, dw_kernel_size: int = 3,
                 num_heads: int = 8, key_dim: int = 64, value_dim: int = 64, kv_stride: int = 1,
                 drop_path: float = 0.0,
                 layer_scale_init_value: float | None = 1e-5) -> None:  # fmt: skip
        super().__init__()
        self.has_skip = stride == 1 and in_chs == out_chs
        self.norm = BatchNormAct2d(in_chs, apply_act=False)
        self.attn = MultiQueryAttention2d(in_chs, out_chs, num_heads, key_dim, value_dim,
                                          kv_stride, dw_kernel_size)  # fmt: skip
        self.layer_scale: nn.Module = nn.Identity()
        if layer_scale_init_value is not None:
            self.layer_scale = LayerScale2d(out_chs, layer_scale_init_value)
        self.drop_path: nn.Module = DropPath(drop_path) if drop_path else nn.Identity()

    def forward(self, x: Any) -> Any:
        out = self.layer_scale(self.attn(self.norm(x)))
        return self.drop_path(out) + x if self.has_skip else out


def _decode(block: str) -> tuple[str, int, dict[str, int | float]]:
    """timm's block string (``"uir_r1_a3_k5_s2_e4_c80"``): type, repeats and the options."""
    kind, *ops = block.split("_")
    opts: dict[str, int | float] = {}
    for op in ops:
        opts[op[0]] = float(op[1:]) if op[0] == "e" else int(op[1:])
    return kind, int(opts.pop("r")), opts


class MobileNetV4(nn.Module):
    """MobileNet v4 (timm's ``MobileNetV3`` class built from a v4 architecture definition):
    ``conv_stem``/``bn1``, ``blocks`` (one ``nn.Sequential`` per stage), then the pooled head
    ``conv_head``/``norm_head`` and ``classifier``."""

    def __init__(
        self,
        arch: list[list[str]],
        stem_size: int = 32,
        num_features: int = 1280,
        num_classes: int = 1000,
        in_channels: int = 3,
        drop_rate: float = 0.0,
        drop_path_rate: float = 0.0,
        act_layer: Act = nn.ReLU,
        layer_scale_init_value: float | None = None,
    ) -> None:
        super().__init__()
        act = act_layer
        self.conv_stem = nn.Conv2d(in_channels, stem_size, 3, 2, 1, bias=False)
        self.bn1 = BatchNormAct2d(stem_size, act_layer=act)
        decoded = [[_decode(b) for b in stage] for stage in arch]
        total = sum(r for stage in decoded for _, r, _ in stage)
        prev, index, stages = stem_size, 0, []
        for stage in decoded:
            blocks: list[nn.Module] = []
            for kind, repeats, o in stage:
                out = make_divisible(int(o["c"]))
                for i in range(repeats):
                    stride = int(o["s"]) if i == 0 else 1
                    dpr = drop_path_rate * index / total
                    if kind == "cn":
                        blocks.append(ConvBnAct(prev, out, int(o["k"]), stride, act))
                    elif kind == "er":
                        blocks.append(EdgeResidual(prev, out, int(o["k"]), stride, o["e"], dpr,
                                                   act))  # fmt: skip
                    elif kind == "uir":
                        blocks.append(UniversalInvertedResidual(
                            prev, out, int(o["a"]), int(o["k"]), stride, o["e"], dpr, act,
                            layer_scale_init_value))  # fmt: skip
                    elif kind == "mqa":
                        blocks.append(MobileAttention(
                            prev, out, stride, int(o["k"]), int(o["h"]), int(o["d"]),
                            int(o["d"]), int(o.get("v", 1)), dpr,
                            layer_scale_init_value))  # fmt: skip
                    else:
                        raise ValueError(f"MobileNetV4: unknown block type {kind!r}")
                    prev, index = out, index + 1
            stages.append(nn.Sequential(*blocks))
        self.blocks = nn.Sequential(*stages)
        self.num_features = prev
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.conv_head = nn.Conv2d(prev, num_features, 1, bias=False)
        self.norm_head = BatchNormAct2d(num_features, act_layer=act)
        self.drop_rate = drop_rate
        self.classifier = nn.Linear(num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward_features(self, x: Any) -> Any:
        """The feature map before the head."""
        return self.blocks(self.bn1(self.conv_stem(x)))

    def forward(self, x: Any) -> Any:
        x = self.norm_head(self.conv_head(self.global_pool(self.forward_features(x))))
        x = nn.functional.dropout(x.flatten(1), self.drop_rate, self.training)
        return self.classifier(x)


_SMALL = [
    ["cn_r1_k3_s2_e1_c32", "cn_r1_k1_s1_e1_c32"],
    ["cn_r1_k3_s2_e1_c96", "cn_r1_k1_s1_e1_c64"],
    ["uir_r1_a5_k5_s2_e3_c96", "uir_r4_a0_k3_s1_e2_c96", "uir_r1_a3_k0_s1_e4_c96"],
    ["uir_r1_a3_k3_s2_e6_c128", "uir_r1_a5_k5_s1_e4_c128", "uir_r1_a0_k5_s1_e4_c128",
     "uir_r1_a0_k5_s1_e3_c128", "uir_r2_a0_k3_s1_e4_c128"],
    ["cn_r1_k1_s1_c960"],
]  # fmt: skip
_MEDIUM = [
    ["er_r1_k3_s2_e4_c48"],
    ["uir_r1_a3_k5_s2_e4_c80", "uir_r1_a3_k3_s1_e2_c80"],
    ["uir_r1_a3_k5_s2_e6_c160", "uir_r2_a3_k3_s1_e4_c160", "uir_r1_a3_k5_s1_e4_c160",
     "uir_r1_a3_k3_s1_e4_c160", "uir_r1_a3_k0_s1_e4_c160", "uir_r1_a0_k0_s1_e2_c160",
     "uir_r1_a3_k0_s1_e4_c160"],
    ["uir_r1_a5_k5_s2_e6_c256", "uir_r1_a5_k5_s1_e4_c256", "uir_r2_a3_k5_s1_e4_c256",
     "uir_r1_a0_k0_s1_e4_c256", "uir_r1_a3_k0_s1_e4_c256", "uir_r1_a3_k5_s1_e2_c256",
     "uir_r1_a5_k5_s1_e4_c256", "uir_r2_a0_k0_s1_e4_c256", "uir_r1_a5_k0_s1_e2_c256"],
    ["cn_r1_k1_s1_c960"],
]  # fmt: skip
_LARGE = [
    ["er_r1_k3_s2_e4_c48"],
    ["uir_r1_a3_k5_s2_e4_c96", "uir_r1_a3_k3_s1_e4_c96"],
    ["uir_r1_a3_k5_s2_e4_c192", "uir_r3_a3_k3_s1_e4_c192", "uir_r1_a3_k5_s1_e4_c192",
     "uir_r5_a5_k3_s1_e4_c192", "uir_r1_a3_k0_s1_e4_c192"],
    ["uir_r4_a5_k5_s2_e4_c512", "uir_r1_a5_k0_s1_e4_c512", "uir_r1_a5_k3_s1_e4_c512",
     "uir_r2_a5_k0_s1_e4_c512", "uir_r1_a5_k3_s1_e4_c512", "uir_r1_a5_k5_s1_e4_c512",
     "uir_r3_a5_k0_s1_e4_c512"],
    ["cn_r1_k1_s1_c960"],
]  # fmt: skip


@classifier(_PAPER, 3_774_024, reference="timm")
def mobilenetv4_conv_small(**kwargs: Any) -> MobileNetV4:
    """MobileNet v4 Conv-Small, 3,774,024 parameters for 1000 classes."""
    return MobileNetV4(_SMALL, 32, **kwargs)


@classifier(_PAPER, 9_715_512, (3, 256, 256), reference="timm")
def mobilenetv4_conv_medium(**kwargs: Any) -> MobileNetV4:
    """MobileNet v4 Conv-Medium, 9,715,512 parameters for 1000 classes."""
    return MobileNetV4(_MEDIUM, 32, **kwargs)


@classifier(_PAPER, 32_590_864, (3, 384, 384), reference="timm")
def mobilenetv4_conv_large(**kwargs: Any) -> MobileNetV4:
    """MobileNet v4 Conv-Large, 32,590,864 parameters for 1000 classes."""
    return MobileNetV4(_LARGE, 24, **kwargs)


# ---- the hybrid variants (multi-query attention) -------------------------------------------
_HYBRID_MEDIUM = [
    ["er_r1_k3_s2_e4_c48"],
    ["uir_r1_a3_k5_s2_e4_c80", "uir_r1_a3_k3_s1_e2_c80"],
    ["uir_r1_a3_k5_s2_e6_c160", "uir_r1_a0_k0_s1_e2_c160", "uir_r1_a3_k3_s1_e4_c160",
     "uir_r1_a3_k5_s1_e4_c160", "mqa_r1_k3_h4_s1_v2_d64_c160", "uir_r1_a3_k3_s1_e4_c160",
     "mqa_r1_k3_h4_s1_v2_d64_c160", "uir_r1_a3_k0_s1_e4_c160", "mqa_r1_k3_h4_s1_v2_d64_c160",
     "uir_r1_a3_k3_s1_e4_c160", "mqa_r1_k3_h4_s1_v2_d64_c160", "uir_r1_a3_k0_s1_e4_c160"],
    ["uir_r1_a5_k5_s2_e6_c256", "uir_r1_a5_k5_s1_e4_c256", "uir_r2_a3_k5_s1_e4_c256",
     "uir_r1_a0_k0_s1_e2_c256", "uir_r1_a3_k5_s1_e2_c256", "uir_r1_a0_k0_s1_e2_c256",
     "uir_r1_a0_k0_s1_e4_c256", "mqa_r1_k3_h4_s1_d64_c256", "uir_r1_a3_k0_s1_e4_c256",
     "mqa_r1_k3_h4_s1_d64_c256", "uir_r1_a5_k5_s1_e4_c256", "mqa_r1_k3_h4_s1_d64_c256",
     "uir_r1_a5_k0_s1_e4_c256", "mqa_r1_k3_h4_s1_d64_c256", "uir_r1_a5_k0_s1_e4_c256"],
    ["cn_r1_k1_s1_c960"],
]  # fmt: skip
_HYBRID_LARGE = [
    ["er_r1_k3_s2_e4_c48"],
    ["uir_r1_a3_k5_s2_e4_c96", "uir_r1_a3_k3_s1_e4_c96"],
    ["uir_r1_a3_k5_s2_e4_c192", "uir_r3_a3_k3_s1_e4_c192", "uir_r1_a3_k5_s1_e4_c192",
     "uir_r2_a5_k3_s1_e4_c192", "mqa_r1_k3_h8_s1_v2_d48_c192", "uir_r1_a5_k3_s1_e4_c192",
     "mqa_r1_k3_h8_s1_v2_d48_c192", "uir_r1_a5_k3_s1_e4_c192", "mqa_r1_k3_h8_s1_v2_d48_c192",
     "uir_r1_a5_k3_s1_e4_c192", "mqa_r1_k3_h8_s1_v2_d48_c192", "uir_r1_a3_k0_s1_e4_c192"],
    ["uir_r4_a5_k5_s2_e4_c512", "uir_r1_a5_k0_s1_e4_c512", "uir_r1_a5_k3_s1_e4_c512",
     "uir_r2_a5_k0_s1_e4_c512", "uir_r1_a5_k3_s1_e4_c512", "uir_r1_a5_k5_s1_e4_c512",
     "mqa_r1_k3_h8_s1_d64_c512", "uir_r1_a5_k0_s1_e4_c512", "mqa_r1_k3_h8_s1_d64_c512",
     "uir_r1_a5_k0_s1_e4_c512", "mqa_r1_k3_h8_s1_d64_c512", "uir_r1_a5_k0_s1_e4_c512",
     "mqa_r1_k3_h8_s1_d64_c512", "uir_r1_a5_k0_s1_e4_c512"],
    ["cn_r1_k1_s1_c960"],
]  # fmt: skip


@classifier(_PAPER, 11_074_648, (3, 256, 256), reference="timm")
def mobilenetv4_hybrid_medium(**kwargs: Any) -> MobileNetV4:
    """MobileNet v4 Hybrid-Medium, 11,074,648 parameters for 1000 classes."""
    kwargs.setdefault("layer_scale_init_value", 1e-5)
    return MobileNetV4(_HYBRID_MEDIUM, 32, **kwargs)


@classifier(_PAPER, 37_764_624, (3, 384, 384), reference="timm")
def mobilenetv4_hybrid_large(**kwargs: Any) -> MobileNetV4:
    """MobileNet v4 Hybrid-Large (GELU), 37,764,624 parameters for 1000 classes."""
    kwargs.setdefault("layer_scale_init_value", 1e-5)
    kwargs.setdefault("act_layer", nn.GELU)
    return MobileNetV4(_HYBRID_LARGE, 24, **kwargs)
