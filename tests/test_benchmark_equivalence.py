"""The fast norm paths (autonorm.layers.norms: DyT, AutoNorm, Random Selector) against straightforward
reference implementations written here from SPEC 1-2: same outputs and gradients up to float
rounding, in train and eval mode, with the same random numbers drawn (so seeded runs reproduce)."""

import copy

import pytest
import torch
import torch.nn.functional as F

from autonorm.layers import kernels
from autonorm.models import build_model
from autonorm.layers.norms import AutoNorm, DyT, RandomSelectorNorm, freeze_selectors


# --------------------------------------------------------------------------- references (SPEC 1-2)
def ref_dyt(m: DyT, x):
    return m.weight * torch.tanh(m.alpha * x) + m.bias


def ref_ln(m: torch.nn.LayerNorm, x):
    return F.layer_norm(x, (x.shape[-1],), m.weight, m.bias, m.eps)


def ref_selector_weights(sel, x):
    logits = sel.mlp(x.mean(dim=1) if x.dim() == 3 else x)
    if sel.training and not (sel.frozen and sel.drop_noise_when_frozen):
        return F.gumbel_softmax(logits, tau=sel.tau, hard=False, dim=-1)
    return torch.softmax(logits / sel.tau, dim=-1)


def ref_random_weights(m, x):
    b = x.shape[0]
    w = torch.rand(b, dtype=x.dtype) if m.training else torch.full((b,), 0.5, dtype=x.dtype)
    return torch.stack([w, 1 - w], dim=-1)


def ref_gated(m, x):
    w = ref_selector_weights(m.selector, x) if isinstance(m, AutoNorm) else ref_random_weights(m, x)
    shape = (x.shape[0],) + (1,) * (x.dim() - 1)
    return w[:, 0].reshape(shape) * ref_dyt(m.dyt, x) + w[:, 1].reshape(shape) * ref_ln(m.ln, x)


