"""RAFT (Teed & Deng, "RAFT: Recurrent All-Pairs Field Transforms for Optical Flow", ECCV 2020)
in torchvision's layout (``torchvision.models.optical_flow.raft``: the same state-dict keys).
``model(image1, image2, num_flow_updates=12)`` returns the list of flow predictions, each
``(N, 2, H, W)``; H and W must divide by 8 (and be at least 128 for the correlation pyramid)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import lucid
from lucid import nn
from lucid.models._layers import Conv2dNormActivation
from lucid.models._registry import register_model
from lucid.models.optical_flow._utils import grid_sample, make_coords_grid, upsample_flow
from lucid.nn import functional as F

__all__ = ["RAFT", "raft_large", "raft_small"]

_PAPER = 'Teed & Deng, "RAFT: Recurrent All-Pairs Field Transforms for Optical Flow", ECCV 2020'


class ResidualBlock(nn.Module):
    """Two 3x3 conv-norm-ReLU, the shortcut projected where the block strides."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        *,
        norm_layer: Any,
        stride: int = 1,
        always_project: bool = False,
    ) -> None:
        super().__init__()
        self.convnormrelu1 = Conv2dNormActivation(
            in_channels,
            out_channels,
            norm_layer=norm_layer,
            kernel_size=3,
            stride=stride,
            bias=True,
        )
        self.convnormrelu2 = Conv2dNormActivation(
            out_channels, out_channels, norm_layer=norm_layer, kernel_size=3, bias=True
        )
        self.downsample: nn.Module
        if stride == 1 and not always_project:
            self.downsample = nn.Identity()
        else:
            self.downsample = Conv2dNormActivation(
                in_channels,
                out_channels,
                norm_layer=norm_layer,
                kernel_size=1,
                stride=stride,
                bias=True,
                activation_layer=None,
            )
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x: Any) -> Any:
        y = self.convnormrelu2(self.convnormrelu1(x))
        return self.relu(self.downsample(x) + y)


class BottleneckBlock(nn.Module):
    """1x1, 3x3, 1x1 conv-norm-ReLU (a quarter of the width inside), the shortcut projected
    where the block strides."""

    def __init__(
        self, in_channels: int, out_channels: int, *, norm_layer: Any, stride: int = 1
    ) -> None:
        super().__init__()
        mid = out_channels // 4
        self.convnormrelu1 = Conv2dNormActivation(
            in_channels, mid, norm_layer=norm_layer, kernel_size=1, bias=True
        )
        self.convnormrelu2 = Conv2dNormActivation(
            mid, mid, norm_layer=norm_layer, kernel_size=3, stride=stride, bias=True
        )
        self.convnormrelu3 = Conv2dNormActivation(
            mid, out_channels, norm_layer=norm_layer, kernel_size=1, bias=True
        )
        self.relu = nn.ReLU(inplace=True)
        self.downsample: nn.Module
        if stride == 1:
            self.downsample = nn.Identity()
        else:
            self.downsample = Conv2dNormActivation(
                in_channels,
                out_channels,
                norm_layer=norm_layer,
                kernel_size=1,
                stride=stride,
                bias=True,
                activation_layer=None,
            )

    def forward(self, x: Any) -> Any:
        y = self.convnormrelu3(self.convnormrelu2(self.convnormrelu1(x)))
        return self.relu(self.downsample(x) + y)


class FeatureEncoder(nn.Module):
    """A 7x7 conv and three stages of two blocks (downsampling by 8), then a 1x1 conv."""

    def __init__(
        self,
        *,
        block: Any = ResidualBlock,
        layers: Sequence[int] = (64, 64, 96, 128, 256),
        strides: Sequence[int] = (2, 1, 2, 2),
        norm_layer: Any = nn.BatchNorm2d,
    ) -> None:
        super().__init__()
        if len(layers) != 5:
            raise ValueError(f"The expected number of layers is 5, instead got {len(layers)}")
        self.convnormrelu = Conv2dNormActivation(
            3, layers[0], norm_layer=norm_layer, kernel_size=7, stride=strides[0], bias=True
        )
        self.layer1 = self._make_2_blocks(block, layers[0], layers[1], norm_layer, strides[1])
        self.layer2 = self._make_2_blocks(block, layers[1], layers[2], norm_layer, strides[2])
        self.layer3 = self._make_2_blocks(block, layers[2], layers[3], norm_layer, strides[3])
        self.conv = nn.Conv2d(layers[3], layers[4], kernel_size=1)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d | nn.InstanceNorm2d):
                if m.weight is not None:
                    nn.init.ones_(m.weight)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
        self.output_dim = layers[-1]
        self.downsample_factor = 2 ** sum(1 for s in strides if s == 2)

    @staticmethod
    def _make_2_blocks(
        block: Any, cin: int, cout: int, norm_layer: Any, first_stride: int
    ) -> nn.Sequential:
        return nn.Sequential(
            block(cin, cout, norm_layer=norm_layer, stride=first_stride),
            block(cout, cout, norm_layer=norm_layer, stride=1),
        )

    def forward(self, x: Any) -> Any:
        x = self.layer3(self.layer2(self.layer1(self.convnormrelu(x))))
        return self.conv(x)


