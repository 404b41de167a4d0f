"""Normalization layers, chosen by name from one registry.

Every backbone builds its norms with ``build_norm(name, dim, **options)`` so that
swapping LayerNorm for AutoNorm is one argument (the timm discipline).

The formulas (the paper's, with its open choices made explicit):
    DyT(x)      = gamma * tanh(alpha * x) + beta          alpha init 0.5
    AutoNorm(x) = w_DyT(x) * DyT(x) + w_LN(x) * LN(x)      w from a NormSelector
    AdaNorm(x)  = C * (1 - k*y) * y,  y = (x - mean)/(std + eps), (1 - k*y) detached
    FiLM(x)     = LN(x) * (1 + gamma(c)) + beta(c),  c = token-mean of x
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

NORM_REGISTRY: dict[str, Callable[..., nn.Module]] = {}


def register_norm(name: str):
    def deco(cls):
        NORM_REGISTRY[name] = cls
        return cls

    return deco


def norm_options_of(name: str) -> tuple[str, ...]:
    """The options the norm registered under ``name`` takes (its constructor's keywords)."""
    params = inspect.signature(NORM_REGISTRY[name]).parameters
    return tuple(p for p in params if p != "dim")


def norm_layer(name: str, **options) -> Callable[[int], nn.Module]:
    """A ready constructor ``dim -> norm`` (as timm's ``norm_layer``): ``options`` is the run's
    whole ``norm_options`` block, and each norm receives only the options it takes (only
    AutoNorm sees ``tau``). An option that no norm takes is a typo, and an error."""
    if name not in NORM_REGISTRY:
        raise ValueError(f"unknown norm {name!r}; known: {sorted(NORM_REGISTRY)}")
    known = {o for n in NORM_REGISTRY for o in norm_options_of(n)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ValueError(f"unknown norm option(s) {unknown}; the norms take {sorted(known)}")
    mine = norm_options_of(name)
    return functools.partial(NORM_REGISTRY[name], **{k: v for k, v in options.items() if k in mine})


def build_norm(name: str, dim: int, **options) -> nn.Module:
    """Build the norm registered under ``name`` for feature size ``dim`` (:func:`norm_layer`)."""
    return norm_layer(name, **options)(dim)


def token_mean(x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Mean over tokens: (B, T, d) -> (B, d); (B, d) inputs pass through.

    ``mask`` (B, T), True on real tokens, restricts the mean to real tokens, so a
    sentence's gate does not depend on how much padding follows it. A row with no
    real token gives zeros. Without a mask (vision, tabular) every token counts.
    """
    if x.dim() != 3:
        return x
    if mask is None:
        return x.mean(dim=1)
    m = mask.to(x.dtype).unsqueeze(-1)  # (B, T, 1)
    return (x * m).sum(dim=1) / m.sum(dim=1).clamp_min(1.0)


def gate_entropy(w: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
    """Per-sample gating entropy H = -sum_i w_i ln w_i over the last dim (nats)."""
    return -(w * torch.log(w.clamp_min(eps))).sum(dim=-1)


# --------------------------------------------------------------------------- fast paths
# The straightforward forms (``weight * tanh(alpha * x) + bias`` and
# ``w_DyT * DyT(x) + w_LN * LN(x)`` through autograd) cost several full passes
# over the activations each way, and ``torch.tanh`` on CPU measured about six times
# slower than ``torch.sigmoid`` when these were written (2026-11-29; on the box of
# 2026-11-30 it was 0.37 ms against 0.51 ms: benchmarks/LOG.md). The sigmoid form
# stays either way: changing it would change every output's bits. The functions below
# compute the same math with fewer passes and a hand-written backward:
#   tanh(z) = 2 * sigmoid(2 z) - 1,  so  g * tanh(a x) + b = (2 g) * s + (b - g),  s = sigmoid(2 a x)
#   d tanh(z) / dz = 1 - tanh(z)^2 = 4 s (1 - s)
# They consume no random numbers (the selector's Gumbel noise is drawn before,
# exactly as before) and differ from the straightforward forms only by float
# rounding; tests/test_benchmark_equivalence.py checks outputs and gradients.


FAST_PATHS = True  # False: every norm runs its straightforward autograd form (benchmarks compare both)


@contextlib.contextmanager
def fast_paths(enabled: bool):
    """Temporarily switch the fast paths on or off (for benchmarks and equivalence tests)."""
    global FAST_PATHS
    old, FAST_PATHS = FAST_PATHS, bool(enabled)
    try:
        yield
    finally:
        FAST_PATHS = old


def _use_fast_paths() -> bool:
    # Under torch.compile the straightforward forms are traced instead: the compiler fuses their
    # elementwise ops itself, and the hand-written backward would only get in its way.
    return FAST_PATHS and not torch.compiler.is_compiling()


def _sample_shape(w_col: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """A per-sample (B,) column broadcast over every dim of x but the batch."""
    return w_col.reshape((x.shape[0],) + (1,) * (x.dim() - 1))


def _token_sum(z: torch.Tensor) -> torch.Tensor:
    """(B, ..., d) -> (B, d): sum over every dim between batch and features."""
    return z.sum(tuple(range(1, z.dim() - 1))) if z.dim() > 2 else z


def _feature_sum(z: torch.Tensor) -> torch.Tensor:
    """(..., d) -> (d,): sum over every dim but the features."""
    return z.reshape(-1, z.shape[-1]).sum(0)


class _DyTFunction(torch.autograd.Function):
    """y = weight * tanh(alpha * x) + bias, computed as (2 weight) * s + (bias - weight)."""

    @staticmethod
    def forward(ctx, x, alpha, weight, bias):
        s = _sigmoid_2ax(x, alpha)
        ctx.save_for_backward(x, alpha, weight, s)
        return torch.addcmul(bias - weight, 2.0 * weight, s)

    @staticmethod
    def backward(ctx, gy):
        x, alpha, weight, s = ctx.saved_tensors
        need_x, need_a, need_w, need_b = ctx.needs_input_grad
        gx = g_a = g_w = g_b = None
        buf = torch.mul(gy, s)  # the one full-size scratch buffer, reused below
        if need_w or need_b:
            g_b = _feature_sum(gy)
            g_w = 2.0 * _feature_sum(buf) - g_b  # sum of gy * tanh(alpha x)
        if need_x or need_a:
            gz = _tanh_grad(gy, 4.0 * weight, s, out=buf)  # dL/d(alpha x)
            if need_a:
                g_a = torch.dot(gz.reshape(-1), x.reshape(-1)).reshape(alpha.shape)
            if need_x:
                gx = gz.mul_(alpha)
        return gx, g_a, (g_w if need_w else None), (g_b if need_b else None)


def _sigmoid_2ax(x: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    """s = sigmoid(2 alpha x), so tanh(alpha x) = 2 s - 1 (one new buffer)."""
    return torch.mul(x, 2.0 * alpha).sigmoid_()


def _layer_norm0(x: torch.Tensor, eps: float):
    """(xhat, mean, rstd) of LayerNorm without affine. Passing weight 1 and bias 0 gives the
    same xhat bit for bit and takes torch's vectorised CPU kernel (the weightless one is ~2x slower)."""
    d = x.shape[-1]
    return torch.native_layer_norm(x, (d,), x.new_ones(d), x.new_zeros(d), eps)


def _tanh_grad(gy: torch.Tensor, scale: torch.Tensor, s: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """dL/dz of y = (scale / 4) * tanh(z) given s = sigmoid(2 z): gy * scale * s * (1 - s), into ``out``."""
    torch.mul(gy, scale, out=out)
    return torch.ops.aten.sigmoid_backward.grad_input(out, s, grad_input=out)


def dyt_forward(x: torch.Tensor, alpha: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """DyT(x) = weight * tanh(alpha * x) + bias (the fast path of ``DyT.forward``)."""
    if torch.is_grad_enabled() and (x.requires_grad or alpha.requires_grad or weight.requires_grad
                                    or bias.requires_grad):
        return _DyTFunction.apply(x, alpha, weight, bias)
    return torch.addcmul(bias - weight, 2.0 * weight, _sigmoid_2ax(x, alpha))


class _DyTLNMixFunction(torch.autograd.Function):
    """y = w_DyT * (gd * tanh(alpha x) + bd) + w_LN * (gl * xhat + bl), w per sample (B, 2).

    With A = w_DyT gd, C = w_LN gl (per sample and feature), s = sigmoid(2 alpha x) and
    xhat = (x - mean) * rstd:  y = (2A) * s + C * xhat + (w_DyT (bd - gd) + w_LN bl).
    """

    @staticmethod
    def forward(ctx, x, w, alpha, gd, bd, gl, bl, eps):
        s = _sigmoid_2ax(x, alpha)
        xhat, mean, rstd = _layer_norm0(x, eps)
        y = _mix(x, w, gd, bd, gl, bl, s, xhat)
        ctx.save_for_backward(x, w, alpha, gd, bd, gl, bl, s, xhat, mean, rstd)
        return y

    @staticmethod
    def backward(ctx, gy):
        x, w, alpha, gd, bd, gl, bl, s, xhat, mean, rstd = ctx.saved_tensors
        need_x, need_w, need_a, need_gd, need_bd, need_gl, need_bl, _ = ctx.needs_input_grad
        wd, wl = _sample_shape(w[:, 0], x), _sample_shape(w[:, 1], x)
        gw = g_a = g_gd = g_bd = g_gl = g_bl = gx = None
        buf = torch.empty_like(gy, memory_format=torch.contiguous_format)  # one scratch buffer, reused
        if need_w or need_gd or need_bd or need_gl or need_bl:
            wd2, wl2 = w[:, 0:1], w[:, 1:2]  # (B, 1)
            g_bias = _token_sum(gy)  # (B, d): dL/d(per-sample bias)
            g_t = 2.0 * _token_sum(torch.mul(gy, s, out=buf)) - g_bias  # token-sum of gy * tanh(alpha x)
            g_xh = _token_sum(torch.mul(gy, xhat, out=buf))
            if need_w:
                gw = torch.stack([(g_t * gd + g_bias * bd).sum(-1), (g_xh * gl + g_bias * bl).sum(-1)], dim=-1)
            g_gd = (g_t * wd2).sum(0) if need_gd else None
            g_bd = (g_bias * wd2).sum(0) if need_bd else None
            g_gl = (g_xh * wl2).sum(0) if need_gl else None
            g_bl = (g_bias * wl2).sum(0) if need_bl else None
        if need_x:
            gx = torch.ops.aten.native_layer_norm_backward(torch.mul(gy, wl * gl, out=buf), x, (x.shape[-1],),
                                                           mean, rstd, None, None, [True, False, False])[0]
        if need_x or need_a:
            gz = _tanh_grad(gy, 4.0 * (wd * gd), s, out=buf)  # dL/d(alpha x)
            if need_a:
                g_a = torch.dot(gz.reshape(-1), x.reshape(-1)).reshape(alpha.shape)
            if need_x:
                gx.addcmul_(gz, alpha)
        return gx, gw, g_a, g_gd, g_bd, g_gl, g_bl, None


def _mix(x, w, gd, bd, gl, bl, s, xhat, out=None):
    wd, wl = _sample_shape(w[:, 0], x), _sample_shape(w[:, 1], x)
    y = torch.addcmul(wd * (bd - gd) + wl * bl, 2.0 * (wd * gd), s, out=out)
    return y.addcmul_(wl * gl, xhat)


def dyt_ln_mix(x: torch.Tensor, w: torch.Tensor, dyt: "DyT", ln: nn.LayerNorm) -> torch.Tensor:
    """``w[:, 0] * dyt(x) + w[:, 1] * ln(x)`` with per-sample weights w (B, 2), in few passes."""
    args = (x, w, dyt.alpha, dyt.weight, dyt.bias, ln.weight, ln.bias)
    if torch.is_grad_enabled() and any(a.requires_grad for a in args):
        return _DyTLNMixFunction.apply(*args, ln.eps)
    # No autograd: the same arithmetic as _mix, element for element, written into s's buffer
    # instead of a third full-size tensor (evaluation allocates what a LayerNorm does, plus two).
    s = _sigmoid_2ax(x, dyt.alpha)
    xhat = _layer_norm0(x, ln.eps)[0]
    return _mix(x, w, dyt.weight, dyt.bias, ln.weight, ln.bias, s, xhat, out=s)


@register_norm("ln")
class LayerNorm(nn.LayerNorm):
    """Standard LayerNorm(d) with affine weight and bias (the FrozenLN baseline)."""

    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__(dim, eps=eps)

    def forward(self, x, mask=None):  # per token: padding cannot leak in, so the mask is unused
        return super().forward(x)


@register_norm("rms")
class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x, mask=None):  # per token: the mask is unused
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


@register_norm("dyt")
class DyT(nn.Module):
    """Dynamic Tanh (Zhu et al. 2025): gamma * tanh(alpha * x) + beta."""

    def __init__(self, dim: int, alpha_init: float = 0.5):
        super().__init__()
        self.alpha = nn.Parameter(torch.tensor(float(alpha_init)))
        self.weight = nn.Parameter(torch.ones(dim))  # gamma
        self.bias = nn.Parameter(torch.zeros(dim))  # beta

    def forward(self, x, mask=None):  # per token: the mask is unused
        if _use_fast_paths():  # the same math in fewer passes (see dyt_forward)
            return dyt_forward(x, self.alpha, self.weight, self.bias)
        return self.weight * torch.tanh(self.alpha * x) + self.bias


@register_norm("adanorm")
class AdaNorm(nn.Module):
    """AdaNorm (Xu et al. 2019): no gain or bias; the scale (1 - k*y) is detached."""

    def __init__(self, dim: int, k: float = 0.1, scale: float = 1.0, eps: float = 1e-5):
        super().__init__()
        self.k, self.scale, self.eps = k, scale, eps

    def forward(self, x, mask=None):  # per token: the mask is unused
        mean = x.mean(-1, keepdim=True)
        std = x.std(-1, keepdim=True, unbiased=False)
        y = (x - mean) / (std + self.eps)
        return self.scale * (1.0 - self.k * y).detach() * y


@register_norm("film")
class FiLMNorm(nn.Module):
    """LN modulated by its own token-mean: LN(x) * (1 + gamma(c)) + beta(c).

    The projection is zero-initialised, so at init FiLM is exactly LN. ``c`` is the
    mean over real tokens when a padding mask is given.
    """

    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.ln = nn.LayerNorm(dim, eps=eps)
        self.film = nn.Linear(dim, 2 * dim)
        nn.init.zeros_(self.film.weight)
        nn.init.zeros_(self.film.bias)

    def forward(self, x, mask=None):
        gamma, beta = self.film(token_mean(x, mask)).chunk(2, dim=-1)
        if x.dim() == 3:
            gamma, beta = gamma.unsqueeze(1), beta.unsqueeze(1)
        return self.ln(x) * (1.0 + gamma) + beta


SELECTOR_CAPACITIES = ("mlp", "linear")


class NormSelector(nn.Module):
    """Two-layer MLP on the token-mean that outputs per-sample mixing weights.

    Training: soft Gumbel-Softmax with fixed temperature tau. Evaluation (or a
    frozen selector with ``drop_noise_when_frozen``): softmax(logits / tau).

    Options for the paper's ablations:
    ``capacity="linear"`` replaces the MLP by one ``Linear(d, n)``; ``hard=True``
    draws the straight-through Gumbel-Softmax in training (forward one-hot of the
    noisy sample, backward through its soft weights). ``hard`` changes only that
    noisy training sample: evaluation, the gate diagnostics and the freeze decision
    read softmax(logits / tau) as for the soft gate (ours: the paper's ablation is
    about gating in training, and a one-hot would show entropy 0 whatever the logits).
    """

    def __init__(self, dim: int, num_choices: int = 2, tau: float = 0.5,
                 drop_noise_when_frozen: bool = True, capacity: str = "mlp", hard: bool = False):
        super().__init__()
        if capacity not in SELECTOR_CAPACITIES:
            raise ValueError(f"selector capacity must be one of {SELECTOR_CAPACITIES}, got {capacity!r}")
        if capacity == "mlp":
            hidden = max(dim // 2, 1)
            self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, num_choices))
        else:  # kept in a Sequential under the same name, so code reading mlp[-1] works for both
            self.mlp = nn.Sequential(nn.Linear(dim, num_choices))
        self.capacity, self.hard = capacity, bool(hard)
        self.tau = tau
        self.drop_noise_when_frozen = drop_noise_when_frozen
        self.frozen = False

    def logits(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        return self.mlp(token_mean(x, mask))

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        logits = self.logits(x, mask)
        noisy = self.training and not (self.frozen and self.drop_noise_when_frozen)
        if noisy:
            return F.gumbel_softmax(logits, tau=self.tau, hard=self.hard, dim=-1)
        return torch.softmax(logits / self.tau, dim=-1)

    def freeze(self) -> None:
        """Stop learning: no gradients, so AdamW applies neither update nor decay."""
        self.frozen = True
        for p in self.parameters():
            p.requires_grad_(False)
            p.grad = None


class GatedNorm(nn.Module):
    """Base for norms that mix candidate norms with per-sample weights.

    ``record`` makes the layer keep the last weights (detached) for the gate
    diagnostics; it is off during training steps so the hot path pays nothing.
    """

    choice_names: tuple[str, ...] = ()
    # True where the candidates are exactly [self.dyt(x), self.ln(x)]: forward then uses
    # ``dyt_ln_mix`` (the same math as the generic loop below, in fewer passes). A subclass
    # that changes ``candidates`` must set it back to False (AutoNorm3 does).
    fused_dyt_ln: bool = False

    def __init__(self):
        super().__init__()
        self.record = False
        self.last_weights: torch.Tensor | None = None

    def weights(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:  # (B, n_choices)
        raise NotImplementedError

    def candidates(self, x: torch.Tensor) -> list[torch.Tensor]:
        raise NotImplementedError

    def forward(self, x, mask=None):
        """``mask`` (B, T), True on real tokens: the gate reads the mean over real tokens only."""
        w = self.weights(x, mask)
        if self.record:
            self.last_weights = w.detach()
        if self.fused_dyt_ln and _use_fast_paths():
            return dyt_ln_mix(x, w, self.dyt, self.ln)
        outs = self.candidates(x)
        shape = (w.shape[0],) + (1,) * (x.dim() - 1)
        y = w[:, 0].reshape(shape) * outs[0]
        for i in range(1, len(outs)):
            y = y + w[:, i].reshape(shape) * outs[i]
        return y


@register_norm("autonorm")
class AutoNorm(GatedNorm):
    """w_DyT(x) * DyT(x) + w_LN(x) * LN(x); weights index 0 = DyT, 1 = LN."""

    choice_names = ("dyt", "ln")
    fused_dyt_ln = True

    def __init__(self, dim: int, tau: float = 0.5, alpha_init: float = 0.5,
                 drop_noise_when_frozen: bool = True, selector: str = "mlp", hard: bool = False):
        super().__init__()
        self.dyt = DyT(dim, alpha_init=alpha_init)
        self.ln = nn.LayerNorm(dim)
        self.selector = NormSelector(dim, 2, tau=tau, drop_noise_when_frozen=drop_noise_when_frozen,
                                     capacity=selector, hard=hard)

    def weights(self, x, mask=None):
        return self.selector(x, mask)

    def candidates(self, x):
        return [self.dyt(x), self.ln(x)]


@register_norm("autonorm3")
class AutoNorm3(AutoNorm):
    """Three-way gate over DyT / LN / RMSNorm (the paper's PTB variant)."""

    choice_names = ("dyt", "ln", "rms")
    fused_dyt_ln = False

    def __init__(self, dim: int, tau: float = 0.5, alpha_init: float = 0.5,
                 drop_noise_when_frozen: bool = True, selector: str = "mlp", hard: bool = False):
        super().__init__(dim, tau=tau, alpha_init=alpha_init)
        self.rms = RMSNorm(dim)
        self.selector = NormSelector(dim, 3, tau=tau, drop_noise_when_frozen=drop_noise_when_frozen,
                                     capacity=selector, hard=hard)

    def candidates(self, x):
        return [self.dyt(x), self.ln(x), self.rms(x)]


@register_norm("random")
class RandomSelectorNorm(GatedNorm):
    """w_DyT ~ U(0,1) fresh per sample at every training forward; 0.5/0.5 in eval."""

    choice_names = ("dyt", "ln")
    fused_dyt_ln = True

    def __init__(self, dim: int, alpha_init: float = 0.5):
        super().__init__()
        self.dyt = DyT(dim, alpha_init=alpha_init)
        self.ln = nn.LayerNorm(dim)

    def weights(self, x, mask=None):  # draws no token-mean: the mask is unused
        b = x.shape[0]
        if self.training:
            w_dyt = torch.rand(b, device=x.device, dtype=x.dtype)
        else:
            w_dyt = torch.full((b,), 0.5, device=x.device, dtype=x.dtype)
        return torch.stack([w_dyt, 1.0 - w_dyt], dim=-1)

    def candidates(self, x):
        return [self.dyt(x), self.ln(x)]


def gated_norms(model: nn.Module) -> dict[str, GatedNorm]:
    """Named gated norms of a model, keyed by their ``selector_name``."""
    out = {}
    for module in model.modules():
        if isinstance(module, GatedNorm):
            out[getattr(module, "selector_name", str(len(out)))] = module
    return out


def selectors(model: nn.Module) -> dict[str, NormSelector]:
    """Learned selectors only (AutoNorm / AutoNorm-3), keyed by selector name."""
    return {n: m.selector for n, m in gated_norms(model).items() if hasattr(m, "selector")}


@contextlib.contextmanager
def recording_gates(model: nn.Module):
    """Yield the model's learned gated norms (keyed like ``selectors``) with ``record`` on, so each
    forward leaves its weights in ``last_weights``; afterwards recording is off and they are dropped."""
    learned = {n: m for n, m in gated_norms(model).items() if hasattr(m, "selector")}
    for m in learned.values():
        m.record = True
    try:
        yield learned
    finally:
        for m in learned.values():
            m.record, m.last_weights = False, None


def freeze_selectors(model: nn.Module) -> int:
    """Freeze every learned selector; returns how many were frozen."""
    sels = selectors(model)
    for s in sels.values():
        s.freeze()
    return len(sels)


def should_freeze(mean_entropy: float, epoch: int, t_freeze: int, eps_h: float) -> bool:
    """AutoNorm-S's freeze rule: at the end of epoch ``t_freeze``, freeze when the
    mean gate entropy has NOT collapsed below ``eps_h`` (H >= eps_h); never at other epochs."""
    return int(epoch) == int(t_freeze) and float(mean_entropy) >= float(eps_h)


# ln(2): the largest entropy a two-way gate can have.
MAX_ENTROPY_2 = math.log(2.0)
