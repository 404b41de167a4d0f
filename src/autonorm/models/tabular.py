"""Feature-token transformer for tabular regression: one token per feature + CLS."""

from __future__ import annotations

import torch
from torch import nn

from .blocks import Encoder


class FeatureTokenizer(nn.Module):
    """token_j = x_j * W_j + b_j: each scalar feature becomes a d-dim token."""

    def __init__(self, num_features: int, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_features, dim) * dim**-0.5)
        self.bias = nn.Parameter(torch.randn(num_features, dim) * dim**-0.5)

    def forward(self, x):
        return x.unsqueeze(-1) * self.weight + self.bias


class TabularTransformer(nn.Module):
    def __init__(self, num_features: int, norm: str, dim: int = 128, depth: int = 12, heads: int = 8,
                 mlp_ratio: float = 2.0, drop_path: float = 0.1, dropout: float = 0.1,
                 layerscale_init: float = 1e-4, norm_options: dict | None = None, **_):
        super().__init__()
        self.tokenizer = FeatureTokenizer(num_features, dim)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.encoder = Encoder(dim, depth, heads, mlp_ratio, norm, norm_options, drop_path, dropout,
                               layerscale_init)
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        t = self.tokenizer(x)
        t = torch.cat([self.cls.expand(t.shape[0], -1, -1), t], dim=1)
        return self.head(self.encoder(t)[:, 0]).squeeze(-1)