class MotionEncoder(nn.Module):
    """Encodes the correlation features and the current flow; the flow is appended."""

    def __init__(
        self,
        *,
        in_channels_corr: int,
        corr_layers: Sequence[int] = (256, 192),
        flow_layers: Sequence[int] = (128, 64),
        out_channels: int = 128,
    ) -> None:
        super().__init__()
        if len(flow_layers) != 2:
            raise ValueError(
                f"The expected number of flow_layers is 2, instead got {len(flow_layers)}"
            )
        if len(corr_layers) not in (1, 2):
            raise ValueError(
                f"The number of corr_layers should be 1 or 2, instead got {len(corr_layers)}"
            )
        self.convcorr1 = Conv2dNormActivation(
            in_channels_corr, corr_layers[0], norm_layer=None, kernel_size=1
        )
        self.convcorr2: nn.Module = (
            Conv2dNormActivation(corr_layers[0], corr_layers[1], norm_layer=None, kernel_size=3)
            if len(corr_layers) == 2
            else nn.Identity()
        )
        self.convflow1 = Conv2dNormActivation(2, flow_layers[0], norm_layer=None, kernel_size=7)
        self.convflow2 = Conv2dNormActivation(
            flow_layers[0], flow_layers[1], norm_layer=None, kernel_size=3
        )
        self.conv = Conv2dNormActivation(
            corr_layers[-1] + flow_layers[-1], out_channels - 2, norm_layer=None, kernel_size=3
        )
        self.out_channels = out_channels

    def forward(self, flow: Any, corr_features: Any) -> Any:
        corr = self.convcorr2(self.convcorr1(corr_features))
        f = self.convflow2(self.convflow1(flow))
        return lucid.cat([self.conv(lucid.cat([corr, f], dim=1)), flow], dim=1)


class ConvGRU(nn.Module):
    """A convolutional GRU cell."""

    def __init__(
        self, *, input_size: int, hidden_size: int, kernel_size: Any, padding: Any
    ) -> None:
        super().__init__()
        n = hidden_size + input_size
        self.convz = nn.Conv2d(n, hidden_size, kernel_size=kernel_size, padding=padding)
        self.convr = nn.Conv2d(n, hidden_size, kernel_size=kernel_size, padding=padding)
        self.convq = nn.Conv2d(n, hidden_size, kernel_size=kernel_size, padding=padding)

    def forward(self, h: Any, x: Any) -> Any:
        hx = lucid.cat([h, x], dim=1)
        z = lucid.sigmoid(self.convz(hx))
        r = lucid.sigmoid(self.convr(hx))
        q = lucid.tanh(self.convq(lucid.cat([r * h, x], dim=1)))
        return (1 - z) * h + z * q


class RecurrentBlock(nn.Module):
    """One or two ConvGRUs (RAFT-large: a 1x5 then a 5x1)."""

    def __init__(
        self,
        *,
        input_size: int,
        hidden_size: int,
        kernel_size: Sequence[Any] = ((1, 5), (5, 1)),
        padding: Sequence[Any] = ((0, 2), (2, 0)),
    ) -> None:
        super().__init__()
        if len(kernel_size) != len(padding):
            raise ValueError(
                f"kernel_size should have the same length as padding, instead got "
                f"len(kernel_size) = {len(kernel_size)} and len(padding) = {len(padding)}"
            )
        if len(kernel_size) not in (1, 2):
            raise ValueError(f"kernel_size should either 1 or 2, instead got {len(kernel_size)}")
        self.convgru1 = ConvGRU(
            input_size=input_size,
            hidden_size=hidden_size,
            kernel_size=kernel_size[0],
            padding=padding[0],
        )
        self.convgru2: Callable[[Any, Any], Any] = (
            ConvGRU(
                input_size=input_size,
                hidden_size=hidden_size,
                kernel_size=kernel_size[1],
                padding=padding[1],
            )
            if len(kernel_size) == 2
            else _pass_through_h
        )
        self.hidden_size = hidden_size

    def forward(self, h: Any, x: Any) -> Any:
        return self.convgru2(self.convgru1(h, x), x)


