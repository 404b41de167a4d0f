"""Every (backbone, method) pair builds, runs forward and backward on a tiny batch."""

import pytest
import torch

from autonorm.methods import METHODS, get_method
from autonorm.models import build_model
from autonorm.layers.norms import AutoNorm, gated_norms
from helpers.model_inputs import META, MODEL
from helpers.model_inputs import batch as _batch


@pytest.mark.parametrize("task", sorted(META))
@pytest.mark.parametrize("method", sorted(METHODS))
def test_forward_backward(task, method):
    torch.manual_seed(0)
    model = build_model(META[task], method, MODEL, {"tau": 0.5})
    x, shape = _batch(task)
    out = model(x)
    if task == "image_classification" or task == "sequence_classification":
        shape = (3, META[task]["num_classes"])
    assert out.shape == shape
    out.float().pow(2).mean().backward()
    grads = [p.grad for p in model.parameters() if p.requires_grad]
    assert any(g is not None and g.abs().sum() > 0 for g in grads)


def test_norm_is_one_argument_and_names_selectors():
    vit_ln = build_model(META["image_classification"], "frozen_ln", MODEL)
    vit_an = build_model(META["image_classification"], "autonorm_s", MODEL)
    assert not gated_norms(vit_ln)
    names = sorted(gated_norms(vit_an))
    assert names == ["block0.attn", "block0.mlp", "block1.attn", "block1.mlp"]
    assert all(isinstance(m, AutoNorm) for m in gated_norms(vit_an).values())
    # the final norm stays a static LayerNorm for every method
    assert isinstance(vit_an.encoder.norm, torch.nn.LayerNorm)


def test_selector_params_are_a_tiny_fraction():
    paper = {"dim": 128, "depth": 8, "heads": 4, "mlp_ratio": 2.0, "patch_size": 4}
    meta = {"task": "image_classification", "num_classes": 10, "image": {"channels": 3, "height": 32, "width": 32}}
    ln = build_model(meta, "frozen_ln", paper)
    an = build_model(meta, "autonorm_s", paper)
    sel = sum(p.numel() for n, p in an.named_parameters() if ".selector." in n)
    assert sel == 16 * (128 * 64 + 64 + 64 * 2 + 2)  # 16 selectors: Linear(d, d/2) + Linear(d/2, 2)
    assert sum(p.numel() for p in an.parameters()) > sum(p.numel() for p in ln.parameters())


def test_stochastic_depth_is_linear_in_depth():
    m = build_model(META["image_classification"], "frozen_ln", {**MODEL, "depth": 5, "drop_path": 0.1})
    rates = [b.drop_path.p for b in m.encoder.blocks]
    assert rates == pytest.approx([0.0, 0.025, 0.05, 0.075, 0.1])
    assert all(torch.all(b.ls1.gamma == 1e-4) for b in m.encoder.blocks)


def test_unknown_method():
    with pytest.raises(ValueError, match="unknown method"):
        get_method("batchnorm")


def test_gates_option_widens_autonorm_to_three_candidates():
    from autonorm.layers.norms import AutoNorm3

    meta = META["token_classification"]
    three = build_model(meta, "autonorm_s", MODEL, {"gates": 3})
    assert all(isinstance(m, AutoNorm3) for m in gated_norms(three).values()) and len(gated_norms(three)) == 4
    two = build_model(meta, "autonorm_s", MODEL, {"gates": 2})
    assert not any(isinstance(m, AutoNorm3) for m in gated_norms(two).values())
    # norms without a DyT / LN gate ignore it, as they ignore tau
    assert not gated_norms(build_model(meta, "frozen_ln", MODEL, {"gates": 3}))
    with pytest.raises(ValueError, match="gates must be 2 or 3"):
        build_model(meta, "autonorm", MODEL, {"gates": 4})
