"""Each formula of SPEC sections 1-2 against a hand computation."""

import math
from pathlib import Path

import pytest
import torch

from autonorm.layers.norms import (AdaNorm, AutoNorm, AutoNorm3, DyT, FiLMNorm, NormSelector, RandomSelectorNorm,
                            build_norm, freeze_selectors, gate_entropy, NORM_REGISTRY)

ROOT = Path(__file__).resolve().parents[1]


def test_registry_names_and_unknown():
    for name in ["ln", "dyt", "autonorm", "random", "adanorm", "film", "autonorm3"]:
        assert name in NORM_REGISTRY
    with pytest.raises(ValueError, match="unknown norm 'bogus'"):
        build_norm("bogus", 4)


def test_dyt_formula_and_alpha_init():
    m = DyT(2)
    assert m.alpha.item() == 0.5
    with torch.no_grad():
        m.weight.copy_(torch.tensor([1.0, 2.0]))
        m.bias.copy_(torch.tensor([0.0, 1.0]))
    y = m(torch.tensor([[1.0, -2.0]]))
    # tanh(0.5 * 1) = 0.46211716; 2 * tanh(0.5 * -2) + 1 = 2 * -0.76159416 + 1
    assert torch.allclose(y, torch.tensor([[0.46211716, -0.52318831]]), atol=1e-6)


def test_adanorm_output_by_hand():
    x = torch.tensor([[1.0, 2.0, 3.0, 6.0]])
    # mean 3, population std sqrt(14/4) = 1.8708287; y = [-2,-1,0,3]/std; z = y - 0.1 y^2
    z = AdaNorm(4, k=0.1, scale=1.0, eps=0.0)(x)
    assert torch.allclose(z, torch.tensor([[-1.1833308, -0.5630952, 0.0, 1.3464242]]), atol=1e-5)
    z2 = AdaNorm(4, k=0.1, scale=2.0, eps=0.0)(x)
    assert torch.allclose(z2, 2 * z, atol=1e-6)


def test_adanorm_gradient_treats_scale_as_constant():
    x = torch.tensor([[1.0, 2.0, 3.0, 6.0]], requires_grad=True)
    g = torch.tensor([[0.3, -1.0, 0.5, 2.0]])
    (AdaNorm(4, eps=0.0)(x) * g).sum().backward()
    # Hand: z = c * y with c = 1 - 0.1*y held constant, so dL/dy = g * c and
    # dL/dx = (1/s) (u - mean(u) - y * mean(u * y)), u = g * c (the LN jacobian, population std s).
    with torch.no_grad():
        s = math.sqrt(3.5)
        y = (x - 3.0) / s
        u = g * (1 - 0.1 * y)
        expected = (u - u.mean() - y * (u * y).mean()) / s
    assert torch.allclose(x.grad, expected, atol=1e-5)
    # and it differs from the gradient without the detach
    x2 = x.detach().clone().requires_grad_(True)
    mean, std = x2.mean(-1, keepdim=True), x2.std(-1, keepdim=True, unbiased=False)
    y2 = (x2 - mean) / std
    ((1 - 0.1 * y2) * y2 * g).sum().backward()
    assert not torch.allclose(x.grad, x2.grad, atol=1e-3)


def test_film_is_layernorm_at_init():
    torch.manual_seed(0)
    f = FiLMNorm(8)
    x = torch.randn(3, 5, 8)
    ref = torch.nn.functional.layer_norm(x, (8,))
    assert torch.allclose(f(x), ref, atol=1e-6)


def test_gate_entropy_hand_values():
    w = torch.tensor([[0.5, 0.5], [0.9, 0.1], [1.0, 0.0]])
    h = gate_entropy(w)
    assert torch.allclose(h, torch.tensor([math.log(2), 0.32508297, 0.0]), atol=1e-6)


def _set_selector_bias(sel: NormSelector, bias):
    with torch.no_grad():
        sel.mlp[2].weight.zero_()
        sel.mlp[2].bias.copy_(torch.tensor(bias))


