"""``lucid.models.ops``: the layers of torchvision's ``ops`` (lucid-data's ``lucid.data.ops``
has the functional operators and reaches these under torchvision's path).

``FeaturePyramidNetwork`` (with ``ExtraFPNBlock``, ``LastLevelMaxPool``, ``LastLevelP6P7``),
``MultiScaleRoIAlign``, ``RoIAlign``, ``RoIPool``, ``PSRoIAlign``, ``PSRoIPool``,
``DeformConv2d``, ``DropBlock2d``/``DropBlock3d``, ``FrozenBatchNorm2d``,
``Conv3dNormActivation``, and the zoo's shared blocks ``Conv2dNormActivation``,
``SqueezeExcitation``, ``StochasticDepth``/``stochastic_depth``,
``MLP`` and ``Permute``, with torchvision 0.28's signatures and parameter names (so state
dicts line up).

Example:
    >>> from collections import OrderedDict
    >>> fpn = FeaturePyramidNetwork([10, 20], 5)
    >>> out = fpn(OrderedDict(a=lucid.rand(1, 10, 16, 16), b=lucid.rand(1, 20, 8, 8)))
    >>> [tuple(v.shape) for v in out.values()]
    [(1, 5, 16, 16), (1, 5, 8, 8)]
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import lucid
from lucid import Tensor, nn
from lucid.data.ops import (
    box_area,
    deform_conv2d,
    drop_block2d,
    drop_block3d,
    ps_roi_align,
    ps_roi_pool,
    roi_align,
    roi_pool,
)
from lucid.models._layers import (
    MLP,
    Conv2dNormActivation,
    Conv3dNormActivation,
    Permute,
    SqueezeExcitation,
    StochasticDepth,
    stochastic_depth,
)

__all__ = [
    "MLP",
    "Conv2dNormActivation",
    "Conv3dNormActivation",
    "DeformConv2d",
    "DropBlock2d",
    "DropBlock3d",
    "ExtraFPNBlock",
    "FeaturePyramidNetwork",
    "FrozenBatchNorm2d",
    "LastLevelMaxPool",
    "LastLevelP6P7",
    "MultiScaleRoIAlign",
    "PSRoIAlign",
    "PSRoIPool",
    "Permute",
    "RoIAlign",
    "RoIPool",
    "SqueezeExcitation",
    "StochasticDepth",
    "stochastic_depth",
]


class ExtraFPNBlock(nn.Module):
    """Base of the FPN's extra block: ``forward(results, x, names) -> (results, names)``."""

    def forward(
        self, results: list[Tensor], x: list[Tensor], names: list[str], /
    ) -> tuple[list[Tensor], list[str]]:
        raise NotImplementedError("an ExtraFPNBlock subclass defines forward")


