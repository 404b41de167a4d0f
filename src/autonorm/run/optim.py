"""The learning-rate schedule and the optimizer with its weight-decay groups."""

from __future__ import annotations

import math

import torch
from torch import nn


def lr_at(step: int, total_steps: int, warmup_steps: int, base_lr: float, min_lr: float = 0.0) -> float:
    """Linear warm-up to base_lr, then cosine decay to min_lr."""
    if warmup_steps > 0 and step < warmup_steps:
        return base_lr * (step + 1) / warmup_steps
    progress = (step - warmup_steps) / max(total_steps - warmup_steps, 1)
    progress = min(max(progress, 0.0), 1.0)
    return min_lr + 0.5 * (base_lr - min_lr) * (1.0 + math.cos(math.pi * progress))


def make_optimizer(model: nn.Module, cfg: dict) -> "AdamW":
    """AdamW; biases, norm parameters, scalars, tokens and positions get no weight decay."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.dim() < 2 or "pos" in name or "cls" in name or ".norm" in name else decay).append(p)
    groups = [{"params": decay, "weight_decay": cfg["weight_decay"]},
              {"params": no_decay, "weight_decay": 0.0}]
    return AdamW(groups, lr=cfg["lr"], betas=tuple(cfg.get("betas", (0.9, 0.999))))


class AdamW:
    """AdamW as torch's multi-tensor (``foreach``) implementation computes it, bit for bit: the same
    foreach kernels in the same order (tests/test_optim.py compares the parameters and the state
    after many steps), and the same ``state_dict`` layout, so checkpoints pass both ways.

    Why not ``torch.optim.AdamW``: every ``torch.optim`` optimizer imports torch's compiler
    (``torch._dynamo``) when it is built (its methods are wrapped to keep the compiler out), 0.9 s
    of every training job on a 2-core box, a fifth of a smoke run's job; nothing here compiles the
    optimizer. What it leaves out: amsgrad, maximize, capturable, fused, complex and sparse
    parameters (none of them used here).
    """

    def __init__(self, groups: list[dict], lr: float, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2):
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay}
        self.param_groups = [{**defaults, **g, "params": list(g["params"])} for g in groups]
        self.state: dict[torch.Tensor, dict[str, torch.Tensor]] = {}

    def _params(self):
        return [p for g in self.param_groups for p in g["params"]]

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self._params():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad.detach_().zero_()

    @torch.no_grad()
    def step(self) -> None:
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            for p in params:
                if p.grad.is_sparse:
                    raise RuntimeError("AdamW does not support sparse gradients")
                if p not in self.state:
                    self.state[p] = {"step": torch.tensor(0.0, dtype=torch.float32),
                                     "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
                                     "exp_avg_sq": torch.zeros_like(p, memory_format=torch.preserve_format)}
            grads = [p.grad for p in params]
            exp_avgs = [self.state[p]["exp_avg"] for p in params]
            exp_avg_sqs = [self.state[p]["exp_avg_sq"] for p in params]
            steps = [self.state[p]["step"] for p in params]
            lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            torch._foreach_add_(steps, torch.tensor(1.0), alpha=1.0)
            if wd != 0:
                torch._foreach_mul_(params, 1 - lr * wd)
            torch._foreach_lerp_(exp_avgs, grads, 1 - beta1)
            torch._foreach_mul_(exp_avg_sqs, beta2)
            torch._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)
            counts = [s.item() for s in steps]
            bias_correction1 = [1 - beta1 ** t for t in counts]
            bias_correction2 = [1 - beta2 ** t for t in counts]
            step_size = [(lr / bc) * -1 for bc in bias_correction1]
            denom = torch._foreach_sqrt(exp_avg_sqs)
            torch._foreach_div_(denom, [bc ** 0.5 for bc in bias_correction2])
            torch._foreach_add_(denom, eps)
            torch._foreach_addcdiv_(params, exp_avgs, denom, step_size)

    # torch.optim's layout: parameters by their position over the groups
    _FLAGS = {"amsgrad": False, "foreach": True, "maximize": False, "capturable": False,
              "differentiable": False, "fused": None, "decoupled_weight_decay": True}

    def state_dict(self) -> dict:
        index = {p: i for i, p in enumerate(self._params())}
        groups, start = [], 0
        for g in self.param_groups:
            groups.append({**{k: v for k, v in g.items() if k != "params"}, **self._FLAGS,
                           "params": list(range(start, start + len(g["params"])))})
            start += len(g["params"])
        return {"state": {index[p]: dict(s) for p, s in self.state.items()}, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        saved = state_dict["param_groups"]
        if [len(g["params"]) for g in saved] != [len(g["params"]) for g in self.param_groups]:
            raise ValueError("the optimizer state has other parameter groups than this model's optimizer")
        params = self._params()
        for g, s in zip(self.param_groups, saved):
            g.update({k: (tuple(v) if k == "betas" else v) for k, v in s.items()
                      if k in ("lr", "betas", "eps", "weight_decay")})
        self.state = {}
        for i, s in state_dict["state"].items():
            p = params[int(i)]
            self.state[p] = {k: (v.clone() if k == "step" else v.to(device=p.device, dtype=p.dtype).clone())
                             for k, v in s.items()}
