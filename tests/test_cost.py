"""Per-run cost: FLOPs per sample with torch's flop formulas, without loading torch's compiler.

The totals must be FlopCounterMode's (the counter the tables used before) for every method and
backbone, a linear layer's must be the hand count, and counting must not import torch._dynamo
(0.9 s of every training job)."""
import subprocess
import sys

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from autonorm.methods import METHODS
from autonorm.models import build_model
from autonorm.run.cost import flops_per_sample
from helpers.model_inputs import META, MODEL
from helpers.model_inputs import batch as _batch


@pytest.mark.parametrize("task", sorted(META))
@pytest.mark.parametrize("method", sorted(METHODS))
def test_the_total_is_torchs_flop_counter(task, method):
    torch.manual_seed(0)
    model = build_model(META[task], method, dict(MODEL), {})
    x, _ = _batch(task)
    ours = flops_per_sample(model, x)
    reference = FlopCounterMode(display=False)
    with torch.no_grad(), reference:
        model.eval()(x[:1])
    assert ours == reference.get_total_flops() > 0


def test_a_linear_layer_is_twice_its_multiply_adds():
    layer = torch.nn.Linear(7, 5)
    assert flops_per_sample(layer, torch.ones(4, 7)) == 2 * 7 * 5  # one sample: 35 multiply-adds
    conv = torch.nn.Conv2d(3, 4, kernel_size=2, stride=2)  # 4 x 4 output positions on 8 x 8
    assert flops_per_sample(conv, torch.ones(2, 3, 8, 8)) == 2 * (4 * 4) * 4 * (3 * 2 * 2)


def test_training_state_is_restored():
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Dropout(0.5)).train()
    flops_per_sample(model, torch.ones(1, 3))
    assert model.training


def test_counting_loads_no_compiler():
    code = ("import sys, torch; from autonorm.run.cost import flops_per_sample; "
            "n = flops_per_sample(torch.nn.Linear(3, 2), torch.ones(1, 3)); "
            "print(n, 'torch._dynamo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["12", "False"]