class FeaturePyramidNetwork(nn.Module):
    """Feature Pyramid Network (Lin et al., 2017) on an ordered dict of feature maps.

    The maps come in increasing depth (decreasing resolution); each gets a 1x1 lateral conv
    (``inner_blocks``), the coarser level upsampled (nearest) and added, and a 3x3 conv
    (``layer_blocks``). ``extra_blocks`` may append levels; ``norm_layer`` adds a norm after
    each conv.
    """

    def __init__(
        self,
        in_channels_list: list[int],
        out_channels: int,
        extra_blocks: ExtraFPNBlock | None = None,
        norm_layer: Callable[..., nn.Module] | None = None,
    ) -> None:
        super().__init__()
        self.inner_blocks = nn.ModuleList()
        self.layer_blocks = nn.ModuleList()
        for in_channels in in_channels_list:
            if in_channels == 0:
                raise ValueError("in_channels=0 is currently not supported")
            self.inner_blocks.append(
                Conv2dNormActivation(
                    in_channels,
                    out_channels,
                    kernel_size=1,
                    padding=0,
                    norm_layer=norm_layer,
                    activation_layer=None,
                )
            )
            self.layer_blocks.append(
                Conv2dNormActivation(
                    out_channels,
                    out_channels,
                    kernel_size=3,
                    norm_layer=norm_layer,
                    activation_layer=None,
                )
            )
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_uniform_(m.weight, a=1)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)
        if extra_blocks is not None and not isinstance(extra_blocks, ExtraFPNBlock):
            raise TypeError(
                f"extra_blocks should be of type ExtraFPNBlock not {type(extra_blocks)}"
            )
        self.extra_blocks = extra_blocks

    def forward(self, x: dict[str, Tensor]) -> dict[str, Tensor]:
        """The FPN maps, keyed as ``x`` (plus the extra block's names), finest first."""
        names = list(x.keys())
        feats = list(x.values())
        if len(feats) != len(self.inner_blocks):
            raise ValueError(
                f"FeaturePyramidNetwork: expected {len(self.inner_blocks)} feature maps, "
                f"got {len(feats)}"
            )
        last_inner = self.inner_blocks[-1](feats[-1])
        results = [self.layer_blocks[-1](last_inner)]
        for idx in range(len(feats) - 2, -1, -1):
            inner_lateral = self.inner_blocks[idx](feats[idx])
            size = tuple(inner_lateral.shape[-2:])
            top_down = nn.functional.interpolate(last_inner, size=size, mode="nearest")
            last_inner = inner_lateral + top_down
            results.insert(0, self.layer_blocks[idx](last_inner))
        if self.extra_blocks is not None:
            results, names = self.extra_blocks(results, feats, names)
        return OrderedDict(zip(names, results))


class LastLevelMaxPool(ExtraFPNBlock):
    """Appends ``'pool'``: the last FPN map subsampled by 2 (``max_pool2d`` with kernel 1)."""

    def forward(
        self, x: list[Tensor], y: list[Tensor], names: list[str], /
    ) -> tuple[list[Tensor], list[str]]:
        names.append("pool")
        x.append(nn.functional.max_pool2d(x[-1], kernel_size=1, stride=2, padding=0))
        return x, names


class LastLevelP6P7(ExtraFPNBlock):
    """RetinaNet's extra levels P6 and P7 (3x3 stride-2 convs), named ``'p6'`` and ``'p7'``."""

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.p6 = nn.Conv2d(in_channels, out_channels, 3, 2, 1)
        self.p7 = nn.Conv2d(out_channels, out_channels, 3, 2, 1)
        for module in (self.p6, self.p7):
            nn.init.kaiming_uniform_(module.weight, a=1)
            if module.bias is not None:
                nn.init.constant_(module.bias, 0)
        self.use_P5 = in_channels == out_channels

    def forward(
        self, p: list[Tensor], c: list[Tensor], names: list[str], /
    ) -> tuple[list[Tensor], list[str]]:
        p5, c5 = p[-1], c[-1]
        x = p5 if self.use_P5 else c5
        p6 = self.p6(x)
        p7 = self.p7(nn.functional.relu(p6))
        p.extend([p6, p7])
        names.extend(["p6", "p7"])
        return p, names


class RoIAlign(nn.Module):
    """The module form of :func:`lucid.data.ops.roi_align`."""

    def __init__(
        self,
        output_size: int | tuple[int, int],
        spatial_scale: float,
        sampling_ratio: int,
        aligned: bool = False,
    ) -> None:
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, input: Tensor, rois: Tensor | list[Tensor]) -> Tensor:
        return roi_align(
            input, rois, self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned
        )

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, spatial_scale={self.spatial_scale}, "
            f"sampling_ratio={self.sampling_ratio}, aligned={self.aligned}"
        )


class RoIPool(nn.Module):
    """The module form of :func:`lucid.data.ops.roi_pool`."""

    def __init__(self, output_size: int | tuple[int, int], spatial_scale: float) -> None:
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input: Tensor, rois: Tensor | list[Tensor]) -> Tensor:
        return roi_pool(input, rois, self.output_size, self.spatial_scale)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, spatial_scale={self.spatial_scale}"


def _infer_scale(size: tuple[int, ...], original_size: tuple[int, int]) -> float:
    # torchvision rounds log2 of the ratio in float32 (torch.tensor(approx).log2().round()).
    approx = float(size[0]) / float(original_size[0])
    return float(2 ** round(math.log2(approx)))


