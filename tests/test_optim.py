"""The optimizer: AdamW with decay groups, stepped with torch's foreach implementation, whose
updates must be bit for bit those of torch's per-parameter loop (the CPU default it replaced)."""

import pytest
import torch

from autonorm.models import build_model
from autonorm.layers.norms import freeze_selectors
from autonorm.run.optim import lr_at, make_optimizer
from core_fixtures import TINY_MODEL

META = {"name": "tiny", "task": "image_classification", "family": "vision", "num_classes": 3,
        "image": {"channels": 3, "height": 8, "width": 8, "mean": [0.4] * 3, "std": [0.25] * 3}}
CFG = {"lr": 3e-3, "weight_decay": 0.05}


def _steps(model, opt, n=25, freeze_at=None):
    g = torch.Generator().manual_seed(1)
    for step in range(n):
        if step == freeze_at:
            freeze_selectors(model)  # some parameters stop getting gradients mid-run
        for group in opt.param_groups:
            group["lr"] = lr_at(step, n, 3, CFG["lr"])
        for p in model.parameters():
            p.grad = torch.randn(p.shape, generator=g) * 10 ** float(torch.randint(-4, 0, (), generator=g)) \
                if p.requires_grad else None
        opt.step()
    return [p.detach().clone() for p in model.parameters()], opt.state_dict()


@pytest.mark.parametrize("method,freeze_at", [("frozen_ln", None), ("autonorm_s", 10)])
def test_foreach_steps_equal_the_per_parameter_loop_bit_for_bit(method, freeze_at):
    runs = []
    for foreach in (True, False):
        torch.manual_seed(0)
        model = build_model(META, method, dict(TINY_MODEL), {})
        opt = make_optimizer(model, CFG)
        if not foreach:  # the same groups and settings, torch's per-parameter loop
            groups = [{"params": g["params"], "weight_decay": g["weight_decay"]} for g in opt.param_groups]
            opt = torch.optim.AdamW(groups, lr=CFG["lr"], foreach=False)
        assert opt.param_groups[0]["foreach"] is foreach
        runs.append(_steps(model, opt, freeze_at=freeze_at))
    (params_a, state_a), (params_b, state_b) = runs
    assert all(torch.equal(a, b) for a, b in zip(params_a, params_b))
    for k, s in state_a["state"].items():
        assert all(torch.equal(s[n], state_b["state"][k][n]) for n in ("exp_avg", "exp_avg_sq", "step"))


def test_decay_groups():
    model = build_model(META, "autonorm_s", dict(TINY_MODEL), {})
    decay, no_decay = make_optimizer(model, CFG).param_groups
    assert decay["weight_decay"] == 0.05 and no_decay["weight_decay"] == 0.0
    names = {id(p): n for n, p in model.named_parameters()}
    assert all(p.dim() >= 2 for p in decay["params"])  # matrices only
    no_decay_names = {names[id(p)] for p in no_decay["params"]}
    assert any(n.endswith("alpha") for n in no_decay_names)  # DyT's scalar
    assert any("pos" in n for n in no_decay_names)  # position embeddings, though 2-D or more
    assert len(decay["params"]) + len(no_decay["params"]) == len(list(model.parameters()))
