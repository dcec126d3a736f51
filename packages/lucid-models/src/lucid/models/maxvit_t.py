"""MaxViT-T as torchvision builds it (Tu et al., "MaxViT: Multi-Axis Vision Transformer", ECCV
2022): ``torchvision.models.maxvit_t``, its module names and state-dict keys unchanged.

lucid.models also has timm's MaxViT family (:mod:`lucid.models.maxvit`, ``maxvit_tiny_tf_224``
...): the same architecture in timm's layout, whose checkpoints have other keys. The class here
is ``lucid.models.maxvit_t.MaxVit`` (``lucid.models.MaxVit`` is timm's).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

import lucid
from lucid import Tensor, nn
from lucid.models._layers import Conv2dNormActivation, SqueezeExcitation, StochasticDepth
from lucid.models._registry import register_model

__all__ = ["MaxVit", "maxvit_t"]

_PAPER = 'Tu et al., "MaxViT: Multi-Axis Vision Transformer", ECCV 2022'


def _conv_output_shape(size: tuple[int, int], kernel: int, stride: int,
                       padding: int) -> tuple[int, int]:  # fmt: skip
    return ((size[0] - kernel + 2 * padding) // stride + 1,
            (size[1] - kernel + 2 * padding) // stride + 1)  # fmt: skip


def _block_input_shapes(input_size: tuple[int, int], n_blocks: int) -> list[tuple[int, int]]:
    shapes = []
    shape = _conv_output_shape(input_size, 3, 2, 1)
    for _ in range(n_blocks):
        shape = _conv_output_shape(shape, 3, 2, 1)
        shapes.append(shape)
    return shapes


def _relative_position_index(height: int, width: int) -> Tensor:
    coords = np.stack(np.meshgrid(np.arange(height), np.arange(width), indexing="ij")).reshape(
        2, -1
    )
    rel = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0).copy()
    rel[:, :, 0] += height - 1
    rel[:, :, 1] += width - 1
    rel[:, :, 0] *= 2 * width - 1
    return lucid.tensor(rel.sum(-1).astype(np.int64))


class MBConv(nn.Module):
    """Pre-norm inverted bottleneck with squeeze-excitation; the shortcut average-pools and
    projects where the block strides or widens."""

    def __init__(self, in_channels: int, out_channels: int, expansion_ratio: float,
                 squeeze_ratio: float, stride: int, activation_layer: Callable[..., nn.Module],
                 norm_layer: Callable[..., nn.Module], p_stochastic_dropout: float = 0.0,
                 ) -> None:  # fmt: skip
        super().__init__()
        self.proj: nn.Module
        if stride != 1 or in_channels != out_channels:
            proj: list[nn.Module] = [nn.Conv2d(in_channels, out_channels, 1, stride=1, bias=True)]
            if stride == 2:
                proj = [nn.AvgPool2d(kernel_size=3, stride=stride, padding=1), *proj]
            self.proj = nn.Sequential(*proj)
        else:
            self.proj = nn.Identity()
        mid = int(out_channels * expansion_ratio)
        sqz = int(out_channels * squeeze_ratio)
        self.stochastic_depth: nn.Module = (StochasticDepth(p_stochastic_dropout, mode="row")
                                            if p_stochastic_dropout else nn.Identity())  # fmt: skip
        layers: OrderedDict[str, nn.Module] = OrderedDict()
        layers["pre_norm"] = norm_layer(in_channels)
        layers["conv_a"] = Conv2dNormActivation(in_channels, mid, 1, 1, 0,
                                                activation_layer=activation_layer,
                                                norm_layer=norm_layer, inplace=None)  # fmt: skip
        layers["conv_b"] = Conv2dNormActivation(mid, mid, 3, stride, 1,
                                                activation_layer=activation_layer,
                                                norm_layer=norm_layer, groups=mid,
                                                inplace=None)  # fmt: skip
        layers["squeeze_excitation"] = SqueezeExcitation(mid, sqz, activation=nn.SiLU)
        layers["conv_c"] = nn.Conv2d(mid, out_channels, 1, bias=True)
        self.layers = nn.Sequential(layers)

    def forward(self, x: Tensor) -> Any:
        return self.proj(x) + self.stochastic_depth(self.layers(x))


class RelativePositionalMultiHeadAttention(nn.Module):
    """Multi-head self-attention inside each window of ``max_seq_len`` positions, with a
    learned relative-position bias (``[B, G, P, D]`` in and out)."""

    def __init__(self, feat_dim: int, head_dim: int, max_seq_len: int) -> None:
        super().__init__()
        if feat_dim % head_dim != 0:
            raise ValueError(f"feat_dim: {feat_dim} must be divisible by head_dim: {head_dim}")
        self.n_heads = feat_dim // head_dim
        self.head_dim = head_dim
        self.size = int(math.sqrt(max_seq_len))
        self.max_seq_len = max_seq_len
        self.to_qkv = nn.Linear(feat_dim, self.n_heads * self.head_dim * 3)
        self.scale_factor = feat_dim**-0.5
        self.merge = nn.Linear(self.head_dim * self.n_heads, feat_dim)
        self.relative_position_bias_table = nn.Parameter(
            lucid.empty((2 * self.size - 1) * (2 * self.size - 1), self.n_heads)
        )
        self.register_buffer("relative_position_index",
                             _relative_position_index(self.size, self.size))  # fmt: skip
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)

    def get_relative_positional_bias(self) -> Tensor:
        """The ``(1, heads, P, P)`` bias of every pair of positions of a window."""
        index = self.relative_position_index.reshape(-1)
        bias = self.relative_position_bias_table[index].reshape(self.max_seq_len,
                                                                self.max_seq_len, -1)  # fmt: skip
        return bias.permute(2, 0, 1).unsqueeze(0)

    def forward(self, x: Tensor) -> Any:
        b, g, p, d = x.shape
        h, dh = self.n_heads, self.head_dim
        q, k, v = lucid.chunk(self.to_qkv(x), 3, dim=-1)
        q = q.reshape(b, g, p, h, dh).permute(0, 1, 3, 2, 4)
        k = k.reshape(b, g, p, h, dh).permute(0, 1, 3, 2, 4) * self.scale_factor
        v = v.reshape(b, g, p, h, dh).permute(0, 1, 3, 2, 4)
        attn = lucid.matmul(q, k.transpose(-2, -1)) + self.get_relative_positional_bias()
        out = lucid.matmul(lucid.softmax(attn, dim=-1), v)
        return self.merge(out.permute(0, 1, 3, 2, 4).reshape(b, g, p, d))


class SwapAxes(nn.Module):
    """``x.swapaxes(a, b)`` as a module."""

    def __init__(self, a: int, b: int) -> None:
        super().__init__()
        self.a, self.b = a, b

    def forward(self, x: Tensor) -> Any:
        return x.transpose(self.a, self.b)


class WindowPartition(nn.Module):
    """``[B, C, H, W]`` to ``[B, H/P * W/P, P*P, C]``: non-overlapping ``P x P`` windows."""

    def forward(self, x: Tensor, p: int) -> Any:
        b, c, h, w = x.shape
        x = x.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1)
        return x.reshape(b, (h // p) * (w // p), p * p, c)


class WindowDepartition(nn.Module):
    """The inverse of :class:`WindowPartition`."""

    def forward(self, x: Tensor, p: int, h_partitions: int, w_partitions: int) -> Any:
        b, _, _, c = x.shape
        x = x.reshape(b, h_partitions, w_partitions, p, p, c).permute(0, 5, 1, 3, 2, 4)
        return x.reshape(b, c, h_partitions * p, w_partitions * p)


class PartitionAttentionLayer(nn.Module):
    """Attention and an MLP inside windows (``"window"``: local ``P x P`` blocks) or across a
    sparse grid (``"grid"``: positions ``H/P`` apart), each with a residual."""

    def __init__(self, in_channels: int, head_dim: int, partition_size: int,
                 partition_type: str, grid_size: tuple[int, int], mlp_ratio: int,
                 activation_layer: Callable[..., nn.Module],
                 norm_layer: Callable[..., nn.Module], attention_dropout: float,
                 mlp_dropout: float, p_stochastic_dropout: float) -> None:  # fmt: skip
        super().__init__()
        if partition_type not in ["grid", "window"]:
            raise ValueError("partition_type must be either 'grid' or 'window'")
        self.n_heads = in_channels // head_dim
        self.head_dim = head_dim
        self.n_partitions = grid_size[0] // partition_size
        self.partition_type = partition_type
        self.grid_size = grid_size
        if partition_type == "window":
            self.p, self.g = partition_size, self.n_partitions
        else:
            self.p, self.g = self.n_partitions, partition_size
        self.partition_op = WindowPartition()
        self.departition_op = WindowDepartition()
        grid = partition_type == "grid"
        self.partition_swap: nn.Module = SwapAxes(-2, -3) if grid else nn.Identity()
        self.departition_swap: nn.Module = SwapAxes(-2, -3) if grid else nn.Identity()
        self.attn_layer = nn.Sequential(
            norm_layer(in_channels),
            RelativePositionalMultiHeadAttention(in_channels, head_dim, partition_size**2),
            nn.Dropout(attention_dropout),
        )
        self.mlp_layer = nn.Sequential(
            nn.LayerNorm(in_channels),
            nn.Linear(in_channels, in_channels * mlp_ratio),
            activation_layer(),
            nn.Linear(in_channels * mlp_ratio, in_channels),
            nn.Dropout(mlp_dropout),
        )
        self.stochastic_dropout = StochasticDepth(p_stochastic_dropout, mode="row")

    def forward(self, x: Tensor) -> Any:
        if self.grid_size[0] % self.p or self.grid_size[1] % self.p:
            raise ValueError(f"Grid size must be divisible by partition size. Got grid size of "
                             f"{self.grid_size} and partition size of {self.p}")  # fmt: skip
        gh, gw = self.grid_size[0] // self.p, self.grid_size[1] // self.p
        x = self.partition_swap(self.partition_op(x, self.p))
        x = x + self.stochastic_dropout(self.attn_layer(x))
        x = x + self.stochastic_dropout(self.mlp_layer(x))
        return self.departition_op(self.departition_swap(x), self.p, gh, gw)


class MaxVitLayer(nn.Module):
    """MBConv, then window attention, then grid attention."""

    def __init__(self, in_channels: int, out_channels: int, squeeze_ratio: float,
                 expansion_ratio: float, stride: int, norm_layer: Callable[..., nn.Module],
                 activation_layer: Callable[..., nn.Module], head_dim: int, mlp_ratio: int,
                 mlp_dropout: float, attention_dropout: float, p_stochastic_dropout: float,
                 partition_size: int, grid_size: tuple[int, int]) -> None:  # fmt: skip
        super().__init__()
        layers: OrderedDict[str, nn.Module] = OrderedDict()
        layers["MBconv"] = MBConv(in_channels, out_channels, expansion_ratio, squeeze_ratio,
                                  stride, activation_layer, norm_layer,
                                  p_stochastic_dropout)  # fmt: skip
        for kind in ("window", "grid"):
            layers[f"{kind}_attention"] = PartitionAttentionLayer(
                out_channels, head_dim, partition_size, kind, grid_size, mlp_ratio,
                activation_layer, nn.LayerNorm, attention_dropout, mlp_dropout,
                p_stochastic_dropout,
            )  # fmt: skip
        self.layers = nn.Sequential(layers)

    def forward(self, x: Tensor) -> Any:
        return self.layers(x)


class MaxVitBlock(nn.Module):
    """``n_layers`` :class:`MaxVitLayer`, the first striding by 2."""

    def __init__(self, in_channels: int, out_channels: int, squeeze_ratio: float,
                 expansion_ratio: float, norm_layer: Callable[..., nn.Module],
                 activation_layer: Callable[..., nn.Module], head_dim: int, mlp_ratio: int,
                 mlp_dropout: float, attention_dropout: float, partition_size: int,
                 input_grid_size: tuple[int, int], n_layers: int,
                 p_stochastic: list[float]) -> None:  # fmt: skip
        super().__init__()
        if len(p_stochastic) != n_layers:
            raise ValueError(f"p_stochastic must have length n_layers={n_layers}, got "
                             f"p_stochastic={p_stochastic}.")  # fmt: skip
        self.layers = nn.ModuleList()
        self.grid_size = _conv_output_shape(input_grid_size, 3, 2, 1)
        for idx, p in enumerate(p_stochastic):
            self.layers.append(MaxVitLayer(
                in_channels if idx == 0 else out_channels, out_channels, squeeze_ratio,
                expansion_ratio, 2 if idx == 0 else 1, norm_layer, activation_layer, head_dim,
                mlp_ratio, mlp_dropout, attention_dropout, p, partition_size, self.grid_size,
            ))  # fmt: skip

    def forward(self, x: Tensor) -> Any:
        for layer in self.layers:
            x = layer(x)
        return x


class MaxVit(nn.Module):
    """torchvision's ``MaxVit``: a two-conv stem, MaxViT blocks, and a pooled LayerNorm /
    Linear / Tanh / Linear head. ``input_size`` must give every block an input divisible by
    ``partition_size``."""

    def __init__(
        self,
        input_size: tuple[int, int],
        stem_channels: int,
        partition_size: int,
        block_channels: list[int],
        block_layers: list[int],
        head_dim: int,
        stochastic_depth_prob: float,
        norm_layer: Callable[..., nn.Module] | None = None,
        activation_layer: Callable[..., nn.Module] = nn.GELU,
        squeeze_ratio: float = 0.25,
        expansion_ratio: float = 4,
        mlp_ratio: int = 4,
        mlp_dropout: float = 0.0,
        attention_dropout: float = 0.0,
        num_classes: int = 1000,
    ) -> None:
        super().__init__()
        if norm_layer is None:
            norm_layer = partial(nn.BatchNorm2d, eps=1e-3, momentum=0.01)
        sizes = _block_input_shapes(tuple(input_size), len(block_channels))  # type: ignore[arg-type]
        for idx, size in enumerate(sizes):
            if size[0] % partition_size or size[1] % partition_size:
                raise ValueError(
                    f"Input size {size} of block {idx} is not divisible by partition size "
                    f"{partition_size}. Consider changing the partition size or the input size.\n"
                    f"Current configuration yields the following block input sizes: {sizes}."
                )
        self.stem = nn.Sequential(
            Conv2dNormActivation(
                3,
                stem_channels,
                3,
                stride=2,
                norm_layer=norm_layer,
                activation_layer=activation_layer,
                bias=False,
                inplace=None,
            ),  # fmt: skip
            Conv2dNormActivation(
                stem_channels,
                stem_channels,
                3,
                stride=1,
                norm_layer=None,
                activation_layer=None,
                bias=True,
            ),  # fmt: skip
        )
        grid = _conv_output_shape(tuple(input_size), 3, 2, 1)  # type: ignore[arg-type]
        self.partition_size = partition_size
        self.blocks = nn.ModuleList()
        p_stochastic = np.linspace(0, stochastic_depth_prob, sum(block_layers)).tolist()
        p_idx = 0
        ins = [stem_channels, *block_channels[:-1]]
        for cin, cout, n in zip(ins, block_channels, block_layers, strict=True):
            block = MaxVitBlock(cin, cout, squeeze_ratio, expansion_ratio, norm_layer,
                                activation_layer, head_dim, mlp_ratio, mlp_dropout,
                                attention_dropout, partition_size, grid, n,
                                p_stochastic[p_idx : p_idx + n])  # fmt: skip
            self.blocks.append(block)
            grid = block.grid_size
            p_idx += n
        self.classifier = nn.Sequential(
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.LayerNorm(block_channels[-1]),
            nn.Linear(block_channels[-1], block_channels[-1]),
            nn.Tanh(),
            nn.Linear(block_channels[-1], num_classes, bias=False),
        )
        for m in self.modules():
            if isinstance(m, nn.Conv2d | nn.Linear):
                nn.init.normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x: Tensor) -> Any:
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        return self.classifier(x)


@register_model(task="image-classification", family="maxvit", paper=_PAPER, num_params=30_919_624,
                input_size=(3, 224, 224), reference="torchvision")  # fmt: skip
def maxvit_t(**kwargs: Any) -> MaxVit:
    """MaxViT-T as torchvision builds it (224x224 input, 30,919,624 parameters for 1000
    classes; ``input_size`` another size whose block inputs divide by 7)."""
    input_size = kwargs.pop("input_size", (224, 224))
    return MaxVit(input_size=input_size, stem_channels=64, block_channels=[64, 128, 256, 512],
                  block_layers=[2, 2, 5, 2], head_dim=32, stochastic_depth_prob=0.2,
                  partition_size=7, **kwargs)  # fmt: skip
