"""CrossViT (Chen, Fan and Panda, "CrossViT: Cross-Attention Multi-Scale Vision Transformer for
Image Classification", ICCV 2021): Ti, S, B, 9, 15, 18 and the dagger variants (a convolutional
patch embedding), in timm's layout (``timm.models.crossvit``: the keys of
``timm.create_model("crossvit_tiny_240")``'s state dict are this model's).

Two branches see the image at two patch sizes (12 at 240x240, 16 at 224x224: the second input
is resized bicubically, as timm does); after each multi-scale block, each branch's class token
attends to the other branch's patch tokens."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import lucid
from lucid import nn
from lucid.models._registry import classifier
from lucid.models._vit_layers import Block, drop_path, init_timm_weights, to_2tuple

F = nn.functional
_PAPER = (
    'Chen, Fan and Panda, "CrossViT: Cross-Attention Multi-Scale Vision Transformer for Image '
    'Classification", ICCV 2021'
)


class PatchEmbed(nn.Module):
    """Non-overlapping ``patch_size`` patches by a strided conv, or (``multi_conv``, the dagger
    models) by three convs (7x7/4, 3x3/3, 3x3/1 for patch 12; 7x7/4, 3x3/2, 3x3/2 for patch 16)
    with ReLUs between them."""

    def __init__(self, img_size: int | tuple[int, int], patch_size: int, in_chans: int = 3,
                 embed_dim: int = 768, multi_conv: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.img_size = to_2tuple(img_size)
        self.patch_size = to_2tuple(patch_size)
        self.num_patches = (self.img_size[0] // patch_size) * (self.img_size[1] // patch_size)
        self.proj: nn.Module
        if multi_conv:
            if patch_size not in (12, 16):
                raise ValueError(
                    f"multi_conv patch embedding takes patch 12 or 16, got {patch_size}"
                )
            s, p, s3 = (3, 0, 1) if patch_size == 12 else (2, 1, 2)
            self.proj = nn.Sequential(
                nn.Conv2d(in_chans, embed_dim // 4, kernel_size=7, stride=4, padding=3),
                nn.ReLU(inplace=True),
                nn.Conv2d(embed_dim // 4, embed_dim // 2, kernel_size=3, stride=s, padding=p),
                nn.ReLU(inplace=True),
                nn.Conv2d(embed_dim // 2, embed_dim, kernel_size=3, stride=s3, padding=1),
            )
        else:
            self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x: Any) -> Any:
        if tuple(x.shape[-2:]) != self.img_size:
            raise ValueError(
                f"CrossViT's patch embedding expected {self.img_size[0]}x{self.img_size[1]} "
                f"images, got {tuple(x.shape)} (build the model with img_size=...)"
            )
        return self.proj(x).flatten(2).transpose(1, 2)


class CrossAttention(nn.Module):
    """The class token (first token) attends to all tokens: ``(N, T, C)`` to ``(N, 1, C)``."""

    def __init__(self, dim: int, num_heads: int = 8, qkv_bias: bool = False,
                 attn_drop: float = 0.0, proj_drop: float = 0.0) -> None:  # fmt: skip
        super().__init__()
        self.num_heads = num_heads
        self.attn_drop = attn_drop
        self.wq = nn.Linear(dim, dim, bias=qkv_bias)
        self.wk = nn.Linear(dim, dim, bias=qkv_bias)
        self.wv = nn.Linear(dim, dim, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x: Any) -> Any:
        b, n, c = x.shape
        h = self.num_heads
        q = self.wq(x[:, 0:1]).reshape(b, 1, h, c // h).permute(0, 2, 1, 3)
        k = self.wk(x).reshape(b, n, h, c // h).permute(0, 2, 1, 3)
        v = self.wv(x).reshape(b, n, h, c // h).permute(0, 2, 1, 3)
        p = self.attn_drop if self.training else 0.0
        x = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
        return self.proj_drop(self.proj(x.transpose(1, 2).reshape(b, 1, c)))


class CrossAttentionBlock(nn.Module):
    """Pre-norm cross-attention of the class token, with a residual on the class token."""

    def __init__(self, dim: int, num_heads: int, qkv_bias: bool = False, proj_drop: float = 0.0,
                 attn_drop: float = 0.0, drop_path_prob: float = 0.0,
                 norm_layer: Any = nn.LayerNorm) -> None:  # fmt: skip
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = CrossAttention(dim, num_heads, qkv_bias, attn_drop, proj_drop)
        self.drop_path = drop_path(drop_path_prob)

    def forward(self, x: Any) -> Any:
        return x[:, 0:1] + self.drop_path(self.attn(self.norm1(x)))


class MultiScaleBlock(nn.Module):
    """Transformer blocks per branch, then each branch's class token, projected to the other
    branch's width, fuses with the other branch's patch tokens by cross-attention and is
    projected back."""

    def __init__(
        self,
        dim: Sequence[int],
        depth: Sequence[int],
        num_heads: Sequence[int],
        mlp_ratio: Sequence[float],
        qkv_bias: bool,
        proj_drop: float,
        attn_drop: float,
        drop_path_probs: Sequence[float],
        norm_layer: Any,
    ) -> None:
        super().__init__()
        nb = len(dim)
        self.num_branches = nb
        self.blocks = nn.ModuleList()
        for d in range(nb):
            blocks = [Block(dim[d], num_heads[d], mlp_ratio[d], qkv_bias, proj_drop, attn_drop,
                            drop_path_probs[i], norm_layer) for i in range(depth[d])]  # fmt: skip
            if blocks:
                self.blocks.append(nn.Sequential(*blocks))
        self.projs = nn.ModuleList(
            nn.Sequential(norm_layer(dim[d]), nn.GELU(), nn.Linear(dim[d], dim[(d + 1) % nb]))
            for d in range(nb)
        )
        self.fusion = nn.ModuleList()
        for d in range(nb):
            d_ = (d + 1) % nb
            make = partial(CrossAttentionBlock, dim[d_], num_heads[d_], qkv_bias, proj_drop,
                           attn_drop, drop_path_probs[-1], norm_layer)  # fmt: skip
            if depth[-1] == 0:
                self.fusion.append(make())
            else:
                self.fusion.append(nn.Sequential(*[make() for _ in range(depth[-1])]))
        self.revert_projs = nn.ModuleList(
            nn.Sequential(
                norm_layer(dim[(d + 1) % nb]), nn.GELU(), nn.Linear(dim[(d + 1) % nb], dim[d])
            )  # fmt: skip
            for d in range(nb)
        )

    def forward(self, x: list[Any]) -> list[Any]:
        outs_b = [block(x[i]) for i, block in enumerate(self.blocks)]
        cls = [proj(outs_b[i][:, 0:1]) for i, proj in enumerate(self.projs)]
        outs = []
        for i, (fusion, revert) in enumerate(zip(self.fusion, self.revert_projs)):
            other = outs_b[(i + 1) % self.num_branches][:, 1:]
            tmp = fusion(lucid.cat([cls[i], other], 1))
            outs.append(lucid.cat([revert(tmp[:, 0:1]), outs_b[i][:, 1:]], 1))
        return outs


class CrossVit(nn.Module):
    """CrossViT (``timm.models.crossvit.CrossVit``): two ViT branches at two patch sizes that
    exchange class tokens after each multi-scale block; the logits are the mean of the two
    branches' heads on their class tokens. ``depth`` holds, per multi-scale block, the blocks
    of each branch and of the fusion."""

    def __init__(
        self,
        img_size: int = 224,
        img_scale: tuple[float, float] = (1.0, 1.0),
        patch_size: Sequence[int] = (8, 16),
        in_channels: int = 3,
        num_classes: int = 1000,
        embed_dim: Sequence[int] = (192, 384),
        depth: Sequence[Sequence[int]] = ((1, 3, 1), (1, 3, 1), (1, 3, 1)),
        num_heads: Sequence[int] = (6, 12),
        mlp_ratio: Sequence[float] = (2.0, 2.0, 4.0),
        multi_conv: bool = False,
        qkv_bias: bool = True,
        drop_rate: float = 0.0,
        pos_drop_rate: float = 0.0,
        proj_drop_rate: float = 0.0,
        attn_drop_rate: float = 0.0,
        drop_path_rate: float = 0.0,
    ) -> None:
        super().__init__()
        if len(patch_size) != 2 or len(embed_dim) != 2 or len(num_heads) != 2:
            raise ValueError(
                f"CrossVit has two branches: patch_size, embed_dim and num_heads need two entries, "
                f"got {list(patch_size)}, {list(embed_dim)}, {list(num_heads)}"
            )
        self.num_classes = num_classes
        size = to_2tuple(img_size)
        self.img_size_scaled = [(int(size[0] * s), int(size[1] * s)) for s in img_scale]
        patches = [(s[0] // p) * (s[1] // p) for s, p in zip(self.img_size_scaled, patch_size)]
        self.num_branches = 2
        norm_layer = partial(nn.LayerNorm, eps=1e-6)
        self.pos_embed_0 = nn.Parameter(lucid.zeros(1, 1 + patches[0], embed_dim[0]))
        self.cls_token_0 = nn.Parameter(lucid.zeros(1, 1, embed_dim[0]))
        self.pos_embed_1 = nn.Parameter(lucid.zeros(1, 1 + patches[1], embed_dim[1]))
        self.cls_token_1 = nn.Parameter(lucid.zeros(1, 1, embed_dim[1]))
        self.patch_embed = nn.ModuleList(
            PatchEmbed(s, p, in_channels, d, multi_conv)
            for s, p, d in zip(self.img_size_scaled, patch_size, embed_dim)
        )
        self.pos_drop = nn.Dropout(pos_drop_rate)
        total = sum(sum(cfg[-2:]) for cfg in depth)
        dpr = [drop_path_rate * i / max(total - 1, 1) for i in range(total)]
        ptr = 0
        self.blocks = nn.ModuleList()
        for cfg in depth:
            cur = max(cfg[:-1]) + cfg[-1]
            self.blocks.append(
                MultiScaleBlock(
                    embed_dim,
                    cfg,
                    num_heads,
                    mlp_ratio,
                    qkv_bias,
                    proj_drop_rate,
                    attn_drop_rate,
                    dpr[ptr : ptr + cur],
                    norm_layer,
                )  # fmt: skip
            )
            ptr += cur
        self.norm = nn.ModuleList(norm_layer(d) for d in embed_dim)
        self.head_drop = nn.Dropout(drop_rate)
        self.head = nn.ModuleList(nn.Linear(d, num_classes) for d in embed_dim)
        for p in (self.pos_embed_0, self.cls_token_0, self.pos_embed_1, self.cls_token_1):
            nn.init.trunc_normal_(p, std=0.02)
        init_timm_weights(self)

    def forward_features(self, x: Any) -> list[Any]:
        """Each branch's normalised tokens ``(N, 1 + patches, D)``."""
        n = x.shape[0]
        xs = []
        tokens = ((self.cls_token_0, self.pos_embed_0), (self.cls_token_1, self.pos_embed_1))
        for (cls, pos), embed, size in zip(tokens, self.patch_embed, self.img_size_scaled):
            x_ = x
            if tuple(x.shape[-2:]) != size:
                x_ = F.interpolate(x, size=size, mode="bicubic", align_corners=False)
            x_ = lucid.cat([cls.expand(n, -1, -1), embed(x_)], 1)
            xs.append(self.pos_drop(x_ + pos))
        for blk in self.blocks:
            xs = blk(xs)
        return [norm(xs[i]) for i, norm in enumerate(self.norm)]

    def forward(self, x: Any) -> Any:
        xs = [self.head_drop(t[:, 0]) for t in self.forward_features(x)]
        return lucid.stack([head(xs[i]) for i, head in enumerate(self.head)], 0).mean(0)