def test_autonorm_eval_is_softmax_mix_of_dyt_and_ln():
    torch.manual_seed(0)
    m = AutoNorm(6, tau=0.5).eval()
    # logits [0, 0.5 ln 3] / tau = [0, ln 3] -> w = [1/4, 3/4]
    _set_selector_bias(m.selector, [0.0, 0.5 * math.log(3.0)])
    x = torch.randn(2, 4, 6)
    expected = 0.25 * m.dyt(x) + 0.75 * torch.nn.functional.layer_norm(x, (6,))
    assert torch.allclose(m(x), expected, atol=1e-6)
    w = m.selector(x)
    assert torch.allclose(w, torch.tensor([[0.25, 0.75]] * 2), atol=1e-6)


def test_selector_weights_sum_to_one_and_are_per_sample():
    torch.manual_seed(1)
    for sel in (NormSelector(8, 2), NormSelector(8, 3)):
        x = torch.randn(5, 7, 8)
        for mode in (True, False):
            sel.train(mode)
            w = sel(x)
            assert w.shape == (5, sel.mlp[2].out_features)
            assert torch.allclose(w.sum(-1), torch.ones(5), atol=1e-6)
        assert not torch.allclose(w[0], w[1])  # different samples, different weights


def test_selector_input_is_token_mean():
    sel = NormSelector(4).eval()
    x = torch.randn(2, 3, 4)
    # permuting tokens does not change the token-mean, so it does not change the weights
    assert torch.allclose(sel(x), sel(x[:, [2, 0, 1]]), atol=1e-6)
    assert torch.allclose(sel.logits(x), sel.mlp(x.mean(1)), atol=1e-6)


def test_gumbel_noise_in_training_only():
    torch.manual_seed(0)
    sel = NormSelector(8, tau=0.5)
    x = torch.randn(4, 3, 8)
    sel.train()
    assert not torch.allclose(sel(x), sel(x))  # fresh Gumbel noise each forward
    sel.eval()
    a, b = sel(x), sel(x)
    assert torch.equal(a, b)
    assert torch.allclose(a, torch.softmax(sel.logits(x) / 0.5, -1), atol=1e-6)


def test_frozen_selector_drops_noise_when_asked():
    torch.manual_seed(0)
    x = torch.randn(4, 3, 8)
    for drop in (True, False):
        sel = NormSelector(8, drop_noise_when_frozen=drop).train()
        sel.freeze()
        same = torch.equal(sel(x), sel(x))
        assert same is drop
        assert all(not p.requires_grad for p in sel.parameters())


def test_random_selector_fresh_in_training_half_in_eval():
    torch.manual_seed(0)
    m = RandomSelectorNorm(4)
    x = torch.randn(6, 3, 4)
    m.train()
    w1, w2 = m.weights(x), m.weights(x)
    assert not torch.allclose(w1, w2)
    assert torch.allclose(w1.sum(-1), torch.ones(6))
    assert ((w1 >= 0) & (w1 <= 1)).all() and w1[:, 0].std() > 0  # per sample
    m.eval()
    assert torch.equal(m.weights(x), torch.full((6, 2), 0.5))
    expected = 0.5 * m.dyt(x) + 0.5 * torch.nn.functional.layer_norm(x, (4,))
    assert torch.allclose(m(x), expected, atol=1e-6)


def test_autonorm3_has_three_candidates():
    m = AutoNorm3(8).eval()
    x = torch.randn(2, 3, 8)
    assert m.selector(x).shape == (2, 3)
    assert m(x).shape == x.shape


def test_freeze_selectors_counts_and_stops_grads():
    model = torch.nn.Sequential(AutoNorm(4), AutoNorm(4), torch.nn.LayerNorm(4))
    assert freeze_selectors(model) == 2
    model(torch.randn(2, 3, 4)).sum().backward()
    for m in model[:2]:
        assert all(p.grad is None for p in m.selector.parameters())
        assert m.dyt.weight.grad is not None