class MultiScaleRoIAlign(nn.Module):
    """RoI Align over several FPN levels, each box pooled from the level of eq. 1 of the FPN
    paper: ``floor(canonical_level + log2(sqrt(area) / canonical_scale) + 1e-6)``, clamped.

    ``forward(x, boxes, image_shapes)``: ``x`` maps names to ``[N, C, H, W]`` features (those
    in ``featmap_names`` are used, finest first), ``boxes`` one ``[L, 4]`` xyxy tensor per
    image in image coordinates, ``image_shapes`` the ``(height, width)`` of each image.
    """

    def __init__(
        self,
        featmap_names: list[str],
        output_size: int | tuple[int, int] | list[int],
        sampling_ratio: int,
        *,
        canonical_scale: int = 224,
        canonical_level: int = 4,
    ) -> None:
        super().__init__()
        if isinstance(output_size, int):
            output_size = (output_size, output_size)
        self.featmap_names = featmap_names
        self.sampling_ratio = sampling_ratio
        self.output_size = tuple(output_size)
        self.scales: list[float] | None = None
        self.canonical_scale = canonical_scale
        self.canonical_level = canonical_level

    def forward(
        self, x: dict[str, Tensor], boxes: list[Tensor], image_shapes: list[tuple[int, int]]
    ) -> Tensor:
        """The pooled features ``[sum(L), C, *output_size]``, in the order of ``boxes``."""
        feats = [v for k, v in x.items() if k in self.featmap_names]
        if not feats:
            raise ValueError(
                f"MultiScaleRoIAlign: none of featmap_names {self.featmap_names} is in the "
                f"input's keys {list(x.keys())}"
            )
        if not image_shapes:
            raise ValueError("images list should not be empty")
        original = (max(s[0] for s in image_shapes), max(s[1] for s in image_shapes))
        scales = [_infer_scale(tuple(f.shape[-2:]), original) for f in feats]
        self.scales = scales
        out_size = (int(self.output_size[0]), int(self.output_size[-1]))
        rois = lucid.cat(
            [lucid.cat([lucid.full_like(b[:, :1], i), b], dim=1) for i, b in enumerate(boxes)],
            dim=0,
        )
        if len(feats) == 1:
            return roi_align(feats[0], rois, out_size, scales[0], self.sampling_ratio)
        k_min = int(-math.log2(scales[0]))
        k_max = int(-math.log2(scales[-1]))
        # in the boxes' dtype, as torchvision's LevelMapper
        s = lucid.sqrt(lucid.cat([box_area(b) for b in boxes])).detach()
        lv = lucid.floor(lucid.log2(s / self.canonical_scale) + self.canonical_level + 1e-6)
        levels = [int(min(max(v, k_min), k_max)) - k_min for v in lv.tolist()]
        pieces: list[Tensor] = []
        order: list[int] = []
        for level, (feat, scale) in enumerate(zip(feats, scales)):
            idx = [i for i, lv in enumerate(levels) if lv == level]
            if not idx:
                continue
            pieces.append(
                roi_align(feat, rois[lucid.tensor(idx)], out_size, scale, self.sampling_ratio)
            )
            order += idx
        if not pieces:
            return lucid.zeros((0, feats[0].shape[1], *out_size), dtype=feats[0].dtype)
        stacked = lucid.cat(pieces, dim=0)
        inverse = [0] * len(order)
        for pos, i in enumerate(order):
            inverse[i] = pos
        return stacked[lucid.tensor(inverse)]

    def extra_repr(self) -> str:
        return (
            f"featmap_names={self.featmap_names}, output_size={self.output_size}, "
            f"sampling_ratio={self.sampling_ratio}"
        )


class PSRoIAlign(nn.Module):
    """The module form of :func:`lucid.data.ops.ps_roi_align`."""

    def __init__(
        self, output_size: int | tuple[int, int], spatial_scale: float, sampling_ratio: int
    ) -> None:
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio

    def forward(self, input: Tensor, rois: Tensor | list[Tensor]) -> Tensor:
        return ps_roi_align(input, rois, self.output_size, self.spatial_scale, self.sampling_ratio)

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, spatial_scale={self.spatial_scale}, "
            f"sampling_ratio={self.sampling_ratio}"
        )


