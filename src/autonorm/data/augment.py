"""Batched, on-device image augmentation and normalisation.

Why: with whole splits in (GPU) memory, per-sample torchvision transforms
would put Python back in the hot loop.  Random crop (zero padding) and
horizontal flip are expressed as one gather over the padded batch, with the
random offsets and flips drawn as tensors on the batch's device.  MixUp/CutMix
operate on labels as well and live in the trainer.
"""
from __future__ import annotations

from typing import Optional, Sequence, Union

import torch

Number = Union[float, Sequence[float], torch.Tensor]


def random_crop_flip(x: torch.Tensor, pad: int = 4, generator: Optional[torch.Generator] = None,
                     flip: bool = True) -> torch.Tensor:
    """Random ``pad``-pixel-padded crop (same size) and random horizontal flip of an NCHW batch.

    Works for uint8 or float input and returns the same dtype on the same
    device.  ``generator`` must live on ``x.device`` (or be None).  One gather
    does crop and flip together, so the cost is one pass over the batch.
    """
    if x.dim() != 4:
        raise ValueError(f"expected an NCHW batch, got shape {tuple(x.shape)}")
    n, c, h, w = x.shape
    dev = x.device
    if pad > 0:
        xp = x.new_zeros((n, c, h + 2 * pad, w + 2 * pad))
        xp[:, :, pad:pad + h, pad:pad + w] = x
        oy = torch.randint(0, 2 * pad + 1, (n,), generator=generator, device=dev)
        ox = torch.randint(0, 2 * pad + 1, (n,), generator=generator, device=dev)
    else:
        xp = x
        oy = torch.zeros(n, dtype=torch.long, device=dev)
        ox = torch.zeros(n, dtype=torch.long, device=dev)
    ar_h = torch.arange(h, device=dev)
    ar_w = torch.arange(w, device=dev)
    rows = oy[:, None] + ar_h[None, :]  # [N, H]
    cols = ox[:, None] + ar_w[None, :]  # [N, W]
    if flip:
        do_flip = torch.rand(n, generator=generator, device=dev) < 0.5
        cols = torch.where(do_flip[:, None], ox[:, None] + (w - 1 - ar_w)[None, :], cols)
    wp = xp.shape[-1]
    # flat gather over H*W of the padded image, same index for all channels
    flat_idx = (rows[:, :, None] * wp + cols[:, None, :]).reshape(n, 1, h * w).expand(n, c, h * w)
    out = xp.reshape(n, c, -1).gather(2, flat_idx)
    return out.reshape(n, c, h, w)


def _per_channel(v: Number, c: int, device: torch.device) -> torch.Tensor:
    t = torch.as_tensor(v, dtype=torch.float32, device=device).reshape(-1)
    if t.numel() == 1:
        t = t.expand(c)
    if t.numel() != c:
        raise ValueError(f"got {t.numel()} per-channel values for {c} channels")
    return t.view(1, c, 1, 1)


def normalize_images(x_uint8: torch.Tensor, mean: Number, std: Number) -> torch.Tensor:
    """``(x/255 - mean) / std`` per channel, float32 (mean/std on the 0..1 scale, from meta['image'])."""
    c = x_uint8.shape[1]
    x = x_uint8.to(torch.float32).div_(255.0)
    return x.sub_(_per_channel(mean, c, x.device)).div_(_per_channel(std, c, x.device))


def rot90(x: torch.Tensor) -> torch.Tensor:
    """90 degrees counter-clockwise, as used for ``test_rot90`` (docs/data.md)."""
    return torch.rot90(x, 1, dims=(2, 3))
