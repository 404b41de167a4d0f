"""Text encoder: token embedding + learned positions, padding-masked attention.

The key padding mask also reaches every norm, so gates that read a token-mean
(the selectors, FiLM) average over real tokens only: a sentence's outputs do not
depend on how much padding follows it (tests/test_padding.py).

``task="token_classification"`` gives per-token tag logits (POS tagging);
``task="sequence_classification"`` pools (mean over real tokens, or a CLS token).
"""

from __future__ import annotations

import torch
from torch import nn

from .blocks import Encoder


class TextEncoder(nn.Module):
    def __init__(self, vocab_size: int, max_len: int, num_outputs: int, task: str, norm: str,
                 dim: int = 128, depth: int = 12, heads: int = 8, mlp_ratio: float = 2.0,
                 drop_path: float = 0.1, dropout: float = 0.1, layerscale_init: float = 1e-4,
                 pooling: str = "mean", pad_id: int = 0, norm_options: dict | None = None, **_):
        super().__init__()
        if pooling not in ("mean", "cls"):
            raise ValueError(f"pooling must be 'mean' or 'cls', got {pooling!r}")
        self.task, self.pooling, self.pad_id = task, pooling, pad_id
        self.use_cls = task == "sequence_classification" and pooling == "cls"
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=pad_id)
        self.pos = nn.Parameter(torch.randn(1, max_len + int(self.use_cls), dim) * 0.02)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim)) if self.use_cls else None
        self.drop = nn.Dropout(dropout)
        self.encoder = Encoder(dim, depth, heads, mlp_ratio, norm, norm_options, drop_path, dropout,
                               layerscale_init)
        self.head = nn.Linear(dim, num_outputs)

    def forward(self, tokens):
        mask = tokens != self.pad_id
        x = self.embed(tokens)
        if self.use_cls:
            x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)
            mask = torch.cat([mask.new_ones(mask.shape[0], 1), mask], dim=1)
        x = self.encoder(self.drop(x + self.pos[:, : x.shape[1]]), key_padding_mask=mask)
        if self.task == "token_classification":
            return self.head(x)
        if self.use_cls:
            return self.head(x[:, 0])
        m = mask.unsqueeze(-1).to(x.dtype)
        return self.head((x * m).sum(1) / m.sum(1).clamp_min(1.0))
