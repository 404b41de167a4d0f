"""ViT-Lite: 4x4 patches, class token, learned positions, pre-norm encoder."""

from __future__ import annotations

import torch
from torch import nn

from .blocks import Encoder


class ViTLite(nn.Module):
    def __init__(self, image_size: int, channels: int, num_classes: int, norm: str,
                 patch_size: int = 4, dim: int = 128, depth: int = 8, heads: int = 4,
                 mlp_ratio: float = 2.0, drop_path: float = 0.1, dropout: float = 0.1,
                 layerscale_init: float = 1e-4, norm_options: dict | None = None, **_):
        super().__init__()
        if image_size % patch_size:
            raise ValueError(f"image size {image_size} is not divisible by patch size {patch_size}")
        n_patches = (image_size // patch_size) ** 2
        self.patch = nn.Conv2d(channels, dim, kernel_size=patch_size, stride=patch_size)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, n_patches + 1, dim) * 0.02)
        self.drop = nn.Dropout(dropout)
        self.encoder = Encoder(dim, depth, heads, mlp_ratio, norm, norm_options, drop_path, dropout,
                               layerscale_init)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)
        x = self.encoder(self.drop(x + self.pos))
        return self.head(x[:, 0])