def _pass_through_h(h: Any, _: Any) -> Any:
    return h


class FlowHead(nn.Module):
    """Two 3x3 convolutions to the flow update."""

    def __init__(self, *, in_channels: int, hidden_size: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, hidden_size, 3, padding=1)
        self.conv2 = nn.Conv2d(hidden_size, 2, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x: Any) -> Any:
        return self.conv2(self.relu(self.conv1(x)))


class UpdateBlock(nn.Module):
    """Motion encoder, recurrent block and flow head: one refinement step."""

    def __init__(
        self, *, motion_encoder: nn.Module, recurrent_block: RecurrentBlock, flow_head: nn.Module
    ) -> None:
        super().__init__()
        self.motion_encoder = motion_encoder
        self.recurrent_block = recurrent_block
        self.flow_head = flow_head
        self.hidden_state_size = recurrent_block.hidden_size

    def forward(
        self, hidden_state: Any, context: Any, corr_features: Any, flow: Any
    ) -> tuple[Any, Any]:
        x = lucid.cat([context, self.motion_encoder(flow, corr_features)], dim=1)
        hidden_state = self.recurrent_block(hidden_state, x)
        return hidden_state, self.flow_head(hidden_state)


class MaskPredictor(nn.Module):
    """The weights of the convex upsampling (8x8 new pixels times 9 neighbours)."""

    def __init__(self, *, in_channels: int, hidden_size: int, multiplier: float = 0.25) -> None:
        super().__init__()
        self.convrelu = Conv2dNormActivation(
            in_channels, hidden_size, norm_layer=None, kernel_size=3
        )
        self.conv = nn.Conv2d(hidden_size, 8 * 8 * 9, 1, padding=0)
        self.multiplier = multiplier

    def forward(self, x: Any) -> Any:
        return self.multiplier * self.conv(self.convrelu(x))


class CorrBlock(nn.Module):
    """The all-pairs correlation volume, average-pooled into ``num_levels`` levels, and
    looked up within ``radius`` of each current position."""

    def __init__(self, *, num_levels: int = 4, radius: int = 4) -> None:
        super().__init__()
        self.num_levels = num_levels
        self.radius = radius
        self.corr_pyramid: list[Any] = []
        self.out_channels = num_levels * (2 * radius + 1) ** 2

    def build_pyramid(self, fmap1: Any, fmap2: Any) -> None:
        """Compute and pool the correlation volume of two feature maps."""
        if tuple(fmap1.shape) != tuple(fmap2.shape):
            raise ValueError(
                f"Input feature maps should have the same shape, instead got "
                f"{tuple(fmap1.shape)} (fmap1.shape) != {tuple(fmap2.shape)} "
                f"(fmap2.shape)"
            )
        smallest = 2 * (2 ** (self.num_levels - 1))
        if any(s < smallest for s in fmap1.shape[-2:]):
            raise ValueError(
                "Feature maps are too small to be down-sampled by the correlation pyramid. "
                f"H and W of feature maps should be at least {smallest}; got: "
                f"{tuple(fmap1.shape[-2:])}. Remember that input images to the model are "
                f"downsampled by 8, so that means their dimensions should be at least "
                f"8 * {smallest} = {8 * smallest}."
            )
        b, c, h, w = fmap1.shape
        corr = lucid.matmul(fmap1.reshape(b, c, h * w).transpose(1, 2), fmap2.reshape(b, c, h * w))
        corr = corr.reshape(b * h * w, 1, h, w) / float(np.sqrt(np.float32(c)))
        self.corr_pyramid = [corr]
        for _ in range(self.num_levels - 1):
            corr = F.avg_pool2d(corr, kernel_size=2, stride=2)
            self.corr_pyramid.append(corr)

    def index_pyramid(self, centroids_coords: Any) -> Any:
        """The correlations around ``centroids_coords`` (``(N, 2, h, w)``) at every level."""
        side = 2 * self.radius + 1
        d = np.linspace(-self.radius, self.radius, side, dtype=np.float32)
        di, dj = np.meshgrid(d, d, indexing="ij")
        delta = lucid.tensor(np.stack([di, dj], axis=-1).reshape(1, side, side, 2))
        b, _, h, w = centroids_coords.shape
        coords = centroids_coords.permute(0, 2, 3, 1).reshape(b * h * w, 1, 1, 2)
        levels = []
        for corr in self.corr_pyramid:
            sampled = grid_sample(corr, coords + delta, align_corners=True, mode="bilinear")
            levels.append(sampled.reshape(b, h, w, -1))
            coords = coords / 2
        out = lucid.cat(levels, dim=-1).permute(0, 3, 1, 2)
        expected = (b, self.out_channels, h, w)
        if tuple(out.shape) != expected:
            raise ValueError(
                f"Output shape of index pyramid is incorrect. Should be {expected}, "
                f"got {tuple(out.shape)}"
            )
        return out