def _crossvit(dims: tuple[int, int], depth: int, heads: int, mlp: float, multi_conv: bool,
              kwargs: dict[str, Any]) -> CrossVit:  # fmt: skip
    kwargs.setdefault("img_size", 240)
    return CrossVit(img_scale=(1.0, 224 / 240), patch_size=(12, 16), embed_dim=dims,
                    depth=[[1, depth, 0]] * 3, num_heads=(heads, heads),
                    mlp_ratio=(mlp, mlp, 1.0), multi_conv=multi_conv, **kwargs)  # fmt: skip


_cv = partial(classifier, _PAPER, input_size=(3, 240, 240), reference="timm")


@_cv(7_014_800)
def crossvit_tiny_240(**kwargs: Any) -> CrossVit:
    """CrossViT-Ti (dims 96/192, 3 heads), 7,014,800 parameters for 1000 classes."""
    return _crossvit((96, 192), 4, 3, 4.0, False, kwargs)


@_cv(26_856_272)
def crossvit_small_240(**kwargs: Any) -> CrossVit:
    """CrossViT-S (dims 192/384, 6 heads), 26,856,272 parameters for 1000 classes."""
    return _crossvit((192, 384), 4, 6, 4.0, False, kwargs)


@_cv(105_025_232)
def crossvit_base_240(**kwargs: Any) -> CrossVit:
    """CrossViT-B (dims 384/768, 12 heads), 105,025,232 parameters for 1000 classes."""
    return _crossvit((384, 768), 4, 12, 4.0, False, kwargs)


