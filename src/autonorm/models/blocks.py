"""Pre-norm transformer block with stochastic depth and LayerScale.

Both norms of a block come from ``build_norm(norm_name, dim)``. A gated norm's selector sits per
sub-layer (each norm its own gate, named "block{i}.attn" / "block{i}.mlp" by the gate diagnostics)
or per block (``placement: per_block``: one gate "block{i}" reads the block's input, and both
sub-layers mix their own DyT and LN with its weights).
The key padding mask (True = real token; None for vision and tabular) goes to the
attention and to both norms, so gates that read a token-mean see real tokens only.
"""

from __future__ import annotations

from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from ..layers.norms import GatedNorm, build_norm, norm_layer
from ..methods import PLACEMENTS, UNNAMED_PLACEMENT


class DropPath(nn.Module):
    """Stochastic depth: drop the whole residual branch per sample."""

    def __init__(self, p: float = 0.0):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        keep = 1.0 - self.p
        mask = x.new_empty((x.shape[0],) + (1,) * (x.dim() - 1)).bernoulli_(keep)
        return x * mask / keep


class LayerScale(nn.Module):
    def __init__(self, dim: int, init: float = 1e-4):
        super().__init__()
        self.gamma = nn.Parameter(torch.full((dim,), float(init)))

    def forward(self, x):
        return x * self.gamma


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int, dropout: float = 0.0):
        super().__init__()
        if dim % heads:
            raise ValueError(f"width {dim} is not divisible by {heads} heads")
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.dropout = dropout
        self.proj_drop = nn.Dropout(dropout)

    def forward(self, x, key_padding_mask: torch.Tensor | None = None):
        b, t, d = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attn_mask = None
        if key_padding_mask is not None:  # True = real token
            attn_mask = key_padding_mask[:, None, None, :]
        y = F.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask, dropout_p=self.dropout if self.training else 0.0
        )
        return self.proj_drop(self.proj(y.transpose(1, 2).reshape(b, t, d)))


class MLP(nn.Module):
    def __init__(self, dim: int, hidden: int, dropout: float = 0.0):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return self.drop(self.fc2(self.drop(F.gelu(self.fc1(x)))))


class Block(nn.Module):
    """``norm_layer``: a ready constructor ``dim -> norm`` (:func:`autonorm.layers.norms.norm_layer`), so
    swapping LayerNorm for AutoNorm is one argument and the block never sees a norm's options."""

    def __init__(self, dim: int, heads: int, mlp_ratio: float, norm_layer: Callable[[int], nn.Module],
                 drop_path: float, dropout: float, layerscale_init: float, index: int,
                 placement: str = UNNAMED_PLACEMENT):
        super().__init__()
        self.norm1 = norm_layer(dim)
        # one gate per block: the first norm's gate reads the block input, the second norm has none
        self.shared_gate = placement == "per_block" and isinstance(self.norm1, GatedNorm)
        self.norm1.selector_name = f"block{index}" if self.shared_gate else f"block{index}.attn"
        self.attn = Attention(dim, heads, dropout)
        self.ls1 = LayerScale(dim, layerscale_init)
        self.norm2 = norm_layer(dim, own_gate=False) if self.shared_gate else norm_layer(dim)
        self.norm2.selector_name = f"block{index}" if self.shared_gate else f"block{index}.mlp"
        self.mlp = MLP(dim, int(dim * mlp_ratio), dropout)
        self.ls2 = LayerScale(dim, layerscale_init)
        self.drop_path = DropPath(drop_path)

    def forward(self, x, key_padding_mask=None):
        if self.shared_gate:  # the block's one draw of weights, for both sub-layers
            w = self.norm1.draw(x, key_padding_mask)
            h = self.norm1(x, mask=key_padding_mask, weights=w)
            x = x + self.drop_path(self.ls1(self.attn(h, key_padding_mask)))
            return x + self.drop_path(self.ls2(self.mlp(self.norm2(x, mask=key_padding_mask, weights=w))))
        h = self.norm1(x, mask=key_padding_mask)
        x = x + self.drop_path(self.ls1(self.attn(h, key_padding_mask)))
        return x + self.drop_path(self.ls2(self.mlp(self.norm2(x, mask=key_padding_mask))))


class Encoder(nn.Module):
    """A stack of pre-norm blocks with linearly increasing drop-path, then a final norm."""

    def __init__(self, dim: int, depth: int, heads: int, mlp_ratio: float, norm: str,
                 norm_options: dict | None = None, drop_path: float = 0.1, dropout: float = 0.1,
                 layerscale_init: float = 1e-4, final_norm: str = "ln"):
        super().__init__()
        options = dict(norm_options or {})
        placement = options.pop("placement", UNNAMED_PLACEMENT)  # the blocks' concern, not the norms'
        if placement not in PLACEMENTS:
            raise ValueError(f"selector placement must be one of {PLACEMENTS}, got {placement!r}")
        layer = norm_layer(norm, **options)
        rates = [drop_path * i / max(depth - 1, 1) for i in range(depth)]
        self.blocks = nn.ModuleList(
            Block(dim, heads, mlp_ratio, layer, rates[i], dropout, layerscale_init, i, placement)
            for i in range(depth)
        )
        # The final norm is outside the residual sub-layers, so it stays static (docs/method.md section 1.2).
        self.norm = build_norm(final_norm, dim)

    def forward(self, x, key_padding_mask=None):
        for block in self.blocks:
            x = block(x, key_padding_mask)
        return self.norm(x)