# --------------------------------------------------------------------------- helpers
def _randomise(module, seed=123):
    """Move every parameter off its init so gains, biases and alpha all matter."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=g, dtype=p.dtype))


def _run(fn, module, x, gy, seed):
    """Output, input grad, param grads and the RNG state after one seeded forward+backward."""
    module.zero_grad(set_to_none=True)
    x = x.detach().clone().requires_grad_(True)
    torch.manual_seed(seed)
    y = fn(module, x)
    rng_after = torch.get_rng_state()
    y.backward(gy)
    grads = {n: (p.grad.clone() if p.grad is not None else None) for n, p in module.named_parameters()}
    return y.detach(), x.grad.clone(), grads, rng_after


def _assert_same(a, b, tol):
    ya, gxa, gpa, rnga = a
    yb, gxb, gpb, rngb = b
    assert torch.equal(rnga, rngb), "the fast path drew different random numbers"
    torch.testing.assert_close(ya, yb, rtol=tol, atol=tol)
    torch.testing.assert_close(gxa, gxb, rtol=tol, atol=tol)
    assert gpa.keys() == gpb.keys()
    for n in gpa:
        assert (gpa[n] is None) == (gpb[n] is None), n
        if gpa[n] is not None:
            torch.testing.assert_close(gpa[n], gpb[n], rtol=tol, atol=tol, msg=n)


def fast(m, x):
    with kernels.fast_paths(True):
        return m(x)


CASES = [(torch.float64, 1e-10), (torch.float32, 2e-5)]
SHAPES = [(6, 5, 8), (6, 8), (3, 2, 4, 8)]  # tokens, no tokens (pooled), two token dims


# --------------------------------------------------------------------------- module level
@pytest.mark.parametrize("dtype,tol", CASES)
@pytest.mark.parametrize("shape", SHAPES)
def test_dyt_fast_path_matches_reference(dtype, tol, shape):
    torch.manual_seed(0)
    m = DyT(shape[-1]).to(dtype)
    _randomise(m)
    x, gy = torch.randn(shape, dtype=dtype) * 3, torch.randn(shape, dtype=dtype)
    _assert_same(_run(fast, m, x, gy, 1), _run(ref_dyt, m, x, gy, 1), tol)


@pytest.mark.parametrize("dtype,tol", CASES)
@pytest.mark.parametrize("shape", SHAPES[:2])
@pytest.mark.parametrize("mode", ["train", "eval", "frozen_train", "frozen_noisy_train"])
def test_autonorm_fast_path_matches_reference(dtype, tol, shape, mode):
    torch.manual_seed(0)
    m = AutoNorm(shape[-1], drop_noise_when_frozen=(mode != "frozen_noisy_train")).to(dtype)
    _randomise(m)
    if mode.startswith("frozen"):
        m.selector.freeze()
    m.train(mode != "eval")
    x, gy = torch.randn(shape, dtype=dtype) * 2, torch.randn(shape, dtype=dtype)
    a, b = _run(fast, m, x, gy, 7), _run(ref_gated, m, x, gy, 7)
    _assert_same(a, b, tol)
    if mode == "train":  # the Gumbel noise really is there, and the same in both
        c = _run(fast, m, x, gy, 8)
        assert not torch.allclose(a[0], c[0])


@pytest.mark.parametrize("dtype,tol", CASES)
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_random_selector_fast_path_matches_reference(dtype, tol, mode):
    torch.manual_seed(0)
    m = RandomSelectorNorm(8).to(dtype).train(mode == "train")
    _randomise(m)
    x, gy = torch.randn(6, 5, 8, dtype=dtype), torch.randn(6, 5, 8, dtype=dtype)
    _assert_same(_run(fast, m, x, gy, 3), _run(ref_gated, m, x, gy, 3), tol)


def test_fast_paths_switch_gives_the_straightforward_forms():
    torch.manual_seed(0)
    m = AutoNorm(8)
    _randomise(m)
    x, gy = torch.randn(4, 3, 8), torch.randn(4, 3, 8)

    def slow(mod, inp):
        with kernels.fast_paths(False):
            return mod(inp)

    _assert_same(_run(slow, m, x, gy, 5), _run(ref_gated, m, x, gy, 5), 1e-6)
    assert kernels.FAST_PATHS is True


def test_custom_backward_passes_gradcheck():
    torch.manual_seed(0)
    dyt, ln = DyT(5).double(), torch.nn.LayerNorm(5).double()
    _randomise(dyt)
    _randomise(ln)
    x = torch.randn(3, 4, 5, dtype=torch.double, requires_grad=True)
    w = torch.softmax(torch.randn(3, 2, dtype=torch.double), -1).requires_grad_(True)
    params = (dyt.alpha, dyt.weight, dyt.bias, ln.weight, ln.bias)
    assert torch.autograd.gradcheck(
        lambda x, w, a, gd, bd, gl, bl: kernels._DyTLNMixFunction.apply(x, w, a, gd, bd, gl, bl, 1e-5),
        (x, w) + params)
    assert torch.autograd.gradcheck(lambda x, a, g, b: kernels._DyTFunction.apply(x, a, g, b), (x,) + params[:3])


def test_no_grad_and_partial_grad_paths():
    torch.manual_seed(0)
    m = AutoNorm(8)
    _randomise(m)
    x = torch.randn(4, 3, 8)
    m.eval()
    with torch.no_grad():
        torch.testing.assert_close(m(x), ref_gated(m, x), rtol=1e-5, atol=1e-5)
    # only the input needs a gradient (all parameters frozen, e.g. attacks or saliency)
    for p in m.parameters():
        p.requires_grad_(False)
    xa = x.clone().requires_grad_(True)
    xb = x.clone().requires_grad_(True)
    fast(m, xa).sum().backward()
    ref_gated(m, xb).sum().backward()
    torch.testing.assert_close(xa.grad, xb.grad, rtol=1e-5, atol=1e-5)



@pytest.mark.parametrize("shape", [(6, 5, 16), (6, 16)])
def test_eval_mix_is_bit_identical_to_the_autograd_forward(shape):
    """The no-grad mix writes into its sigmoid buffer; its bits must equal those of the forward
    the training path computes (_DyTLNMixFunction), so evaluation numbers do not move."""
    torch.manual_seed(0)
    m = AutoNorm(shape[-1])
    _randomise(m)
    x = torch.randn(*shape) * 3
    w = torch.softmax(torch.randn(shape[0], 2), -1)
    with torch.no_grad():
        y_eval = kernels.dyt_ln_mix(x, w, m.dyt, m.ln)
    y_train = kernels.dyt_ln_mix(x.clone().requires_grad_(True), w, m.dyt, m.ln)
    assert torch.equal(y_eval, y_train.detach())

def test_parameters_and_state_dict_keys_unchanged():
    m = AutoNorm(8)
    assert list(m.state_dict()) == ["dyt.alpha", "dyt.weight", "dyt.bias", "ln.weight", "ln.bias",
                                    "selector.mlp.0.weight", "selector.mlp.0.bias",
                                    "selector.mlp.2.weight", "selector.mlp.2.bias"]
    assert list(RandomSelectorNorm(8).state_dict()) == ["dyt.alpha", "dyt.weight", "dyt.bias",
                                                        "ln.weight", "ln.bias"]
    assert list(DyT(8).state_dict()) == ["alpha", "weight", "bias"]


# --------------------------------------------------------------------------- model level
@pytest.mark.parametrize("method", ["autonorm_s", "random", "dyt"])
def test_seeded_training_steps_match_the_straightforward_model(method):
    """Two identical models, one on the fast paths and one on the straightforward forms:
    the same seeded training steps (dropout, drop-path, Gumbel noise) give the same losses,
    gradients and weights, and leave the RNG in the same state."""
    meta = {"task": "image_classification", "num_classes": 3,
            "image": {"channels": 1, "height": 8, "width": 8, "mean": [0.5], "std": [0.25]}}
    cfg = dict(dim=16, depth=2, heads=2, mlp_ratio=2.0, patch_size=2, drop_path=0.1, dropout=0.1)
    torch.manual_seed(0)
    model_fast = build_model(meta, method, cfg)
    model_ref = copy.deepcopy(model_fast)
    x, y = torch.randn(5, 1, 8, 8), torch.tensor([0, 1, 2, 0, 1])
    # plain SGD: Adam would blow float-rounding differences in near-zero gradients up to lr-sized steps
    opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (model_fast, model_ref)]
    for step in range(3):
        if step == 2 and method == "autonorm_s":
            freeze_selectors(model_fast)
            freeze_selectors(model_ref)
        losses, rngs = [], []
        for m, opt, on in ((model_fast, opts[0], True), (model_ref, opts[1], False)):
            torch.manual_seed(100 + step)
            with kernels.fast_paths(on):
                loss = F.cross_entropy(m.train()(x), y)
            opt.zero_grad()
            loss.backward()
            losses.append(loss.detach())
            rngs.append(torch.get_rng_state())
        torch.testing.assert_close(losses[0], losses[1], rtol=1e-5, atol=1e-6)
        assert torch.equal(rngs[0], rngs[1])
        for (n, a), b in zip(model_fast.named_parameters(), model_ref.parameters()):
            assert (a.grad is None) == (b.grad is None), n
            if a.grad is not None:  # relative to the tensor's scale: some gradients are ~1e-8
                torch.testing.assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5 * float(b.grad.abs().max()) + 1e-12,
                                           msg=n)
        for opt in opts:
            opt.step()
    for (n, a), (_, b) in zip(model_fast.state_dict().items(), model_ref.state_dict().items()):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5, msg=n)
    with torch.no_grad():
        torch.testing.assert_close(model_fast.eval()(x), model_ref.eval()(x), rtol=1e-4, atol=1e-5)
