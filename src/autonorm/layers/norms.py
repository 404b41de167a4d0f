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
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from . import kernels
from .selector_layout import selector_width
from ..methods import AUTONORM

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
        if kernels.use_fast_paths():  # the same math in fewer passes (see dyt_forward)
            return kernels.dyt_forward(x, self.alpha, self.weight, self.bias)
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

    def __init__(self, dim: int, num_choices: int = 2, tau: float = AUTONORM.tau,
                 drop_noise_when_frozen: bool = AUTONORM.drop_noise_when_frozen, capacity: str = "mlp", hard: bool = False,
                 hidden: int | None = None):
        super().__init__()
        if capacity not in SELECTOR_CAPACITIES:
            raise ValueError(f"selector capacity must be one of {SELECTOR_CAPACITIES}, got {capacity!r}")
        if capacity == "mlp":
            width = selector_width(dim, hidden)
            self.mlp = nn.Sequential(nn.Linear(dim, width), nn.GELU(), nn.Linear(width, num_choices))
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
    """Mixes candidate norms, each built by name from the registry (``choice_names``), with
    per-sample weights from a gate: sum_i w_i(x) * norm_i(x). A gate kind (learned, random) is a
    subclass that says how the weights come; a gated norm is registered by
    :func:`register_gated_norm` from its candidates' names and its gate kind.

    ``own_gate=False`` builds a norm that draws no weights of its own: it is given the weights of
    another norm's gate at each forward (``forward(x, weights=w)``), as the second norm of a block
    whose one selector serves both sub-layers (``placement: per_block``).
    ``record`` makes a norm with its own gate keep the last weights (detached) for the gate
    diagnostics; it is off during training steps so the hot path pays nothing.
    """

    choice_names: tuple[str, ...] = ()

    def __init__(self, dim: int, alpha_init: float = 0.5, own_gate: bool = True):
        super().__init__()
        for name in self.choice_names:  # candidates in the order of the weights
            setattr(self, name, build_norm(name, dim, alpha_init=alpha_init))
        self.own_gate = bool(own_gate)
        self.record = False
        self.last_weights: torch.Tensor | None = None

    @property
    def fused_dyt_ln(self) -> bool:
        """The candidates are exactly [DyT, LN]: forward uses ``kernels.dyt_ln_mix`` (the same math
        as the generic sum, in fewer passes)."""
        return self.choice_names == ("dyt", "ln")

    def weights(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:  # (B, n_choices)
        raise NotImplementedError

    def draw(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """This norm's gate weights for ``x`` (kept in ``last_weights`` while ``record`` is on)."""
        if not self.own_gate:
            raise RuntimeError("this gated norm shares its block's gate: it is given the block's weights")
        w = self.weights(x, mask)
        if self.record:
            self.last_weights = w.detach()
        return w

    def candidates(self, x: torch.Tensor) -> list[torch.Tensor]:
        return [getattr(self, name)(x) for name in self.choice_names]

    def forward(self, x, mask=None, weights: torch.Tensor | None = None):
        """``mask`` (B, T), True on real tokens: the gate reads the mean over real tokens only.
        ``weights``: another gate's (B, n_choices) weights, for a norm without a gate of its own."""
        w = self.draw(x, mask) if weights is None else weights
        if self.fused_dyt_ln and kernels.use_fast_paths():
            return kernels.dyt_ln_mix(x, w, self.dyt, self.ln)
        outs = self.candidates(x)
        shape = (w.shape[0],) + (1,) * (x.dim() - 1)
        y = w[:, 0].reshape(shape) * outs[0]
        for i in range(1, len(outs)):
            y = y + w[:, i].reshape(shape) * outs[i]
        return y


class LearnedGatedNorm(GatedNorm):
    """A gated norm whose weights come from a learned :class:`NormSelector` (AutoNorm's gate)."""

    def __init__(self, dim: int, tau: float = AUTONORM.tau, alpha_init: float = 0.5,
                 drop_noise_when_frozen: bool = AUTONORM.drop_noise_when_frozen, selector: str = "mlp", hard: bool = False,
                 selector_hidden: int | None = None, own_gate: bool = True):
        super().__init__(dim, alpha_init=alpha_init, own_gate=own_gate)
        if own_gate:
            self.selector = NormSelector(dim, len(self.choice_names), tau=tau, drop_noise_when_frozen=drop_noise_when_frozen,
                                         capacity=selector, hard=hard, hidden=selector_hidden)

    def weights(self, x, mask=None):
        return self.selector(x, mask)


class RandomGatedNorm(GatedNorm):
    """The Random Selector: weights ~ U(0,1) fresh per sample at every training forward (two
    candidates: w and 1 - w), equal weights in eval."""

    def weights(self, x, mask=None):  # draws no token-mean: the mask is unused
        b = x.shape[0]
        if self.training:
            w_first = torch.rand(b, device=x.device, dtype=x.dtype)
        else:
            w_first = torch.full((b,), 0.5, device=x.device, dtype=x.dtype)
        return torch.stack([w_first, 1.0 - w_first], dim=-1)


GATE_KINDS: dict[str, type[GatedNorm]] = {"learned": LearnedGatedNorm, "random": RandomGatedNorm}


def register_gated_norm(name: str, choices: tuple[str, ...], gate: str = "learned") -> type[GatedNorm]:
    """Register under ``name`` a gated norm over the registered norms ``choices`` (in the order of
    its weights) with a gate of kind ``gate`` (:data:`GATE_KINDS`); returns its class."""
    unknown = [c for c in choices if c not in NORM_REGISTRY or issubclass(NORM_REGISTRY[c], GatedNorm)]
    if unknown or len(choices) < 2:
        raise ValueError(f"a gated norm mixes two or more plain registered norms; got {list(choices)}")
    if gate not in GATE_KINDS:
        raise ValueError(f"gate kind must be one of {sorted(GATE_KINDS)}, got {gate!r}")
    if gate == "random" and len(choices) != 2:
        raise ValueError("the random gate draws w and 1 - w: it mixes exactly two norms")
    cls = type(f"GatedNorm_{name}", (GATE_KINDS[gate],), {"choice_names": tuple(choices), "__module__": __name__})
    return register_norm(name)(cls)


#: AutoNorm: w_DyT(x) * DyT(x) + w_LN(x) * LN(x) (weights index 0 = DyT, 1 = LN)
AutoNorm = register_gated_norm("autonorm", ("dyt", "ln"))
#: the three-way gate DyT / LN / RMSNorm (the paper's PTB variant)
AutoNorm3 = register_gated_norm("autonorm3", ("dyt", "ln", "rms"))
#: the Random Selector over DyT / LN
RandomSelectorNorm = register_gated_norm("random", ("dyt", "ln"), gate="random")


def gated_norms(model: nn.Module) -> dict[str, GatedNorm]:
    """The gated norms of a model that draw their own weights (one per gate), keyed by their
    ``selector_name``; a norm given its block's weights (``placement: per_block``) is its gate's."""
    out = {}
    for module in model.modules():
        if isinstance(module, GatedNorm) and module.own_gate:
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
