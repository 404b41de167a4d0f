"""Per-run cost: parameters, FLOPs per sample, inference latency per batch."""

from __future__ import annotations

import statistics
import time

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode


def count_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


@torch.no_grad()
def flops_per_sample(model: nn.Module, example: torch.Tensor) -> int:
    """FLOPs of one eval forward on one sample, counted by torch's flop counter
    (matmuls and convolutions; elementwise ops, and so the norms, count as zero)."""
    was_training = model.training
    model.eval()
    counter = FlopCounterMode(display=False)
    with counter:
        model(example[:1])
    model.train(was_training)
    return int(counter.get_total_flops())


def _sync(device: torch.device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@torch.no_grad()
def latency_ms_per_batch(model: nn.Module, batch: torch.Tensor, repeats: int = 10, warmup: int = 2) -> float:
    """Median wall time of one eval forward on ``batch`` after ``warmup`` untimed calls."""
    was_training = model.training
    model.eval()
    for _ in range(warmup):
        model(batch)
    _sync(batch.device)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        model(batch)
        _sync(batch.device)
        times.append((time.perf_counter() - t0) * 1000.0)
    model.train(was_training)
    return statistics.median(times)
