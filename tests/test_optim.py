"""The optimizer: AdamW with decay groups, computed as torch's foreach implementation computes it;
its updates must be bit for bit those of torch's AdamW (foreach and the per-parameter loop), and
its state must pass to and from torch's (checkpoints)."""

import pytest
import torch

from autonorm.models import build_model
from autonorm.layers.norms import freeze_selectors
from autonorm.run.optim import lr_at, make_optimizer
from helpers.tiny_runs import TINY_MODEL

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


def _torch_adamw(opt, foreach):
    """torch's AdamW over the same groups and settings."""
    groups = [{"params": g["params"], "weight_decay": g["weight_decay"]} for g in opt.param_groups]
    return torch.optim.AdamW(groups, lr=CFG["lr"], foreach=foreach)


@pytest.mark.parametrize("method,freeze_at", [("frozen_ln", None), ("autonorm_s", 10)])
def test_steps_equal_torchs_adamw_bit_for_bit(method, freeze_at):
    """Ours, torch's foreach AdamW and torch's per-parameter loop: the same bits, also when some
    parameters stop getting gradients mid-run (frozen selectors)."""
    runs = []
    for which in ("ours", True, False):
        torch.manual_seed(0)
        model = build_model(META, method, dict(TINY_MODEL), {})
        opt = make_optimizer(model, CFG)
        if which != "ours":
            opt = _torch_adamw(opt, foreach=which)
        runs.append(_steps(model, opt, freeze_at=freeze_at))
    (params_a, state_a), *others = runs
    for params_b, state_b in others:
        assert all(torch.equal(a, b) for a, b in zip(params_a, params_b))
        assert state_a["state"].keys() == state_b["state"].keys()
        for k, s in state_a["state"].items():
            assert all(torch.equal(s[n], state_b["state"][k][n]) for n in ("exp_avg", "exp_avg_sq", "step"))


@pytest.mark.parametrize("direction", ["torch -> ours", "ours -> torch"])
def test_state_dicts_pass_both_ways(direction):
    """A checkpoint written by torch's AdamW (every checkpoint before this optimizer) resumes here,
    and the other way round, with the same bits as an uninterrupted run."""
    def fresh(kind):
        torch.manual_seed(0)
        model = build_model(META, "autonorm_s", dict(TINY_MODEL), {})
        opt = make_optimizer(model, CFG)
        return model, (opt if kind == "ours" else _torch_adamw(opt, foreach=True))

    first, second = ("torch", "ours") if direction == "torch -> ours" else ("ours", "torch")
    model_a, opt_a = fresh(first)
    _steps(model_a, opt_a, n=12)
    model_b, opt_b = fresh(second)
    model_b.load_state_dict(model_a.state_dict())
    opt_b.load_state_dict(torch.load(_saved(opt_a.state_dict()), weights_only=True))
    assert opt_b.param_groups[0]["lr"] == opt_a.param_groups[0]["lr"]
    after_b, _ = _steps(model_b, opt_b, n=12)
    after_a, _ = _steps(model_a, opt_a, n=12)
    assert all(torch.equal(a, b) for a, b in zip(after_a, after_b))


def _saved(state):
    import io
    buf = io.BytesIO()
    torch.save(state, buf)
    buf.seek(0)
    return buf


def test_a_state_of_other_groups_is_refused():
    torch.manual_seed(0)
    opt = make_optimizer(build_model(META, "frozen_ln", dict(TINY_MODEL), {}), CFG)
    other = make_optimizer(build_model(META, "autonorm_s", dict(TINY_MODEL), {}), CFG)
    with pytest.raises(ValueError, match="other parameter groups"):
        opt.load_state_dict(other.state_dict())


def test_building_and_stepping_loads_no_compiler():
    """The point of our AdamW: torch.optim loads torch._dynamo (0.9 s a job); ours does not."""
    import subprocess
    import sys
    code = ("import sys, torch; from autonorm.run.optim import make_optimizer; "
            "m = torch.nn.Linear(3, 2); o = make_optimizer(m, {'lr': 1e-3, 'weight_decay': 0.1}); "
            "m(torch.ones(1, 3)).sum().backward(); o.step(); o.zero_grad(); o.load_state_dict(o.state_dict()); "
            "print('torch._dynamo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


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