class PSRoIPool(nn.Module):
    """The module form of :func:`lucid.data.ops.ps_roi_pool`."""

    def __init__(self, output_size: int | tuple[int, int], spatial_scale: float) -> None:
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input: Tensor, rois: Tensor | list[Tensor]) -> Tensor:
        return ps_roi_pool(input, rois, self.output_size, self.spatial_scale)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, spatial_scale={self.spatial_scale}"


def _pair2(v: int | tuple[int, int]) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))


class DeformConv2d(nn.Module):
    """The module form of :func:`lucid.data.ops.deform_conv2d`: ``weight [out_channels,
    in_channels // groups, kh, kw]`` and ``bias``, initialised as ``nn.Conv2d``'s;
    ``forward(input, offset, mask=None)``."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        groups: int = 1,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair2(kernel_size)
        self.stride = _pair2(stride)
        self.padding = _pair2(padding)
        self.dilation = _pair2(dilation)
        self.groups = groups
        self.weight = nn.Parameter(
            lucid.empty(out_channels, in_channels // groups, *self.kernel_size)
        )
        self.bias: nn.Parameter | None
        if bias:
            self.bias = nn.Parameter(lucid.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Kaiming-uniform weight (``a = sqrt(5)``) and a uniform bias in ``1 / sqrt(fan_in)``."""
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = nn.init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in)
            nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor, offset: Tensor, mask: Tensor | None = None) -> Tensor:
        return deform_conv2d(
            input,
            offset,
            self.weight,
            self.bias,
            stride=self.stride,
            padding=self.padding,
            dilation=self.dilation,
            mask=mask,
        )

    def __repr__(self) -> str:
        s = (
            f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, "
            f"kernel_size={self.kernel_size}, stride={self.stride}"
        )
        s += f", padding={self.padding}" if self.padding != (0, 0) else ""
        s += f", dilation={self.dilation}" if self.dilation != (1, 1) else ""
        s += f", groups={self.groups}" if self.groups != 1 else ""
        s += ", bias=False" if self.bias is None else ""
        return s + ")"


class DropBlock2d(nn.Module):
    """The module form of :func:`lucid.data.ops.drop_block2d` (active in training mode)."""

    def __init__(
        self, p: float, block_size: int, inplace: bool = False, eps: float = 1e-06
    ) -> None:
        super().__init__()
        self.p = p
        self.block_size = block_size
        self.inplace = inplace
        self.eps = eps

    def forward(self, input: Tensor) -> Tensor:
        return drop_block2d(input, self.p, self.block_size, self.inplace, self.eps, self.training)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(p={self.p}, block_size={self.block_size}, "
            f"inplace={self.inplace})"
        )


class DropBlock3d(DropBlock2d):
    """The module form of :func:`lucid.data.ops.drop_block3d` (active in training mode)."""

    def forward(self, input: Tensor) -> Tensor:
        return drop_block3d(input, self.p, self.block_size, self.inplace, self.eps, self.training)


class FrozenBatchNorm2d(nn.Module):
    """Batch norm with its statistics and affine parameters fixed (buffers, not parameters):
    ``x * w / sqrt(var + eps) + b - mean * w / sqrt(var + eps)`` (torchvision.ops')."""

    def __init__(self, num_features: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.register_buffer("weight", lucid.ones(num_features))
        self.register_buffer("bias", lucid.zeros(num_features))
        self.register_buffer("running_mean", lucid.zeros(num_features))
        self.register_buffer("running_var", lucid.ones(num_features))

    def forward(self, x: Tensor) -> Any:
        scale = self.weight * lucid.rsqrt(self.running_var + self.eps)
        shift = self.bias - self.running_mean * scale
        return x * scale.reshape(1, -1, 1, 1) + shift.reshape(1, -1, 1, 1)

    def extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, eps={self.eps}"