@_cv(8_553_296)
def crossvit_9_240(**kwargs: Any) -> CrossVit:
    """CrossViT-9 (dims 128/256, 3 blocks per branch), 8,553,296 parameters for 1000 classes."""
    return _crossvit((128, 256), 3, 4, 3.0, False, kwargs)


@_cv(27_528_464)
def crossvit_15_240(**kwargs: Any) -> CrossVit:
    """CrossViT-15 (dims 192/384, 5 blocks per branch), 27,528,464 parameters for 1000
    classes."""
    return _crossvit((192, 384), 5, 6, 3.0, False, kwargs)


@_cv(43_271_408)
def crossvit_18_240(**kwargs: Any) -> CrossVit:
    """CrossViT-18 (dims 224/448, 6 blocks per branch), 43,271,408 parameters for 1000
    classes."""
    return _crossvit((224, 448), 6, 7, 3.0, False, kwargs)


@_cv(8_776_592)
def crossvit_9_dagger_240(**kwargs: Any) -> CrossVit:
    """CrossViT-9-dagger (CrossViT-9 with a 3-conv patch embedding), 8,776,592 parameters for
    1000 classes."""
    return _crossvit((128, 256), 3, 4, 3.0, True, kwargs)


@_cv(28_209_008)
def crossvit_15_dagger_240(**kwargs: Any) -> CrossVit:
    """CrossViT-15-dagger (a 3-conv patch embedding), 28,209,008 parameters for 1000 classes."""
    return _crossvit((192, 384), 5, 6, 3.0, True, kwargs)


@_cv(44_266_976)
def crossvit_18_dagger_240(**kwargs: Any) -> CrossVit:
    """CrossViT-18-dagger (a 3-conv patch embedding), 44,266,976 parameters for 1000 classes."""
    return _crossvit((224, 448), 6, 7, 3.0, True, kwargs)