# --------------------------------------------------------------------------- ablation options
def test_linear_selector_is_one_affine_map():
    sel = NormSelector(4, 2, capacity="linear").eval()
    assert [type(m) for m in sel.mlp] == [torch.nn.Linear]
    assert sum(p.numel() for p in sel.parameters()) == 4 * 2 + 2
    with torch.no_grad():
        sel.mlp[0].weight.copy_(torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]))
        sel.mlp[0].bias.copy_(torch.tensor([0.0, 0.5]))
    # token-mean of the two tokens = [1, 1, *, *]; logits = [1, 1.5]; / tau 0.5 = [2, 3]
    x = torch.tensor([[[0.0, 2.0, 5.0, 5.0], [2.0, 0.0, -5.0, 1.0]]])
    e = math.exp(1.0)
    torch.testing.assert_close(sel(x), torch.tensor([[1 / (1 + e), e / (1 + e)]]))
    with pytest.raises(ValueError, match="selector capacity"):
        NormSelector(4, capacity="deep")


def test_autonorm_passes_selector_options_and_keeps_default_keys():
    m = AutoNorm(8, selector="linear", hard=True)
    assert m.selector.capacity == "linear" and m.selector.hard
    assert list(m.selector.state_dict()) == ["mlp.0.weight", "mlp.0.bias"]
    m3 = build_norm("autonorm3", 8, selector="linear", hard=True)
    assert m3.selector.mlp[0].out_features == 3 and m3.selector.hard
    d = AutoNorm(8)
    assert d.selector.capacity == "mlp" and not d.selector.hard


def test_hard_selector_is_hard_in_noisy_training_only():
    sel = NormSelector(6, 2, tau=0.5, hard=True)
    _set_selector_bias(sel, [0.0, 0.5 * math.log(3.0)])  # noise-free weights [1/4, 3/4]
    x = torch.randn(2, 3, 6)
    sel.eval()  # evaluation (and so the gate diagnostics and the freeze decision): the soft weights
    torch.testing.assert_close(sel(x), torch.tensor([[0.25, 0.75]] * 2))
    sel.train()
    w = sel(x)
    assert ((w == 0) | (w == 1)).all() and torch.equal(w.sum(-1), torch.ones(2))
    sel.freeze()  # a frozen selector without noise: the soft weights again
    torch.testing.assert_close(sel(x), torch.tensor([[0.25, 0.75]] * 2))


def test_hard_gumbel_in_training_is_one_hot_of_the_soft_sample():
    torch.manual_seed(0)
    soft_sel = NormSelector(8, 3, tau=0.5).train()
    hard_sel = NormSelector(8, 3, tau=0.5, hard=True).train()
    hard_sel.load_state_dict(soft_sel.state_dict())
    x = torch.randn(5, 4, 8)
    torch.manual_seed(3)
    soft = soft_sel(x)
    torch.manual_seed(3)  # the same Gumbel noise
    hard = hard_sel(x)
    assert torch.equal(hard.detach(), torch.nn.functional.one_hot(soft.argmax(-1), 3).float())
    # straight-through: the gradient is the soft sample's
    g = torch.randn(5, 3)
    ga = torch.autograd.grad((soft * g).sum(), soft_sel.mlp[2].bias)[0]
    gb = torch.autograd.grad((hard * g).sum(), hard_sel.mlp[2].bias)[0]
    torch.testing.assert_close(ga, gb)


def test_hard_gates_evaluate_with_soft_weights_as_documented():
    sel = NormSelector(8, 2, tau=0.5, hard=True)
    x = torch.randn(4, 3, 8)
    sel.eval()
    w = sel(x)
    assert not torch.all((w == 0) | (w == 1))  # soft
    assert torch.allclose(w, torch.softmax(sel.logits(x) / 0.5, -1))
    sel.train()
    w = sel(x).detach()  # straight-through one-hot in training
    assert torch.allclose(w, torch.nn.functional.one_hot(w.argmax(-1), 2).float(), atol=1e-6)
    sel.freeze()
    assert torch.allclose(sel(x), torch.softmax(sel.logits(x) / 0.5, -1))  # frozen: soft
    doc = (ROOT / "docs" / "method.md").read_text()
    assert "one-hot of the noise-free argmax" not in doc
    assert "a frozen hard selector" in doc and "evaluation uses the noise-free soft weights" in doc
