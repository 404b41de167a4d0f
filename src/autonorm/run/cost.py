"""Per-run cost: parameters, FLOPs per sample, inference latency per batch."""

from __future__ import annotations

import statistics
import time

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry


def count_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


class _CountFlops(TorchDispatchMode):
    """The total of torch's flop counter (``FlopCounterMode``): the same formulas (its registry)
    applied to every aten op of a forward pass, without its per-module breakdown.

    Why not ``FlopCounterMode`` itself: torch wraps every dispatch mode's handler so that its
    compiler skips it, and that wrapper imports the compiler (``torch._dynamo``), 0.9 s of every
    training job; nothing compiles this mode, so it opts out (tests/test_cost.py checks the
    totals against FlopCounterMode's for every method and backbone)."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False

    def __init__(self):
        super().__init__()
        self.total = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        formula = flop_registry.get(func._overloadpacket)
        if formula is not None:
            self.total += formula(*args, **kwargs, out_val=out)
        return out


@torch.no_grad()
def flops_per_sample(model: nn.Module, example: torch.Tensor) -> int:
    """FLOPs of one eval forward on one sample, counted with torch's flop formulas
    (matmuls and convolutions; elementwise ops, and so the norms, count as zero)."""
    was_training = model.training
    model.eval()
    counter = _CountFlops()
    with counter:
        model(example[:1])
    model.train(was_training)
    return int(counter.total)


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