class RAFT(nn.Module):
    """torchvision's ``RAFT``: feature and context encoders, the correlation pyramid, and
    ``num_flow_updates`` recurrent refinements, each upsampled to the input's size."""

    def __init__(
        self,
        *,
        feature_encoder: nn.Module,
        context_encoder: nn.Module,
        corr_block: CorrBlock,
        update_block: nn.Module,
        mask_predictor: nn.Module | None = None,
    ) -> None:
        super().__init__()
        self.feature_encoder = feature_encoder
        self.context_encoder = context_encoder
        self.corr_block = corr_block
        self.update_block = update_block
        self.mask_predictor = mask_predictor
        if not hasattr(self.update_block, "hidden_state_size"):
            raise ValueError(
                "The update_block parameter should expose a 'hidden_state_size' attribute."
            )

    def forward(self, image1: Any, image2: Any, num_flow_updates: int = 12) -> list[Any]:
        b, _, h, w = image1.shape
        if (h, w) != tuple(image2.shape[-2:]):
            raise ValueError(
                f"input images should have the same shape, instead got ({h}, {w}) "
                f"!= {tuple(image2.shape[-2:])}"
            )
        if h % 8 or w % 8:
            raise ValueError(
                f"input image H and W should be divisible by 8, instead got {h} (h) and {w} (w)"
            )
        fmaps = self.feature_encoder(lucid.cat([image1, image2], dim=0))
        fmap1, fmap2 = fmaps[:b], fmaps[b:]
        if tuple(fmap1.shape[-2:]) != (h // 8, w // 8):
            raise ValueError("The feature encoder should downsample H and W by 8")
        self.corr_block.build_pyramid(fmap1, fmap2)
        context_out = self.context_encoder(image1)
        if tuple(context_out.shape[-2:]) != (h // 8, w // 8):
            raise ValueError("The context encoder should downsample H and W by 8")
        hidden = self.update_block.hidden_state_size
        n_context = context_out.shape[1] - hidden
        if n_context <= 0:
            raise ValueError(
                f"The context encoder outputs {context_out.shape[1]} channels, but it should have "
                f"at strictly more than hidden_state={hidden} channels"
            )
        hidden_state = lucid.tanh(context_out[:, :hidden])
        context = F.relu(context_out[:, hidden:])
        coords0 = make_coords_grid(b, h // 8, w // 8)
        coords1 = make_coords_grid(b, h // 8, w // 8)
        predictions = []
        for _ in range(num_flow_updates):
            coords1 = coords1.detach()  # no gradient through the lookup positions (the paper)
            corr_features = self.corr_block.index_pyramid(coords1)
            flow = coords1 - coords0
            hidden_state, delta = self.update_block(hidden_state, context, corr_features, flow)
            coords1 = coords1 + delta
            up_mask = None if self.mask_predictor is None else self.mask_predictor(hidden_state)
            predictions.append(upsample_flow(coords1 - coords0, up_mask))
        return predictions


_OVERRIDES = ("feature_encoder", "context_encoder", "corr_block", "update_block", "mask_predictor")


def _raft(
    kwargs: dict[str, Any],
    *,
    feature_encoder_layers: Sequence[int],
    feature_encoder_block: Any,
    feature_encoder_norm_layer: Any,
    context_encoder_layers: Sequence[int],
    context_encoder_block: Any,
    context_encoder_norm_layer: Any,
    corr_block_num_levels: int,
    corr_block_radius: int,
    motion_encoder_corr_layers: Sequence[int],
    motion_encoder_flow_layers: Sequence[int],
    motion_encoder_out_channels: int,
    recurrent_block_hidden_state_size: int,
    recurrent_block_kernel_size: Sequence[Any],
    recurrent_block_padding: Sequence[Any],
    flow_head_hidden_size: int,
    use_mask_predictor: bool,
) -> RAFT:
    unknown = sorted(set(kwargs) - set(_OVERRIDES))
    if unknown:
        raise TypeError(f"RAFT's builders take no arguments {unknown} (only {list(_OVERRIDES)})")
    feature_encoder = kwargs.get("feature_encoder") or FeatureEncoder(
        block=feature_encoder_block,
        layers=feature_encoder_layers,
        norm_layer=feature_encoder_norm_layer,
    )
    context_encoder = kwargs.get("context_encoder") or FeatureEncoder(
        block=context_encoder_block,
        layers=context_encoder_layers,
        norm_layer=context_encoder_norm_layer,
    )
    corr_block = kwargs.get("corr_block") or CorrBlock(
        num_levels=corr_block_num_levels, radius=corr_block_radius
    )
    update_block = kwargs.get("update_block")
    if update_block is None:
        motion_encoder = MotionEncoder(
            in_channels_corr=corr_block.out_channels,
            corr_layers=motion_encoder_corr_layers,
            flow_layers=motion_encoder_flow_layers,
            out_channels=motion_encoder_out_channels,
        )
        n_context = context_encoder_layers[-1] - recurrent_block_hidden_state_size
        recurrent = RecurrentBlock(
            input_size=motion_encoder.out_channels + n_context,
            hidden_size=recurrent_block_hidden_state_size,
            kernel_size=recurrent_block_kernel_size,
            padding=recurrent_block_padding,
        )
        head = FlowHead(
            in_channels=recurrent_block_hidden_state_size, hidden_size=flow_head_hidden_size
        )
        update_block = UpdateBlock(
            motion_encoder=motion_encoder, recurrent_block=recurrent, flow_head=head
        )
    mask_predictor = kwargs.get("mask_predictor")
    if mask_predictor is None and use_mask_predictor:
        mask_predictor = MaskPredictor(
            in_channels=recurrent_block_hidden_state_size, hidden_size=256, multiplier=0.25
        )
    return RAFT(
        feature_encoder=feature_encoder,
        context_encoder=context_encoder,
        corr_block=corr_block,
        update_block=update_block,
        mask_predictor=mask_predictor,
    )


@register_model(
    task="optical-flow",
    paper=_PAPER,
    num_params=5_257_536,
    input_size=(3, 520, 960),
    reference="torchvision",
)
def raft_large(**kwargs: Any) -> RAFT:
    """RAFT (large), 5,257,536 parameters; ``model(image1, image2)`` on ``(N, 3, H, W)``
    images in ``[-1, 1]`` (the ``OpticalFlow`` preset)."""
    return _raft(
        kwargs,
        feature_encoder_layers=(64, 64, 96, 128, 256),
        feature_encoder_block=ResidualBlock,
        feature_encoder_norm_layer=nn.InstanceNorm2d,
        context_encoder_layers=(64, 64, 96, 128, 256),
        context_encoder_block=ResidualBlock,
        context_encoder_norm_layer=nn.BatchNorm2d,
        corr_block_num_levels=4,
        corr_block_radius=4,
        motion_encoder_corr_layers=(256, 192),
        motion_encoder_flow_layers=(128, 64),
        motion_encoder_out_channels=128,
        recurrent_block_hidden_state_size=128,
        recurrent_block_kernel_size=((1, 5), (5, 1)),
        recurrent_block_padding=((0, 2), (2, 0)),
        flow_head_hidden_size=256,
        use_mask_predictor=True,
    )


@register_model(
    task="optical-flow",
    paper=_PAPER,
    num_params=990_162,
    input_size=(3, 520, 960),
    reference="torchvision",
)
def raft_small(**kwargs: Any) -> RAFT:
    """RAFT (small), 990,162 parameters; flows upsampled bilinearly (no mask predictor)."""
    return _raft(
        kwargs,
        feature_encoder_layers=(32, 32, 64, 96, 128),
        feature_encoder_block=BottleneckBlock,
        feature_encoder_norm_layer=nn.InstanceNorm2d,
        context_encoder_layers=(32, 32, 64, 96, 160),
        context_encoder_block=BottleneckBlock,
        context_encoder_norm_layer=None,
        corr_block_num_levels=4,
        corr_block_radius=3,
        motion_encoder_corr_layers=(96,),
        motion_encoder_flow_layers=(64, 32),
        motion_encoder_out_channels=82,
        recurrent_block_hidden_state_size=96,
        recurrent_block_kernel_size=(3,),
        recurrent_block_padding=(1,),
        flow_head_hidden_size=128,
        use_mask_predictor=False,
    )
